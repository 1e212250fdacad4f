"""Reading one manifest entry (ARD v0.91 §4, AI Catalog §"Catalog Entry"): what it is, or why it
is refused. Both shapes are read: ARD's `type` and AI Catalog's (and ARD v0.9 tooling's)
`mediaType`. A refusal names its rule (`ard.*`) so that a publisher can fix the entry; one broken
entry never stops the others.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any
from urllib.parse import unquote, urlsplit

from registry import jsontext
from registry.catalog import canonical_card_url
from registry.discovery.entries import A2A_CARD, CATALOG, URN
from registry.errors import InvalidRequest

MAX_IDENTIFIER = 500  # manifest_listings.identifier


@dataclasses.dataclass(frozen=True)
class Refusal:
    """An entry (or a catalog) that was not used, and the rule it broke."""

    identifier: str
    rule: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"identifier": self.identifier, "rule": self.rule, "message": self.message}


@dataclasses.dataclass(frozen=True)
class AgentEntry:
    """An A2A agent the manifest lists: its card by reference (`url`, canonical) or inline (`data`)."""

    identifier: str
    catalog_url: str  # the document that lists it
    url: str | None
    data: dict[str, Any] | None
    sha256: str  # of the entry as listed: a changed entry is looked at again
    version: str | None = None
    updated_at: str | None = None


@dataclasses.dataclass(frozen=True)
class CatalogEntry:
    """A nested catalog (`application/ai-catalog+json`), by reference or inline."""

    identifier: str
    catalog_url: str
    url: str | None
    data: Any


@dataclasses.dataclass(frozen=True)
class OtherEntry:
    """An entry of a type the registry does not index (an MCP server, a skill, a registry...)."""

    identifier: str
    type: str


Entry = AgentEntry | CatalogEntry | OtherEntry | Refusal


def read_entry(entry: object, catalog_url: str, position: int) -> Entry:
    """What the `position`-th entry of the catalog at `catalog_url` is, or why it is refused."""
    if not isinstance(entry, dict):
        return Refusal(f"{catalog_url}#/entries/{position}", "ard.entry-not-object", "the entry is not a JSON object")
    identifier = entry.get("identifier")
    if not isinstance(identifier, str) or not identifier.strip():
        where = f"{catalog_url}#/entries/{position}"
        return Refusal(where, "ard.identifier-missing", "the entry has no `identifier` (a urn:air: URN)")
    refusal = _structural_refusal(identifier, entry)
    if refusal is not None:
        return refusal
    media_type = _media_type(entry)
    if media_type == A2A_CARD:
        return _agent_entry(identifier, entry, catalog_url)
    if media_type == CATALOG:
        return _catalog_entry(identifier, entry, catalog_url)
    return OtherEntry(identifier, media_type)


def _structural_refusal(identifier: str, entry: dict[str, Any]) -> Refusal | None:
    """The first of ARD's MUSTs (§4.2, §4.3, §4.5.1) that the entry breaks, if any."""
    if len(identifier) > MAX_IDENTIFIER or not URN.match(identifier):
        return Refusal(
            identifier[:MAX_IDENTIFIER],
            "ard.identifier-invalid",
            "`identifier` must be a URN urn:air:<publisher>:<namespace>:<name> (ARD Appendix C)",
        )
    if not isinstance(entry.get("displayName"), str) or not entry["displayName"].strip():
        return Refusal(identifier, "ard.display-name-missing", "the entry has no `displayName`")
    types = {_normalized(entry.get(key)) for key in ("type", "mediaType") if key in entry}
    if not types or "" in types:
        return Refusal(identifier, "ard.type-missing", "the entry needs a media type in `type` (or `mediaType`)")
    if len(types) > 1:
        return Refusal(identifier, "ard.type-conflict", "`type` and `mediaType` name different media types")
    if ("url" in entry) == ("data" in entry):
        rule, says = ("ard.url-and-data", "both") if "url" in entry else ("ard.url-or-data-missing", "neither")
        return Refusal(identifier, rule, f"an entry carries exactly one of `url` and `data` (ARD §4.3); it has {says}")
    return _trust_refusal(identifier, entry.get("trustManifest"))


