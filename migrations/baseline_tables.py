"""The portable tables of revision 0001_baseline: the same on SQLite and PostgreSQL.

Part of that revision (which adds what differs between the databases), kept apart only for
length; like a revision it imports nothing from the application and describes the schema as it
was when written. `registry.db.types.UtcDateTime` is `DateTime(timezone=True)` to the database
(the conversion to UTC happens in Python), and is written so here.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

UTC_DATETIME = sa.DateTime(timezone=True)  # what registry.db.types.UtcDateTime renders to
EPOCH = sa.text("'1970-01-01 00:00:00'")  # "due at once" for a new agent's first probe and crawl
PENDING = sa.text("state = 'pending'")
ACTIVE = sa.text("status = 'active'")

# Child tables first, for the downgrade.
TABLES = """relay_attempts relay_messages relay_subscriptions registry_keys trusted_keys card_endorsements
signature_checks health_checks tag_count_deltas tag_counts agent_embeddings agent_terms agent_cards agents api_tokens
principals""".split()


def create_tables() -> None:
    _principals()
    _agents()
    _agent_cards_and_terms()
    _health()
    _trust()
    _relay()


def _required(name: str, type_: Any, **options: Any) -> sa.Column[Any]:
    return sa.Column(name, type_, nullable=False, **options)


def _optional(name: str, type_: Any) -> sa.Column[Any]:
    return sa.Column(name, type_, nullable=True)


def _key(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    return sa.PrimaryKeyConstraint(*columns, name=f"pk_{table}")


def _unique(table: str, *columns: str) -> sa.UniqueConstraint:
    return sa.UniqueConstraint(*columns, name=f"uq_{table}_{'_'.join(columns)}")


def _refers(table: str, column: str, target: str, on_delete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    referred, _ = target.split(".")
    return sa.ForeignKeyConstraint([column], [target], name=f"fk_{table}_{column}_{referred}", ondelete=on_delete)


def _index(table: str, *columns: str, name: str = "", unique: bool = False, where: Any = None) -> None:
    name = name or f"ix_{table}_{'_'.join(columns)}"
    op.create_index(name, table, list(columns), unique=unique, sqlite_where=where, postgresql_where=where)


def _principals() -> None:
    op.create_table(
        "principals",
        _required("id", sa.Integer()),
        _required("name", sa.String(200)),
        _required("created_at", UTC_DATETIME),
        _key("principals", "id"),
        _unique("principals", "name"),
    )
    op.create_table(
        "api_tokens",
        _required("id", sa.Integer()),
        _required("principal_id", sa.Integer()),
        _required("name", sa.String(200)),
        _required("token_hash", sa.String(64)),
        _required("prefix", sa.String(16)),
        _required("scopes", sa.String(500)),
        _required("created_at", UTC_DATETIME),
        _optional("revoked_at", UTC_DATETIME),
        _optional("expires_at", UTC_DATETIME),
        _optional("last_used_at", UTC_DATETIME),
        _optional("domains", sa.String(2000)),
        _key("api_tokens", "id"),
        _refers("api_tokens", "principal_id", "principals.id"),
        _unique("api_tokens", "token_hash"),
    )
    _index("api_tokens", "principal_id")


def _agents() -> None:
    op.create_table(
        "agents",
        _required("pk", sa.Integer()),
        _required("id", sa.String(40)),
        _required("card_url", sa.String(2048)),
        _optional("owner_id", sa.Integer()),
        _required("status", sa.String(20)),
        _optional("status_message", sa.String(1000)),
        _required("source", sa.String(20)),
        _required("name", sa.String(500)),
        _required("description", sa.Text()),
        _optional("version", sa.String(200)),
        _optional("provider_org", sa.String(500)),
        _optional("provider_url", sa.String(2048)),
        _optional("documentation_url", sa.String(2048)),
        _optional("icon_url", sa.String(2048)),
        _required("protocol_versions", sa.JSON()),
        _required("flavor", sa.String(10)),
        _required("interfaces", sa.JSON()),
        _required("capabilities", sa.JSON()),
        _required("input_modes", sa.JSON()),
        _required("output_modes", sa.JSON()),
        _required("tags", sa.JSON()),
        _required("card_sha256", sa.String(64)),
        _required("card_version", sa.Integer()),
        _required("profile", sa.Text()),
        _required("created_at", UTC_DATETIME),
        _required("updated_at", UTC_DATETIME),
        # The schedule and leases of the probe and crawl jobs, and the health roll-up.
        _required("next_probe_at", UTC_DATETIME, server_default=EPOCH),
        _optional("probe_lease_owner", sa.String(100)),
        _optional("probe_lease_until", UTC_DATETIME),
        _required("health_state", sa.String(10), server_default=sa.text("'unknown'")),
        _optional("health_since", UTC_DATETIME),
        _optional("health_checked_at", UTC_DATETIME),
        _optional("health_latency_ms", sa.Integer()),
        _optional("health_reason", sa.String(40)),
        _required("health_successes", sa.Integer(), server_default=sa.text("0")),
        _required("health_failures", sa.Integer(), server_default=sa.text("0")),
        _optional("health_uptime24h", sa.Float()),
        _optional("health_window", sa.JSON()),
        _required("next_crawl_at", UTC_DATETIME, server_default=EPOCH),
        _optional("crawl_lease_owner", sa.String(100)),
        _optional("crawl_lease_until", UTC_DATETIME),
        _optional("crawled_at", UTC_DATETIME),
        _required("crawl_failures", sa.Integer(), server_default=sa.text("0")),
        _optional("crawl_error", sa.String(500)),
        _optional("crawl_etag", sa.String(500)),
        _optional("crawl_last_modified", sa.String(100)),
        # The current card's signature roll-up.
        _required("signature_state", sa.String(12), server_default=sa.text("'unverifiable'")),
        _optional("signature_kids", sa.JSON()),
        _optional("signature_checked_at", UTC_DATETIME),
        _optional("jwks_url", sa.String(2048)),
        _key("agents", "pk"),
        _unique("agents", "id"),
        _unique("agents", "card_url"),
        _refers("agents", "owner_id", "principals.id", on_delete="SET NULL"),
    )
    for column in ("owner_id", "updated_at", "next_probe_at", "next_crawl_at", "health_state"):
        _index("agents", column)


def _agent_cards_and_terms() -> None:
    op.create_table(
        "agent_cards",
        _required("pk", sa.Integer()),
        _required("agent_pk", sa.Integer()),
        _required("version", sa.Integer()),
        _required("source", sa.String(20)),
        _optional("fetched_from", sa.String(2048)),
        _required("raw", sa.LargeBinary()),
        _required("sha256", sa.String(64)),
        _optional("protocol_version", sa.String(20)),
        _optional("flavor", sa.String(10)),
        _required("valid", sa.Boolean()),
        _required("issues", sa.JSON()),
        _required("is_current", sa.Boolean()),
        _required("fetched_at", UTC_DATETIME),
        _optional("etag", sa.String(500)),
        _optional("last_modified", sa.String(100)),
        _key("agent_cards", "pk"),
        _refers("agent_cards", "agent_pk", "agents.pk"),
        _unique("agent_cards", "agent_pk", "version"),
    )
    # An index of the agent's current card, written and removed with it by the catalog, so no
    # foreign key (its check on every term row is the costliest part of writing them). On SQLite
    # clustered on its primary key: each term is stored in two b-trees instead of three.
    op.create_table(
        "agent_terms",
        _required("agent_pk", sa.Integer(), autoincrement=False),
        _required("kind", sa.String(10)),
        _required("value", sa.String(500)),
        _key("agent_terms", "agent_pk", "kind", "value"),
        sqlite_with_rowid=False,
    )
    _index("agent_terms", "kind", "value", "agent_pk", name="ix_agent_terms_lookup")
    op.create_table(
        "agent_embeddings",
        _required("agent_pk", sa.Integer(), autoincrement=False),
        _required("model", sa.String(100)),
        _required("vector", sa.LargeBinary()),
        # PostgreSQL: the writing transaction's id, by default (0001_baseline adds it).
        _required("marker", sa.BigInteger()),
        _key("agent_embeddings", "agent_pk"),
        _refers("agent_embeddings", "agent_pk", "agents.pk"),
    )
    _index("agent_embeddings", "marker")
    op.create_table(
        "tag_counts",
        _required("tag", sa.String(500)),
        _required("count", sa.Integer()),
        _key("tag_counts", "tag"),
    )
    op.create_table(
        "tag_count_deltas",
        _required("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite")),  # SQLite: the rowid
        _required("tag", sa.String(500)),
        _required("delta", sa.Integer()),
        _key("tag_count_deltas", "id"),
    )


def _health() -> None:
    op.create_table(
        "health_checks",
        _required("id", sa.Integer()),
        _required("agent_pk", sa.Integer()),
        _required("checked_at", UTC_DATETIME),
        _required("interface_url", sa.String(2048)),
        _optional("protocol_version", sa.String(20)),
        _required("method", sa.String(20)),
        _required("outcome", sa.String(10)),
        _required("reason", sa.String(40)),
        _optional("latency_ms", sa.Integer()),
        _optional("http_status", sa.Integer()),
        _optional("rpc_code", sa.Integer()),
        _optional("detail", sa.String(500)),
        _key("health_checks", "id"),
        _refers("health_checks", "agent_pk", "agents.pk"),
    )
    _index("health_checks", "checked_at")
    _index("health_checks", "agent_pk", "checked_at", name="ix_health_checks_agent_recent")


def _card_version(table: str) -> list[Any]:
    columns, target = ["agent_pk", "card_version"], ["agent_cards.agent_pk", "agent_cards.version"]
    return [
        _required("agent_pk", sa.Integer()),
        _required("card_version", sa.Integer()),
        sa.ForeignKeyConstraint(columns, target, name=f"fk_{table}_card_version_agent_cards", ondelete="CASCADE"),
    ]


def _trust() -> None:
    op.create_table(
        "signature_checks",
        *_card_version("signature_checks"),
        _required("position", sa.Integer()),
        _required("outcome", sa.String(20)),
        _optional("kid", sa.String(500)),
        _optional("alg", sa.String(20)),
        _optional("key_source", sa.String(2100)),
        _optional("key_thumbprint", sa.String(64)),
        _optional("form", sa.String(10)),
        _required("uncovered", sa.JSON()),
        _required("detail", sa.Text()),
        _required("checked_at", UTC_DATETIME),
        _key("signature_checks", "agent_pk", "card_version", "position"),
    )
    op.create_table(
        "card_endorsements",
        *_card_version("card_endorsements"),
        _required("kid", sa.String(200)),
        _required("jku", sa.String(2048)),
        _required("entry", sa.JSON()),
        _required("signed_at", UTC_DATETIME),
        _key("card_endorsements", "agent_pk", "card_version"),
    )
    op.create_table(
        "trusted_keys",
        _required("pk", sa.Integer()),
        _required("id", sa.String(40)),
        _required("principal_id", sa.Integer()),
        _optional("agent_pk", sa.Integer()),
        _required("jwks", sa.JSON()),
        _required("kids", sa.JSON()),
        _required("created_at", UTC_DATETIME),
        _key("trusted_keys", "pk"),
        _unique("trusted_keys", "id"),
        _refers("trusted_keys", "principal_id", "principals.id"),
        _refers("trusted_keys", "agent_pk", "agents.pk"),
    )
    _index("trusted_keys", "principal_id")
    _index("trusted_keys", "agent_pk")
    op.create_table(
        "registry_keys",
        _required("pk", sa.Integer()),
        _required("kid", sa.String(200)),
        _required("alg", sa.String(10)),
        _required("public_jwk", sa.JSON()),
        _optional("sealed_private_key", sa.LargeBinary()),
        _optional("key_file", sa.String(1024)),
        _required("status", sa.String(10)),
        _required("created_at", UTC_DATETIME),
        _optional("retired_at", UTC_DATETIME),
        _optional("not_after", UTC_DATETIME),
        _key("registry_keys", "pk"),
        _unique("registry_keys", "kid"),
    )
    # At most one active key per algorithm: concurrent first uses race on this, not on a read.
    _index("registry_keys", "alg", name="uq_registry_keys_active_alg", unique=True, where=ACTIVE)


def _relay() -> None:
    op.create_table(
        "relay_subscriptions",
        _required("pk", sa.Integer()),
        _required("id", sa.String(40)),
        _required("owner_id", sa.Integer()),
        _optional("agent_pk", sa.Integer()),
        _required("agent_id", sa.String(40)),
        _optional("task_id", sa.String(200)),
        _required("target_url", sa.String(2048)),
        _optional("target_secrets", sa.LargeBinary()),
        _required("auth_mode", sa.String(10)),
        _optional("token_hash", sa.String(64)),
        _optional("previous_token_hash", sa.String(64)),
        _optional("previous_token_until", UTC_DATETIME),
        _required("status", sa.String(10)),
        _required("kind", sa.String(10), server_default=sa.text("'push'")),
        _optional("status_reason", sa.String(500)),
        _required("created_at", UTC_DATETIME),
        _required("updated_at", UTC_DATETIME),
        _key("relay_subscriptions", "pk"),
        _unique("relay_subscriptions", "id"),
        _refers("relay_subscriptions", "owner_id", "principals.id"),
        _refers("relay_subscriptions", "agent_pk", "agents.pk", on_delete="SET NULL"),
    )
    _index("relay_subscriptions", "owner_id")
    _index("relay_subscriptions", "agent_pk")
    _relay_messages()
    op.create_table(
        "relay_attempts",
        _required("id", sa.Integer()),
        _required("message_pk", sa.Integer()),
        _required("attempt", sa.Integer()),
        _required("started_at", UTC_DATETIME),
        _required("outcome", sa.String(20)),
        _optional("http_status", sa.Integer()),
        _optional("latency_ms", sa.Integer()),
        _optional("error", sa.String(500)),
        _optional("response", sa.String(1000)),
        _optional("next_attempt_at", UTC_DATETIME),
        _key("relay_attempts", "id"),
        _refers("relay_attempts", "message_pk", "relay_messages.pk"),
    )
    _index("relay_attempts", "message_pk")


def _relay_messages() -> None:
    op.create_table(
        "relay_messages",
        _required("pk", sa.Integer()),
        _required("id", sa.String(40)),
        _required("subscription_pk", sa.Integer()),
        _required("task_key", sa.String(200)),
        # PostgreSQL: numbers from one sequence for every task (relay_message_order).
        _required("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite")),
        _required("kind", sa.String(20)),
        _required("body", sa.LargeBinary()),
        _optional("jti", sa.String(200)),
        _required("received_at", UTC_DATETIME),
        _required("state", sa.String(10)),
        # Only the head of each task's queue is due; a message waiting behind it has NULL here and
        # keeps its retry back-off in not_before (registry.relay.task_order).
        _optional("due_at", UTC_DATETIME),
        _optional("not_before", UTC_DATETIME),
        _optional("lease_owner", sa.String(100)),
        _optional("lease_until", UTC_DATETIME),
        _required("attempts", sa.Integer()),
        _optional("last_attempt_at", UTC_DATETIME),
        _optional("last_status", sa.Integer()),
        _optional("last_error", sa.String(500)),
        _optional("finished_at", UTC_DATETIME),
        _required("replays", sa.Integer()),
        _key("relay_messages", "pk"),
        _unique("relay_messages", "id"),
        sa.UniqueConstraint("subscription_pk", "task_key", "seq", name="uq_relay_messages_order"),
        sa.UniqueConstraint("subscription_pk", "jti", name="uq_relay_messages_jti"),
        _refers("relay_messages", "subscription_pk", "relay_subscriptions.pk"),
    )
    _index("relay_messages", "received_at")
    _index("relay_messages", "due_at")
    _index("relay_messages", "subscription_pk", "pk", name="ix_relay_messages_listing")
    # A task's pending messages in order, however long its delivered history.
    _index("relay_messages", "subscription_pk", "task_key", "seq", name="ix_relay_messages_pending_task", where=PENDING)
