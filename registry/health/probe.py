"""Probing one JSON-RPC interface of an agent without creating work on it.

The probe asks for a task that cannot exist (a random UUID): v1.x interfaces get `GetTask` with
the `A2A-Version` header (A2A v1.0 §3.6.1: clients MUST send it), 0.x and legacy cards get
`tasks/get` (v0.3 §7.3) without the header (v1.0 §3.6.2: an empty value means 0.3). A live agent
answers `TaskNotFoundError` (-32001). Nothing that sends a message is ever called. An interface
that declares a `tenant` (v1.0 AgentInterface) gets it in the request's params, as every v1.0
request message carries it (`GetTaskRequest.tenant`; the JSON-RPC binding sends the message as
`params`): a client MUST send the tenant its card declares, and a multi-tenant endpoint cannot
route a request without it.

How an answer is judged (issue 5):
- a well-formed JSON-RPC response carrying the request's id: `up`;
- HTTP 401/403: `up`, reason `authRequired` (alive, needs credentials);
- -32601 method not found, -32600 invalid request, -32009 version not supported (v1.0 §3.3.2):
  `degraded`, reason `protocolMismatch` (reachable, but not speaking the version its card claims);
- timeout, connection error, 5xx, a body that is not JSON / not JSON-RPC, or the wrong id: `down`;
- an `up` answer slower than the threshold: `degraded`, reason `slow`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from registry.db.types import utcnow
from registry.metrics import NULL_METRICS, Metrics
from registry.outbound import (
    OutboundConnectionError,
    OutboundError,
    OutboundRefused,
    OutboundResponse,
    OutboundTimeout,
    OutboundTlsError,
    OutboundTooLarge,
    SafeHttpClient,
)
from registry.outbound.response import parse_json

MISMATCH_CODES = frozenset({-32601, -32600, -32009})
# `Major.Minor` at the start of a card's protocolVersion, in ASCII digits: `isdigit` also takes
# "²" (which `int` refuses) and "٣" (which no HTTP header can carry).
_MAJOR_MINOR = re.compile(r"([0-9]+)(?:\.[0-9]+)?")
MAX_INTERFACES = 4  # a card listing many endpoints must not turn a probe into a flood
MAX_ANSWER_BYTES = 65_536
_FAILURE_REASONS = (  # the first that matches: a TLS error is also a connection error
    (OutboundTimeout, "timeout"),
    (OutboundTlsError, "tlsError"),
    (OutboundConnectionError, "connectionError"),
    (OutboundRefused, "refused"),
    (OutboundTooLarge, "tooLarge"),
)


@dataclasses.dataclass(frozen=True)
class ProbeTarget:
    """One JSON-RPC interface as the card declares it."""

    url: str
    protocol_version: str | None
    tenant: str | None = None

    @property
    def is_v1(self) -> bool:
        version = _MAJOR_MINOR.match(self.protocol_version or "")
        return version is not None and int(version.group(1)) >= 1

    @property
    def method(self) -> str:
        return "GetTask" if self.is_v1 else "tasks/get"

    @property
    def version_header(self) -> str | None:
        """`Major.Minor` only: patch versions MUST NOT be used in requests (v1.0 §3.6)."""
        version = _MAJOR_MINOR.match(self.protocol_version or "")
        return version.group() if version is not None and self.is_v1 else None


@dataclasses.dataclass(frozen=True)
class ProbeResult:
    target: ProbeTarget
    checked_at: dt.datetime
    outcome: str  # up, degraded, down
    reason: str
    latency_ms: int | None = None
    http_status: int | None = None
    rpc_code: int | None = None
    detail: str | None = None


@dataclasses.dataclass(frozen=True)
class Verdict:
    outcome: str
    reason: str
    rpc_code: int | None = None
    detail: str | None = None


def probe_targets(interfaces: Sequence[Mapping[str, Any]]) -> list[ProbeTarget]:
    """The JSON-RPC interfaces of an agent (as stored on `agents.interfaces`), de-duplicated."""
    targets: dict[tuple[str, str, str | None, str | None], ProbeTarget] = {}
    for interface in interfaces:
        if str(interface.get("protocolBinding", "")).upper() == "JSONRPC" and interface.get("url"):
            target = ProbeTarget(str(interface["url"]), interface.get("protocolVersion"), interface.get("tenant"))
            targets.setdefault((target.url, target.method, target.version_header, target.tenant), target)
    return list(targets.values())[:MAX_INTERFACES]


class HealthProbe:
    """Sends one harmless JSON-RPC call to an interface and judges the answer."""

    def __init__(
        self,
        http: SafeHttpClient,
        *,
        timeout: float,
        slow_after: float,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        clock: Callable[[], dt.datetime] = utcnow,
        metrics: Metrics = NULL_METRICS,
    ) -> None:
        self._post = functools.partial(http.post, max_bytes=MAX_ANSWER_BYTES, timeout=timeout, follow_redirects=False)
        self._slow_after = slow_after
        self._new_id = new_id
        self._clock = clock
        self._user_agent = f"{http.policy.user_agent} health-probe"
        self._metrics = metrics

    def probe(self, target: ProbeTarget) -> ProbeResult:
        """Probe `target`. Never raises for anything the agent or the network does."""
        started = time.perf_counter()
        result = self._probe(target)
        self._metrics.probe(result.outcome, time.perf_counter() - started)
        return result

    def _probe(self, target: ProbeTarget) -> ProbeResult:
        checked_at = self._clock()
        request_id, payload, headers = self._request(target)
        try:
            response = self._send(target.url, payload, headers)
        except OutboundError as error:
            return ProbeResult(target, checked_at, "down", _failure_reason(error), detail=_short(str(error)))
        verdict = judge(response, request_id)
        latency = round(response.elapsed * 1000)
        if verdict.outcome == "up" and response.elapsed > self._slow_after:
            verdict = dataclasses.replace(verdict, outcome="degraded", reason="slow")
        return ProbeResult(
            target, checked_at, latency_ms=latency, http_status=response.status, **dataclasses.asdict(verdict)
        )

    def _request(self, target: ProbeTarget) -> tuple[str, dict[str, Any], dict[str, str]]:
        request_id = self._new_id()
        params = {"id": self._new_id()}
        if target.tenant:  # only a v1.0 card declares one, also on its 0.3 interfaces (the SDK's
            params["tenant"] = target.tenant  # 0.3 compatibility reads `params.tenant` too)
        payload = {"jsonrpc": "2.0", "id": request_id, "method": target.method, "params": params}
        headers = {"Accept": "application/json", "User-Agent": self._user_agent}
        if target.version_header:
            headers["A2A-Version"] = target.version_header
        return request_id, payload, headers

    def _send(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> OutboundResponse:
        # POST is not retried by the client; a kept-alive connection the agent closed while idle
        # would read as "down". GetTask/tasks/get are reads (v1.0 §3.3.1), so one retry is safe.
        for attempt in (1, 2):
            try:
                return self._post(url, json=payload, headers=headers)
            except OutboundConnectionError as error:
                if attempt == 2 or isinstance(error, OutboundTlsError):
                    raise
        raise AssertionError("unreachable")


def judge(response: OutboundResponse, request_id: str) -> Verdict:
    """The verdict on an HTTP answer to a probe whose JSON-RPC id was `request_id`."""
    status = response.status
    if status in (401, 403):
        return Verdict("up", "authRequired", detail=f"HTTP {status}")
    if status >= 500:
        return Verdict("down", "serverError", detail=f"HTTP {status}")
    if 300 <= status < 400:
        return Verdict("down", "redirect", detail=f"HTTP {status} to {response.headers.get('location', '?')}")
    try:
        answer = parse_json(response.body)
    except OutboundError:
        kind = response.headers.get("content-type", "no Content-Type")
        return Verdict("down", "notJson", detail=f"HTTP {status}, {kind}")
    return _judge_rpc(answer, request_id, status)


def _judge_rpc(answer: object, request_id: str, status: int) -> Verdict:
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0" or ("result" in answer) == ("error" in answer):
        return Verdict("down", "notJsonRpc", detail=f"HTTP {status}: JSON but not a JSON-RPC 2.0 response")
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    message = _short(str(error.get("message", ""))) if isinstance(error, dict) else None
    # An agent that cannot parse our request may answer with a null id (JSON-RPC 2.0 §5).
    if code in MISMATCH_CODES and answer.get("id") in (request_id, None):
        return Verdict("degraded", "protocolMismatch", code, message)
    if answer.get("id") != request_id:
        return Verdict("down", "wrongId", code, "the response does not carry the request's id")
    return Verdict("up", "ok", code, message)


def _failure_reason(error: OutboundError) -> str:
    return next((reason for kind, reason in _FAILURE_REASONS if isinstance(error, kind)), "badResponse")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
