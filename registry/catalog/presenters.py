"""How agents look in the API. One shape for the list and for a single agent: the fields that
change without a new card (`registry.catalog.agent_view.LIVE`), then the profile rendered from
the card when it was stored. Rows read from the catalog carry the first part as JSON text made by
the database (`live`); an agent just written is rendered here from its columns."""

from __future__ import annotations

from typing import Any

from registry import jsontext
from registry.catalog.agent_view import HEALTH, LIVE, api_time, render


def health_json(agent: Any) -> dict[str, Any]:
    """The agent's rolled-up health (issue 5): state, when checked, latency, reason, uptime."""
    return render(HEALTH, agent)


def health_check_json(check: Any) -> dict[str, Any]:
    """One probe of one interface."""
    return {
        "checkedAt": api_time(check.checked_at),
        "interfaceUrl": check.interface_url,
        "protocolVersion": check.protocol_version,
        "method": check.method,
        "outcome": check.outcome,
        "reason": check.reason,
        "latencyMs": check.latency_ms,
        "httpStatus": check.http_status,
        "rpcCode": check.rpc_code,
        "detail": check.detail,
    }


def agent_json_text(agent: Any) -> str:
    """The agent as the API shows it, as JSON text, without decoding the stored profile."""
    live = getattr(agent, "live", None) or jsontext.dumps_text(render(LIVE, agent))
    return live[:-1] + "," + agent.profile[1:]


def page_json_text(agents: list[Any], next_cursor: str | None) -> str:
    items = ",".join(agent_json_text(agent) for agent in agents)
    return f'{{"items":[{items}],"nextCursor":{jsontext.dumps_text(next_cursor)}}}'
