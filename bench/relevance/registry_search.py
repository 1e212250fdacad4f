"""The registry's own search as it is: `GET /v1/agents?q=` of an in-process app."""

from __future__ import annotations

import ipaddress
import random
from typing import Any
from urllib.parse import quote_plus

from bench.relevance.metrics import Ranking


def registrable(card_id: str, card: dict[str, Any]) -> dict[str, Any]:
    """The card as a valid A2A 0.3 card with the same searchable text. Test fixtures and cards
    rebuilt from code lack fields (interfaces, skills, tags) the registry requires; 0.3 lets a
    card have no skills and a skill no tags, so nothing is invented that a query could match."""
    skills = [
        {
            "id": str(s.get("id") or f"skill-{n}"),
            "name": s.get("name") or "",
            "description": s.get("description") or "",
            "tags": list(s.get("tags") or []),
            **({"examples": list(s["examples"])} if s.get("examples") else {}),
        }
        for n, s in enumerate(card.get("skills") or [])
        if isinstance(s, dict)
    ]
    provider = card.get("provider")
    return {
        "protocolVersion": "0.3.0",
        "name": card.get("name") or card_id,
        "description": card.get("description") or "",
        "version": str(card.get("version") or "1.0.0"),
        "url": f"https://{card_id}.example.com/a2a",
        "preferredTransport": "JSONRPC",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
        **({"provider": provider} if isinstance(provider, dict) and {"organization", "url"} <= provider.keys() else {}),
    }


class ApiRanker:
    """`GET /v1/agents?q=` of an in-process app on a temporary SQLite database, the cards
    imported through `POST /v1/agents/import` in a fixed shuffled order (the API answers in
    registration order, so an alphabetical import would flatter or punish by name)."""

    def __init__(
        self,
        cards: dict[str, dict[str, Any]],
        database_dir: str,
        params: str = "",
        settings: dict[str, Any] | None = None,
    ) -> None:
        """`params` is appended to every search URL; `settings` overrides fields of `Settings`."""
        from registry.app import create_app
        from registry.container import build_services
        from registry.db import make_engine
        from registry.migrate import upgrade
        from registry.settings import Settings

        url = f"sqlite:///{database_dir}/relevance.db"
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
        self.services = build_services(
            Settings(
                database_url=url,
                secret_key="relevance-secret-key-0123456789",
                allowed_networks=(ipaddress.ip_network("127.0.0.0/8"),),
                allow_http=True,
                **(settings or {}),
            )
        )
        self._client = create_app(services=self.services).test_client()
        self._params = params
        self._by_agent = self._import(cards)

    def _import(self, cards: dict[str, dict[str, Any]]) -> dict[str, str]:
        order = sorted(cards)
        random.Random(7).shuffle(order)
        items = [
            {"card": registrable(i, cards[i]), "cardUrl": f"https://{i}.example.com/.well-known/agent-card.json"}
            for i in order
        ]
        token = self.services.tokens.create("relevance", ["agents:write"]).token
        answer = self._client.post(
            "/v1/agents/import", json={"items": items}, headers={"Authorization": f"Bearer {token}"}
        ).get_json()
        failed = [(order[r["index"]], r["error"]) for r in answer["results"] if r["error"]]
        if failed:
            raise SystemExit(f"the registry refused {len(failed)} cards: {failed[:3]}")
        return {r["id"]: order[r["index"]] for r in answer["results"]}

    def rank(self, text: str) -> Ranking:
        response = self._client.get(f"/v1/agents?q={quote_plus(text)}&limit=50{self._params}")
        assert response.status_code == 200, (text, response.status_code, response.get_data()[:200])
        items = response.get_json()["items"]
        return [(self._by_agent[item["id"]], float(-n)) for n, item in enumerate(items)]

    def close(self) -> None:
        self.services.close()
