"""Fresh planner statistics for the search tables on PostgreSQL.

Searches leave the join method to PostgreSQL's planner, which picks it from the tables'
statistics. Autovacuum refreshes them once enough rows changed, but only when its launcher comes
round (every minute by default): a catalog that grew from nothing to 10,000 agents meanwhile (a
bulk registration on a fresh database) was planned as if it were empty, and a two-tag search
scanned one tag's whole range again for every agent of the other (200–500 ms instead of 5).
The `catalog-statistics` job analyzes a search table as soon as half as many rows as it held
changed since its last analysis: plans go wrong when estimates are off by orders of magnitude, not
by half, and an analysis of agent_terms at 100,000 agents (its 1,000 common values sample 300,000
rows) costs ~3.5 s of the database's CPU, too much to repeat for every tenth.

It also vacuums a search table once a tenth of its rows are new since its last vacuum. Vacuum sets
the visibility map; without it a search's index-only scans of agent_terms must also read the
table to learn whether the entries they found are visible. Right after 10,000 agents were
imported, the two-tag part of a search took 1.12 ms (median of 200 pairs, EXPLAIN ANALYZE); after
a vacuum, 0.21 ms. Autovacuum would get there too, but only on its launcher's next round. A vacuum
reads only the pages not yet marked all-visible, so vacuuming often costs little more than
vacuuming late.

Both wait for a bulk write to end, as long as the planner has statistics to go on: a table that
took at least `floor` writes since the job's last look (10 s before) is busy, and is left until a
look finds it quiet, or for at most `wait` seconds. An analysis in the middle of an
import competed with it for the same two cores: 10,000 cards imported into 10,000 at 1,693/s when
the job vacuumed agent_terms and analyzed agent_search meanwhile (PostgreSQL spent 0.545 ms of CPU
a card), against 2,348–2,547/s when it did not (0.30–0.33 ms). The planner scales what it knows
by a table's current size, so a table that grew by half is still planned well (at 20,000 agents a
tag's estimate went from 7,828 to 15,652 rows when agent_terms doubled; it had 17,342), and the
tables are analyzed once the import is over. A table with no statistics yet (never analyzed, or
empty when it was) is seen to at once, bulk write or not.

Autovacuum leaves these tables' analyses and insert-driven vacuums to this job (migration 0015):
coming round in the middle of an import, it did them there.

SQLite searches are planned from the driver the search planner picks and read no visibility map:
nothing to do there.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Engine, bindparam, text

from registry.db import single_statements

SEARCH_TABLES = ("agents", "agent_terms", "agent_search")
# One worker maintains the tables at a time; the others find them fresh on their next tick.
_MAINTENANCE_LOCK = 0x61_64_78_73_74_61_74  # "adxstat"
# (table, needs analysis, needs vacuum, writes ever, has statistics)
_STALE = text(
    "SELECT s.relname, "
    "s.n_mod_since_analyze > GREATEST(:floor, :analyze_fraction * GREATEST(c.reltuples, 0)), "
    "s.n_ins_since_vacuum > GREATEST(:floor, :vacuum_fraction * GREATEST(c.reltuples, 0)), "
    "s.n_tup_ins + s.n_tup_upd + s.n_tup_del, c.reltuples > 0 "
    "FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
    "WHERE s.schemaname = current_schema() AND s.relname IN :names ORDER BY s.relname"
).bindparams(bindparam("names", expanding=True))
# (analyze, vacuum) -> the statement. SKIP_LOCKED: a table autovacuum is at is left to it.
_STATEMENTS = {(True, False): "ANALYZE (SKIP_LOCKED) {}", (False, True): "VACUUM (SKIP_LOCKED) {}",
               (True, True): "VACUUM (SKIP_LOCKED, ANALYZE) {}"}


class PlannerStatistics:
    """Analyzes the search tables that changed by more than `fraction` of their rows, and vacuums
    those that grew by more than `vacuum_fraction`, each with at least `floor` rows changed; a
    table busy with writes (`floor` since the last look) waits up to `wait` seconds."""

    def __init__(self, engine: Engine, *, floor: int = 1000, fraction: float = 0.5, vacuum_fraction: float = 0.1,
                 wait: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._engine = engine
        self._params = {"names": list(SEARCH_TABLES), "floor": floor, "analyze_fraction": fraction,
                        "vacuum_fraction": vacuum_fraction}
        self._floor = floor
        self._wait = wait
        self._clock = clock
        self._writes: dict[str, int] = {}  # each table's writes ever, at the last look
        self._waiting_since: dict[str, float] = {}  # stale tables left while busy

    def refresh(self) -> int:
        """Analyze and vacuum the stale tables now, but those busy with writes that can wait; the
        number of tables seen to (0 on SQLite, or while another worker is at it)."""
        if self._engine.dialect.name != "postgresql":
            return 0
        # VACUUM runs outside a transaction, so the lock is the session's, released below.
        with single_statements(self._engine).connect() as conn:
            stale = [(name, (analyze, vacuum)) for name, analyze, vacuum, writes, known in conn.execute(_STALE, self._params)
                     if self._due(name, analyze or vacuum, writes, known)]
            if not stale or not conn.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": _MAINTENANCE_LOCK}):
                return 0
            try:
                for table, needs in stale:  # names from SEARCH_TABLES only
                    conn.execute(text(_STATEMENTS[tuple(needs)].format(table)))
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _MAINTENANCE_LOCK})
        for name, _ in stale:
            self._waiting_since.pop(name, None)
        return len(stale)

    def _due(self, table: str, stale: bool, writes: int, known: bool) -> bool:
        """Whether a table is to be seen to now; notes its writes for the next look."""
        before, self._writes[table] = self._writes.get(table), writes
        if not stale:
            self._waiting_since.pop(table, None)
            return False
        busy = before is not None and writes - before >= self._floor
        now = self._clock()
        return not busy or not known or now - self._waiting_since.setdefault(table, now) >= self._wait
