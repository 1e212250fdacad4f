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


class AmbiguousId(Conflict):
    """An id prefix names more than one thing; `details.candidates` lists some of them."""

    code = "ambiguous_id"


class InvalidUrl(InvalidRequest):
    """A URL the request gives is unusable: not an absolute http(s) URL, control characters or
    whitespace, credentials, a bad host or port, a template placeholder. Answered 400 (the request
    is malformed), unlike the 422 of other invalid values; `details.rule` names the problem."""

    code = "invalid_url"


class InvalidJson(BadRequest):
    """The body is not JSON (syntax, NaN or Infinity, not UTF-8). `details.path` is `$`."""

    code = "invalid_json"


class JsonTooDeep(BadRequest):
    """The body nests arrays and objects deeper than `details.limit` levels."""

    code = "json_too_deep"


class DuplicateMember(BadRequest):
    """An object in the body repeats a member name; `details.path` and `details.member` say which."""

    code = "duplicate_member"


class InvalidUnicode(BadRequest):
    """A string or member name in the body holds an unpaired UTF-16 surrogate; `details.path` says where."""

    code = "invalid_unicode"


class NulCharacter(BadRequest):
    """A body string, member name, query value or path segment holds U+0000, which the registry
    cannot store; `details.path` (body), `details.parameter` (query) or `details.segment` says where."""

    code = "nul_character"


class QueryOverLimit(BadRequest):
    """A query string value over the length limit, or too many values; `details.parameter` names it."""

    code = "query_over_limit"
