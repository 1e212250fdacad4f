"""Real A2A agents on loopback for health and crawl tests.

- `SdkAgent`: the official `a2a-sdk` 1.x JSON-RPC server (uvicorn in a thread). With
  `compat=True` the same endpoint also speaks 0.3 (the SDK's `enable_v0_3_compat`), and with
  `card="0.3"` it publishes a pure 0.3 card: a 0.3 agent as the SDK serves one. Its executor
  records every message it is asked to handle (`messages`), and every JSON-RPC method that
  reached the endpoint is recorded (`methods`), so tests can assert that probes never send one.
- `PlainAgent`: a hand-written HTTP server whose endpoint misbehaves on purpose (hangs, 500,
  HTML, bearer token required, another protocol version, wrong id, …).

Both can be stopped (the port then refuses connections) and started again on the same port.

`LOOPBACK_DEADLINE` is the probe deadline for tests that expect these agents to answer (or to
refuse): the agents run in the test's own process, so one full garbage collection on a loaded CI
machine can hold an answer back for over half a second, while loopback takes milliseconds. Ten
seconds cannot be missed by accident and still ends a real hang.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.cards import make_card, make_v03_card

AGENT_PATH = "/a2a"
CARD_PATH = "/.well-known/agent-card.json"
LOOPBACK_DEADLINE = 10.0
_STOP_DEADLINE = 10.0


def serve_in_thread(app: Any, sock: socket.socket, what: str) -> tuple[Any, threading.Thread]:
    """Run an ASGI app under uvicorn on `sock` in a daemon thread; return once it accepts."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="off", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:  # start-up, not the behaviour under test
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.005)
    return server, thread


def _wait_until_refused(port: int, what: str) -> None:
    """Return once 127.0.0.1:`port` refuses connections; RuntimeError after a deadline."""
    deadline = time.monotonic() + _STOP_DEADLINE
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
        except ConnectionRefusedError:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} still accepts connections on port {port}")
        time.sleep(0.005)  # only the kernel knows; poll it until the deadline


