"""Attacks on signature verification that must fail, each against real servers on loopback:
the card is still listed (an invalid signature is not a validation error) but never `verified`,
and the reason is recorded."""

from __future__ import annotations

import base64
import copy
import dataclasses
import datetime as dt
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from a2a.utils.signing import SignatureVerificationError
from click.testing import CliRunner
from sqlalchemy import update

from cli.main import cli
from registry.container import Services
from registry.schema import RegistryKey
from registry.settings import Settings
from signing import SigningKey, canonicalize, generate_key, public_jwk, public_jwks, sign_card
from tests.registry.trust.trust_helpers import SilentServer, sdk_verify
from tests.support.cards import make_card
from tests.support.servers import CardServer


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # Short JWKS timeout so the hanging endpoint costs half a second.
    return dataclasses.replace(settings, trust=dataclasses.replace(settings.trust, jwks_timeout=0.5))


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return generate_key("EdDSA")


@pytest.fixture
def other_server() -> Iterator[CardServer]:
    server = CardServer()
    yield server
    server.close()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def register_card(client: Any, auth: dict[str, str], server: CardServer, card: dict[str, Any]) -> dict[str, Any]:
    """Serve `card` as the agent's well-known card and register it by URL; returns the agent."""
    server.serve_json("/.well-known/agent-card.json", card)
    response = client.post("/v1/agents", json={"url": server.base_url}, headers=auth)
    assert response.status_code == 201, response.json
    return response.json


def checks(client: Any, agent: dict[str, Any]) -> list[dict[str, Any]]:
    return client.get(f"/v1/agents/{agent['id']}/signatures").json["signatures"]


def jwks_requests(server: CardServer) -> int:
    return sum(1 for path, _ in server.requests if "jwks" in path)


def test_a_jku_on_a_foreign_origin_is_never_fetched(
    client: Any, auth: dict[str, str], card_server: CardServer, other_server: CardServer, key: SigningKey
) -> None:
    foreign = other_server.serve_json("/jwks.json", public_jwks([key]))  # the right key, on another origin
    agent = register_card(client, auth, card_server, sign_card(make_card("A"), key, jku=foreign))
    assert agent["signature"]["state"] == "unverifiable"
    (check,) = checks(client, agent)
    assert check["outcome"] == "key_not_found" and "not an allowed origin" in check["detail"]
    assert jwks_requests(other_server) == 0


def test_an_operator_allowlisted_origin_is_fetched(
    settings: Settings, card_server: CardServer, other_server: CardServer, key: SigningKey
) -> None:
    from registry.app import create_app
    from registry.container import build_services

    allowed = dataclasses.replace(
        settings, trust=dataclasses.replace(settings.trust, jku_origins=(other_server.base_url,))
    )
    services = build_services(allowed)
    try:
        client = create_app(services=services).test_client()
        auth = {"Authorization": f"Bearer {services.tokens.create('carol', ['agents:write']).token}"}
        foreign = other_server.serve_json("/jwks.json", public_jwks([key]))
        agent = register_card(client, auth, card_server, sign_card(make_card("A"), key, jku=foreign))
        assert agent["signature"]["state"] == "verified"
    finally:
        services.close()


