"""Trust: signature roll-up and jwks_url on agents; signature_checks, card_endorsements,
trusted_keys, registry_keys.

A branch of its own beside 0002_health (`registry.migrate.upgrade` applies every head).

Revision ID: 0003_trust
Revises: 0001
Create Date: 2026-11-22 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import registry.db.types

revision = "0003_trust"
down_revision = "0001"
branch_labels = None
depends_on = None


def _when(name: str, *, nullable: bool = True) -> sa.Column:
    return sa.Column(name, registry.db.types.UtcDateTime(timezone=True), nullable=nullable)


def _agent_columns() -> list[sa.Column]:
    return [
        sa.Column("signature_state", sa.String(length=12), nullable=False, server_default=sa.text("'unverifiable'")),
        sa.Column("signature_kids", sa.JSON(), nullable=True),
        _when("signature_checked_at"),
        sa.Column("jwks_url", sa.String(length=2048), nullable=True),
    ]


def _card_version_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["agent_pk", "card_version"], ["agent_cards.agent_pk", "agent_cards.version"],
        name=f"fk_{table}_card_version_agent_cards", ondelete="CASCADE",
    )


def _card_version_key(table: str) -> list[sa.Column | sa.Constraint]:
    return [
        sa.Column("agent_pk", sa.Integer(), nullable=False),
        sa.Column("card_version", sa.Integer(), nullable=False),
        _card_version_fk(table),
    ]


def upgrade() -> None:
    with op.batch_alter_table("agents", schema=None) as batch_op:
        for column in _agent_columns():
            batch_op.add_column(column)
    # Agents stored before verification existed are findable by their (unchecked) state.
    op.execute("INSERT INTO agent_terms (agent_pk, kind, value) SELECT pk, 'sig', 'unverifiable' FROM agents")
    _create_signature_checks()
    _create_card_endorsements()
    _create_trusted_keys()
    _create_registry_keys()


def _create_signature_checks() -> None:
    op.create_table(
        "signature_checks",
        *_card_version_key("signature_checks"),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("kid", sa.String(length=500), nullable=True),
        sa.Column("alg", sa.String(length=20), nullable=True),
        sa.Column("key_source", sa.String(length=2100), nullable=True),
        sa.Column("key_thumbprint", sa.String(length=64), nullable=True),
        sa.Column("form", sa.String(length=10), nullable=True),
        sa.Column("uncovered", sa.JSON(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        _when("checked_at", nullable=False),
        sa.PrimaryKeyConstraint("agent_pk", "card_version", "position", name=op.f("pk_signature_checks")),
    )


def _create_card_endorsements() -> None:
    op.create_table(
        "card_endorsements",
        *_card_version_key("card_endorsements"),
        sa.Column("kid", sa.String(length=200), nullable=False),
        sa.Column("jku", sa.String(length=2048), nullable=False),
        sa.Column("entry", sa.JSON(), nullable=False),
        _when("signed_at", nullable=False),
        sa.PrimaryKeyConstraint("agent_pk", "card_version", name=op.f("pk_card_endorsements")),
    )


def _create_trusted_keys() -> None:
    op.create_table(
        "trusted_keys",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("principal_id", sa.Integer(), nullable=False),
        sa.Column("agent_pk", sa.Integer(), nullable=True),
        sa.Column("jwks", sa.JSON(), nullable=False),
        sa.Column("kids", sa.JSON(), nullable=False),
        _when("created_at", nullable=False),
        sa.ForeignKeyConstraint(["agent_pk"], ["agents.pk"], name=op.f("fk_trusted_keys_agent_pk_agents"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["principal_id"], ["principals.id"], name=op.f("fk_trusted_keys_principal_id_principals"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pk", name=op.f("pk_trusted_keys")),
        sa.UniqueConstraint("id", name=op.f("uq_trusted_keys_id")),
    )
    with op.batch_alter_table("trusted_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_trusted_keys_agent_pk"), ["agent_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_trusted_keys_principal_id"), ["principal_id"], unique=False)


def _create_registry_keys() -> None:
    op.create_table(
        "registry_keys",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("kid", sa.String(length=200), nullable=False),
        sa.Column("alg", sa.String(length=10), nullable=False),
        sa.Column("public_jwk", sa.JSON(), nullable=False),
        sa.Column("sealed_private_key", sa.LargeBinary(), nullable=True),
        sa.Column("key_file", sa.String(length=1024), nullable=True),
        sa.Column("status", sa.String(length=10), nullable=False),
        _when("created_at", nullable=False),
        _when("retired_at"),
        _when("not_after"),
        sa.PrimaryKeyConstraint("pk", name=op.f("pk_registry_keys")),
        sa.UniqueConstraint("kid", name=op.f("uq_registry_keys_kid")),
    )
    # At most one active key per algorithm: concurrent first uses race on this, not on a read.
    op.create_index("uq_registry_keys_active_alg", "registry_keys", ["alg"], unique=True,
                    sqlite_where=sa.text("status = 'active'"), postgresql_where=sa.text("status = 'active'"))


def downgrade() -> None:
    op.drop_index("uq_registry_keys_active_alg", table_name="registry_keys")
    for table in ("registry_keys", "trusted_keys", "card_endorsements", "signature_checks"):
        op.drop_table(table)
    op.execute("DELETE FROM agent_terms WHERE kind = 'sig'")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        for column in reversed(_agent_columns()):
            batch_op.drop_column(column.name)
