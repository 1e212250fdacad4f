"""Keep-alive connection pools pinned to checked IP addresses.

Pinning: a pool is created with the *checked IP address* as its host, so urllib3 connects
to that address and never resolves the name again (no DNS-rebinding window between check
and connect). The name still goes where it belongs: in the Host header (set by the client)
and, for https, as TLS SNI (``server_hostname``) and as the name the certificate must match
(``assert_hostname``). Pools are keyed by scheme, IP, port and host name, i.e. one pool per
host:pinned-ip, kept in urllib3's thread-safe LRU of ``policy.pool_connections`` pools.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any

import certifi
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.response import HTTPResponse
from urllib3.util.ssl_ import create_urllib3_context

from registry.outbound.addresses import IPAddress
from registry.outbound.deadline import Watch, current_watch
from registry.outbound.policy import OutboundPolicy
from registry.outbound.target import Target


def _attach_watch(conn: HTTPConnection) -> None:
    watch = current_watch()
    conn._agentdex_watch = watch  # type: ignore[attr-defined]
    if watch is not None:
        watch.attach(conn.sock)


class _WatchedHTTPConnection(HTTPConnection):
    """Hands the socket of each exchange to the thread's deadline Watch (see deadline.py)."""

    def getresponse(self) -> HTTPResponse:  # type: ignore[override]  # as urllib3 does
        _attach_watch(self)
        return super().getresponse()


class _WatchedHTTPSConnection(HTTPSConnection):
    """The same for https."""

    def getresponse(self) -> HTTPResponse:  # type: ignore[override]  # as urllib3 does
        _attach_watch(self)
        return super().getresponse()


def _put_back(conn: HTTPConnection | None) -> HTTPConnection | None:
    # Detach before the connection becomes visible to other threads; a socket the deadline
    # shut is closed so the pool opens a fresh one instead of reusing it.
    watch: Watch | None = getattr(conn, "_agentdex_watch", None)
    if conn is not None and watch is not None:
        conn._agentdex_watch = None  # type: ignore[attr-defined]
        if watch.detach():
            conn.close()
    return conn


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection

    def _put_conn(self, conn: Any) -> None:
        super()._put_conn(_put_back(conn))


class _PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection

    def _put_conn(self, conn: Any) -> None:
        super()._put_conn(_put_back(conn))


class _PinnedPoolManager(PoolManager):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pool_classes_by_scheme = {"http": _PinnedHTTPPool, "https": _PinnedHTTPSPool}


@functools.lru_cache(maxsize=8)
def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """One verifying context per CA bundle, shared by all connections and clients: loading
    certifi's bundle takes ~150 ms, so it happens once, on the first https call."""
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    context.load_verify_locations(cafile=ca_bundle or certifi.where())
    context.hostname_checks_common_name = False
    # urllib3 matches the certificate against ``assert_hostname`` itself and switches this
    # off on every connect; doing it once keeps the shared context from being mutated.
    context.check_hostname = False
    return context


class PinnedPools:
    """Connection pools per (scheme, host name, pinned IP, port). Thread-safe."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._ca_bundle = policy.ca_bundle
        self._manager = _PinnedPoolManager(
            num_pools=policy.pool_connections,
            maxsize=policy.pool_maxsize,
            block=False,
            cert_reqs="CERT_REQUIRED",
        )

    def pool_for(self, target: Target, address: IPAddress) -> HTTPConnectionPool:
        pool_kwargs: dict[str, Any] = {"server_hostname": target.host, "assert_hostname": target.host}
        if target.scheme == "https":
            pool_kwargs["ssl_context"] = tls_context(self._ca_bundle)
        return self._manager.connection_from_host(
            str(address), port=target.port, scheme=target.scheme, pool_kwargs=pool_kwargs
        )

    def close(self) -> None:
        self._manager.clear()
