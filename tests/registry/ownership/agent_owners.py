"""What the policy, review and claim tests share: a domain proven through the API against a real
loopback server, cards whose every URL lies on it, and a snapshot of what a refused request must
leave as it was."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import text

from registry.container import Services
from registry.settings import Settings
from tests.support.ard_publishers import ArdPublisher
from tests.support.cards import make_card

CARD = "/.well-known/agent-card.json"
# What a refused write must leave as it was: the catalog, its history and index, the audit log,
# the change events, the manifests followed, the domains. (Tokens record their last use, and the
# A2A agent keeps the caller's own failed task: those are the caller's, not the entry's.)
GUARDED_TABLES = (
    "agents",
    "agent_cards",
    "agent_terms",
    "audit_log",
    "change_events",
    "manifest_sources",
    "manifest_listings",
    "signature_checks",
    "card_endorsements",
    "tag_counts",
    "tag_count_deltas",
    "domains",
)


def with_policy(settings: Settings, policy: str) -> Settings:
    return dataclasses.replace(settings, ownership=dataclasses.replace(settings.ownership, policy=policy))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def domain_of(server: ArdPublisher) -> str:
    """The server's domain as a plain-http domain is written: `127.0.0.1:port`."""
    return server.domain.removeprefix("http://")


def prove_domain(client: Any, token: str, server: ArdPublisher) -> str:
    """Prove `server`'s domain for the token's principal through the API: the HTTP challenge
    served by the server, then verified by the registry fetching it."""
    domain = domain_of(server)
    added = client.post("/v1/domains", json={"domain": domain}, headers=bearer(token))
    assert added.status_code in (200, 201), added.get_json()
    challenge = added.get_json()["challenges"]["http"]
    server.put_text("/" + challenge["url"].split("/", 3)[3], challenge["value"])
    verified = client.post(f"/v1/domains/{domain}/verify", json={"method": "http"}, headers=bearer(token))
    assert verified.status_code == 200, verified.get_json()
    return domain


def card_on(server: ArdPublisher, name: str, **fields: Any) -> dict[str, Any]:
    """A valid card whose interface lies on `server`'s domain."""
    return make_card(name, url=f"{server.domain}/a2a", **fields)


def serve_card(server: ArdPublisher, path: str, name: str, **fields: Any) -> str:
    """Serve a card on `server` at `path`; its URL."""
    return server.put_json(path, card_on(server, name, **fields))


def snapshot(services: Services) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the guarded tables, in a stable order."""
    with services.engine.connect() as conn:
        return {
            table: sorted(map(tuple, conn.execute(text(f"SELECT * FROM {table}"))), key=repr)
            for table in GUARDED_TABLES
        }


def error_code(response: Any) -> str:
    return str(response.get_json()["error"]["code"])
