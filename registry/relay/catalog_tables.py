"""The catalog's `agents` table as the relay reads it, named by table name.

The relay uses no catalog module (it sits beside the catalog, above trust): it only needs to know
whether an agent pushes (a subscription's check) and what binds keys to it (JWT mode). This
lightweight table names only those columns; `registry.catalog.models` defines them (a test checks
that the two agree).
"""

from __future__ import annotations

from sqlalchemy import JSON, Integer, String, column, table

AGENTS = table(
    "agents",
    column("pk", Integer), column("id", String), column("capabilities", JSON), column("card_url", String),
    column("owner_id", Integer), column("jwks_url", String),
)