def _listening_socket(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


class _RecordingExecutor:
    """An AgentExecutor that answers nothing and remembers every message it was given."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def as_sdk_executor(self) -> Any:
        from a2a.server.agent_execution import AgentExecutor

        recorder = self

        class Executor(AgentExecutor):
            async def execute(self, context: Any, event_queue: Any) -> None:
                recorder.messages.append(context.message)

            async def cancel(self, context: Any, event_queue: Any) -> None:
                recorder.messages.append(("cancel", context.task_id))

        return Executor()


class SdkAgent:
    """A real a2a-sdk JSON-RPC agent. `card` is "1.0" (the SDK's own card) or "0.3"."""

    def __init__(
        self, *, compat: bool = False, card: str = "1.0", name: str = "SDK Agent", cache_control: str | None = None
    ) -> None:
        self.compat = compat
        self.card_kind = card
        self.name = name
        self.cache_control = cache_control
        self.executor = _RecordingExecutor()
        self.methods: list[tuple[str, str | None]] = []  # (JSON-RPC method, A2A-Version header)
        self._sock = _listening_socket()
        self.port = int(self._sock.getsockname()[1])
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def rpc_url(self) -> str:
        return self.base_url + AGENT_PATH

    @property
    def messages(self) -> list[Any]:
        return self.executor.messages

    def card_dict(self) -> dict[str, Any]:
        if self.card_kind == "0.3":
            return make_v03_card(self.name, tags=["sdk"], url=self.rpc_url)
        card = make_card(self.name, tags=["sdk"], url=self.rpc_url)
        if self.compat:
            card["supportedInterfaces"].append(
                {"url": self.rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
            )
        return card

    def start(self) -> None:
        """Serve on `port`. The socket listens before this returns, so connections are accepted."""
        if self._sock is None:
            self._sock = _listening_socket(self.port)
        self._server, self._thread = serve_in_thread(self._app(), self._sock, "the SDK agent")

    def stop(self) -> None:
        """Stop serving; return once no connection to the agent is left open and the port refuses.

        uvicorn's shutdown closes idle kept-alive connections and waits for busy ones, so once its
        thread has ended, a connection a client keeps in its pool reads as closed by the agent.
        Raises RuntimeError if the server does not stop within a deadline.
        """
        if self._server is not None:
            self._server.should_exit = True
            assert self._thread is not None
            self._thread.join(timeout=_STOP_DEADLINE)
            if self._thread.is_alive():
                raise RuntimeError(f"the SDK agent on port {self.port} did not stop")
            self._server = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        _wait_until_refused(self.port, "the stopped SDK agent")

    def _app(self) -> Any:
        from a2a.server.request_handlers import DefaultRequestHandler
        from a2a.server.routes import create_agent_card_routes
        from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
        from a2a.server.tasks import InMemoryTaskStore
        from a2a.types import AgentCard
        from google.protobuf.json_format import ParseDict
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        sdk_card = ParseDict(
            make_card(self.name, tags=["sdk"], url=self.rpc_url) if self.card_kind == "0.3" else self.card_dict(),
            AgentCard(),
        )
        handler = DefaultRequestHandler(self.executor.as_sdk_executor(), InMemoryTaskStore(), sdk_card)
        dispatcher = JsonRpcDispatcher(handler, enable_v0_3_compat=self.compat)

        async def rpc(request: Request) -> Response:
            body = await request.body()  # Starlette keeps it for the dispatcher
            try:
                method = json.loads(body).get("method")
            except (ValueError, AttributeError):
                method = None
            self.methods.append((str(method), request.headers.get("a2a-version")))
            return await dispatcher.handle_requests(request)

        routes = [Route(AGENT_PATH, rpc, methods=["POST"])]
        if self.card_kind == "1.0":
            routes += create_agent_card_routes(sdk_card, cache_control=self.cache_control)
        else:
            card = self.card_dict()
            routes.append(Route(CARD_PATH, lambda _request: JSONResponse(card), methods=["GET"]))
        return Starlette(routes=routes)


Behaviour = Callable[[dict[str, Any], dict[str, str]], tuple[int, dict[str, str], bytes]]


def rpc_error(code: int, message: str = "error", *, same_id: bool = True) -> Behaviour:
    def answer(request: dict[str, Any], _headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        request_id = request.get("id") if same_id else "not-your-id"
        body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    return answer


def raw(status: int, body: bytes, content_type: str = "text/html", **headers: str) -> Behaviour:
    return lambda _request, _headers: (status, {"Content-Type": content_type, **headers}, body)


def bearer_required(token: str = "secret") -> Behaviour:
    def answer(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if headers.get("authorization") != f"Bearer {token}":
            return (
                401,
                {"WWW-Authenticate": 'Bearer realm="agent"', "Content-Type": "application/json"},
                b'{"error":"unauthorized"}',
            )
        return rpc_error(-32001, "Task not found")(request, headers)

    return answer


def slow(seconds: float, then: Behaviour) -> Behaviour:
    def answer(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        time.sleep(seconds)  # the agent under test is slow; the test itself never waits on it
        return then(request, headers)

    return answer


TASK_NOT_FOUND = rpc_error(-32001, "Task not found")


def tenant_required(tenant: str) -> Behaviour:
    """A multi-tenant endpoint (A2A v1.0 `AgentInterface.tenant`): a request without its tenant in
    the params, or with another one, is routed to no agent (404, not JSON-RPC)."""

    def answer(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        params = request.get("params")
        if not isinstance(params, dict) or params.get("tenant") != tenant:
            return 404, {"Content-Type": "application/json"}, b'{"error":"no such tenant"}'
        return TASK_NOT_FOUND(request, headers)

    return answer


class PlainAgent:
    """An agent whose JSON-RPC endpoint answers with `behaviour`; `"hang"` never answers."""

    def __init__(
        self, behaviour: Behaviour | str = TASK_NOT_FOUND, *, card: str = "1.0", tenant: str | None = None
    ) -> None:
        self.behaviour = behaviour
        self.card_kind = card
        self.tenant = tenant  # declared on the 1.0 card's interface
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []
        self._release = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def rpc_url(self) -> str:
        return self.base_url + AGENT_PATH

    def card_dict(self) -> dict[str, Any]:
        if self.card_kind == "0.3":
            return make_v03_card("Plain Agent", tags=["plain"], url=self.rpc_url)
        card = make_card("Plain Agent", tags=["plain"], url=self.rpc_url)
        if self.tenant is not None:
            card["supportedInterfaces"][0]["tenant"] = self.tenant
        return card

    def start(self) -> None:
        self._release.clear()
        httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler(), bind_and_activate=False)
        httpd.allow_reuse_address = True
        httpd.daemon_threads = True
        httpd.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        httpd.server_bind()
        httpd.server_activate()
        self.port = int(httpd.server_address[1])
        self._httpd = httpd
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def stop(self) -> None:
        self._release.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                if self.path != CARD_PATH:
                    return self._send(404, {"Content-Type": "application/json"}, b'{"error":"not found"}')
                self._send(200, {"Content-Type": "application/json"}, json.dumps(agent.card_dict()).encode())

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    request = json.loads(body)
                except ValueError:
                    request = {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                agent.requests.append((request, headers))
                if agent.behaviour == "hang":
                    agent._release.wait(30)
                    return
                assert callable(agent.behaviour)
                self._send(*agent.behaviour(request, headers))

            def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        return Handler
