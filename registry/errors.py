"""The registry's exception root. Services raise these; `registry.api.errors` maps them to HTTP."""

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


class TaskMismatch(Conflict):
    """A push notification names another task than the relay subscription's."""

    code = "task_mismatch"


class ReplayedNotification(Conflict):
    """A push notification's JWT id (`jti`) was seen before."""

    code = "replayed"


class InvalidRequest(RegistryError):
    """The request is well-formed JSON but a field has the wrong type or value."""

    code = "invalid_request"


class InvalidNotification(InvalidRequest):
    """A push notification body is not an A2A StreamResponse or Task."""

    code = "invalid_notification"


class PushNotSupported(InvalidRequest):
    """The agent's card does not say `capabilities.pushNotifications: true`."""

    code = "push_not_supported"


class InvalidCard(RegistryError):
    """The Agent Card failed validation; `details.issues` lists every problem."""

    code = "invalid_card"


class OutboundRefused(RegistryError):
    """The target URL is not one the registry may call (scheme or address policy)."""

    code = "target_refused"


class AgentUnreachable(RegistryError):
    code = "agent_unreachable"


class AgentTimeout(RegistryError):
    code = "agent_timeout"


class SignatureRequired(RegistryError):
    """The operator requires a valid signature (AGENTDEX_REQUIRE_SIGNATURES) and the card has none."""

    code = "signature_required"


class RegistryKeyUnavailable(RegistryError):
    """The registry's own signing key cannot be loaded (key file missing, secret key changed)."""

    code = "registry_key_unavailable"
