"""Traces, end to end: `agentdex serve` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real OTLP/HTTP
receiver on loopback. A registration is a server span named by its route, with the database's
statements and the card fetch as its children; a relayed notification reaches the webhook with a
W3C `traceparent` of an exported trace. With the variable unset, nothing of OpenTelemetry loads."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.registry.observability.otlp_receiver import OtlpReceiver, Span
from tests.support.agentdex_processes import AgentdexProcess, agentdex, serve, user_env
from tests.support.cards import make_card
from tests.support.webhooks import WebhookReceiver

SERVER, CLIENT = 2, 3  # opentelemetry.proto.trace.v1.Span.SpanKind
TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")  # flags: sampled, random id


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    otlp = OtlpReceiver()
    yield otlp
    otlp.close()


@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver()
    yield hook
    hook.close()


@pytest.fixture
def traced(tmp_path: Path, receiver: OtlpReceiver) -> Iterator[tuple[str, str]]:
    """A traced `agentdex serve` (web and jobs in one process, SQLite): its URL and admin token."""
    env = user_env(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
        OTEL_SERVICE_NAME="agentdex-under-test",
        OTEL_BSP_SCHEDULE_DELAY="50",  # export within 50 ms rather than 5 s
        AGENTDEX_ALLOW_HTTP="true",
        AGENTDEX_ALLOWED_NETWORKS="127.0.0.0/8",
        AGENTDEX_LOG_FORMAT="json",
        AGENTDEX_SEARCH_SEMANTIC="off",
    )
    process, url = serve(tmp_path, env)
    with process:
        assert process.wait_until_answering(url), process.output
        token = re.search(r"(adx_\S+)", process.output)
        assert token, process.output
        yield url, token.group(1)
        _no_instrumentation_errors(process)


def _no_instrumentation_errors(process: AgentdexProcess) -> None:
    assert "Traceback" not in process.output, process.output
    assert "span missing" not in process.output, process.output


def _in_trace(spans: list[Span], trace_id: str) -> list[Span]:
    return [span for span in spans if span.trace_id == trace_id]


def _descends_from(span: Span, ancestor: Span, spans: list[Span]) -> bool:
    by_id = {s.span_id: s for s in spans}
    parent = by_id.get(span.parent_id)
    while parent is not None:
        if parent.span_id == ancestor.span_id:
            return True
        parent = by_id.get(parent.parent_id)
    return False


def test_a_registration_is_one_trace_with_its_statements_and_its_fetch(traced, receiver, card_server):  # type: ignore[no-untyped-def]
    url, token = traced
    card_url = card_server.serve_json("/.well-known/agent-card.json", make_card("Traced", url="http://127.0.0.1:9/a2a"))
    answered = requests.post(
        f"{url}/v1/agents", json={"url": card_url}, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert answered.status_code == 201, answered.text
    request_id = answered.headers["X-Request-Id"]

    def registration(spans: list[Span]) -> Span | None:
        found = [s for s in spans if s.name == "POST /v1/agents" and s.kind == SERVER]
        return found[0] if found else None

    server = receiver.wait_for(registration)
    assert server.service == "agentdex-under-test"
    assert server.attributes["http.route"] == "/v1/agents"
    assert server.attributes["agentdex.request_id"] == request_id

    # Children end before their parent and the batch processor exports in order of ending: with
    # the server span here, the whole trace is.
    spans = receiver.snapshot()
    trace = _in_trace(spans, server.trace_id)
    (fetch,) = [s for s in trace if s.kind == CLIENT and "db.system" not in s.attributes]
    assert fetch.name == "GET" and _descends_from(fetch, server, spans)
    assert fetch.attributes.get("url.full", fetch.attributes.get("http.url")) == card_url
    statements = [s for s in trace if s.attributes.get("db.system") in ("sqlite", "postgresql")]
    assert all(_descends_from(s, server, spans) for s in statements)
    read = [str(s.attributes.get("db.statement", "")) for s in statements]
    assert any("FROM api_tokens" in sql for sql in read)  # the bearer token, checked
    assert any("FROM agents" in sql for sql in read)  # the URL, looked up before the fetch
    # SQLite writes a registration's rows on the driver's cursor (registry.db.DriverStatement),
    # below SQLAlchemy's events; PostgreSQL through SQLAlchemy, so its INSERTs are spans too.


def test_a_relayed_notification_carries_the_trace_to_the_webhook(traced, receiver, webhook, card_server):  # type: ignore[no-untyped-def]
    url, token = traced
    admin = {"Authorization": f"Bearer {token}"}
    card = make_card("Pusher", url="http://127.0.0.1:9/a2a", push=True)
    body = {"card": card, "cardUrl": card_server.url("/.well-known/agent-card.json")}
    agent = requests.post(f"{url}/v1/agents", json=body, headers=admin, timeout=30).json()
    sub = requests.post(
        f"{url}/v1/relay/subscriptions",
        json={"agentId": agent["id"], "targetUrl": webhook.url},
        headers=admin,
        timeout=30,
    ).json()
    pushed = requests.post(
        sub["relayUrl"],
        json={"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}},
        headers={"X-A2A-Notification-Token": sub["relayToken"], "X-Request-Id": "agent-push-1"},
        timeout=30,
    )
    assert pushed.status_code == 202, pushed.text
    assert pushed.headers["X-Request-Id"] == "agent-push-1"

    (delivered,) = webhook.wait_for(1)
    traceparent = TRACEPARENT.fullmatch(delivered.headers["traceparent"])
    assert traceparent, delivered.headers["traceparent"]
    trace_id, parent_id = traceparent.groups()

    def delivery(spans: list[Span]) -> Span | None:
        found = [s for s in spans if s.trace_id == trace_id and s.span_id == parent_id]
        return found[0] if found else None

    sent = receiver.wait_for(delivery)
    assert sent.kind == CLIENT and sent.name == "POST"
    run = receiver.wait_for(lambda spans: [s for s in _in_trace(spans, trace_id) if s.name == "job relay-delivery"])
    assert _descends_from(sent, run[0], receiver.snapshot())

    ingress = receiver.wait_for(lambda spans: [s for s in spans if s.name == "POST /relay/<sub_id>"])
    assert ingress[0].kind == SERVER
    assert ingress[0].attributes["agentdex.request_id"] == "agent-push-1"

    # The scheduler ticks every job about once a second; only runs that did something are exported.
    runs = [s for s in receiver.snapshot() if s.name.startswith("job ")]
    work = ("agentdex.job.claimed", "agentdex.job.recorded", "agentdex.job.failed")
    assert runs and all(any(run.attributes.get(name) for name in work) for run in runs)


NO_OTEL = """
import sys
from registry.app import create_app
from registry.container import build_services
from registry.jobs import PeriodicJob
from registry.settings import Settings
from registry.observability import configure_logging

