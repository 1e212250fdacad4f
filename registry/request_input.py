"""Parsing request input: JSON bodies and query strings, with errors a person can act on."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from flask import g, request

from registry import jsontext
from registry.auth import Actor
from registry.errors import BadRequest, InvalidRequest, Unauthorized


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_body() -> tuple[Any, bytes]:
    """The parsed JSON body and its verbatim bytes. Raises BadRequest for anything else."""
    raw = request.get_data(cache=True)
    if not raw:
        raise BadRequest("the request needs a JSON body")
    try:
        return jsontext.loads(raw, parse_constant=_refuse_constant), raw
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequest(f"the body is not valid JSON: {error}") from None


def json_object() -> dict[str, Any]:
    body, _ = json_body()
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def refuse_unknown(names: Iterable[str], allowed: Iterable[str], where: str) -> None:
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        raise BadRequest(f"unknown {where} {unknown}; allowed: {sorted(allowed)}", {"unknown": unknown})


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
    except ValueError:
        raise InvalidRequest(f"{name} must be an ISO 8601 time such as 2026-01-31T12:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def string_field(body: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise InvalidRequest(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{name} must be a string")
    return value


def current_actor() -> Actor:
    actor = g.get("actor")
    if actor is None:
        raise Unauthorized("this call needs Authorization: Bearer <token>")
    return actor
