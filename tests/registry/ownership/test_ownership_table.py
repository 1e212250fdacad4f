"""Under `AGENTDEX_OWNERSHIP=verified`, owner A has proven the domain their agents live on (through
the API, the registry fetching the HTTP challenge from a real loopback server) and owner B has not.
One table holds every way to register, change or take an agent — REST, the A2A agent's
register-agent skill, a domain's ARD manifest, and each CLI command against the registry served on
loopback. B is refused in every row with `not_domain_owner`, and nothing in the database changes;
A does every one of them."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli
from registry.container import Services
from registry.settings import Settings
from signing import SigningKey, generate_key, public_jwks, sign_card
from tests.registry.ownership.agent_owners import (
    CARD,
    bearer,
    card_on,
    prove_domain,
    serve_card,
    snapshot,
    with_policy,
)
from tests.support.a2a_calls import send
from tests.support.ard_publishers import ArdPublisher, entry

REFUSED = "not_domain_owner"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return with_policy(settings, "verified")


@dataclasses.dataclass
class World:
    client: Any
    served: Callable[[], str]  # the registry served on loopback, for the CLI (started when asked)
    publisher: ArdPublisher
    files: Path
    key: SigningKey
    live: str  # A's agent, active, with its JWKS on A's domain
    retired: str  # A's agent, deprecated by A
    claimable: str  # an agent on A's domain that an admin registered
    new_url: str  # a card on A's domain that nobody registered yet
    new_card: dict[str, Any]


@pytest.fixture
def world(
    request: pytest.FixtureRequest,
    client: Any,
    publisher: ArdPublisher,
    writer_token: str,
    admin_token: str,
    tmp_path: Path,
) -> World:
    prove_domain(client, writer_token, publisher)
    key = generate_key("EdDSA")
    jwks_url = publisher.put_json("/jwks.json", public_jwks([key]))
    live = _register(client, writer_token, {"url": serve_card(publisher, CARD, "Live"), "jwksUrl": jwks_url})
    retired = _register(client, writer_token, {"url": serve_card(publisher, "/retired/card.json", "Retired")})
    deprecated = client.patch(f"/v1/agents/{retired}", json={"status": "deprecated"}, headers=bearer(writer_token))
    assert deprecated.status_code == 200
    claimable = _register(client, admin_token, {"url": serve_card(publisher, "/admins/card.json", "Admins")})
    new_card = card_on(publisher, "Newcomer")
    new_url = publisher.put_json("/new/card.json", new_card)
    publisher.publish([entry(publisher.urn("newcomer"), "Newcomer", url=new_url)])
    (tmp_path / "signed.json").write_text(json.dumps(sign_card(card_on(publisher, "Live v2"), key)))
    (tmp_path / "jwks.json").write_text(json.dumps(public_jwks([key])))
    (tmp_path / "cards.jsonl").write_text(json.dumps({"card": new_card, "cardUrl": new_url}) + "\n")
    served = lambda: str(request.getfixturevalue("registry_url"))  # noqa: E731
    return World(client, served, publisher, tmp_path, key, live, retired, claimable, new_url, new_card)


def _register(client: Any, token: str, body: dict[str, Any]) -> str:
    response = client.post("/v1/agents", json=body, headers=bearer(token))
    assert response.status_code == 201, response.get_json()
    return str(response.get_json()["id"])


# -- the routes: each returns (done, error code) ------------------------------------------

Outcome = tuple[bool, str | None]


def _rest(expected: int, method: str, path: Callable[[World], str], body: Callable[[World], Any] | None = None):  # type: ignore[no-untyped-def]
    def call(w: World, token: str) -> Outcome:
        response = w.client.open(path(w), method=method, json=body(w) if body else None, headers=bearer(token))
        if response.status_code == expected:
            return True, None
        return False, response.get_json()["error"]["code"]

    return call


def _rest_import(w: World, token: str) -> Outcome:
    items = [{"card": w.new_card, "cardUrl": w.new_url}]
    (result,) = w.client.post("/v1/agents/import", json={"items": items}, headers=bearer(token)).get_json()["results"]
    return result["id"] is not None, (result["error"] or {}).get("code")


def _rest_domain(w: World, token: str) -> Outcome:
    response = w.client.post("/v1/agents", json={"url": w.publisher.domain + "/"}, headers=bearer(token))
    if response.status_code == 201:
        return [a["identifier"] for a in response.get_json()["manifest"]["registered"]] == [
            w.publisher.urn("newcomer")
        ], None
    return False, response.get_json()["error"]["code"]


def _a2a(data: Callable[[World], Any]) -> Callable[[World, str], Outcome]:
    def call(w: World, token: str) -> Outcome:
        task = send(w.client, data=data(w), headers=bearer(token), metadata={"skill": "register-agent"})
        if task["status"]["state"] == "TASK_STATE_COMPLETED":
            return True, None
        return False, task["status"]["message"]["parts"][1]["data"]["error"]["code"]

    return call


def _cli(*args: Callable[[World], str] | str, stdin: str | None = None) -> Callable[[World, str], Outcome]:
    def call(w: World, token: str) -> Outcome:
        argv = [arg(w) if callable(arg) else arg for arg in args]
        env = {"AGENTDEX_URL": w.served(), "AGENTDEX_TOKEN": token}
        result = CliRunner().invoke(cli, [*argv, "--json"], env=env, input=stdin, catch_exceptions=False)
        if result.exit_code == 0:
            return True, None
        assert result.exit_code == 1, result.output
        assert REFUSED not in result.stderr or "agentdex domains add" in result.stderr  # says how to prove it
        return False, _cli_code(result.stdout)

    return call


def _cli_code(stdout: str) -> str | None:
    """The registry's error code in a failed command's JSON (the import's lines carry theirs)."""
    printed = json.loads(stdout)
    if "error" in printed:
        return str(printed["error"]["code"])
    return str(printed["errors"][0]["error"]["code"])


ROWS: dict[str, Callable[[World, str], Outcome]] = {
    "rest register by url": _rest(201, "POST", lambda w: "/v1/agents", lambda w: {"url": w.new_url}),
    "rest register a card": _rest(
        201, "POST", lambda w: "/v1/agents", lambda w: {"card": w.new_card, "cardUrl": w.new_url}
    ),
    "rest import": _rest_import,
    "rest register the domain (its ARD manifest)": _rest_domain,
    "rest push a card": _rest(200, "PUT", lambda w: f"/v1/agents/{w.live}/card", lambda w: card_on(w.publisher, "v2")),
    "rest refresh": _rest(200, "POST", lambda w: f"/v1/agents/{w.live}/refresh"),
    "rest deprecate": _rest(200, "PATCH", lambda w: f"/v1/agents/{w.live}", lambda w: {"status": "deprecated"}),
    "rest reactivate": _rest(200, "PATCH", lambda w: f"/v1/agents/{w.retired}", lambda w: {"status": "active"}),
    "rest delete": _rest(204, "DELETE", lambda w: f"/v1/agents/{w.live}"),
    "rest claim": _rest(200, "POST", lambda w: f"/v1/agents/{w.claimable}/claim"),
    "a2a register-agent by url": _a2a(lambda w: {"url": w.new_url}),
    "a2a register-agent a card": _a2a(lambda w: {"card": w.new_card, "cardUrl": w.new_url}),
    "cli register": _cli("register", lambda w: w.new_url),
    "cli register the domain": _cli("register", lambda w: w.publisher.domain + "/"),
    "cli import": _cli("import", lambda w: str(w.files / "cards.jsonl")),
    "cli card publish": _cli(
        "card",
        "publish",
        lambda w: str(w.files / "signed.json"),
        "--agent",
        lambda w: w.live,
        "--jwks",
        lambda w: str(w.files / "jwks.json"),
    ),
    "cli refresh": _cli("refresh", lambda w: w.live),
    "cli deprecate": _cli("deprecate", lambda w: w.live),
    "cli undeprecate": _cli("undeprecate", lambda w: w.retired),
    "cli delete": _cli("delete", lambda w: w.live, "--yes"),
    "cli agents claim": _cli("agents", "claim", lambda w: w.claimable),
}


@pytest.mark.parametrize("route", ROWS)
def test_b_without_the_domain_is_refused_and_nothing_changes(
    route: str, world: World, services: Services, other_token: str
) -> None:
    before = snapshot(services)
    assert ROWS[route](world, other_token) == (False, REFUSED)
    assert snapshot(services) == before


@pytest.mark.parametrize("route", ROWS)
def test_a_with_the_domain_does_it(route: str, world: World, writer_token: str) -> None:
    assert ROWS[route](world, writer_token) == (True, None)


def test_the_refusal_names_the_domain_and_how_to_prove_it(world: World, other_token: str) -> None:
    response = world.client.post("/v1/agents", json={"url": world.new_url}, headers=bearer(other_token))
    error = response.get_json()["error"]
    domain = world.publisher.domain.removeprefix("http://")
    assert response.status_code == 403 and error["details"]["domain"] == domain
    assert f"agentdex domains add {domain}" in error["message"]


def test_an_admin_may_do_it_without_the_domain(world: World, admin_token: str) -> None:
    for route in ("rest register by url", "rest push a card", "rest deprecate", "rest delete"):
        assert ROWS[route](world, admin_token) == (True, None), route


def test_a_card_signed_by_its_own_domains_key_proves_the_agent(world: World, other_token: str) -> None:
    signed = sign_card(world.new_card, world.key)
    body = {"card": signed, "cardUrl": world.new_url, "jwksUrl": world.publisher.url("/jwks.json")}
    response = world.client.post("/v1/agents", json=body, headers=bearer(other_token))
    assert response.status_code == 201, response.get_json()
    assert (response.get_json()["status"], response.get_json()["signature"]["state"]) == ("active", "verified")


def test_a_key_from_another_domain_proves_nothing(world: World, other_token: str) -> None:
    with contextlib.closing(ArdPublisher()) as elsewhere:
        jwks_url = elsewhere.put_json("/jwks.json", public_jwks([world.key]))
        body = {"card": sign_card(world.new_card, world.key), "cardUrl": world.new_url, "jwksUrl": jwks_url}
        response = world.client.post("/v1/agents", json=body, headers=bearer(other_token))
    assert response.status_code == 403 and response.get_json()["error"]["code"] == REFUSED
