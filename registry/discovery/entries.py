"""An agent as an ARD entry (ARD v0.91 §4, AI Catalog §3): one shape for the manifest, search
results and `GET {base}/agents`, built from the row the catalog lists (`LISTED_COLUMNS`)."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from registry import jsontext
from registry.catalog import api_time

A2A_CARD = "application/a2a-agent-card+json"
REGISTRY = "application/ai-registry+json"
CATALOG = "application/ai-catalog+json"
# ARD §4.2 (and ard-publish, ard-sdk): urn:air:<publisher>:<namespace…>:<name>
URN = re.compile(r"^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$")
MIN_QUERIES, MAX_QUERIES = 2, 5
_UNSAFE = re.compile(r"[^a-z0-9._-]+")
_READABLE = re.compile(r"([a-z0-9._-]+(/[a-z0-9._-]+)*)?")  # a path its URN segments say exactly
_CARD_FILES = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def publisher_of(url: str) -> str:
    """The publisher of a card URL for a URN: its host, lower-cased, without the port. An IPv6
    literal, whose colons a URN segment cannot hold, is written with dashes (`::1` → `--1`)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    try:
        if ipaddress.ip_address(host).version == 6:
            return host.replace(":", "-")
    except ValueError:
        pass
    return _UNSAFE.sub("-", host) or "unknown"


def agent_identifier(card_url: str) -> str:
    """The agent's URN, from its card URL alone, so every registry that lists the card derives
    the same one: `urn:air:<host>:a2a:<name>`, the name from the URL's path, a URN segment per path
    segment (`agent` for a card at the domain's well-known path). A card stored as `<manifest URL>#<urn>` (an inline manifest
    entry) keeps the publisher's own URN when its publisher is the manifest's host."""
    parts = urlsplit(card_url)
    publisher = publisher_of(card_url)
    if parts.fragment and URN.match(parts.fragment) and parts.fragment.split(":")[2].lower() == publisher:
        return parts.fragment
    path = parts.path
    for suffix in _CARD_FILES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    rest = path.removeprefix("/")
    segments = rest.split("/") if rest else []
    name = ":".join(urn_segment(segment) or "-" for segment in segments) or "agent"
    if parts.port or parts.query or parts.fragment or not _READABLE.fullmatch(rest):
        # The name does not say the path exactly (case, an empty segment, a port…): a hash of the
        # whole URL keeps two such agents apart.
        name = f"{name[:180]}-{url_digest(card_url)}"
    return f"urn:air:{publisher}:a2a:{name[:200]}"


def urn_segment(text: str) -> str:
    """`text` lower-cased as a URN name segment holds it: other characters runs of `-`, none at the ends."""
    return _UNSAFE.sub("-", text.lower()).strip("-")


def url_digest(url: str) -> str:
    """A short hash of a URL, for a URN name that does not tell two URLs apart by itself."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]


def representative_queries(profile: dict[str, Any]) -> list[str]:
    """2–5 things a person might ask that this agent answers: its skills' examples first, then its
    skills' names, then its name and tags (ARD §4.3: what semantic search indexes)."""
    skills = profile.get("skills") or []
    found: list[str] = [example for skill in skills for example in skill.get("examples") or []]
    found += [skill.get("name") or "" for skill in skills]
    found += [profile.get("name") or "", *(f"{tag} agent" for tag in profile.get("tags") or [])]
    found.append(f"A2A agent {profile.get('name') or ''}".strip())
    queries = list(dict.fromkeys(q.strip()[:200] for q in found if q and q.strip()))
    if len(queries) < MIN_QUERIES:
        queries.append("A2A agents")
    return queries[:MAX_QUERIES]


def agent_entry(row: Any, public_url: str) -> dict[str, Any]:
    """The ARD entry of a listed agent (`row`: the catalog's listed columns). `url` is the card as
    this registry serves it; what only Agentdex knows (its id, health, signature state, the card's
    own URL) is in `metadata`."""
    profile = jsontext.loads_stored(row.profile)
    entry: dict[str, Any] = {
        "identifier": agent_identifier(row.card_url),
        "displayName": profile.get("name") or row.card_url,
        "type": A2A_CARD,
        "url": f"{public_url}/v1/agents/{row.id}/card",
        "description": profile.get("description") or f"A2A agent {profile.get('name') or ''} at {row.card_url}",
        "tags": list(profile.get("tags") or []),
        "representativeQueries": representative_queries(profile),
        "updatedAt": api_time(row.updated_at),
        # ARD §4 (both schemas): metadata values are scalars, so lists are comma-joined.
        "metadata": {
            "agentdexId": row.id,
            "cardUrl": row.card_url,
            "protocolVersions": ",".join(profile.get("protocolVersions") or []),
            "inputModes": ",".join(profile.get("defaultInputModes") or []),
            "outputModes": ",".join(profile.get("defaultOutputModes") or []),
            "health": row.health_state,
            "signature": row.signature_state,
        },
    }
    capabilities = sorted(name for name, on in (profile.get("capabilities") or {}).items() if on)
    if capabilities:  # an empty list draws a warning from ARD validators
        entry["capabilities"] = capabilities
    if profile.get("version"):
        entry["version"] = str(profile["version"])[:100]
    return entry