settings = Settings.from_env()
configure_logging(settings.operations.log_format)
services = build_services(settings)
app = create_app(services=services)
assert app.test_client().get("/healthz").status_code == 200
PeriodicJob("noop", 1.0, lambda: 0).run(None)
print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
"""


def test_nothing_of_opentelemetry_is_imported_when_tracing_is_off(tmp_path: Path) -> None:
    env = user_env(AGENTDEX_DATABASE_URL=f"sqlite:///{tmp_path / 'off.db'}", AGENTDEX_LOG_FORMAT="json")
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    ran = subprocess.run(
        [sys.executable, "-c", NO_OTEL], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"


def test_a_bad_endpoint_stops_the_start_with_exit_2(tmp_path: Path) -> None:
    env = user_env(OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318")
    ran = agentdex("worker", "--once", cwd=tmp_path, env=env)
    assert ran.returncode == 2
    assert "OTEL_EXPORTER_OTLP_ENDPOINT='collector:4318' is not an http(s) URL" in ran.stderr


def test_without_the_otel_extra_the_start_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from registry.observability import TracingUnavailable, tracing
    from registry.settings_operations import OperationsSettings

    monkeypatch.setattr(tracing, "DISTRIBUTIONS", (*tracing.DISTRIBUTIONS, "opentelemetry-not-installed"))
    with pytest.raises(
        TracingUnavailable, match=r"opentelemetry-not-installed is not installed: pip install 'agentdex\[otel\]'"
    ):
        OperationsSettings.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