def _trust_refusal(identifier: str, trust: object) -> Refusal | None:
    """ARD v0.91 §4.5.1, publisher authority binding: the trust domain of `trustManifest.identity`
    must align with the URN's publisher (the publisher itself or one of its subdomains: a SPIFFE
    trust domain is often `prod.<publisher>`). An identity that names no domain (`did:key:…`)
    cannot show the publisher's authority, so it does not align either."""
    if trust is None:
        return None
    identity = trust.get("identity") if isinstance(trust, dict) else None
    if not isinstance(identity, str) or not identity.strip():
        return Refusal(identifier, "ard.trust-manifest-invalid", "`trustManifest` needs an `identity` (ARD §4.5)")
    publisher = identifier.split(":")[2].lower()
    domain = trust_domain(identity)
    if domain is not None and (domain == publisher or domain.endswith("." + publisher)):
        return None
    names = f"names the trust domain {domain!r}" if domain else "names no domain"
    return Refusal(
        identifier,
        "ard.trust-identity-mismatch",
        f"trustManifest.identity {identity[:200]!r} {names}, which does not match the identifier's "
        f"publisher {publisher!r} (ARD §4.5.1)",
    )


def trust_domain(identity: str) -> str | None:
    """The domain an identity is issued under: a SPIFFE ID's trust domain, a `did:web` host, an
    https URL's host, a `urn:air` publisher, a bare domain name; None for any other identity."""
    scheme, colon, rest = identity.strip().partition(":")
    scheme = scheme.lower()
    host: str | None = None
    if not colon:
        host = scheme if "." in scheme and "/" not in scheme else None
    elif scheme in ("spiffe", "https", "http"):
        host = urlsplit(identity.strip()).hostname
    elif scheme == "did" and rest.lower().startswith("web:"):
        # did:web:<host>[%3A<port>][:<path>...] (W3C did:web method §3.2)
        host = unquote(rest[4:].split(":")[0]).split(":")[0]
    elif scheme == "urn" and rest.lower().startswith("air:"):
        host = rest.split(":")[1] if rest.count(":") >= 2 else None
    elif scheme == "dns":
        host = rest
    domain = (host or "").strip().lower().rstrip(".")
    return domain or None


def entry_sha256(entry: dict[str, Any]) -> str:
    return hashlib.sha256(jsontext.canonical(entry)).hexdigest()


def _agent_entry(identifier: str, entry: dict[str, Any], catalog_url: str) -> AgentEntry | Refusal:
    version = entry.get("version") if isinstance(entry.get("version"), str) else None
    updated = entry.get("updatedAt") if isinstance(entry.get("updatedAt"), str) else None
    digest = entry_sha256(entry)
    if "data" in entry:
        if not isinstance(entry["data"], dict):
            return Refusal(identifier, "ard.data-not-object", "`data` of an A2A entry must be the Agent Card object")
        return AgentEntry(identifier, catalog_url, None, entry["data"], digest, version, updated)
    url = _card_url(entry.get("url"))
    if isinstance(url, Refusal):
        return dataclasses.replace(url, identifier=identifier)
    return AgentEntry(identifier, catalog_url, url, None, digest, version, updated)


def _catalog_entry(identifier: str, entry: dict[str, Any], catalog_url: str) -> CatalogEntry | Refusal:
    if "data" in entry:
        data = entry["data"]
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            return Refusal(identifier, "ard.catalog-invalid", "`data` of a nested catalog needs an `entries` array")
        return CatalogEntry(identifier, catalog_url, None, data)
    url = _card_url(entry.get("url"))
    if isinstance(url, Refusal):
        return dataclasses.replace(url, identifier=identifier)
    return CatalogEntry(identifier, catalog_url, url, None)


def _card_url(url: object) -> str | Refusal:
    """The entry's `url` in the catalog's canonical form (http(s), no credentials, no fragment)."""
    if not isinstance(url, str):
        return Refusal("", "ard.url-invalid", "`url` must be a string")
    try:
        return canonical_card_url(url)
    except InvalidRequest as error:  # InvalidUrl included
        return Refusal("", "ard.url-invalid", f"`url` {url[:200]!r} is not usable: {error}")


def _media_type(entry: dict[str, Any]) -> str:
    return _normalized(entry.get("type", entry.get("mediaType")))


def declared_type(entry: object) -> str:
    """The media type an entry says it has (`type`, else `mediaType`), valid or not; "" if none."""
    return _media_type(entry) if isinstance(entry, dict) else ""


def _normalized(media_type: object) -> str:
    """A media type without parameters, in lower case (RFC 6838: types are case-insensitive)."""
    return media_type.split(";")[0].strip().lower() if isinstance(media_type, str) else ""
