"""Real HTTP(S) servers on 127.0.0.1 whose routes are plain functions, recording what they saw.

Misbehaving routes (hang, trickle, flood) wait on ``server.released`` instead of sleeping
blindly, so stopping the server frees them at once.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from registry.outbound import OutboundPolicy, SafeHttpClient


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    client_port: int


class Exchange(BaseHTTPRequestHandler):
    """The request handler; routes receive it and answer with ``reply`` or raw writes."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Without this, Nagle + delayed ACK add 40 ms to every keep-alive exchange.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def loopback(self) -> LoopbackServer:
        return self.server.owner

    def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        fields = {"Content-Length": str(len(body)), **(headers or {})}
        for name, value in fields.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def write_raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        seen = Seen(self.command, self.path, headers, body, self.client_address[1])
        self.loopback.record(seen)
        route = self.loopback.routes.get(self.path.partition("?")[0], not_found)
        route(self)

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _dispatch  # noqa: N815

    def log_message(self, *_args: Any) -> None:
        pass


Route = Callable[[Exchange], object]


def not_found(exchange: Exchange) -> None:
    exchange.reply(404, b'{"error":"not found"}', {"Content-Type": "application/json"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops SYNs when 8 client threads connect at once
    # on a busy machine; the retransmit then takes a second.
    request_queue_size = 128
    owner: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up on purpose (size caps, timeouts) are the point of the tests


class _Server6(_Server):
    address_family = socket.AF_INET6


class LoopbackServer:
    """A ThreadingHTTPServer on 127.0.0.1 (or ``host``, e.g. ::1), free port, daemon thread."""

    def __init__(
        self, routes: dict[str, Route] | None = None, *, tls: ssl.SSLContext | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.seen: list[Seen] = []
        self.released = threading.Event()
        self.bytes_sent = 0
        self._lock = threading.Lock()
        self.host = host
        self._httpd = (_Server6 if ":" in host else _Server)((host, 0), Exchange)
        self._httpd.owner = self
        self.scheme = "http"
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
            self.scheme = "https"
        # A short poll interval: shutdown() waits for the serve loop to look at its flag.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def url(self, path: str = "/", host: str | None = None) -> str:
        host = host or (f"[{self.host}]" if ":" in self.host else self.host)
        return f"{self.scheme}://{host}:{self.port}{path}"

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def count_sent(self, size: int) -> None:
        with self._lock:
            self.bytes_sent += size

    def paths(self) -> list[str]:
        return [seen.path for seen in self.seen]

    def close(self) -> None:
        self.released.set()
        self._httpd.shutdown()
        self._httpd.server_close()


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate (its own trust anchor) and the key, as PEM files."""

    cert_path: Path
    key_path: Path

    def server_context(self, sni_seen: list[str] | None = None) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_path, self.key_path)
        if sni_seen is not None:
            context.sni_callback = lambda _sock, name, _ctx: sni_seen.append(name)
        return context


def make_certificate(directory: Path, hostname: str) -> Certificate:
    """A certificate for ``hostname`` only (no IP address entries)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return Certificate(cert_path, key_path)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Servers:
    """Starts servers for one test and stops them all at its end (see the ``servers`` fixtures)."""

    def __init__(self) -> None:
        self._started: list[LoopbackServer] = []

    def start(self, routes: dict[str, Route] | None = None, **kwargs: Any) -> LoopbackServer:
        server = LoopbackServer(routes, **kwargs)
        self._started.append(server)
        return server

    def close(self) -> None:
        for server in self._started:
            server.close()


def servers_fixture() -> Iterator[Servers]:
    servers = Servers()
    try:
        yield servers
    finally:
        servers.close()


ClientFactory = Callable[..., SafeHttpClient]

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def loopback_policy(**overrides: Any) -> OutboundPolicy:
    """Short timeouts, plain http and 127.0.0.0/8 allowed, unless overridden."""
    values: dict[str, Any] = {
        "allow_http": True,
        "allowed_networks": LOOPBACK,
        "connect_timeout": 1.0,
        "read_timeout": 1.0,
        "total_timeout": 2.0,
    }
    values.update(overrides)
    return OutboundPolicy(**values)


def fixed_resolver(table: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    """A resolver answering from ``table``; unknown names fail like NXDOMAIN."""

    def resolve(host: str, _port: int) -> list[str]:
        if host not in table:
            raise OSError(f"no such host {host}")
        return list(table[host])

    return resolve
