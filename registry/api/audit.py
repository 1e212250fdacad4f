"""`GET /v1/audit`: the audit log the registry keeps (who did what to which entry, when). An admin
reads all of it; any other token's principal the entries about them: those where they acted, and
those whose subject they are (the previous owner of an agent claimed from them, of a domain taken
over or lapsed; the registrant of an entry approved or rejected in review). Oldest first with
cursors, as every list of the API: a reader that keeps the last cursor it was given misses nothing
written after it (ids only grow)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from sqlalchemy import ColumnElement, Engine, and_, or_, select

from registry.audit import AuditEntry
from registry.auth import Principal, requires
from registry.cursors import decode_cursor, encode_cursor
from registry.errors import InvalidRequest
from registry.request_input import current_actor, query_int, query_time, refuse_unknown

bp = Blueprint("audit", __name__, url_prefix="/v1/audit")

FILTERS = ("actor", "agent", "action", "since", "until")
PAGE_DEFAULT, PAGE_MAX = 100, 500
AGENT_PREFIX_MIN, AGENT_ID_MAX = 8, 36  # agent ids are UUIDs; prefixes as elsewhere in the API
_AGENT_ID = re.compile(r"[0-9a-fA-F-]+")
# An action (`agent.register`) or every action under a name (`agent.*`).
_ACTION = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?")


COLUMNS = (
    AuditEntry.id,
    AuditEntry.at,
    AuditEntry.principal_id,
    AuditEntry.action,
    AuditEntry.agent_id,
    AuditEntry.detail,
)


@dataclasses.dataclass(frozen=True)
class AuditQuery:
    """What to list: entries after `after` (an id) that match every filter given; `reader` set:
    only those about that principal (they acted, or are the subject)."""

    reader: int | None = None
    actor: str | None = None
    agent: str | None = None
    action: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    after: int = 0
    limit: int = PAGE_DEFAULT


@dataclasses.dataclass(frozen=True)
class AuditPage:
    items: list[dict[str, Any]]
    next_cursor: str | None


def audit_page(engine: Engine, query: AuditQuery) -> AuditPage:
    """One page of the audit log, oldest first (one read, no transaction held)."""
    statement = (
        select(*COLUMNS, Principal.name)
        .outerjoin(Principal, Principal.id == AuditEntry.principal_id)
        .where(and_(AuditEntry.id > query.after, *_conditions(query)))
        .order_by(AuditEntry.id)
        .limit(query.limit + 1)
    )
    with engine.connect() as conn:
        rows = conn.execute(statement).all()
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    items = [entry_json(row) for row in rows]
    return AuditPage(items, encode_cursor(rows[-1].id) if more else None)


def entry_json(row: Any) -> dict[str, Any]:
    """An entry as the API shows it. `actor`: the principal's name (the token's owner); null for
    the registry itself (its scheduled jobs, e.g. a re-crawl that stored a new card version)."""
    actor = row.name if row.name is not None else (f"principal:{row.principal_id}" if row.principal_id else None)
    return {
        "id": row.id,
        "at": row.at.isoformat().replace("+00:00", "Z"),
        "actor": actor,
        "action": row.action,
        "agentId": row.agent_id,
        "detail": row.detail or {},
    }


def _conditions(query: AuditQuery) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if query.reader is not None:
        conditions.append(or_(AuditEntry.principal_id == query.reader, AuditEntry.subject_principal_id == query.reader))
    if query.actor is not None:
        conditions.append(Principal.name == query.actor)
    if query.agent is not None:
        agent = AuditEntry.agent_id
        full = len(query.agent) == AGENT_ID_MAX
        conditions.append(agent == query.agent.lower() if full else agent.startswith(query.agent.lower()))
    if query.action is not None:
        action = AuditEntry.action
        name = query.action.removesuffix(".*")
        conditions.append(action.startswith(name + ".") if query.action.endswith(".*") else action == name)
    if query.since is not None:
        conditions.append(AuditEntry.at >= query.since)
    if query.until is not None:
        conditions.append(AuditEntry.at < query.until)
    return conditions


@bp.get("")
@requires(None)
def list_audit() -> Response:
    refuse_unknown(request.args.keys(), {*FILTERS, "limit", "cursor"}, "query parameters")
    page = audit_page(current_app.extensions["agentdex"].engine, audit_query())
    return jsonify({"items": page.items, "nextCursor": page.next_cursor})


def audit_query() -> AuditQuery:
    """The request's filters, and whose entries the caller reads (an admin: everyone's). Raises
    InvalidRequest (422) naming the parameter that is wrong."""
    actor = current_actor()
    since, until = _time("since"), _time("until")
    if since is not None and until is not None and until <= since:
        raise InvalidRequest("until must be later than since", {"parameter": "until"})
    return AuditQuery(
        reader=None if actor.is_admin else actor.principal_id,
        actor=_text("actor", 200, lambda value: True, "a principal's name"),
        agent=_text("agent", AGENT_ID_MAX, _agent_like, f"an agent id or its first {AGENT_PREFIX_MIN}+ characters"),
        action=_text("action", 80, _ACTION.fullmatch, "an action such as agent.register, or agent.* for a family"),
        since=since,
        until=until,
        after=decode_cursor(request.args.get("cursor")),
        limit=query_int("limit", PAGE_DEFAULT, 1, PAGE_MAX),
    )


def _agent_like(value: str) -> bool:
    return len(value) >= AGENT_PREFIX_MIN and _AGENT_ID.fullmatch(value) is not None


def _text(name: str, longest: int, valid: Callable[[str], object], what: str) -> str | None:
    value = request.args.get(name)
    if value is None:
        return None
    if not value or len(value) > longest or not valid(value):
        raise InvalidRequest(f"{name} must be {what} (at most {longest} characters)", {"parameter": name})
    return value


def _time(name: str) -> dt.datetime | None:
    try:
        return query_time(name)
    except InvalidRequest as error:
        raise InvalidRequest(error.message, {"parameter": name}) from None


ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "at", "actor", "action", "agentId", "detail"],
    "properties": {
        "id": {"type": "integer"},
        "at": {"type": "string", "format": "date-time"},
        "actor": {"type": ["string", "null"], "description": "the principal's name; null: the registry itself"},
        "action": {"type": "string", "description": "e.g. agent.register, agent.status, agent.delete, token.revoke"},
        "agentId": {"type": ["string", "null"]},
        "detail": {"type": "object"},
    },
}
OPENAPI_SCHEMAS: dict[str, Any] = {"AuditEntry": ENTRY_SCHEMA}

Op = Callable[..., dict[str, Any]]
Query = Callable[..., dict[str, Any]]


def openapi_paths(op: Op, q: Query) -> dict[str, Any]:
    """`/v1/audit` for `registry.api.openapi` (its `_op` and `_q` builders)."""
    params = [
        q("actor", {"type": "string"}, "the principal's name"),
        q("agent", {"type": "string"}, "an agent id, or its first 8 or more characters"),
        q("action", {"type": "string"}, "an action (agent.register), or a family of them (agent.*)"),
        q("since", {"type": "string", "format": "date-time"}, "entries at or after this time"),
        q("until", {"type": "string", "format": "date-time"}, "entries before this time"),
        q("limit", {"type": "integer", "minimum": 1, "maximum": PAGE_MAX}, f"default {PAGE_DEFAULT}"),
        q("cursor", {"type": "string"}, "nextCursor of the previous page"),
    ]
    summary = (
        "The audit log: {items: [AuditEntry], nextCursor}, oldest first. An admin reads every entry; "
        "any other token the entries about its principal: where they are the actor, or the subject "
        "(the previous owner of an agent claimed from them or of a domain taken over or lapsed, the "
        "registrant of an entry approved or rejected in review), with the same filters and cursors. "
        "A filter's bad value is refused with 422 invalid_request naming it (details.parameter)"
    )
    return {"/v1/audit": {"get": op(summary, params=params, auth=True, errors=("400", "401", "422"))}}
