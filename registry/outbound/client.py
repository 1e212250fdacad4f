"""The one HTTP client for every outbound call of the registry (crawler, JWKS, probes, relay).

The policy (``OutboundPolicy``) holds everywhere: scheme allowlist, address classes refused
unless allowlisted, DNS resolved once per hop and the connection pinned to the checked address
(``pool.py``), every redirect hop re-checked, connect/read timeouts plus a wall-clock deadline
(``deadline.py``), a response size cap enforced while streaming, and header injection refused.
"""

from __future__ import annotations

import ipaddress
import json as jsonlib
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TypedDict, Unpack
from urllib.parse import urljoin

from urllib3 import BaseHTTPResponse, HTTPConnectionPool
from urllib3.exceptions import ProtocolError
from urllib3.util import Timeout

from registry.outbound.addresses import IPAddress
from registry.outbound.deadline import DeadlineWatchdog, Watch, watching
from registry.outbound.errors import (
    OutboundConnectionError,
    OutboundInvalidUrl,
    OutboundRefused,
    OutboundTooManyRedirects,
    deadline_passed,
    is_stale_connection,
    translated,
)
from registry.outbound.policy import OutboundPolicy
from registry.outbound.pool import PinnedPools
from registry.outbound.refusals import AddressRefusal, first_allowed, refused_address, refused_http
from registry.outbound.response import OutboundResponse, discard, read_capped
from registry.outbound.target import Target, check_headers, check_method, parse_target

Resolver = Callable[[str, int], list[str]]

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Methods that may be re-sent when a kept-alive connection turns out to be closed.
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
# Never carried to another origin by a redirect (as in requests and browsers).
_CREDENTIAL_FIELDS = frozenset({"authorization", "cookie", "proxy-authorization"})


