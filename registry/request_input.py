"""Parsing request input: JSON bodies and query strings, with errors a person can act on."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from flask import g, request

from registry import jsontext
from registry.auth import Actor
from registry.errors import (
    BadRequest,
    DuplicateMember,
    InvalidJson,
    InvalidRequest,
    InvalidUnicode,
    JsonTooDeep,
    NulCharacter,
    QueryOverLimit,
    Unauthorized,
)
from signing.errors import DuplicateMemberError, JsonInputError, JsonTooDeepError, LoneSurrogateError

# Query strings are bounded for every endpoint at once (`check_url`, run before each view), so
# no value reaches a LIKE pattern, a full-text query or a message unbounded.
MAX_QUERY_VALUE_CHARS = 1_024
MAX_QUERY_VALUES = 100


def json_body() -> tuple[Any, bytes]:
    """The parsed JSON body and its verbatim bytes. Raises BadRequest (or one of its JSON
    subclasses, see `parse_json`) for anything else."""
    raw = request.get_data(cache=True)
    if not raw:
        raise BadRequest("the request needs a JSON body")
    return parse_json(raw), raw


def parse_json(raw: bytes) -> Any:
    """A request body read with the strict reader. Raises InvalidJson, JsonTooDeep,
    DuplicateMember, InvalidUnicode or NulCharacter (all 400s), each with `details.path`."""
    try:
        return jsontext.loads_input(raw)
    except JsonInputError as error:
        raise _refusal(error) from None


def _refusal(error: JsonInputError) -> BadRequest:
    details: dict[str, Any] = {"path": error.path}
    if isinstance(error, JsonTooDeepError):
        return JsonTooDeep(f"the body is refused: {error}", details | {"limit": error.limit})
    if isinstance(error, DuplicateMemberError):
        return DuplicateMember(f"the body is refused: {error}", details | {"member": error.name[:200]})
    if isinstance(error, LoneSurrogateError):
        return InvalidUnicode(f"the body is refused: {error}", details)
    if isinstance(error, jsontext.NulCharacterError):
        return NulCharacter(f"the body is refused: {error}", details)
    return InvalidJson(f"the body is {error}", details)  # "not JSON: ..."


def json_object() -> dict[str, Any]:
    body, _ = json_body()
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def refuse_unknown(names: Iterable[str], allowed: Iterable[str], where: str) -> None:
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        raise BadRequest(f"unknown {where} {unknown}; allowed: {sorted(allowed)}", {"unknown": unknown})


def check_url(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Refuse U+0000 in a path segment or a query string (PostgreSQL's text cannot hold it, so it
    names no row and matches nothing) and an unbounded query string, in one pass over its values.
    Runs before the other URL preprocessors (the agent-id prefix lookup) and before any view.
    Raises NulCharacter or QueryOverLimit naming the segment or parameter."""
    for name, value in (values or {}).items():
        if isinstance(value, str):
            refuse_nul_in_segment(name, value)
    for count, (name, value) in enumerate(request.args.items(multi=True), start=1):
        shown = _shown_parameter(name)
        if "\x00" in name or "\x00" in value:
            raise NulCharacter(f"query parameter {shown!r} holds a NUL character (U+0000)", {"parameter": shown})
        if count > MAX_QUERY_VALUES:
            message = f"the query string has more than {MAX_QUERY_VALUES} values (the last one read: {shown!r})"
            raise QueryOverLimit(message, {"parameter": shown, "limit": MAX_QUERY_VALUES})
        if len(value) > MAX_QUERY_VALUE_CHARS or len(name) > MAX_QUERY_VALUE_CHARS:
            message = f"query parameter {shown!r} is over the limit of {MAX_QUERY_VALUE_CHARS} characters"
            raise QueryOverLimit(message, {"parameter": shown, "limit": MAX_QUERY_VALUE_CHARS})


def refuse_nul_in_segment(name: str, value: str) -> None:
    """Raises NulCharacter when the path segment `<name>` holds U+0000 (see `check_url`)."""
    if "\x00" in value:
        raise NulCharacter(f"the path segment <{name}> holds a NUL character (U+0000)", {"segment": name})


def _shown_parameter(name: str) -> str:
    return name if len(name) <= 40 else name[:40] + "…"


def query_int(name: str, default: int, low: int, high: int) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidRequest(f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise InvalidRequest(f"{name} must be between {low} and {high}")
    return value


def query_choice(name: str, choices: Iterable[str], default: str | None = None) -> str | None:
    raw = request.args.get(name, default)
    options = list(choices)
    if raw is not None and raw not in options:
        raise InvalidRequest(f"{name} must be one of {options}, not {raw!r}")
    return raw


def query_time(name: str) -> dt.datetime | None:
    raw = request.args.get(name)
    if raw is None:
        return None
    try:
        value = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
        # In UTC here, not in the driver: 9999-12-31T23:59:59-14:00 is past the last UTC time there is.
        return value.astimezone(dt.UTC) if value.tzinfo else value.replace(tzinfo=dt.UTC)
    except (ValueError, OverflowError):
        raise InvalidRequest(f"{name} must be an ISO 8601 time such as 2026-01-31T12:00:00Z") from None


def string_field(body: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise InvalidRequest(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{name} must be a string")
    return value


def time_field(body: dict[str, Any], name: str) -> dt.datetime:
    """A required ISO 8601 time of the body; one without an offset is in UTC."""
    raw = string_field(body, name, required=True) or ""
    try:
        value = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRequest(f"{name} must be an ISO 8601 time such as 2026-01-31T12:00:00Z", {"field": name}) from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def current_actor() -> Actor:
    actor = g.get("actor")
    if actor is None:
        raise Unauthorized("this call needs Authorization: Bearer <token>")
    return actor
