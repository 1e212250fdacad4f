"""Real peers of the push relay on loopback: a client's webhook receiver, and the registry itself
served over HTTP (agents POST to it, so the Flask test client is not enough)."""

from __future__ import annotations

import base64
import dataclasses
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.exceptions import InvalidSignature
from werkzeug.serving import make_server

from signing import load_public_jwk

Answer = tuple[int, dict[str, str], bytes]


@dataclasses.dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


class WebhookReceiver:
    """Records every POST. Answers from `script` first (an `Answer`, or "hang" to never answer
    until closed), then `default`. `wait_for(n)` blocks until n requests arrived."""

    def __init__(self, default: Answer = (200, {}, b"ok")) -> None:
        self.default = default
        self.script: list[Answer | str] = []
        self.rule: Callable[[Received], Answer | None] | None = None  # consulted before the script
        self.received: list[Received] = []
        self._cond = threading.Condition()
        self._release = threading.Event()
        # The listen backlog is set before listen(): many workers connect at once, and a full
        # backlog drops connections until the client's connect timeout.
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(), bind_and_activate=False)
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 128
        self._httpd.server_bind()
        self._httpd.server_activate()
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/hook"

    def fail_next(self, count: int, status: int = 500, headers: dict[str, str] | None = None) -> None:
        self.script.extend([(status, headers or {}, b"not now")] * count)

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Received]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.received) >= count, timeout):
                raise AssertionError(f"the receiver got {len(self.received)} requests, not {count}, in {timeout} s")
            return list(self.received)

    def wait_until(self, predicate: Callable[[list[Received]], bool], timeout: float = 15.0) -> list[Received]:
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self.received), timeout):
                raise AssertionError(
                    f"the receiver's condition did not hold within {timeout} s ({len(self.received)} requests)"
                )
            return list(self.received)

    @property
    def released(self) -> bool:
        """True once `close()` let go of the requests it held ("hang")."""
        return self._release.is_set()

    def distinct_ids(self) -> set[str]:
        with self._cond:
            return {r.webhook_id for r in self.received}

    def close(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, received: Received) -> Answer | str:
        with self._cond:
            ruled = self.rule(received) if self.rule is not None else None
            answer = ruled or (self.script.pop(0) if self.script else self.default)
            self.received.append(received)
            self._cond.notify_all()
        return answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if len(body) < length:  # the sender died mid-request (a killed worker): nothing arrived
                    self.close_connection = True
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer = receiver._answer(Received(self.path, headers, body))
                if answer == "hang":
                    receiver._release.wait(30)
                    self.close_connection = True  # closed unanswered: the sender sees it at once
                    return
                status, extra, payload = answer  # type: ignore[misc]
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_args: Any) -> None:
                pass

        return Handler


def verify_webhook(received: Received, jwks: dict[str, Any]) -> bool:
    """Standard Webhooks v1a: an Ed25519 signature over "{id}.{timestamp}.{body}" by a JWKS key."""
    content = f"{received.headers['webhook-id']}.{received.headers['webhook-timestamp']}.".encode() + received.body
    for signature in received.headers["webhook-signature"].split():
        scheme, _, value = signature.partition(",")
        if scheme != "v1a":
            continue
        for jwk in jwks["keys"]:
            try:
                load_public_jwk(jwk).public_key.verify(base64.b64decode(value), content)
                return True
            except InvalidSignature:
                continue
    return False


class LiveRegistry:
    """The Flask app served by werkzeug on loopback, in a thread."""

    def __init__(self, app: Any) -> None:
        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def close(self) -> None:
        self._server.shutdown()
