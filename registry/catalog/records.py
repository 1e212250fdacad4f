"""How a validated card becomes catalog rows: the agent's denormalised fields and rendered
profile, its search terms and its full-text document. Pure functions: no database here."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from registry import jsontext
from registry.trust import SIGNATURE_TERM, CardTrust
from registry.validation import CardSummary, ValidationReport

_SPACES = re.compile(r"\s+")
ACTIVE = "active"  # the status under which an agent's tags are counted


@dataclasses.dataclass(frozen=True)
class CardRecord:
    """A validated card on its way into the catalog, with where and when it came from."""

    card: dict[str, Any]
    raw: bytes
    card_url: str
    source: str
    report: ValidationReport
    summary: CardSummary
    fetched_at: dt.datetime
    fetched_from: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    trust: CardTrust | None = None  # its signature checks and endorsement
    sha256: str = dataclasses.field(init=False)

    @property
    def accepted(self) -> bool:
        """Valid, and signed as the operator requires."""
        return self.report.valid and (self.trust is None or self.trust.accepted)

    def __post_init__(self) -> None:
        # The identity of the card's content, whatever its key order and white space, for change
        # detection (signing uses RFC 8785, in `signing`).
        object.__setattr__(self, "sha256", hashlib.sha256(jsontext.canonical(self.card)).hexdigest())


# Catalogs reuse a small vocabulary of tags and media types; a registration normalises ~30 of them.
@functools.lru_cache(maxsize=8192)
def normalize_tag(tag: str) -> str:
    """Tags match case-insensitively and ignore surrounding and repeated white space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", tag)).strip().casefold()


@functools.lru_cache(maxsize=1024)
def normalize_mode(mode: str) -> str:
    return mode.strip().lower()


def normalize_host(host: str) -> str:
    """Hosts match case-insensitively, an IPv6 literal with or without its brackets, a fully
    qualified name with or without its final dot."""
    return host.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")


def host_of(card_url: str) -> str | None:
    """The host of a card URL as the "host" term holds it: no port (`normalize_host`); None
    for a URL without one."""
    try:
        host = urlsplit(card_url).hostname
    except ValueError:
        return None
    return normalize_host(host) if host else None


def protocol_terms(versions: list[str]) -> set[str]:
    """Each version is findable by itself and by major.minor ("0.3.0" also as "0.3")."""
    terms = set()
    for version in versions:
        terms.add(version)
        parts = version.split(".")
        if len(parts) >= 2:
            terms.add(".".join(parts[:2]))
    return terms


def agent_values(record: CardRecord) -> dict[str, Any]:
    """The agent columns that follow the current card."""
    summary = record.summary
    values = {
        "card_url": record.card_url,
        "source": record.source,
        "name": summary.name[:500],
        "description": summary.description,
        "version": summary.version,
        "provider_org": summary.provider_org,
        "provider_url": summary.provider_url,
        "documentation_url": summary.documentation_url,
        "icon_url": summary.icon_url,
        "protocol_versions": list(summary.protocol_versions),
        "flavor": record.report.flavor or "unknown",
        "interfaces": [
            {
                "url": url,
                "protocolBinding": binding,
                "protocolVersion": version,
                **({"tenant": tenant} if tenant else {}),
            }
            for url, binding, version, tenant in summary.interfaces
        ],
        "capabilities": dict(summary.capabilities),
        "input_modes": _all_modes(summary, "input"),
        "output_modes": _all_modes(summary, "output"),
        "tags": sorted({normalize_tag(t) for s in summary.skills for t in s.tags} - {""}),
        "card_sha256": record.sha256,
        **(record.trust.agent_columns() if record.trust else {}),
    }
    values["profile"] = profile_json(summary, values)
    return values


def card_values(record: CardRecord, agent_pk: int, version: int) -> dict[str, Any]:
    return {
        "agent_pk": agent_pk,
        "version": version,
        "source": record.source,
        "fetched_from": record.fetched_from,
        "raw": record.raw,
        "sha256": record.sha256,
        "protocol_version": record.report.protocol_version,
        "flavor": record.report.flavor,
        "valid": record.report.valid,
        "issues": [issue.to_dict() for issue in record.report.issues],
        "is_current": True,
        "fetched_at": record.fetched_at,
        "etag": record.etag,
        "last_modified": record.last_modified,
    }


def _all_modes(summary: CardSummary, direction: str) -> list[str]:
    defaults = summary.default_input_modes if direction == "input" else summary.default_output_modes
    modes = {normalize_mode(m) for m in defaults}
    for skill in summary.skills:
        modes.update(normalize_mode(m) for m in (skill.input_modes if direction == "input" else skill.output_modes))
    return sorted(m for m in modes if m)


def skill_json(skill: Any) -> dict[str, Any]:
    return {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
        "examples": list(skill.examples),
        "inputModes": list(skill.input_modes),
        "outputModes": list(skill.output_modes),
    }


def profile_json(summary: CardSummary, values: dict[str, Any]) -> str:
    """The card-derived fields of the agent as the API shows them, as JSON text."""
    provider = None
    if summary.provider_org or summary.provider_url:
        provider = {"organization": summary.provider_org, "url": summary.provider_url}
    return jsontext.dumps_text(
        {
            "name": values["name"],
            "description": summary.description,
            "version": summary.version,
            "provider": provider,
            "documentationUrl": summary.documentation_url,
            "iconUrl": summary.icon_url,
            "protocolVersions": values["protocol_versions"],
            "interfaces": values["interfaces"],
            "capabilities": values["capabilities"],
            "defaultInputModes": values["input_modes"],
            "defaultOutputModes": values["output_modes"],
            "skills": [skill_json(skill) for skill in summary.skills],
            "tags": values["tags"],
        }
    )


MAX_TERM = 500


def term_rows(agent_pk: int, values: dict[str, Any], summary: CardSummary) -> list[tuple[int, str, str]]:
    """(agent pk, kind, value) rows of agent_terms."""
    terms: set[tuple[str, str]] = {("tag", tag) for tag in values["tags"]}
    terms.update(("skill", skill.id) for skill in summary.skills)
    terms.update(("input", mode) for mode in values["input_modes"])
    terms.update(("output", mode) for mode in values["output_modes"])
    terms.update(("cap", name) for name, on in values["capabilities"].items() if on)
    terms.update(("proto", v) for v in protocol_terms(values["protocol_versions"]))
    terms.add(("status", values["status"]))
    host = host_of(values["card_url"])
    if host:
        terms.add(("host", host))  # who publishes the agent (ARD's publisher facet and filter)
    if "signature_state" in values:
        terms.add((SIGNATURE_TERM, values["signature_state"]))
    # Values are indexed by their first MAX_TERM characters; two that share them are one row.
    return [(agent_pk, kind, value) for kind, value in sorted({(kind, value[:MAX_TERM]) for kind, value in terms})]


def search_fields(summary: CardSummary) -> tuple[list[str], list[str], list[str], list[str]]:
    """The texts a query searches, by field of `registry.retrieval.scoring.FIELDS`: the name, the
    skills' names, their tags, and the rest (description, provider, skill descriptions, examples)."""
    skills = summary.skills
    rest = [summary.description, summary.provider_org or ""]
    rest.extend(text for skill in skills for text in (skill.description, *skill.examples))
    return [summary.name], [s.name for s in skills], [t for s in skills for t in s.tags], rest


def embedding_text(summary: CardSummary) -> str:
    """What the semantic model reads of a card: every searchable text, names first."""
    name, skills, tags, rest = search_fields(summary)
    return "\n".join(text for text in (*name, summary.description, *skills, *tags, *rest[1:]) if text)
