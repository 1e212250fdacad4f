"""Health checks of registered agents through the job, with a hand-moved clock: real agents go
down after `failuresBeforeDown` probes and come back up, leases keep workers apart, dead agents
leave default search. No test sleeps: the clock moves, the job runs."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from registry.catalog import AgentQuery, CatalogSearch, RankedSearch
from registry.container import catalog_store
from registry.errors import Conflict, NotFound
from registry.health.probe import HealthProbe
from registry.health.service import PROBE_LEASE, HealthService
from registry.health.state import HealthPolicy
from registry.jobs import LeasedJob, PeriodicJob
from registry.retrieval.embedding import NullEmbedder
from registry.schema import Agent, HealthCheck
from tests.support.a2a_agents import LOOPBACK_DEADLINE, TASK_NOT_FOUND, PlainAgent, SdkAgent, raw
from tests.support.cards import make_card
from tests.support.jobs import FakeClock, run_job

INTERVAL = 60.0
LEASE = 120.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def health(services, clock) -> HealthService:  # type: ignore[no-untyped-def]
    probe = HealthProbe(services.http, timeout=LOOPBACK_DEADLINE, slow_after=LOOPBACK_DEADLINE, clock=clock)
    policy = HealthPolicy(interval=INTERVAL, failures_before_down=2, successes_before_up=1, max_backoff=3600)
    return HealthService(
        services.engine, probe, policy, lease_seconds=LEASE, retention=3600, clock=clock, rng=random.Random(7)
    )


@pytest.fixture
def job(health) -> LeasedJob:  # type: ignore[no-untyped-def]
    return LeasedJob("health-probe", 5, health, batch=8)


@pytest.fixture
def sdk_agent() -> Iterator[SdkAgent]:
    agent = SdkAgent()
    yield agent
    agent.stop()
    assert agent.messages == []  # no probe ever made the agent handle a message


def register(services, actor, agent, name: str = "Agent") -> str:  # type: ignore[no-untyped-def]
    card = make_card(name, tags=["probe"], url=agent.rpc_url)
    return services.catalog.register_card(actor, card, f"{agent.base_url}/{name}/agent-card.json").agent.id


def state(health: HealthService, agent_id: str) -> tuple[str, str | None]:
    agent, _ = health.recent_checks(agent_id)
    return agent.health_state, agent.health_reason


def checks(services) -> int:  # type: ignore[no-untyped-def]
    with services.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(HealthCheck)))


def test_a_real_agent_goes_down_after_two_failed_probes_and_up_when_it_returns(
    services, health, job, clock, actor, sdk_agent
):
    agent_id = register(services, actor, sdk_agent)
    assert state(health, agent_id) == ("unknown", None)
    assert run_job(job).recorded == 1
    assert state(health, agent_id) == ("up", "ok")

    sdk_agent.stop()
    clock.advance(INTERVAL * 1.2)
    run_job(job)
    assert state(health, agent_id) == ("up", "connectionError")  # one failure is not enough
    clock.advance(INTERVAL * 1.2)
    run_job(job)
    assert state(health, agent_id) == ("down", "connectionError")

    sdk_agent.start()
    clock.advance(INTERVAL * 1.2)
    run_job(job)
    assert state(health, agent_id) == ("up", "ok")
    assert [method for method, _ in sdk_agent.methods] == ["GetTask", "GetTask"]


def test_running_the_job_twice_probes_each_due_agent_once(services, health, job, actor, sdk_agent):
    register(services, actor, sdk_agent, "one")
    register(services, actor, sdk_agent, "two")
    first, second = run_job(job), run_job(job)
    assert (first.claimed, first.recorded) == (2, 2)
    assert (second.claimed, second.recorded) == (0, 0)
    assert checks(services) == 2


def test_the_rollup_carries_latency_time_and_uptime(services, health, job, clock, actor, sdk_agent):
    agent_id = register(services, actor, sdk_agent)
    run_job(job)
    agent, items = health.recent_checks(agent_id)
    assert agent.health_checked_at == clock.now and agent.health_since == clock.now
    assert agent.health_latency_ms is not None and agent.health_uptime24h == 1.0
    assert [(c.method, c.outcome, c.reason, c.rpc_code) for c in items] == [("GetTask", "up", "ok", -32001)]


def test_a_dead_agent_is_probed_with_back_off(services, health, job, clock, actor):
    agent = PlainAgent(raw(503, b"down for maintenance", "text/plain"))
    try:
        agent_id = register(services, actor, agent)
        gaps = []
        for _ in range(5):
            run_job(job)
            with services.engine.connect() as conn:
                due = conn.scalar(select(Agent.next_probe_at).where(Agent.id == agent_id))
            gaps.append(round((due - clock.now).total_seconds() / INTERVAL))
            clock.advance((due - clock.now).total_seconds())
    finally:
        agent.stop()
    assert state(health, agent_id) == ("down", "serverError")
    assert gaps == [1, 1, 2, 4, 8]


def test_a_crashed_workers_lease_expires_and_its_late_result_is_dropped(services, health, job, clock, actor):
    agent = PlainAgent(TASK_NOT_FOUND)
    try:
        register(services, actor, agent)
        claimed = health.claim("crashed-worker", 10)
        assert len(claimed) == 1
        assert run_job(job, owner="other").claimed == 0  # leased, not free
        clock.advance(LEASE + 1)
        report = run_job(job, owner="other")
        assert (report.claimed, report.recorded) == (1, 1)
        assert health.record("crashed-worker", [health.perform(claimed[0])]) == 0  # fenced out
    finally:
        agent.stop()
    assert checks(services) == 1


def test_two_workers_at_once_never_probe_the_same_agent(services, health, actor):
    agent = PlainAgent(TASK_NOT_FOUND)
    try:
        ids = [register(services, actor, agent, f"agent-{i}") for i in range(24)]
        reports: dict[str, object] = {}
        workers = [
            threading.Thread(
                target=lambda name=name: reports.__setitem__(
                    name, run_job(LeasedJob("h", 5, health, batch=3), owner=name)
                )
            )
            for name in ("worker-a", "worker-b")
        ]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    finally:
        agent.stop()
    assert sum(r.recorded for r in reports.values()) == 24  # type: ignore[attr-defined]
    with services.engine.connect() as conn:
        per_agent = dict(conn.execute(select(HealthCheck.agent_pk, func.count()).group_by(HealthCheck.agent_pk)).all())
    assert len(per_agent) == len(ids) and set(per_agent.values()) == {1}


def test_an_agent_without_a_json_rpc_interface_stays_unknown(services, health, job, clock, actor):
    card = make_card("gRPC only")
    card["supportedInterfaces"] = [
        {"url": "https://grpc.example.com", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]
    agent_id = services.catalog.register_card(actor, card, "https://grpc.example.com/card.json").agent.id
    assert run_job(job).recorded == 1
    assert state(health, agent_id) == ("unknown", "noJsonRpcInterface")
    assert checks(services) == 0
    with services.engine.connect() as conn:
        due = conn.scalar(select(Agent.next_probe_at).where(Agent.id == agent_id))
    assert (due - clock.now).total_seconds() >= 3600 * 0.9  # looked at again rarely, not every minute


def test_check_now_probes_at_once_and_refuses_while_a_probe_runs(services, health, clock, actor, sdk_agent):
    agent_id = register(services, actor, sdk_agent)
    probe_round = health.check_now(agent_id)
    assert [r.outcome for r in probe_round.results] == ["up"]
    assert state(health, agent_id) == ("up", "ok")
    with services.engine.begin() as conn:
        pk = conn.scalar(select(Agent.pk).where(Agent.id == agent_id))
        assert PROBE_LEASE.claim_key(conn, pk, owner="busy-worker", now=clock(), seconds=60) is not None
    with pytest.raises(Conflict):
        health.check_now(agent_id)
    with pytest.raises(NotFound):
        health.check_now("no-such-agent")


def test_pruning_removes_old_checks_once(services, health, job, clock, actor, sdk_agent):
    register(services, actor, sdk_agent)
    run_job(job)
    clock.advance(INTERVAL * 1.2)
    run_job(job)
    assert checks(services) == 2
    clock.advance(3600 - INTERVAL)  # the first check is now older than the retention
    prune = PeriodicJob("prune-health-checks", 600, health.prune)
    assert (run_job(prune).recorded, run_job(prune).recorded) == (1, 0)
    assert checks(services) == 1


def test_dead_agents_leave_default_search_and_health_filters_the_rest(services, health, job, clock, actor, sdk_agent):
    dead = PlainAgent(raw(500, b"gone", "text/plain"))
    try:
        alive_id = register(services, actor, sdk_agent, "alive")
        dead_id = register(services, actor, dead, "dead")
        for _ in range(2):
            run_job(job)
            clock.advance(INTERVAL * 1.2)
    finally:
        dead.stop()
    store = catalog_store(services.engine, NullEmbedder())  # filters only: no model needed
    search = CatalogSearch(store, RankedSearch(store, NullEmbedder()), hide_dead_after=3600, clock=clock)
    _search_hides_the_long_dead(search, clock, alive_id, dead_id)


def _search_hides_the_long_dead(discovery, clock, alive_id: str, dead_id: str) -> None:
    def ids(**query: object) -> list[str]:
        return [row.id for row in discovery.search(AgentQuery(**query)).agents]  # type: ignore[arg-type]

    assert ids() == [alive_id, dead_id]  # down, but not for long yet
    assert ids(health="up") == [alive_id] and ids(health="down") == [dead_id]
    clock.advance(3600)
    assert ids() == [alive_id]
    assert ids(include_dead=True) == [alive_id, dead_id]
    assert ids(health="down") == [] and ids(health="down", include_dead=True) == [dead_id]
