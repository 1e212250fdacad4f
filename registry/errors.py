"""The registry's exception root and the generic errors every package may raise.

Each package has its own root below `RegistryError` (`OutboundError`, `TrustError`, `RelayError`,
`HealthError`, the catalog's) for what only it can fail at; `registry.api.errors` maps them all to
HTTP."""

from __future__ import annotations

from typing import Any


class RegistryError(Exception):
    """Root of every error the registry reports to a caller. `code` is stable and machine-readable."""

    code = "internal_error"

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class BadRequest(RegistryError):
    code = "bad_request"


class Unauthorized(RegistryError):
    code = "unauthorized"


class Forbidden(RegistryError):
    code = "forbidden"


class NotFound(RegistryError):
    code = "not_found"


class Conflict(RegistryError):
    code = "conflict"


class PayloadTooLarge(RegistryError):
    code = "payload_too_large"


class UnsupportedMediaType(RegistryError):
    code = "unsupported_media_type"


class TooManyRequests(RegistryError):
    """Over a rate limit; `details.retryAfter` says in how many seconds to try again."""

    code = "rate_limited"


class InvalidRequest(RegistryError):
    """The request is well-formed JSON but a field has the wrong type or value."""

    code = "invalid_request"


class InvalidCard(RegistryError):
    """The Agent Card failed validation; `details.issues` lists every problem."""

    code = "invalid_card"
