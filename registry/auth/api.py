"""Bearer-token authentication for write endpoints."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, g, request

from registry.auth.actor import Actor
from registry.errors import Forbidden, Unauthorized

F = TypeVar("F", bound=Callable[..., Any])


def bearer_actor() -> Actor:
    """The caller behind this request's bearer token. Raises Unauthorized for a missing, malformed
    or refused token."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("this call needs Authorization: Bearer <token>")
    actor: Actor = current_app.extensions["agentdex"].tokens.authenticate(token.strip())
    return actor


def requires(scope: str | None) -> Callable[[F], F]:
    """Let the call through only with a valid token that carries `scope` (or `admin`); `scope`
    None: any valid token (a caller managing its own tokens)."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            actor = bearer_actor()
            if scope is not None and not actor.can(scope):
                raise Forbidden(f"the token lacks the {scope!r} scope")
            g.actor = actor
            return view(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
