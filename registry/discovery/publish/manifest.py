"""The registry's ARD manifest: `/.well-known/ard.json` (ARD v0.91 §5.1; the same document at the
v0.9 path `/.well-known/ai-catalog.json`), an AI Catalog document (AI Catalog §"Top-Level
Structure": `specVersion`, `host`, `entries`).

Its entries: the registry itself first (`application/ai-registry+json`, `url` = the base of its
ARD API, ARD v0.91 §5.3), then the listed agents (`registry.discovery.entries.agent_entry`). Past
one page of agents the catalog nests (AI Catalog §"Nested Catalog Entries"): page n holds the
listed agents whose pk is in `(n-1)*size+1 … n*size`, so an agent keeps its page while others come
and go; the top document holds the first page's agents and one `application/ai-catalog+json`
entry per further page, whose `url` (`/ard/catalog/<n>`) serves a document of the same shape.

Every URL is absolute, under the public base the caller passes. Pages are cached per process and
invalidated from the database (`registry.discovery.publish.cache`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from typing import Any, Protocol

from registry import jsontext
from registry.catalog import AgentQuery, CatalogSearch, ListedBlock, api_time
from registry.cursors import encode_cursor
from registry.discovery.entries import CATALOG, REGISTRY, agent_entry, publisher_of
from registry.discovery.errors import CatalogPageNotFound
from registry.discovery.links import ARD_PATH
from registry.discovery.publish.cache import Fragment, ManifestPages, PageCache
from registry.discovery.publish.signing import ManifestHost

SPEC_VERSION = "1.0"  # AI Catalog's, which ARD v0.91 §5.1's manifest keeps
CATALOG_PATH = ARD_PATH + "/catalog"

REGISTRY_QUERIES = [
    "find an agent that converts currencies between euros and yen",
    "which A2A agents can summarize long documents",
    "healthy agents with verified signatures that stream their answers",
    "agents tagged travel that accept images",
]
PAGE_QUERIES = ["A2A agents listed by the Agentdex registry", "browse the agents registered in Agentdex"]


@dataclasses.dataclass(frozen=True)
class ManifestDocument:
    body: bytes
    etag: str


class PageWatch(Protocol):
    def pages(self) -> ManifestPages: ...


class ManifestPublisher:
    def __init__(
        self, search: CatalogSearch, watch: PageWatch, host: ManifestHost, cache: PageCache, *, page_size: int
    ) -> None:
        self._search = search
        self._watch = watch
        self._host = host
        self._cache = cache
        self._page_size = page_size

    def top(self, base: str) -> ManifestDocument:
        """The manifest served at `base`: the registry, the first page's agents, the other pages."""
        pages = self._watch.pages()
        blocks = pages.blocks
        own = functools.partial(_registry_entries, base)
        parts = [self._cache.get(("registry", base), None, own, kept=True)]
        if blocks:
            parts.append(self._agents(base, blocks[0], kept=True))
        if len(blocks) > 1:
            nested = functools.partial(self._catalog_entries, base, blocks[1:])
            parts.append(self._cache.get(("pages", base), pages.version, nested, kept=True))
        return self._document(base, parts)

    def page(self, base: str, number: int) -> ManifestDocument:
        """Page `number` (1…) of the agents. Raises CatalogPageNotFound past the last page. A page
        that no listed agent is on any more is empty (a crawler may hold an older top document)."""
        pages = self._watch.pages()
        if not 1 <= number <= pages.last:
            held = f"its pages are 1 to {pages.last}" if pages.last else "it lists no agents"
            raise CatalogPageNotFound(f"the manifest has no page {number}: {held}")
        block = pages.block(number)
        if block is None:
            return self._document(base, [])
        return self._document(base, [self._agents(base, block, kept=block == pages.blocks[0])])

    def _agents(self, base: str, block: ListedBlock, *, kept: bool = False) -> Fragment:
        build = functools.partial(self._entries, base, block)
        return self._cache.get(("agents", base, block.number), block.fingerprint, build, kept=kept)

    def _entries(self, base: str, block: ListedBlock) -> list[bytes]:
        """The listed agents of the block as ARD entries: one search page, in pk order (the
        default search is exactly the listing: active, not hidden as dead)."""
        first, last = (block.number - 1) * self._page_size + 1, block.number * self._page_size
        query = AgentQuery(limit=self._page_size, cursor=encode_cursor(first - 1) if first > 1 else None)
        rows = self._search.search(query).agents
        return _serialized([agent_entry(row, base) for row in rows if row.pk <= last])

    def _catalog_entries(self, base: str, blocks: tuple[ListedBlock, ...]) -> list[bytes]:
        return _serialized([self._catalog_entry(base, block) for block in blocks])

    def _catalog_entry(self, base: str, block: ListedBlock) -> dict[str, Any]:
        agents = f"{block.agents} agent{'' if block.agents == 1 else 's'}"
        return {
            "identifier": f"urn:air:{publisher_of(base)}:catalog:agentdex-agents-{block.number}",
            "displayName": f"Agentdex agents, page {block.number}",
            "type": CATALOG,
            "url": f"{base}{CATALOG_PATH}/{block.number}",
            "description": f"Page {block.number} of the A2A agents Agentdex lists, in order of registration: "
            f"{agents}, each with its card URL, tags and representative queries.",
            "representativeQueries": PAGE_QUERIES,
            "updatedAt": api_time(block.updated_at),
        }

    def _document(self, base: str, parts: list[Fragment]) -> ManifestDocument:
        head = b'{"specVersion":"%s","host":%s,"entries":[' % (
            SPEC_VERSION.encode(),
            jsontext.dumps(self._host.host(base)),
        )
        body = head + b",".join(part.body for part in parts if part.body) + b"]}"
        digest = hashlib.sha256(head)
        for part in parts:
            digest.update(part.digest.encode("ascii"))
        return ManifestDocument(body, digest.hexdigest()[:32])


def registry_entry(base: str) -> dict[str, Any]:
    """The registry as an entry (ARD v0.91 §5.3: clients find the API's base URL by its type)."""
    return {
        "identifier": f"urn:air:{publisher_of(base)}:registry:agentdex",
        "displayName": "Agentdex",
        "type": REGISTRY,
        "url": base + ARD_PATH,
        "description": "Agentdex, a registry of A2A agents whose Agent Cards it validates, checks the "
        "signatures of and health-checks. Search it in words (POST /search), count its facets "
        "(POST /explore) and list it (GET /agents).",
        "tags": ["a2a", "registry", "agents"],
        "capabilities": ["search", "explore", "agents"],
        "representativeQueries": REGISTRY_QUERIES,
    }


def _registry_entries(base: str) -> list[bytes]:
    return _serialized([registry_entry(base)])


def _serialized(entries: list[dict[str, Any]]) -> list[bytes]:
    return [jsontext.dumps(entry) for entry in entries]