def resolve_host(host: str, port: int) -> list[str]:
    """The addresses of ``host`` in resolver order. Raises OutboundConnectionError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise OutboundConnectionError(f"cannot resolve {host}: {error}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class _Hop:
    method: str
    target: Target
    headers: Mapping[str, str]
    body: bytes | None
    via: str | None = None  # the URL that redirected here


class RequestOptions(TypedDict, total=False):
    """The keyword arguments of ``SafeHttpClient.request``, for ``get`` and ``post``."""

    headers: Mapping[str, str] | None
    body: bytes | None
    json: object
    max_bytes: int | None
    timeout: float | None
    follow_redirects: bool | None


class SafeHttpClient:
    """Thread-safe, keep-alive HTTP client that enforces an ``OutboundPolicy``.

    ``resolver(host, port)`` returns IP address strings; the default uses getaddrinfo. DNS
    resolution is not interruptible, so it is bounded by the system resolver's own timeout
    rather than by ``total_timeout``.
    """

    def __init__(self, policy: OutboundPolicy, *, resolver: Resolver | None = None) -> None:
        self._policy = policy
        self._resolver = resolver or resolve_host
        self._pools = PinnedPools(policy)
        self._watchdog = DeadlineWatchdog()

    @property
    def policy(self) -> OutboundPolicy:
        return self._policy

    def check_url(self, url: str) -> None:
        """Check that ``url`` may be called now (e.g. a webhook target at subscription time).

        Raises OutboundRefused (OutboundInvalidUrl when malformed) saying why: scheme,
        credentials, or the class of every address the name resolves to;
        OutboundConnectionError when the name does not resolve.
        """
        target = parse_target(url)
        self._check_scheme(target)
        self._pin(target, via=None)

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        json: object = None,
        max_bytes: int | None = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> OutboundResponse:
        """Send one request and read the whole response (redirects followed per policy).

        ``max_bytes`` replaces the policy's response cap, ``timeout`` its total deadline.
        Raises OutboundRefused before anything is sent to a refused destination,
        OutboundTimeout, OutboundConnectionError (OutboundTlsError), OutboundTooLarge,
        OutboundBadResponse (OutboundTooManyRedirects). Raises ValueError when both
        ``body`` and ``json`` are given.
        """
        hop = self._first_hop(method, url, headers or {}, body, json)
        cap = self._policy.max_response_bytes if max_bytes is None else max_bytes
        follow = self._policy.max_redirects > 0 if follow_redirects is None else follow_redirects
        started = time.monotonic()
        watch = self._watchdog.watch(self._policy.total_timeout if timeout is None else timeout)
        try:
            with watching(watch):
                return self._exchange(hop, cap, follow, watch, started)
        finally:
            watch.finish()

    def get(self, url: str, **options: Unpack[RequestOptions]) -> OutboundResponse:
        """``request("GET", url, ...)``; raises what ``request`` raises."""
        return self.request("GET", url, **options)

    def post(self, url: str, **options: Unpack[RequestOptions]) -> OutboundResponse:
        """``request("POST", url, ...)``; raises what ``request`` raises."""
        return self.request("POST", url, **options)

    def close(self) -> None:
        """Close idle connections and stop the deadline thread; requests then raise RuntimeError."""
        self._pools.close()
        self._watchdog.stop()

    def __enter__(self) -> SafeHttpClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # -- one exchange -------------------------------------------------------------------

    def _first_hop(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, json: object) -> _Hop:
        if body is not None and json is not None:
            raise ValueError("pass either body or json, not both")
        fields = {"User-Agent": self._policy.user_agent}
        if json is not None:
            body = jsonlib.dumps(json, separators=(",", ":"), ensure_ascii=False).encode()
            fields["Content-Type"] = "application/json"
        for name, value in check_headers(headers).items():
            fields = _without(fields, {name.lower()})
            fields[name] = value
        target = parse_target(url)
        self._check_scheme(target)
        return _Hop(check_method(method), target, fields, body)

    def _exchange(self, hop: _Hop, cap: int, follow: bool, watch: Watch, started: float) -> OutboundResponse:
        redirects = 0
        while True:
            response = self._send(hop, watch)
            location = response.headers.get("location")
            if not (follow and response.status in _REDIRECT_STATUSES and location):
                body = self._read_body(response, hop.target, cap, watch)
                elapsed = time.monotonic() - started
                return OutboundResponse(hop.target.url, response.status, response.headers, body, elapsed)
            try:
                if redirects >= self._policy.max_redirects:
                    raise OutboundTooManyRedirects(
                        f"{hop.target.url} redirects more than {self._policy.max_redirects} times",
                        url=hop.target.url,
                    )
                next_hop = self._redirected(hop, response.status, location)
            except BaseException:
                discard(response)
                raise
            discard(response)
            hop, redirects = next_hop, redirects + 1

    def _send(self, hop: _Hop, watch: Watch) -> BaseHTTPResponse:
        address = self._pin(hop.target, via=hop.via)
        pool = self._pools.pool_for(hop.target, address)
        headers = {**hop.headers, "Host": hop.target.authority}
        with translated(hop.target.url, watch):
            timeout = self._hop_timeout(hop.target, watch)
            return self._urlopen(pool, hop, headers, timeout, watch)

    def _urlopen(
        self,
        pool: HTTPConnectionPool,
        hop: _Hop,
        headers: dict[str, str],
        timeout: Timeout,
        watch: Watch,
    ) -> BaseHTTPResponse:
        attempts = 2 if hop.method in _IDEMPOTENT else 1
        for attempt in range(1, attempts + 1):
            try:
                return pool.urlopen(
                    hop.method,
                    hop.target.request_target,
                    body=hop.body,
                    headers=headers,
                    retries=False,
                    redirect=False,
                    assert_same_host=False,
                    timeout=timeout,
                    release_conn=False,
                    preload_content=False,
                )
            except ProtocolError as error:
                # A kept-alive connection the server closed while it sat in the pool.
                if attempt == attempts or watch.fired or not is_stale_connection(error):
                    raise
        raise AssertionError("unreachable")

    def _hop_timeout(self, target: Target, watch: Watch) -> Timeout:
        remaining = watch.remaining()
        if remaining <= 0:
            raise deadline_passed(target.url)
        policy = self._policy
        return Timeout(connect=min(policy.connect_timeout, remaining), read=min(policy.read_timeout, remaining))

    def _read_body(self, response: BaseHTTPResponse, target: Target, cap: int, watch: Watch) -> bytes:
        try:
            with translated(target.url, watch):
                body = read_capped(response, target, cap)
                if watch.fired:
                    # The watchdog's shutdown reads as an end of stream, so what arrived may
                    # look complete (headers ended by EOF, a close-delimited body) but is not.
                    raise deadline_passed(target.url)
        except BaseException:
            discard(response)
            raise
        response.release_conn()
        return body

    def _redirected(self, hop: _Hop, status: int, location: str) -> _Hop:
        try:
            target = parse_target(urljoin(hop.target.url, location))
        except (OutboundInvalidUrl, ValueError) as error:
            raise OutboundRefused(
                f"{hop.target.url} redirects to {location!r}, refused: {error}", url=hop.target.url
            ) from None
        self._check_scheme(target, redirected_from=hop.target.url)
        method, body, headers = hop.method, hop.body, hop.headers
        # RFC 9110 §15.4.4: 303 turns into GET; 301/302 after POST do too, as all clients do.
        if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
            method, body, headers = "GET", None, _without(headers, {"content-type"})
        if target.origin != hop.target.origin:
            headers = _without(headers, _CREDENTIAL_FIELDS)
        return _Hop(method, target, headers, body, via=hop.target.url)

    # -- policy checks ------------------------------------------------------------------

    def _check_scheme(self, target: Target, *, redirected_from: str | None = None) -> None:
        if target.scheme == "http" and not self._policy.allow_http:
            raise refused_http(target, self._policy, redirected_from, self._known_refusal(target))

    def _pin(self, target: Target, *, via: str | None) -> IPAddress:
        """The first address of the host that the policy allows. Raises OutboundRefused."""
        literal = target.literal_ip
        allowed = first_allowed([literal] if literal is not None else self._resolve(target), self._policy)
        if isinstance(allowed, AddressRefusal):
            raise refused_address(target, allowed, self._policy, via)
        return allowed

    def _known_refusal(self, target: Target) -> AddressRefusal | None:
        """Whether the address would be refused too, so one message names both settings. Resolving
        asks the resolver, never the refused destination; a name that does not resolve says nothing."""
        try:
            addresses = [target.literal_ip] if target.literal_ip is not None else self._resolve(target)
        except OutboundConnectionError:
            return None
        refusal = first_allowed(addresses, self._policy)
        return refusal if isinstance(refusal, AddressRefusal) else None

    def _resolve(self, target: Target) -> list[IPAddress]:
        try:
            answers = self._resolver(target.host, target.port)
        except OSError as error:
            raise OutboundConnectionError(f"cannot resolve {target.host}: {error}", url=target.url) from None
        addresses = []
        for answer in answers:
            try:
                addresses.append(ipaddress.ip_address(answer))
            except ValueError:
                continue  # a resolver answer that is not an address cannot be connected to
        if not addresses:
            raise OutboundConnectionError(f"{target.host} resolves to no address", url=target.url)
        return addresses


def _without(headers: Mapping[str, str], lowered_names: frozenset[str] | set[str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.lower() not in lowered_names}
