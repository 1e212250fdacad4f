"""Reading a response body under a size cap, and giving up on a response."""

from __future__ import annotations

from urllib3 import BaseHTTPResponse

from registry.outbound.errors import OutboundTimeout, OutboundTooLarge
from registry.outbound.target import Target

_READ_CHUNK = 65_536


def content_length(response: BaseHTTPResponse) -> int | None:
    """The announced body size; None when absent or not a plain decimal number."""
    value = (response.headers.get("content-length") or "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def read_capped(response: BaseHTTPResponse, target: Target, cap: int) -> bytes:
    """The whole body. Raises OutboundTooLarge as soon as it exceeds ``cap`` bytes."""
    # Never asks for more than cap + 1 bytes in total: one byte over proves "too large".
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(min(_READ_CHUNK, cap + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            raise OutboundTooLarge(
                f"{target.url} sent more than {cap} bytes", url=target.url, limit=cap
            )
    return b"".join(chunks)


def deadline_passed(target: Target) -> OutboundTimeout:
    return OutboundTimeout(
        f"{target.url}: no complete answer within the total deadline", url=target.url,
        phase="total",
    )


def discard(response: BaseHTTPResponse) -> None:
    # Close rather than reuse: the connection is in an unknown state. Handing it back
    # (closed) keeps the pool's slot and detaches the deadline watch.
    response.close()
    response.release_conn()
