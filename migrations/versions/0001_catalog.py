"""Catalog: principals, tokens, agents, card history, search terms, audit log.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-21 23:32:37.125806
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import registry.db.types

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('audit_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', registry.db.types.UtcDateTime(timezone=True), nullable=False),
    sa.Column('principal_id', sa.Integer(), nullable=True),
    sa.Column('action', sa.String(length=50), nullable=False),
    sa.Column('agent_id', sa.String(length=40), nullable=True),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_log'))
    )
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_log_agent_id'), ['agent_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_log_at'), ['at'], unique=False)

    op.create_table('principals',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_at', registry.db.types.UtcDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_principals')),
    sa.UniqueConstraint('name', name=op.f('uq_principals_name'))
    )
    op.create_table('agents',
    sa.Column('pk', sa.Integer(), nullable=False),
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('card_url', sa.String(length=2048), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('status_message', sa.String(length=1000), nullable=True),
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.Column('name', sa.String(length=500), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('version', sa.String(length=200), nullable=True),
    sa.Column('provider_org', sa.String(length=500), nullable=True),
    sa.Column('provider_url', sa.String(length=2048), nullable=True),
    sa.Column('documentation_url', sa.String(length=2048), nullable=True),
    sa.Column('icon_url', sa.String(length=2048), nullable=True),
    sa.Column('protocol_versions', sa.JSON(), nullable=False),
    sa.Column('flavor', sa.String(length=10), nullable=False),
    sa.Column('interfaces', sa.JSON(), nullable=False),
    sa.Column('capabilities', sa.JSON(), nullable=False),
    sa.Column('input_modes', sa.JSON(), nullable=False),
    sa.Column('output_modes', sa.JSON(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('card_sha256', sa.String(length=64), nullable=False),
    sa.Column('card_version', sa.Integer(), nullable=False),
    sa.Column('profile', sa.Text(), nullable=False),
    sa.Column('created_at', registry.db.types.UtcDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', registry.db.types.UtcDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['owner_id'], ['principals.id'], name=op.f('fk_agents_owner_id_principals'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('pk', name=op.f('pk_agents')),
    sa.UniqueConstraint('card_url', name=op.f('uq_agents_card_url')),
    sa.UniqueConstraint('id', name=op.f('uq_agents_id'))
    )
    with op.batch_alter_table('agents', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_agents_owner_id'), ['owner_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_agents_updated_at'), ['updated_at'], unique=False)

    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('principal_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('scopes', sa.String(length=500), nullable=False),
    sa.Column('created_at', registry.db.types.UtcDateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', registry.db.types.UtcDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['principal_id'], ['principals.id'], name=op.f('fk_api_tokens_principal_id_principals'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_tokens_principal_id'), ['principal_id'], unique=False)

    op.create_table('agent_cards',
    sa.Column('pk', sa.Integer(), nullable=False),
    sa.Column('agent_pk', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.Column('fetched_from', sa.String(length=2048), nullable=True),
    sa.Column('raw', sa.LargeBinary(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('protocol_version', sa.String(length=20), nullable=True),
    sa.Column('flavor', sa.String(length=10), nullable=True),
    sa.Column('valid', sa.Boolean(), nullable=False),
    sa.Column('issues', sa.JSON(), nullable=False),
    sa.Column('is_current', sa.Boolean(), nullable=False),
    sa.Column('fetched_at', registry.db.types.UtcDateTime(timezone=True), nullable=False),
    sa.Column('etag', sa.String(length=500), nullable=True),
    sa.Column('last_modified', sa.String(length=100), nullable=True),
    sa.ForeignKeyConstraint(['agent_pk'], ['agents.pk'], name=op.f('fk_agent_cards_agent_pk_agents'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('pk', name=op.f('pk_agent_cards')),
    sa.UniqueConstraint('agent_pk', 'version', name=op.f('uq_agent_cards_agent_pk_version'))
    )
    op.create_table('agent_terms',
    sa.Column('agent_pk', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('value', sa.String(length=500), nullable=False),
    sa.ForeignKeyConstraint(['agent_pk'], ['agents.pk'], name=op.f('fk_agent_terms_agent_pk_agents'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('agent_pk', 'kind', 'value', name=op.f('pk_agent_terms'))
    )
    with op.batch_alter_table('agent_terms', schema=None) as batch_op:
        batch_op.create_index('ix_agent_terms_lookup', ['kind', 'value', 'agent_pk'], unique=False)

    _create_text_index()


def _create_text_index() -> None:
    # Full-text search over names, descriptions and skills: FTS5 on SQLite (rowid = agents.pk),
    # a GIN-indexed tsvector on PostgreSQL. Both use the 'simple' configuration: agent cards
    # are in many languages and stemming for one would mangle the others.
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE agent_fts USING fts5("
            "document, tokenize='unicode61 remove_diacritics 2', prefix='2 3')"
        )
        return
    op.create_table(
        "agent_search",
        sa.Column("agent_pk", sa.Integer(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["agent_pk"], ["agents.pk"], name=op.f("fk_agent_search_agent_pk_agents"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("agent_pk", name=op.f("pk_agent_search")),
    )
    op.execute(
        "CREATE INDEX ix_agent_search_document ON agent_search "
        "USING gin (to_tsvector('simple', document))"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE agent_fts")
    else:
        op.drop_table("agent_search")
    with op.batch_alter_table('agent_terms', schema=None) as batch_op:
        batch_op.drop_index('ix_agent_terms_lookup')

    op.drop_table('agent_terms')
    op.drop_table('agent_cards')
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_tokens_principal_id'))

    op.drop_table('api_tokens')
    with op.batch_alter_table('agents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_agents_updated_at'))
        batch_op.drop_index(batch_op.f('ix_agents_owner_id'))

    op.drop_table('agents')
    op.drop_table('principals')
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_audit_log_at'))
        batch_op.drop_index(batch_op.f('ix_audit_log_agent_id'))

    op.drop_table('audit_log')
