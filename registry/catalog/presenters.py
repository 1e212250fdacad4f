"""How agents look in the API. One shape for the list and for a single agent: the fields that
change without a new card (`LIVE`), then the profile rendered from the card when it was stored."""

from __future__ import annotations

import datetime as dt
from typing import Any, Union

from registry import jsontext
from registry.catalog.ranking import Relevance
from registry.catalog.search import AgentPage

# JSON key → attribute of the agent's row, or a nested object of its own.
Shape = tuple[tuple[str, Union[str, "Shape"]], ...]

HEALTH: Shape = (
    ("state", "health_state"),
    ("checkedAt", "health_checked_at"),
    ("latencyMs", "health_latency_ms"),
    ("reason", "health_reason"),
    ("uptime24h", "health_uptime24h"),
)
SIGNATURE: Shape = (("state", "signature_state"), ("kids", "signature_kids"), ("checkedAt", "signature_checked_at"))
LIVE: Shape = (
    ("id", "id"),
    ("cardUrl", "card_url"),
    ("status", "status"),
    ("statusMessage", "status_message"),
    ("source", "source"),
    ("cardVersion", "card_version"),
    ("createdAt", "created_at"),
    ("updatedAt", "updated_at"),
    ("health", HEALTH),
    ("signature", SIGNATURE),
    ("jwksUrl", "jwks_url"),
)
LIST_ATTRIBUTES = frozenset({"signature_kids"})  # shown as [] when there is none


def api_time(value: dt.datetime | None) -> str | None:
    """RFC 3339 in UTC with microseconds ("2026-11-22T10:11:22.638493Z")."""
    return value.astimezone(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z") if value else None


def render(shape: Shape, row: Any) -> dict[str, Any]:
    """`shape` filled from the attributes of `row`."""
    out: dict[str, Any] = {}
    for key, spec in shape:
        if isinstance(spec, tuple):
            out[key] = render(spec, row)
            continue
        value = getattr(row, spec)
        if isinstance(value, dt.datetime):
            value = api_time(value)
        elif spec in LIST_ATTRIBUTES:
            value = list(value or [])
        out[key] = value
    return out


def health_json(agent: Any) -> dict[str, Any]:
    """The agent's rolled-up health: state, when checked, latency, reason, uptime."""
    return render(HEALTH, agent)


def agent_json(agent: Any) -> dict[str, Any]:
    """The agent as the API shows it."""
    return {**render(LIVE, agent), **jsontext.loads_stored(agent.profile)}


def page_json(page: AgentPage) -> dict[str, Any]:
    """A page of a search; a ranked search gives each agent its relevance, and suggests tags when
    it found nothing."""
    items = [agent_json(agent) for agent in page.agents]
    if page.relevance is not None:
        for item, agent in zip(items, page.agents):
            item["relevance"] = relevance_json(page.relevance[agent.pk])
    body: dict[str, Any] = {"items": items, "nextCursor": page.next_cursor}
    if page.suggested_tags is not None:
        body["suggestedTags"] = page.suggested_tags
    return body


def relevance_json(relevance: Relevance) -> dict[str, Any]:
    return {
        "score": relevance.score,
        "matched": list(relevance.matched),
        "lexical": relevance.lexical,
        "semantic": relevance.semantic,
    }
