"""The catalog's `agents` table as the relay reads it, by name (the relay may not import the catalog):
only the columns it needs, whether an agent pushes and what binds keys to it. A test checks that
`registry.catalog.models` agrees."""

from __future__ import annotations

from sqlalchemy import JSON, Integer, String, column, table

AGENTS = table(
    "agents",
    column("pk", Integer),
    column("id", String),
    column("capabilities", JSON),
    column("card_url", String),
    column("owner_id", Integer),
    column("jwks_url", String),
)
