"""The catalog's tables as trust reads and writes them, named by table name.

Trust sits below the catalog (the catalog imports trust, never the reverse), yet it verifies the
card versions the catalog stores and keeps the signature columns of `agents` and their `sig`
search term. These lightweight tables name only the columns trust uses; `registry.catalog.models`
defines them (a test checks that the two agree).
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Integer, LargeBinary, String, column, table

from registry.db.types import UtcDateTime

AGENTS = table(
    "agents",
    column("pk", Integer), column("id", String), column("owner_id", Integer), column("card_url", String),
    column("card_version", Integer), column("jwks_url", String), column("updated_at", UtcDateTime()),
    column("signature_state", String), column("signature_kids", JSON), column("signature_checked_at", UtcDateTime()),
)
AGENT_CARDS = table(
    "agent_cards",
    column("agent_pk", Integer), column("version", Integer), column("raw", LargeBinary), column("valid", Boolean),
    column("is_current", Boolean), column("source", String), column("fetched_from", String),
    column("fetched_at", UtcDateTime()),
)
AGENT_TERMS = table("agent_terms", column("agent_pk", Integer), column("kind", String), column("value", String))
