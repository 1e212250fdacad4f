"""Fresh planner statistics for the search tables on PostgreSQL.

Searches leave the join method to PostgreSQL's planner, which picks it from the tables'
statistics. Autovacuum refreshes them once enough rows changed, but only when its launcher comes
round (every minute by default): a catalog that grew from nothing to 10,000 agents meanwhile (a
bulk registration on a fresh database) was planned as if it were empty, and a two-tag search
scanned one tag's whole range again for every agent of the other (200–500 ms instead of 5).
The `catalog-statistics` job analyzes a search table as soon as half as many rows as it held
changed since its last analysis: plans go wrong when estimates are off by orders of magnitude, not
by half, and an analysis of agent_terms at 100,000 agents (its 1,000 common values sample 300,000
rows) costs ~3.5 s of the database's CPU, too much to repeat for every tenth. SQLite searches are
planned from the driver the search planner picks: nothing to do there.
"""

from __future__ import annotations

from sqlalchemy import Engine, bindparam, text

SEARCH_TABLES = ("agents", "agent_terms", "agent_search")
# One worker analyzes at a time; the others find the tables fresh on their next tick.
_ANALYZE_LOCK = 0x61_64_78_73_74_61_74  # "adxstat"
_STALE = text(
    "SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
    "WHERE s.schemaname = current_schema() AND s.relname IN :names "
    "AND s.n_mod_since_analyze > GREATEST(:floor, :fraction * GREATEST(c.reltuples, 0)) ORDER BY s.relname"
).bindparams(bindparam("names", expanding=True))


class PlannerStatistics:
    """Analyzes the search tables that changed by more than `fraction` of their rows (and at
    least `floor` rows) since their last analysis."""

    def __init__(self, engine: Engine, *, floor: int = 1000, fraction: float = 0.5) -> None:
        self._engine = engine
        self._floor = floor
        self._fraction = fraction

    def refresh(self) -> int:
        """Analyze the stale tables now; the number analyzed (0 on SQLite, or while another
        worker is at it)."""
        if self._engine.dialect.name != "postgresql":
            return 0
        with self._engine.begin() as conn:
            stale = conn.scalars(_STALE, {"names": list(SEARCH_TABLES), "floor": self._floor,
                                          "fraction": self._fraction}).all()
            if not stale or not conn.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": _ANALYZE_LOCK}):
                return 0
            for table in stale:  # names from SEARCH_TABLES only
                conn.execute(text(f"ANALYZE {table}"))
        return len(stale)
