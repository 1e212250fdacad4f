"""Everything the agent page shows, read from the domains' services in a handful of statements:
the agent's row with its retained health checks (health), its card versions with their drift
(catalog), the current card verbatim (catalog), and the signature report (trust). What the API's
presenters already compute (`agent_json`, `crawl_json`, the version drift) is reused as is."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from registry.catalog import UNLISTED
from registry.catalog.presenters import agent_json
from registry.errors import NotFound
from registry.health import check_series
from registry.health.api import crawl_json
from registry.web.health_chart import HealthChart, health_chart
from registry.web.security_schemes import SecurityView, security_view
from registry.web.signature_words import SignatureView, signature_view

CHART_CHECKS = 1440  # a day of one interface probed every minute (the default interval and retention)
HISTORY_SHOWN = 50
HEALTH_WORDS = {
    "up": "Up",
    "degraded": "Degraded",
    "down": "Down",
    "unknown": "Not known yet",
}
REASON_WORDS = {
    "ok": "answered its last check",
    "authRequired": "answered, and asks for credentials",
    "slow": "answered, but slower than the threshold",
    "protocolMismatch": "reachable, but does not speak the protocol version its card declares",
    "interfaceDown": "some of its interfaces do not answer",
    "timeout": "did not answer in time",
    "connectionError": "could not be reached",
    "tlsError": "its TLS certificate or handshake failed",
    "refused": "its address is not one this registry may call",
    "tooLarge": "answered with more than a probe reads",
    "serverError": "answered with a server error",
    "redirect": "answered with a redirect",
    "notJson": "answered with something other than JSON",
    "notJsonRpc": "answered JSON that is not JSON-RPC",
    "wrongId": "answered for another request",
    "badResponse": "gave an answer that could not be read",
    "noJsonRpcInterface": "has no JSON-RPC interface to probe without creating work",
}


@dataclasses.dataclass(frozen=True)
class HealthView:
    state: str
    words: str
    reason: str | None
    checked_at: str | None
    since: str | None
    latency_ms: int | None
    uptime_percent: float | None
    crawl: dict[str, Any] | None
    chart: HealthChart


@dataclasses.dataclass(frozen=True)
class VersionView:
    version: int
    is_current: bool
    source: str
    fetched_at: str
    hash_short: str
    sha256: str
    protocol_version: str | None
    valid: bool
    changes: dict[str, list[str]] | None  # None for the first version


@dataclasses.dataclass(frozen=True)
class AgentView:
    agent: dict[str, Any]  # as `GET /v1/agents/{id}` shows it
    card: Any  # the current card, parsed
    card_json: str  # the current card pretty-printed (escaped by the template)
    valid: bool
    issues: list[dict[str, Any]]
    security: SecurityView
    signature: SignatureView
    health: HealthView
    history: list[VersionView]
    more_versions: int  # older versions not shown


def agent_view(services: Any, agent_id: str) -> AgentView:
    """The page of a listed agent. Raises NotFound, also for an entry in review."""
    row, _ = services.health.recent_checks(agent_id, 1)  # the agent's whole row; its checks below
    if row.status in UNLISTED:
        raise NotFound(f"no agent with id {agent_id!r}")
    checks = check_series(services.engine, agent_id, CHART_CHECKS)[::-1]  # oldest first
    versions = services.search.versions(agent_id)  # newest first
    current = next((v for v in versions if v["isCurrent"]), versions[0])
    card = json.loads(services.search.card(agent_id).raw)
    report = services.trust_reads.report(agent_id, None)
    require = services.settings.trust.require_signatures
    agent = agent_json(row)
    return AgentView(
        agent=agent,
        card=card,
        card_json=json.dumps(card, indent=2, ensure_ascii=False),
        valid=bool(current["valid"]),
        issues=list(current["issues"] or []),
        security=security_view(card),
        signature=signature_view(report, card_valid=bool(current["valid"]), require_signatures=require),
        health=_health(row, agent["health"], checks),
        history=[_version(entry) for entry in versions[:HISTORY_SHOWN]],
        more_versions=max(0, len(versions) - HISTORY_SHOWN),
    )


def _health(row: Any, health: dict[str, Any], checks: list[Any]) -> HealthView:
    uptime = health["uptime24h"]
    return HealthView(
        state=row.health_state,
        words=HEALTH_WORDS.get(row.health_state, row.health_state),
        reason=REASON_WORDS.get(row.health_reason or "", row.health_reason),
        checked_at=health["checkedAt"],
        since=row.health_since.isoformat() if row.health_since else None,
        latency_ms=health["latencyMs"],
        uptime_percent=round(uptime * 100, 1) if uptime is not None else None,
        crawl=crawl_json(row),
        chart=health_chart(checks),
    )


def _version(entry: dict[str, Any]) -> VersionView:
    return VersionView(
        version=entry["version"],
        is_current=entry["isCurrent"],
        source=entry["source"],
        fetched_at=entry["fetchedAt"],
        hash_short=entry["sha256"][:12],
        sha256=entry["sha256"],
        protocol_version=entry["protocolVersion"],
        valid=entry["valid"],
        changes=entry["changes"],
    )
