"""The stronger ingress mode: a JWT signed by a key bound to the agent's card, served as a JWKS on
the card's own origin by a real loopback server."""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey

from signing import generate_key, public_jwks
from tests.registry.relay.conftest import register_agent, status_update, subscribe

pytestmark = pytest.mark.usefixtures("relay")


@pytest.fixture
def agent_key(card_server):  # type: ignore[no-untyped-def]
    key = generate_key("EdDSA")
    card_server.serve_json("/.well-known/jwks.json", public_jwks([key]))
    return key


@pytest.fixture
def sub(client, auth, relay_auth, card_server, receiver):  # type: ignore[no-untyped-def]
    agent_id = register_agent(client, auth, card_server.base_url)  # its JWKS is on the card's origin
    return subscribe(client, relay_auth, agent_id, receiver.url, authMode="jwt")


def _jwt(key: Any, clock: Any, audience: str, body: bytes, **changes: Any) -> str:
    now = int(clock().timestamp())
    claims = {
        "aud": audience,
        "iat": now,
        "exp": now + 120,
        "jti": str(uuid.uuid4()),
        "request_body_sha256": hashlib.sha256(body).hexdigest(),
        **changes,
    }
    claims = {name: value for name, value in claims.items() if value is not None}
    jose_key = (OKPKey if key.algorithm.value == "EdDSA" else ECKey).import_key(key.private_key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jwt.encode(
            {"alg": key.algorithm.value, "kid": key.kid}, claims, jose_key, algorithms=[key.algorithm.value]
        )


def _post(client: Any, sub: dict[str, Any], body: bytes, token: str | None, relay_token: str | None = None) -> Any:
    headers = {"X-A2A-Notification-Token": relay_token or sub["relayToken"]}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return client.post(f"/relay/{sub['id']}", data=body, content_type="application/json", headers=headers)


BODY = json.dumps(status_update("task-1")).encode()


def test_a_valid_jwt_is_accepted(client, sub, agent_key, clock):
    response = _post(client, sub, BODY, _jwt(agent_key, clock, sub["relayUrl"], BODY))
    assert response.status_code == 202, response.json


def test_an_es256_key_works_too(client, sub, card_server, clock):
    key = generate_key("ES256")
    card_server.serve_json("/.well-known/jwks.json", public_jwks([key]))
    assert _post(client, sub, BODY, _jwt(key, clock, sub["relayUrl"], BODY)).status_code == 202


def test_the_relay_token_is_still_required(client, sub, agent_key, clock):
    assert _post(client, sub, BODY, _jwt(agent_key, clock, sub["relayUrl"], BODY), "adxr_wrong").status_code == 401


@pytest.mark.parametrize(
    "changes",
    [
        {"aud": "https://elsewhere.example.com/relay/x"},
        {"iat": -600},  # relative to now
        {"exp": 0},
        {"exp": 3600},  # lives longer than the 5 minutes allowed
        {"jti": None},
        {"request_body_sha256": hashlib.sha256(b"another body").hexdigest()},
    ],
    ids=["aud", "stale-iat", "expired", "long-lived", "no-jti", "body-hash"],
)
def test_401_for_claims_out_of_bounds(client, sub, agent_key, clock, changes):
    now = int(clock().timestamp())
    relative = {k: (now + v if k in ("iat", "exp") else v) for k, v in changes.items()}
    response = _post(client, sub, BODY, _jwt(agent_key, clock, sub["relayUrl"], BODY, **relative))
    assert response.status_code == 401, response.json


def test_401_without_a_jwt(client, sub):
    assert _post(client, sub, BODY, None).status_code == 401


def test_401_when_the_key_is_not_bound_to_the_card(client, sub, agent_key, clock):
    stranger = generate_key("EdDSA", kid=agent_key.kid)  # same kid, another key
    response = _post(client, sub, BODY, _jwt(stranger, clock, sub["relayUrl"], BODY))
    assert response.status_code == 401
    assert "does not verify" in response.json["error"]["message"]


def test_401_for_a_jku_outside_the_agents_origins(client, sub, agent_key, clock):
    other = generate_key("EdDSA")
    now = int(clock().timestamp())
    claims = {
        "aud": sub["relayUrl"],
        "iat": now,
        "exp": now + 60,
        "jti": "j1",
        "request_body_sha256": hashlib.sha256(BODY).hexdigest(),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        token = jwt.encode(
            {"alg": "EdDSA", "kid": other.kid, "jku": "https://attacker.example.com/jwks.json"},
            claims,
            OKPKey.import_key(other.private_key),
            algorithms=["EdDSA"],
        )
    assert _post(client, sub, BODY, token).status_code == 401


def test_409_when_a_jwt_is_replayed(client, sub, agent_key, clock):
    token = _jwt(agent_key, clock, sub["relayUrl"], BODY)
    assert _post(client, sub, BODY, token).status_code == 202
    replay = _post(client, sub, BODY, token)
    assert replay.status_code == 409
    assert replay.json["error"]["code"] == "replayed"


def test_a_key_the_owner_registered_for_the_agent_is_bound_too(client, auth, relay_auth, receiver, clock):
    agent_id = register_agent(client, auth, "https://nojwks.example.com", name="Owned")  # nothing served there
    key = generate_key("ES256")
    registered = client.post("/v1/keys", json={"jwks": public_jwks([key]), "agentId": agent_id}, headers=auth)
    assert registered.status_code == 201, registered.json
    sub = subscribe(client, relay_auth, agent_id, receiver.url, authMode="jwt")
    assert _post(client, sub, BODY, _jwt(key, clock, sub["relayUrl"], BODY)).status_code == 202
