"""Real HTTP servers on loopback that serve whatever a test puts at a path."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing, with one call to answer."""

    def answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """`body` with `status`, `headers` (JSON unless they say otherwise) and its length."""
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


def serve_on_loopback(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (a free port) answering with `handler` in daemon threads; the caller
    shuts it down (`shutdown()`, `server_close()`)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class CardServer:
    """Serves JSON documents (or raw responses) at paths; records the requests it saw."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                server.requests.append((self.path, dict(self.headers)))
                self.answer(*server.routes.get(self.path, (404, {}, b'{"error":"not found"}')))

        self._httpd = serve_on_loopback(Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def serve_json(self, path: str, document: Any, status: int = 200, headers: dict[str, str] | None = None) -> str:
        self.routes[path] = (status, headers or {}, json.dumps(document).encode())
        return self.url(path)

    def serve_raw(self, path: str, body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> str:
        self.routes[path] = (status, headers or {}, body)
        return self.url(path)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
