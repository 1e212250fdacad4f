"""Bearer-token authentication for write endpoints."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, g, request

from registry.errors import Forbidden, Unauthorized

F = TypeVar("F", bound=Callable[..., Any])


def requires(scope: str) -> Callable[[F], F]:
    """Let the call through only with a valid token that carries `scope` (or `admin`)."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            header = request.headers.get("Authorization", "")
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthorized("this call needs Authorization: Bearer <token>")
            actor = current_app.extensions["agentdex"].tokens.authenticate(token.strip())
            if not actor.can(scope):
                raise Forbidden(f"the token lacks the {scope!r} scope")
            g.actor = actor
            return view(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
