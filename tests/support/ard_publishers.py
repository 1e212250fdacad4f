"""A loopback "publisher" domain for the manifest crawl: a real HTTP/1.1 server (keep-alive, ETags,
304s) serving an ARD manifest wherever a test puts it, nested catalogs, Agent Cards, robots.txt and
a home page, all changeable while it runs; and the entries such a manifest lists."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from tests.support.cards import make_card
from tests.support.servers import QuietHandler, serve_on_loopback

A2A = "application/a2a-agent-card+json"
CATALOG = "application/ai-catalog+json"
MCP = "application/mcp-server-card+json"
WELL_KNOWN = "/.well-known/ard.json"
LEGACY = "/.well-known/ai-catalog.json"


class ArdPublisher:
    """Serves documents at paths (404 elsewhere); records every request (path, headers)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.slow: dict[str, float] = {}  # path → seconds to wait before answering
        self._lock = threading.Lock()
        publisher = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real publishers serve
            # Headers and body leave in two writes: without TCP_NODELAY the second waits for the
            # client's delayed ACK (40 ms on Linux), which no real web server makes a client wait.
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # noqa: N802
                with publisher._lock:
                    publisher.requests.append((self.path, dict(self.headers)))
                    status, headers, body = publisher.routes.get(self.path, (404, {}, b'{"error":"not found"}'))
                    delay = publisher.slow.get(self.path, 0.0)
                time.sleep(delay)
                etag = headers.get("ETag")
                if status == 200 and etag and self.headers.get("If-None-Match") == etag:
                    status, body = 304, b""
                self.answer(status, headers, body)

        self._httpd = serve_on_loopback(Handler)

    # -- where it is ----------------------------------------------------------------------

    @property
    def domain(self) -> str:
        """`http://127.0.0.1:<port>`: the domain to register."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.domain + path

    def urn(self, name: str, namespace: str = "agent") -> str:
        """An identifier of this publisher (`urn:air:127.0.0.1:<namespace>:<name>`)."""
        return f"urn:air:127.0.0.1:{namespace}:{name}"

    # -- what it serves -------------------------------------------------------------------

    def put_json(self, path: str, document: Any, headers: dict[str, str] | None = None, *, etag: bool = True) -> str:
        """Serve `document` at `path` (with a strong ETag of its content unless `etag` is off)."""
        body = json.dumps(document).encode()
        tag = {"ETag": '"' + hashlib.sha256(body).hexdigest()[:16] + '"'} if etag else {}
        return self._put(path, 200, {**tag, **(headers or {})}, body)

    def put_text(self, path: str, text: str, content_type: str = "text/plain", status: int = 200) -> str:
        return self._put(path, status, {"Content-Type": content_type}, text.encode())

    def remove(self, path: str) -> None:
        with self._lock:
            self.routes.pop(path, None)

    def publish(self, entries: list[dict[str, Any]], path: str = WELL_KNOWN, **members: Any) -> str:
        """Serve a manifest of `entries` at `path`; its URL."""
        return self.put_json(path, {"specVersion": "1.0", **members, "entries": entries})

    def seen(self, path: str) -> int:
        with self._lock:
            return sum(1 for seen, _ in self.requests if seen == path)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _put(self, path: str, status: int, headers: dict[str, str], body: bytes) -> str:
        with self._lock:
            self.routes[path] = (status, headers, body)
        return self.url(path)

    # -- entries --------------------------------------------------------------------------

    def by_url(self, name: str, card: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """An A2A entry whose card this publisher serves at `/agents/<name>.json`."""
        url = self.put_json(f"/agents/{name}.json", card or make_card(name.title(), tags=[name]))
        return entry(self.urn(name), name.title(), url=url, **fields)

    def inline(self, name: str, card: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """An A2A entry with its card inline (`data`)."""
        return entry(self.urn(name), name.title(), data=card or make_card(name.title(), tags=[name]), **fields)

    def nested(self, name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
        """A nested catalog entry whose catalog this publisher serves at `/catalogs/<name>.json`."""
        url = self.put_json(f"/catalogs/{name}.json", {"specVersion": "1.0", "entries": entries})
        return entry(self.urn(name, "catalog"), name.title(), media_type=CATALOG, url=url)


def entry(
    identifier: str, name: str, *, media_type: str = A2A, type_key: str = "type", **fields: Any
) -> dict[str, Any]:
    """A manifest entry (`type_key` "mediaType" for the AI Catalog / v0.9 tooling shape)."""
    return {
        "identifier": identifier,
        "displayName": name,
        type_key: media_type,
        "description": f"{name}, listed for the crawl tests",
        "representativeQueries": [f"ask {name}", f"what can {name} do"],
        **fields,
    }


def serving() -> Iterator[ArdPublisher]:
    """For a fixture: a publisher, closed after the test."""
    publisher = ArdPublisher()
    try:
        yield publisher
    finally:
        publisher.close()


MISMATCHED_IDENTITY = "spiffe://squatter.example/agents/weather"


def standard_manifest(publisher: ArdPublisher) -> list[dict[str, Any]]:
    """The crawl tests' manifest: agents inline (both `type` and `mediaType` shapes) and by URL, a
    nested catalog (by URL, holding one of each), an MCP server (not an agent), a broken entry
    (both `url` and `data`) and one whose trust identity belongs to another domain."""
    nested = publisher.nested("team", [publisher.by_url("gamma"), publisher.inline("delta")])
    broken = publisher.inline("broken", url=publisher.url("/agents/alpha.json"))
    squatter = publisher.inline("squatter", trustManifest={"identity": MISMATCHED_IDENTITY})
    mcp = entry(publisher.urn("tools", "mcp"), "Tools", media_type=MCP, url=publisher.url("/mcp/tools.json"))
    return [
        publisher.by_url("alpha"),
        publisher.by_url("beta", trustManifest={"identity": "spiffe://127.0.0.1/agents/beta"}),
        publisher.inline("epsilon"),
        publisher.inline("zeta", type_key="mediaType"),
        nested,
        mcp,
        broken,
        squatter,
    ]
