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

SQLite searches are planned from the driver the search planner picks and read no visibility map:
nothing to do there.
"""

from __future__ import annotations

from sqlalchemy import Engine, bindparam, text

from registry.db import single_statements

SEARCH_TABLES = ("agents", "agent_terms", "agent_search")
# One worker maintains the tables at a time; the others find them fresh on their next tick.
_MAINTENANCE_LOCK = 0x61_64_78_73_74_61_74  # "adxstat"
_STALE = text(
    "SELECT s.relname, "
    "s.n_mod_since_analyze > GREATEST(:floor, :analyze_fraction * GREATEST(c.reltuples, 0)), "
    "s.n_ins_since_vacuum > GREATEST(:floor, :vacuum_fraction * GREATEST(c.reltuples, 0)) "
    "FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
    "WHERE s.schemaname = current_schema() AND s.relname IN :names ORDER BY s.relname"
).bindparams(bindparam("names", expanding=True))
# (analyze, vacuum) -> the statement. SKIP_LOCKED: a table autovacuum is at is left to it.
_STATEMENTS = {(True, False): "ANALYZE (SKIP_LOCKED) {}", (False, True): "VACUUM (SKIP_LOCKED) {}",
               (True, True): "VACUUM (SKIP_LOCKED, ANALYZE) {}"}


class PlannerStatistics:
    """Analyzes the search tables that changed by more than `fraction` of their rows, and vacuums
    those that grew by more than `vacuum_fraction`, each with at least `floor` rows changed."""

    def __init__(self, engine: Engine, *, floor: int = 1000, fraction: float = 0.5, vacuum_fraction: float = 0.1) -> None:
        self._engine = engine
        self._params = {"names": list(SEARCH_TABLES), "floor": floor, "analyze_fraction": fraction,
                        "vacuum_fraction": vacuum_fraction}

    def refresh(self) -> int:
        """Analyze and vacuum the stale tables now; the number of tables seen to (0 on SQLite, or
        while another worker is at it)."""
        if self._engine.dialect.name != "postgresql":
            return 0
        # VACUUM runs outside a transaction, so the lock is the session's, released below.
        with single_statements(self._engine).connect() as conn:
            stale = [(name, needs) for name, *needs in conn.execute(_STALE, self._params) if any(needs)]
            if not stale or not conn.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": _MAINTENANCE_LOCK}):
                return 0
            try:
                for table, needs in stale:  # names from SEARCH_TABLES only
                    conn.execute(text(_STATEMENTS[tuple(needs)].format(table)))
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _MAINTENANCE_LOCK})
        return len(stale)
