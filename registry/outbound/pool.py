"""Keep-alive connection pools pinned to checked IP addresses.

Pinning: a pool is created with the *checked IP address* as its host, so urllib3 connects
to that address and never resolves the name again (no DNS-rebinding window between check
and connect). The name still goes where it belongs: in the Host header (set by the client)
and, for https, as TLS SNI (``server_hostname``) and as the name the certificate must match
(``assert_hostname``). Pools are keyed by scheme, host name, port and IP, i.e. one pool per
host:pinned-ip, in an LRU of ``policy.pool_connections`` pools.
"""

from __future__ import annotations

import functools
import ssl
import threading
from collections import OrderedDict
from typing import Any

import certifi
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.response import HTTPResponse
from urllib3.util.ssl_ import create_urllib3_context

from registry.outbound.addresses import IPAddress
from registry.outbound.deadline import Watch, current_watch
from registry.outbound.policy import OutboundPolicy
from registry.outbound.target import Target


class _WatchedHTTPConnection(HTTPConnection):
    """Hands the socket of each exchange to the thread's deadline Watch (see deadline.py)."""

    watch: Watch | None = None

    def getresponse(self) -> HTTPResponse:  # type: ignore[override]  # as urllib3 does
        self.watch = current_watch()
        if self.watch is not None:
            self.watch.attach(self.sock)
        return super().getresponse()


class _WatchedHTTPSConnection(_WatchedHTTPConnection, HTTPSConnection):
    pass


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection

    def _put_conn(self, conn: Any) -> None:
        # Detach before the connection becomes visible to other threads; a socket the deadline
        # shut is closed so the pool opens a fresh one instead of reusing it.
        watch: Watch | None = getattr(conn, "watch", None)
        if watch is not None:
            conn.watch = None
            if watch.detach():
                conn.close()
        super()._put_conn(conn)


class _PinnedHTTPSPool(_PinnedHTTPPool, HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


@functools.lru_cache(maxsize=8)
def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """One verifying context per CA bundle, shared by all connections and clients (loading a
    bundle is slow)."""
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    context.load_verify_locations(cafile=ca_bundle or certifi.where())
    context.hostname_checks_common_name = False
    # urllib3 matches the certificate against ``assert_hostname`` itself and switches this
    # off on every connect; doing it once keeps the shared context from being mutated.
    context.check_hostname = False
    return context


class PinnedPools:
    """Connection pools per (scheme, host name, port, pinned IP), least recently used evicted
    beyond ``policy.pool_connections``. Thread-safe. A plain LRU rather than urllib3's
    PoolManager, whose key normalisation costs more than the rest of a loopback request."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._ca_bundle = policy.ca_bundle
        self._max_pools = policy.pool_connections
        self._maxsize = policy.pool_maxsize
        self._pools: OrderedDict[tuple[str, str, int, str], HTTPConnectionPool] = OrderedDict()
        self._lock = threading.Lock()

    def pool_for(self, target: Target, address: IPAddress) -> HTTPConnectionPool:
        key = (target.scheme, target.host, target.port, str(address))
        evicted = None
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
                return pool
            pool = self._pools[key] = self._new_pool(target, key[3])
            if len(self._pools) > self._max_pools:
                evicted = self._pools.popitem(last=False)[1]
        if evicted is not None:
            evicted.close()  # idle connections now; busy ones are closed when handed back
        return pool

    def close(self) -> None:
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()

    def _new_pool(self, target: Target, ip: str) -> HTTPConnectionPool:
        if target.scheme == "https":
            return _PinnedHTTPSPool(
                ip,
                target.port,
                maxsize=self._maxsize,
                block=False,
                server_hostname=target.host,
                assert_hostname=target.host,
                ssl_context=tls_context(self._ca_bundle),
                cert_reqs="CERT_REQUIRED",
            )
        return _PinnedHTTPPool(ip, target.port, maxsize=self._maxsize, block=False)
