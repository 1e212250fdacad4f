"""Translation of urllib3/socket failures into the typed outbound errors."""

from __future__ import annotations

import http.client
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

from urllib3.exceptions import (
    ConnectTimeoutError,
    DecodeError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import SSLError as Urllib3SSLError

from registry.outbound.deadline import Watch
from registry.outbound.errors import (
    OutboundBadResponse,
    OutboundConnectionError,
    OutboundError,
    OutboundTimeout,
    OutboundTlsError,
)

_STALE_CAUSES = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


@contextmanager
def translated(url: str, watch: Watch) -> Iterator[None]:
    """Re-raise low-level failures inside the block as OutboundError subclasses."""
    try:
        yield
    except OutboundError:
        raise
    except (HTTPError, OSError, http.client.HTTPException) as error:
        raise translate(error, url, watch) from error


def translate(error: BaseException, url: str, watch: Watch) -> OutboundError:
    """The OutboundError that tells a user what happened in ``error``."""
    # After the watchdog shut the socket, whatever broke is the deadline's doing.
    if watch.fired or watch.remaining() <= 0:
        return OutboundTimeout(
            f"{url}: no complete answer within the total deadline", url=url, phase="total"
        )
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
