"""Finding a domain's ARD manifest (ARD v0.91 §5.1), in the order the spec gives:

1. `/.well-known/ard.json`, then the legacy `/.well-known/ai-catalog.json` (the fallback is
   normative: a consumer that stops at a missing ard.json is non-conforming);
2. `Agentmap:` lines of `robots.txt`;
3. the home page: an HTTP `Link` header (AI Catalog §"Link Relation Discovery") or a
   `<link rel="ard">` element, and absent those `rel="ai-catalog"`.

Not looked at: DNS SVCB/TXT records (`_entries._agents.<domain>`; the standard library resolves no
SVCB, and the registry's outbound client pins addresses it resolved itself) and entries embedded
as in-page JSON-LD. Each candidate is fetched through the safe outbound client; one that is absent,
unreadable or refused moves on to the next.
"""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from requests.utils import parse_header_links

from registry.discovery.crawl.fetch import (
    CatalogDocument,
    DocumentFetcher,
    ManifestAbsent,
    ManifestRefused,
    ManifestUnavailable,
    ManifestUnreachable,
)

WELL_KNOWN = (("/.well-known/ard.json", "well-known"), ("/.well-known/ai-catalog.json", "well-known-legacy"))
RELATIONS = ("ard", "ai-catalog")  # ARD v0.91 §5.1: `ard`, and absent that `ai-catalog`
MAX_AGENTMAPS = 5  # of one robots.txt: each is a fetch


@dataclasses.dataclass(frozen=True)
class Located:
    """The manifest found, and where the pointer to it was (`well-known`, `well-known-legacy`,
    `agentmap`, `link`)."""

    document: CatalogDocument
    via: str


@dataclasses.dataclass(frozen=True)
class Search:
    """What looking for a domain's manifest found: `located`, or None with every URL `tried`;
    `inconclusive` when a candidate did not answer usably (it may hold a manifest after all)."""

    located: Located | None
    tried: tuple[str, ...]
    inconclusive: bool = False
    refused: bool = False  # the domain itself is refused by the outbound policy


class ManifestLocator:
    def __init__(self, documents: DocumentFetcher) -> None:
        self._documents = documents

    def find(self, domain: str) -> Search:
        """Look for the manifest of `domain` (`scheme://host[:port]`); never raises for what the
        domain serves."""
        tried: list[str] = []
        inconclusive = False
        for path, via in WELL_KNOWN:
            tried.append(domain + path)
            try:
                return Search(Located(self._documents.catalog(domain + path), via), tuple(tried))
            except ManifestRefused:
                return Search(None, tuple(tried), refused=True)
            except ManifestUnreachable:  # the domain does not answer: no use trying its other paths
                return Search(None, tuple(tried), inconclusive=True)
            except ManifestUnavailable:
                inconclusive = True
            except ManifestAbsent:
                pass
        for url, via in self._pointers(domain, tried):
            tried.append(url)
            try:
                return Search(Located(self._documents.catalog(url), via), tuple(tried))
            except ManifestUnavailable:
                inconclusive = True
            except (ManifestAbsent, ManifestRefused):
                pass
        return Search(None, tuple(tried), inconclusive)

    def _pointers(self, domain: str, tried: list[str]) -> list[tuple[str, str]]:
        """Manifest URLs named by robots.txt, then by the home page, in order of preference."""
        pointers = [(url, "agentmap") for url in self._agentmaps(domain + "/robots.txt", tried)]
        return pointers + [(url, "link") for url in self._links(domain + "/", tried)]

    def _agentmaps(self, robots_url: str, tried: list[str]) -> list[str]:
        tried.append(robots_url)
        page = self._documents.page(robots_url)
        if page is None:
            return []
        return agentmap_urls(page.body.decode("utf-8", "replace"), page.url)[:MAX_AGENTMAPS]

    def _links(self, home: str, tried: list[str]) -> list[str]:
        tried.append(home)
        page = self._documents.page(home)
        if page is None:
            return []
        found = header_links(page.headers.getlist("link"), page.url)
        if "html" in page.headers.get("content-type", "text/html").lower():
            found += html_links(page.body.decode(_charset(page.headers.get("content-type")), "replace"), page.url)
        # Every `ard` link before any `ai-catalog` one, each kind in document order.
        return list(dict.fromkeys(url for relation in RELATIONS for url, rel in found if rel == relation))


def agentmap_urls(robots: str, base: str) -> list[str]:
    """The `Agentmap:` URLs of a robots.txt, resolved against its URL, in order (the field name is
    case-insensitive, as robots.txt fields are; comments after `#` are dropped)."""
    found = []
    for line in robots.splitlines():
        field, colon, value = line.partition("#")[0].partition(":")
        if colon and field.strip().lower() == "agentmap" and value.strip():
            found.append(urljoin(base, value.strip()))
    return [url for url in found if urlsplit(url).scheme in ("http", "https")]


def header_links(values: list[str], base: str) -> list[tuple[str, str]]:
    """(URL, relation) of `Link` header values (RFC 8288) with an ARD relation."""
    found = []
    for value in values:
        for link in parse_header_links(value):
            for rel in str(link.get("rel", "")).lower().split():
                if rel in RELATIONS and link.get("url"):
                    found.append((urljoin(base, link["url"]), rel))
    return found


def html_links(html: str, base: str) -> list[tuple[str, str]]:
    """(URL, relation) of the `<link>` elements of a page with an ARD relation, in document
    order, resolved against the page's `<base href>` or its URL."""
    parser = _LinkParser()
    parser.feed(html)
    parser.close()
    base = urljoin(base, parser.base) if parser.base else base
    return [(urljoin(base, href), rel) for href, rel in parser.links]


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        href = values.get("href", "").strip()
        if tag == "base" and href and self.base is None:
            self.base = href
        if tag == "link" and href:
            # `rel` is a set of space-separated, case-insensitive keywords (HTML §4.6.7)
            self.links += [(href, rel) for rel in values.get("rel", "").lower().split() if rel in RELATIONS]

    handle_startendtag = handle_starttag


def _charset(content_type: str | None) -> str:
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            candidate = value.strip().strip('"')
            try:
                "".encode(candidate)
                return candidate
            except LookupError:
                break
    return "utf-8"
