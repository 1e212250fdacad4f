"""Typed failures of outbound HTTP calls.

`OutboundError` is a `RegistryError`: a refusal reaches a caller as `target_refused` (the URL it
gave may not be called), anything else the remote side did as `agent_unreachable`
(`registry.api.errors` gives the HTTP status); nothing should match on messages."""

# The names (OutboundRefused, OutboundTimeout, …) are the agreed API, read as sentences.
# ruff: noqa: N818

from __future__ import annotations

from typing import Any

from registry.errors import RegistryError


class OutboundError(RegistryError):
    """Root of every failure of the safe outbound HTTP client."""

    code = "agent_unreachable"

    def __init__(self, message: str, *, url: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.url = url


class OutboundRefused(OutboundError):
    """The policy forbids the call: scheme, address class, redirect target or header value.

    Raised before any byte is sent to the refused destination.
    """

    code = "target_refused"


class OutboundInvalidUrl(OutboundRefused):
    """The URL cannot be parsed, has no host, carries credentials or an invalid port."""


class OutboundTimeout(OutboundError):
    """A connect, read or whole-exchange deadline passed.

    ``phase`` is ``"connect"``, ``"read"`` or ``"total"``.
    """

    def __init__(self, message: str, *, url: str | None = None, phase: str) -> None:
        super().__init__(message, url=url)
        self.phase = phase


class OutboundConnectionError(OutboundError):
    """The host name did not resolve, the connection was refused or dropped."""


class OutboundTlsError(OutboundConnectionError):
    """The TLS handshake failed, e.g. the certificate does not match the host name."""


class OutboundTooLarge(OutboundError):
    """The response body is larger than the allowed cap."""

    def __init__(self, message: str, *, url: str | None = None, limit: int) -> None:
        super().__init__(message, url=url)
        self.limit = limit


class OutboundBadResponse(OutboundError):
    """The remote side answered, but not with usable HTTP (or usable content)."""


class OutboundTooManyRedirects(OutboundBadResponse):
    """The redirect chain is longer than the policy's ``max_redirects``."""


class OutboundInvalidJson(OutboundBadResponse):
    """The response body is not valid JSON (RFC 8259: UTF-8, no NaN/Infinity)."""
