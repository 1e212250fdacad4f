"""Typed failures of outbound HTTP calls, and their translation from urllib3 and socket failures.

`OutboundError` is a `RegistryError`: a refusal reaches a caller as `target_refused` (the URL it
gave may not be called), anything else the remote side did as `agent_unreachable`
(`registry.api.errors` gives the HTTP status); nothing should match on messages."""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from urllib3.exceptions import (
    ConnectTimeoutError,
    DecodeError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import SSLError as Urllib3SSLError

from registry.errors import RegistryError
from registry.outbound.deadline import Watch


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


_STALE_CAUSES = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


@contextmanager
def translated(url: str, watch: Watch) -> Iterator[None]:
    """Re-raise low-level failures inside the block as OutboundError subclasses."""
    try:
        yield
    except (HTTPError, OSError, http.client.HTTPException) as error:
        raise translate(error, url, watch) from error


def translate(error: BaseException, url: str, watch: Watch) -> OutboundError:
    """The OutboundError that tells a user what happened in ``error``."""
    if watch.fired or watch.remaining() <= 0:  # the watchdog shut the socket: whatever broke is its doing
        return deadline_passed(url)
    cause = root_cause(error)
    if isinstance(error, (Urllib3SSLError, ssl.SSLError)):
        return OutboundTlsError(f"{url}: TLS failed: {cause}", url=url)
    # NewConnectionError subclasses ConnectTimeoutError in urllib3 2, so it goes first.
    if isinstance(error, NewConnectionError):
        return OutboundConnectionError(f"{url}: cannot connect: {cause}", url=url)
    if isinstance(error, ConnectTimeoutError):
        return OutboundTimeout(f"{url}: connect timed out", url=url, phase="connect")
    if isinstance(error, (ReadTimeoutError, TimeoutError)):
        return OutboundTimeout(f"{url}: read timed out", url=url, phase="read")
    if isinstance(error, DecodeError) or _is_malformed_http(error):
        return OutboundBadResponse(f"{url}: malformed HTTP response: {cause}", url=url)
    return OutboundConnectionError(f"{url}: connection failed: {cause}", url=url)


def deadline_passed(url: str) -> OutboundTimeout:
    return OutboundTimeout(f"{url}: no complete answer within the total deadline", url=url, phase="total")


def is_stale_connection(error: ProtocolError) -> bool:
    """True when a pooled connection was closed by the server before it answered."""
    return any(isinstance(arg, _STALE_CAUSES) for arg in error.args)


def root_cause(error: BaseException) -> str:
    """The innermost OS-level reason (``[Errno 111] Connection refused``), else ``error``."""
    current: BaseException | None = error
    for _ in range(10):  # chains are short; the bound guards against odd args cycles
        if current is None:
            break
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
        inner = current.__cause__ or current.__context__
        if inner is None and current.args and isinstance(current.args[-1], BaseException):
            inner = current.args[-1]
        current = inner
    return str(error)


def _is_malformed_http(error: BaseException) -> bool:
    causes = [arg for arg in getattr(error, "args", ()) if isinstance(arg, BaseException)]
    return any(
        isinstance(cause, http.client.HTTPException)
        and not isinstance(cause, _STALE_CAUSES + (http.client.IncompleteRead,))
        for cause in [error, *causes]
    )
