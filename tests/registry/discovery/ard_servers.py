"""Registries on loopback for the federation tests: whole Agentdex apps served over HTTP (each on
its own database), and a small ARD registry that answers what a test tells it to, slowly, with a
500, or not at all."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from registry.app import create_app
from registry.container import Services, build_services
from registry.db import make_engine
from registry.migrate import upgrade
from registry.settings import ArdSettings, Settings
from tests.support.servers import QuietHandler, serve_on_loopback


class ServedApp:
    """A WSGI app served over HTTP on loopback. The port is known before the app is built (two
    registries that name each other); `serve(app)` puts the app behind it."""

    def __init__(self) -> None:
        self.app: Any = None
        self._server = make_server("127.0.0.1", 0, self._dispatch, threaded=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def serve(self, app: Any) -> None:
        self.app = app

    def _dispatch(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        return self.app(environ, start_response)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def agentdex_settings(
    settings: Settings, database_url: str, upstreams: tuple[str, ...] = (), timeout: float = 2.0
) -> Settings:
    """`settings` on another database, with these upstreams."""
    ard = dataclasses.replace(ArdSettings(), upstreams=upstreams, federation_timeout=timeout)
    return dataclasses.replace(settings, database_url=database_url, ard=ard)


def migrated_sqlite(path: Path) -> str:
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    return url


def served_agentdex(served: ServedApp, settings: Settings) -> Services:
    """An Agentdex registry behind `served`; the caller closes its services."""
    services = build_services(settings)
    served.serve(create_app(services=services))
    return services


@dataclasses.dataclass
class StubReply:
    status: int = 200
    body: Any = dataclasses.field(default_factory=lambda: {"results": []})
    hang: bool = False  # never answer (until the server closes)


class StubRegistry:
    """An ARD registry's `POST /search` that answers `reply` (or `reply_for(request body)`), and
    records each request's headers and body."""

    def __init__(self, reply: StubReply | None = None) -> None:
        self.reply = reply or StubReply()
        self.reply_for: Callable[[dict[str, Any]], StubReply] | None = None
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self._closing = threading.Event()
        stub = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                stub.requests.append((dict(self.headers), body))
                reply = stub.reply_for(body) if stub.reply_for else stub.reply
                if reply.hang:
                    stub._closing.wait(30)
                    return
                self.answer(reply.status, {}, json.dumps(reply.body).encode())

        self._httpd = serve_on_loopback(Handler)

    @property
    def url(self) -> str:
        """The base URL of its ARD API."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/ard"

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def stub_result(identifier: str, name: str, score: int, **extra: Any) -> dict[str, Any]:
    return {
        "identifier": identifier,
        "displayName": name,
        "type": "application/a2a-agent-card+json",
        "url": f"https://cards.example/{identifier}.json",
        "score": score,
        "source": "https://elsewhere.example/ard",
        **extra,
    }
