"""The answer to an outbound request: read under a size cap, then detached from the connection."""

from __future__ import annotations

from dataclasses import dataclass

from urllib3 import BaseHTTPResponse, HTTPHeaderDict

from registry import jsontext
from registry.outbound.errors import OutboundInvalidJson, OutboundTooLarge
from registry.outbound.target import Target
from signing import JsonInputError

_READ_CHUNK = 65_536


@dataclass(frozen=True)
class OutboundResponse:
    """``url`` is the final URL after redirects; ``elapsed`` covers the whole exchange.

    ``headers`` are case-insensitive; a repeated field reads as its values joined with ", "
    (RFC 9110 §5.3), and ``headers.getlist(name)`` gives them one by one.
    """

    url: str
    status: int
    headers: HTTPHeaderDict
    body: bytes
    elapsed: float

    def json(self) -> object:
        """The body parsed as JSON. Raises OutboundInvalidJson."""
        return parse_json(self.body, url=self.url)


def parse_json(body: bytes, *, url: str | None = None) -> object:
    """Parse the body with the strict reader every JSON input goes through (no NaN, no repeated
    member names, no lone surrogates, at most 64 levels deep, no U+0000). Raises OutboundInvalidJson."""
    try:
        return jsontext.loads_input(body)
    except JsonInputError as error:
        raise OutboundInvalidJson(f"the body is not acceptable JSON: {error}", url=url) from None


def read_capped(response: BaseHTTPResponse, target: Target, cap: int) -> bytes:
    """The whole body. Raises OutboundTooLarge when it announces or sends more than ``cap`` bytes."""
    declared = (response.headers.get("content-length") or "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > cap:
        raise OutboundTooLarge(
            f"{target.url} announces {int(declared)} bytes, over the limit of {cap}", url=target.url, limit=cap
        )
    chunks: list[bytes] = []
    size = 0
    # Never asks for more than cap + 1 bytes in total: one byte over proves "too large".
    while chunk := response.read1(min(_READ_CHUNK, cap + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            raise OutboundTooLarge(f"{target.url} sent more than {cap} bytes", url=target.url, limit=cap)
    return b"".join(chunks)


def discard(response: BaseHTTPResponse) -> None:
    """Give up on a response: its connection is in an unknown state, so it is closed, then handed
    back (which keeps the pool's slot and detaches the deadline watch)."""
    response.close()
    response.release_conn()
