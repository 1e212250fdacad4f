"""Writing what verification found, inside the caller's transaction (the one that stores the
card version), so a card version never exists without its checks and endorsement."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Connection, TableClause, delete, insert, select, update

from registry.trust.catalog_tables import AGENT_TERMS, AGENTS
from registry.trust.models import CardEndorsement, SignatureCheck
from registry.trust.state import CardTrust

TERM_INSERT = insert(AGENT_TERMS)
SIGNATURE_TERM = "sig"
# The models' tables (SQLAlchemy types a model's `__table__` as a FromClause).
CHECKS = cast(TableClause, SignatureCheck.__table__)
ENDORSEMENTS = cast(TableClause, CardEndorsement.__table__)


def trust_rows(items: list[tuple[CardTrust | None, int, int]]) -> dict[TableClause, list[dict[str, Any]]]:
    """The rows of checks and endorsements of new card versions, (trust, agent pk, card version),
    by table: the catalog writes them with the version's other rows."""
    return {
        CHECKS: [row for trust, pk, version in items if trust for row in trust.check_rows(pk, version)],
        ENDORSEMENTS: [
            row for trust, pk, version in items if trust for row in trust.endorsement_rows(pk, version)],
    }


def write_trust(conn: Connection, items: list[tuple[CardTrust | None, int, int]]) -> None:
    """Insert the checks and endorsements of card versions (`trust_rows`)."""
    for table, rows in trust_rows(items).items():
        if rows:
            conn.execute(insert(table), rows)


def replace_current_trust(conn: Connection, agent_pk: int, trust: CardTrust, version: int | None = None) -> None:
    """Re-verification of the agent's current card (new owner keys, a re-crawl that found the
    card unchanged): its checks, endorsement, roll-up and search term are replaced. With `version`
    (the one that was verified), nothing is written if another version became current meanwhile."""
    current = conn.scalar(select(AGENTS.c.card_version).where(AGENTS.c.pk == agent_pk))
    if current is None or version not in (None, current):  # deleted, or a newer card arrived meanwhile
        return
    version = current
    for table in (SignatureCheck, CardEndorsement):
        conn.execute(delete(table).where(table.agent_pk == agent_pk, table.card_version == version))
    write_trust(conn, [(trust, agent_pk, version)])
    conn.execute(update(AGENTS).where(AGENTS.c.pk == agent_pk).values(**trust.agent_columns()))
    conn.execute(delete(AGENT_TERMS).where(AGENT_TERMS.c.agent_pk == agent_pk, AGENT_TERMS.c.kind == SIGNATURE_TERM))
    conn.execute(TERM_INSERT, [{"agent_pk": agent_pk, "kind": SIGNATURE_TERM, "value": trust.state}])


def refresh_current_trust(conn: Connection, agent_pk: int, trust: CardTrust | None, version: int | None = None) -> None:
    """`replace_current_trust` when the roll-up differs from the stored one (a re-crawl found the
    card unchanged, but its keys now resolve, or no longer do)."""
    if trust is None:
        return
    stored = conn.execute(
        select(AGENTS.c.signature_state, AGENTS.c.signature_kids).where(AGENTS.c.pk == agent_pk)
    ).first()
    if stored is not None and (stored.signature_state, list(stored.signature_kids or [])) != (trust.state, list(trust.kids)):
        replace_current_trust(conn, agent_pk, trust, version)
