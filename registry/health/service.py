"""Health checks of registered agents: the leased probe queue the worker drains, probes on demand,
recent checks and pruning. Probes run with no transaction open; results are written in one short
transaction per batch, only for agents whose probe lease the writer still holds. The schedule,
lease and roll-up columns live on `agents`, so a claim is one indexed `UPDATE … RETURNING` and
search filters on health without a join; crawls and probes have a lease pair each.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, ForeignKey, Index, Integer, Row, String, bindparam, delete, insert, select, update
from sqlalchemy.orm import Mapped, mapped_column

from registry.catalog import Agent
from registry.change_events import HEALTH_CHANGED, record_changes
from registry.db import Base
from registry.db.types import UtcDateTime, utcnow
from registry.errors import NotFound
from registry.health.errors import ProbeInProgress
from registry.health.probe import HealthProbe, ProbeResult, ProbeTarget, probe_targets
from registry.health.state import (
    Health,
    HealthPolicy,
    RoundOutcome,
    jittered,
    next_health,
    next_probe_delay,
    round_outcome,
    uptime,
)
from registry.jobs import LeaseColumns

AGENTS = Agent.__table__
PROBE_LEASE = LeaseColumns(
    AGENTS, AGENTS.c.pk, AGENTS.c.next_probe_at, AGENTS.c.probe_lease_owner, AGENTS.c.probe_lease_until
)
_CLAIMED = (
    Agent.id,
    Agent.interfaces,
    Agent.health_state,
    Agent.health_since,
    Agent.health_successes,
    Agent.health_failures,
    Agent.health_window,
)
# One executemany for the agents `hold` found still leased (SET: the columns each row names); the
# owner condition repeats the fence.
_WRITE = update(Agent).where(PROBE_LEASE.key == bindparam("b_pk"), PROBE_LEASE.owner == bindparam("b_owner"))
PRUNE_BATCH = 5_000


class HealthCheck(Base):
    """One probe of one JSON-RPC interface of an agent. Pruned after the retention period."""

    __tablename__ = "health_checks"
    __table_args__ = (Index("ix_health_checks_agent_recent", "agent_pk", "checked_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_pk: Mapped[int] = mapped_column(ForeignKey("agents.pk", ondelete="CASCADE"))
    checked_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)
    interface_url: Mapped[str] = mapped_column(String(2048))
    protocol_version: Mapped[str | None] = mapped_column(String(20), nullable=True)
    method: Mapped[str] = mapped_column(String(20))
    outcome: Mapped[str] = mapped_column(String(10))
    reason: Mapped[str] = mapped_column(String(40))
    latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    http_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rpc_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    detail: Mapped[str | None] = mapped_column(String(500), nullable=True)


@dataclasses.dataclass(frozen=True)
class DueProbe:
    """A leased agent, with its health as of the claim: only the lease holder changes it."""

    pk: int
    agent_id: str
    targets: list[ProbeTarget]
    health: Health = Health()

    @classmethod
    def of(cls, row: Row[*tuple[Any, ...]]) -> DueProbe:
        window = tuple(tuple(bucket) for bucket in row.health_window or ())
        health = Health(row.health_state, row.health_since, row.health_successes, row.health_failures, window)
        return cls(row.pk, row.id, probe_targets(row.interfaces or []), health)


@dataclasses.dataclass(frozen=True)
class ProbeRound:
    """Every JSON-RPC interface of one agent probed once."""

    pk: int
    results: list[ProbeResult]
    before: Health = Health()


class HealthService:
    """The probe queue (a `LeasedWork` for `registry.jobs`) and health reads for the API."""

    def __init__(
        self,
        engine: Engine,
        probe: HealthProbe,
        policy: HealthPolicy,
        *,
        lease_seconds: float = 300.0,
        retention: float = 86_400.0,
        clock: Callable[[], dt.datetime] = utcnow,
        rng: random.Random | None = None,
    ) -> None:
        self._engine = engine
        self._probe = probe
        self._policy = policy
        self._lease_seconds = lease_seconds
        self._retention = retention
        self._clock = clock
        self._rng = rng or random.Random()

    def claim(self, owner: str, limit: int) -> list[DueProbe]:
        with self._engine.begin() as conn:
            rows = PROBE_LEASE.claim(
                conn, owner=owner, now=self._clock(), seconds=self._lease_seconds, limit=limit, returning=_CLAIMED
            )
        return [DueProbe.of(row) for row in rows]

    def perform(self, item: DueProbe) -> ProbeRound:
        return ProbeRound(item.pk, [self._probe.probe(target) for target in item.targets], item.health)

    def record(self, owner: str, rounds: Sequence[ProbeRound]) -> int:
        now = self._clock()
        with self._engine.begin() as conn:
            held = PROBE_LEASE.hold(conn, [r.pk for r in rounds], owner=owner, now=now, seconds=self._lease_seconds)
            kept = [r for r in rounds if r.pk in held]
            if kept:
                values = [self._agent_values(r, owner, now) for r in kept]
                conn.execute(_WRITE, values)
                # In the same transaction, after the rows are held: the roll-up's changes of state.
                moved = zip(kept, values, strict=True)
                changed = {
                    r.pk: {"health_previous": r.before.state} for r, v in moved if v["health_state"] != r.before.state
                }
                record_changes(conn, HEALTH_CHANGED, changed, now)
            checks = [_check_row(r.pk, result) for r in kept for result in r.results]
            if checks:
                conn.execute(insert(HealthCheck), checks)
        return len(kept)

    def check_now(self, agent_id: str) -> ProbeRound:
        """Probe the agent now. Raises NotFound, or ProbeInProgress while another probe of it runs."""
        owner = f"on-demand:{uuid.uuid4()}"
        with self._engine.begin() as conn:
            pk = conn.scalar(select(Agent.pk).where(Agent.id == agent_id))
            if pk is None:
                raise NotFound(f"no agent with id {agent_id!r}")
            now = self._clock()
            row = PROBE_LEASE.claim_key(conn, pk, owner=owner, now=now, seconds=self._lease_seconds, returning=_CLAIMED)
        if row is None:
            raise ProbeInProgress(f"agent {agent_id!r} is being probed right now; ask again in a moment")
        probe_round = self.perform(DueProbe.of(row))
        self.record(owner, [probe_round])
        return probe_round

    def recent_checks(self, agent_id: str, limit: int = 50) -> tuple[Row[Any], list[Row[Any]]]:
        """The agent's row and its latest checks, newest first. Raises NotFound."""
        with self._engine.connect() as conn:
            agent = conn.execute(select(AGENTS).where(AGENTS.c.id == agent_id)).first()
            if agent is None:
                raise NotFound(f"no agent with id {agent_id!r}")
            latest = HealthCheck.checked_at.desc(), HealthCheck.id.desc()
            checks = select(HealthCheck.__table__).where(HealthCheck.agent_pk == agent.pk).order_by(*latest)
            return agent, list(conn.execute(checks.limit(limit)))

    def prune(self) -> int:
        """Delete checks older than the retention period, a batch per transaction."""
        cutoff = self._clock() - dt.timedelta(seconds=self._retention)
        removed = 0
        while True:
            old = select(HealthCheck.id).where(HealthCheck.checked_at < cutoff).limit(PRUNE_BATCH)
            with self._engine.begin() as conn:
                count = conn.execute(delete(HealthCheck).where(HealthCheck.id.in_(old.scalar_subquery()))).rowcount
            removed += count
            if count < PRUNE_BATCH:
                return removed

    def _agent_values(self, probe_round: ProbeRound, owner: str, now: dt.datetime) -> dict[str, Any]:
        result, health, checked = self._rollup(probe_round, now)
        delay = next_probe_delay(health, self._policy, self._rng)
        if not probe_round.results:  # nothing to probe until the card changes: look rarely
            delay = jittered(self._policy.max_backoff, self._policy.jitter, self._rng)
        return {
            "b_pk": probe_round.pk,
            "b_owner": owner,
            "health_state": health.state,
            "health_since": health.since,
            "health_successes": health.successes,
            "health_failures": health.failures,
            "health_window": [list(bucket) for bucket in health.window],
            "health_uptime24h": uptime(health.window, checked),
            "health_checked_at": checked,
            "health_latency_ms": result.latency_ms,
            "health_reason": result.reason,
            "next_probe_at": checked + dt.timedelta(seconds=delay),
            "probe_lease_owner": None,
            "probe_lease_until": None,
        }

    def _rollup(self, probe_round: ProbeRound, now: dt.datetime) -> tuple[RoundOutcome, Health, dt.datetime]:
        """The round's outcome, the agent's new health, and when the agent was last asked."""
        before = probe_round.before
        if not probe_round.results:  # nothing we can probe without creating work (no JSON-RPC interface)
            since = before.since if before.state == "unknown" and before.since else now
            return (
                RoundOutcome("unknown", "noJsonRpcInterface", None),
                Health("unknown", since, 0, 0, before.window),
                now,
            )
        result = round_outcome(probe_round.results)
        checked = max(r.checked_at for r in probe_round.results)
        return result, next_health(before, result, checked, self._policy), checked


def _check_row(agent_pk: int, result: ProbeResult) -> dict[str, Any]:
    target = result.target
    return {
        "agent_pk": agent_pk,
        "checked_at": result.checked_at,
        "interface_url": target.url[:2048],
        "protocol_version": target.protocol_version[:20] if target.protocol_version else None,
        "method": target.method,
        "outcome": result.outcome,
        "reason": result.reason,
        "latency_ms": result.latency_ms,
        "http_status": result.http_status,
        "rpc_code": result.rpc_code,
        "detail": result.detail[:500] if result.detail else None,
    }
