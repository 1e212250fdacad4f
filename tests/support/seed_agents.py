"""An agent built after the seed document "Protocol Details" (../shared/spec/protocol-details.txt),
served on loopback: its card at `GET /agentCard`, JSON-RPC 2.0 at the server root (`POST /`) with
the methods, error codes and `A2A-Version` negotiation that document lists.

It is written by hand from that document, as the agents it describes are (no SDK implements this
dialect): `tasks/*` method names, `VERSION_NOT_SUPPORTED` = -32008, 1.0 and 0.3 accepted. Every
call is recorded (`calls`), so tests can assert that the registry never created work on it.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.cards import make_card, make_v03_card

CARD_PATH = "/agentCard"
ACCEPTED_VERSIONS = ("1.0", "0.3")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
TASK_NOT_FOUND, TASK_NOT_CANCELABLE, PUSH_NOT_SUPPORTED, UNSUPPORTED_OPERATION = -32001, -32002, -32003, -32004
VERSION_NOT_SUPPORTED = -32008
_PUSH_METHODS = {f"tasks/pushNotification/{verb}" for verb in ("set", "get", "delete", "list")}


class Call:
    """One JSON-RPC request as the agent received it."""

    def __init__(self, method: Any, params: Any, version_header: str | None) -> None:
        self.method = method
        self.params = params
        self.version_header = version_header


class SeedAgent:
    """A "Protocol Details" agent. `card` is "0.3" (a 0.3 card, as its `tasks/*` methods are) or
    "1.0" (a 1.0 card whose endpoint still speaks only `tasks/*`)."""

    def __init__(self, *, card: str = "0.3", name: str = "Seed Agent") -> None:
        self.card_kind = card
        self.name = name
        self.calls: list[Call] = []
        self.tasks: dict[str, dict[str, Any]] = {}
        self.card_fetches = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(), bind_and_activate=False)
        self._httpd.daemon_threads = True
        self._httpd.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._httpd.server_bind()
        self._httpd.server_activate()
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def rpc_url(self) -> str:
        return self.base_url + "/"

    @property
    def card_url(self) -> str:
        return self.base_url + CARD_PATH

    @property
    def methods(self) -> list[Any]:
        return [call.method for call in self.calls]

    def card_dict(self) -> dict[str, Any]:
        if self.card_kind == "1.0":
            return make_card(self.name, tags=["seed"], url=self.rpc_url)
        card = make_v03_card(self.name, tags=["seed"], url=self.rpc_url)
        card["capabilities"] = {"streaming": False, "pushNotifications": False}
        return card

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, request: Any, version_header: str | None) -> dict[str, Any]:
        """The JSON-RPC response to one parsed request."""
        if (
            not isinstance(request, dict)
            or request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
        ):
            return _error(request.get("id") if isinstance(request, dict) else None, INVALID_REQUEST, "Invalid Request")
        request_id, method, params = request.get("id"), request["method"], request.get("params") or {}
        self.calls.append(Call(method, params, version_header))
        if version_header is not None and version_header not in ACCEPTED_VERSIONS:
            return _error(request_id, VERSION_NOT_SUPPORTED, f"A2A-Version {version_header} is not supported")
        if method == "tasks/send":
            return _result(request_id, self._send(params))
        if method in ("tasks/get", "tasks/cancel"):
            task = self.tasks.get(str(params.get("id"))) if isinstance(params, dict) else None
            if task is None:
                return _error(request_id, TASK_NOT_FOUND, "Task not found")
            if method == "tasks/cancel":
                return _error(request_id, TASK_NOT_CANCELABLE, "Task is already in a terminal state")
            return _result(request_id, task)
        if method == "tasks/list":
            return _result(request_id, list(self.tasks.values()))
        if method in _PUSH_METHODS:
            return _error(request_id, PUSH_NOT_SUPPORTED, "Push notifications are not supported")
        if method == "tasks/sendSubscribe":
            return _error(request_id, UNSUPPORTED_OPERATION, "This agent does not stream")
        return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")

    def _send(self, params: Any) -> dict[str, Any]:
        task_id = str(uuid.uuid4())
        task = {
            "id": task_id,
            "contextId": str(uuid.uuid4()),
            "status": {"state": "completed", "timestamp": "2026-01-01T00:00:00Z"},
            "artifacts": [{"parts": [{"kind": "text", "text": "done"}]}],
        }
        self.tasks[task_id] = task
        return task

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                if self.path != CARD_PATH:
                    return self._send(404, {"error": "not found"})
                agent.card_fetches += 1
                self._send(200, agent.card_dict())

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/":
                    return self._send(404, {"error": "not found"})
                try:
                    request = json.loads(body)
                except ValueError:
                    return self._send(200, _error(None, PARSE_ERROR, "Parse error"))
                self._send(200, agent.answer(request, self.headers.get("A2A-Version")))

            def _send(self, status: int, document: Any) -> None:
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        return Handler


def _result(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
