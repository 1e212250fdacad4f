"""What the home page shows of a search: each result as a card (from the agent's stored profile,
which is untrusted card text: the templates escape it) and each facet as a group of choices."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from registry import jsontext
from registry.catalog import Facet
from registry.web.search_state import FACETS, SearchState

DESCRIPTION_CHARS = 240
CARD_TAGS = 8
HEALTH_WORDS = {"up": "Up", "degraded": "Degraded", "down": "Down", "unknown": "Health unknown"}
SIGNATURE_WORDS = {
    "verified": "Signed, verified",
    "invalid": "Signature invalid",
    "unverifiable": "Signed, not verifiable",
    "unsigned": "Unsigned",
}
VALUE_WORDS = {
    "cap": {"streaming": "Streaming", "pushNotifications": "Push notifications", "extendedAgentCard": "Extended card"},
    "health": {"up": "Up", "degraded": "Degraded", "down": "Down", "unknown": "Unknown"},
    "sig": {"verified": "Verified", "invalid": "Invalid", "unverifiable": "Not verifiable", "unsigned": "Unsigned"},
}


@dataclasses.dataclass(frozen=True)
class ResultCard:
    id: str
    name: str
    provider: str | None
    provider_url: str | None
    description: str
    tags: list[str]
    more_tags: int
    health: str
    health_words: str
    signature: str
    signature_words: str
    protocol_versions: list[str]
    deprecated: bool


@dataclasses.dataclass(frozen=True)
class FacetOption:
    value: str
    label: str
    count: int | None  # None: chosen, but not among the values counted
    chosen: bool


@dataclasses.dataclass(frozen=True)
class FacetGroup:
    kind: str
    legend: str
    options: list[FacetOption]
    others: int  # matching agents' values not listed


def result_cards(rows: Sequence[Any]) -> list[ResultCard]:
    return [_card(row) for row in rows]


def _card(row: Any) -> ResultCard:
    profile = jsontext.loads_stored(row.profile)
    provider = profile.get("provider") or {}
    description = " ".join(str(profile.get("description") or "").split())
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    tags = [str(tag) for tag in profile.get("tags") or []]
    health = row.health_state or "unknown"
    signature = row.signature_state or "unsigned"
    return ResultCard(
        id=row.id,
        name=str(profile.get("name") or row.card_url),
        provider=provider.get("organization"),
        provider_url=provider.get("url"),
        description=description,
        tags=tags[:CARD_TAGS],
        more_tags=max(0, len(tags) - CARD_TAGS),
        health=health,
        health_words=HEALTH_WORDS.get(health, health),
        signature=signature,
        signature_words=SIGNATURE_WORDS.get(signature, signature),
        protocol_versions=[str(v) for v in profile.get("protocolVersions") or []],
        deprecated=row.status == "deprecated",
    )


def facet_groups(facets: Mapping[str, Facet], state: SearchState) -> list[FacetGroup]:
    """The facets in page order; a kind with no value to offer and none chosen is left out."""
    groups = []
    for kind, legend in FACETS:
        facet = facets.get(kind, Facet([], 0))
        chosen = state.selected.get(kind, ())
        buckets = [(value, count) for value, count in facet.buckets if _offered(kind, value) or value in chosen]
        counted = {value for value, _ in buckets}
        options = [_option(kind, value, count, value in chosen) for value, count in buckets]
        options.extend(_option(kind, value, None, True) for value in chosen if value not in counted)
        if options:
            groups.append(FacetGroup(kind, legend, options, facet.other_count))
    return groups


def _offered(kind: str, value: str) -> bool:
    """Protocol versions are indexed whole and by major.minor ("0.3.0" and "0.3"): offer major.minor."""
    return kind != "proto" or value.count(".") <= 1


def _option(kind: str, value: str, count: int | None, chosen: bool) -> FacetOption:
    return FacetOption(value, VALUE_WORDS.get(kind, {}).get(value, value), count, chosen)


def value_words(kind: str, value: str) -> str:
    """A chosen value as the page names it."""
    return VALUE_WORDS.get(kind, {}).get(value, value)