def test_a_kid_that_is_not_in_the_jwks_is_unverifiable(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    jwks = card_server.serve_json("/jwks.json", public_jwks([generate_key("EdDSA")]))
    agent = register_card(client, auth, card_server, sign_card(make_card("A"), key, jku=jwks))
    assert agent["signature"]["state"] == "unverifiable"
    assert f"no key found for kid {key.kid!r}" in checks(client, agent)[0]["detail"]


def forged(card: dict[str, Any], header: dict[str, Any], secret: bytes | None) -> dict[str, Any]:
    protected = b64(json.dumps(header).encode())
    signing_input = f"{protected}.{b64(canonicalize(card))}".encode()
    # alg none with an empty signature is already refused by the validator (422); give it bytes
    signature = b64(hmac.new(secret, signing_input, hashlib.sha256).digest() if secret else b"none")
    return {**card, "signatures": [{"protected": protected, "signature": signature}]}


@pytest.mark.parametrize("alg", ["none", "HS256"])
def test_alg_none_and_hmac_with_the_public_key_as_secret_are_refused(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey, alg: str
) -> None:
    jwks = card_server.serve_json("/jwks.json", public_jwks([key]))
    secret = json.dumps(public_jwk(key)).encode() if alg == "HS256" else None  # the classic key confusion
    agent = register_card(
        client, auth, card_server, forged(make_card("A"), {"alg": alg, "kid": key.kid, "jku": jwks}, secret)
    )
    assert agent["signature"]["state"] == "invalid"
    (check,) = checks(client, agent)
    assert check["outcome"] == "unsupported" and alg in check["detail"]


def test_a_card_modified_after_signing_is_invalid(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    jwks = card_server.serve_json("/jwks.json", public_jwks([key]))
    signed = sign_card(make_card("A"), key, jku=jwks)
    signed["skills"][0]["description"] = "now also wires money"
    agent = register_card(client, auth, card_server, signed)
    assert agent["signature"]["state"] == "invalid"
    assert checks(client, agent)[0]["outcome"] == "invalid"


def test_a_signature_copied_from_another_card_is_invalid(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    jwks = card_server.serve_json("/jwks.json", public_jwks([key]))
    genuine = sign_card(make_card("Genuine"), key, jku=jwks)
    impostor = {**make_card("Impostor"), "signatures": copy.deepcopy(genuine["signatures"])}
    agent = register_card(client, auth, card_server, impostor)
    assert agent["signature"]["state"] == "invalid"


def test_a_jwks_endpoint_that_hangs_costs_only_the_jwks_timeout(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    silent = SilentServer()
    try:
        card = sign_card(make_card("A"), key)
        card_server.serve_json("/.well-known/agent-card.json", card)
        started = time.monotonic()
        response = client.post(
            "/v1/agents", json={"url": card_server.base_url, "jwksUrl": f"{silent.base_url}/jwks"}, headers=auth
        )
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert response.status_code == 201 and response.json["signature"]["state"] == "unverifiable"
    assert elapsed < 2.0
    assert "could not be fetched" in checks(client, response.json)[0]["detail"]


def test_a_jwks_that_redirects_to_a_private_address_is_not_followed(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    card_server.serve_raw("/jwks.json", b"", status=302, headers={"Location": "http://169.254.169.254/keys"})
    agent = register_card(client, auth, card_server, sign_card(make_card("A"), key, jku=card_server.url("/jwks.json")))
    assert agent["signature"]["state"] == "unverifiable"
    assert "HTTP 302 (a redirect)" in checks(client, agent)[0]["detail"]


def test_a_jwks_url_on_a_private_address_is_refused(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    card_server.serve_json("/.well-known/agent-card.json", sign_card(make_card("A"), key))
    response = client.post(
        "/v1/agents", json={"url": card_server.base_url, "jwksUrl": "http://10.1.2.3/jwks.json"}, headers=auth
    )
    assert response.json["signature"]["state"] == "unverifiable"
    assert "private" in checks(client, response.json)[0]["detail"]


def test_a_jwks_of_50_mb_is_not_read(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey
) -> None:
    card_server.serve_raw("/jwks.json", b" " * (50 * 1024 * 1024))
    agent = register_card(client, auth, card_server, sign_card(make_card("A"), key, jku=card_server.url("/jwks.json")))
    assert agent["signature"]["state"] == "unverifiable"
    assert "over the limit" in checks(client, agent)[0]["detail"]


def test_a_retired_registry_key_past_its_grace_period_no_longer_verifies(
    client: Any, auth: dict[str, str], card_server: CardServer, key: SigningKey, services: Services, database_url: str
) -> None:
    agent = register_card(client, auth, card_server, make_card("A"))
    old = client.get(f"/v1/agents/{agent['id']}/card?endorsed=true").json
    old_kid = services.registry_keys.active().kid
    env = {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": services.settings.secret_key}
    assert CliRunner().invoke(cli, ["keys", "rotate"], env=env).exit_code == 0
    with services.sessions.begin() as session:  # the grace period has passed
        past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        session.execute(update(RegistryKey).where(RegistryKey.kid == old_kid).values(not_after=past))
    services.registry_keys.forget()
    jwks = client.get("/.well-known/jwks.json").json
    assert old_kid not in {k["kid"] for k in jwks["keys"]}
    with pytest.raises(SignatureVerificationError):
        sdk_verify(old, jwks)
    sdk_verify(client.get(f"/v1/agents/{agent['id']}/card?endorsed=true").json, jwks)  # served with the new key
