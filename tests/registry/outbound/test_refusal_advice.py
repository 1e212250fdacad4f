"""A refused loopback, private or plain-http target names the setting that allows it, with the value
to set, so someone registering an agent on their own machine knows what to do; and doing what the
message says (the settings read from the environment, as `agentdex serve` reads them) works."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from registry.app import create_app
from registry.container import build_services
from registry.outbound import OutboundPolicy, OutboundRefused, SafeHttpClient
from registry.settings import Settings
from tests.registry.outbound.loopback import fixed_resolver
from tests.support.servers import CardServer


@contextmanager
def registry_with(env: dict[str, str], database_url: str) -> Iterator[Any]:
    """A test client of a registry configured from `env` only (every other setting its default)."""
    settings = Settings.from_env(
        {"AGENTDEX_DATABASE_URL": database_url, "AGENTDEX_SECRET_KEY": "test-secret-key-0123456789", **env}
    )
    services = build_services(settings)
    try:
        token = services.tokens.create("dana", ["agents:write"]).token
        client = create_app(services=services).test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        yield client
    finally:
        services.close()


@pytest.fixture
def loopback_agent(card_server: CardServer, card: dict[str, Any]) -> CardServer:
    card_server.serve_json("/.well-known/agent-card.json", card)
    return card_server


def test_a_loopback_http_agent_is_refused_naming_both_settings_and_their_values(database_url, services, loopback_agent):
    with registry_with({}, database_url) as client:
        response = client.post("/v1/agents", json={"url": loopback_agent.base_url})
    assert response.status_code == 422
    error = response.json["error"]
    assert error["code"] == "target_refused"
    assert "AGENTDEX_ALLOW_HTTP=true" in error["message"]
    assert "127.0.0.1 is a loopback address" in error["message"]
    assert "AGENTDEX_ALLOWED_NETWORKS=127.0.0.1/32" in error["message"]
    assert error["details"]["allowedBy"] == {"AGENTDEX_ALLOW_HTTP": "true", "AGENTDEX_ALLOWED_NETWORKS": "127.0.0.1/32"}
    assert loopback_agent.requests == []


def test_with_http_allowed_the_address_refusal_names_the_network_setting(database_url, services, loopback_agent):
    with registry_with({"AGENTDEX_ALLOW_HTTP": "true"}, database_url) as client:
        response = client.post("/v1/agents", json={"url": loopback_agent.base_url})
    assert response.status_code == 422
    error = response.json["error"]
    advice = "AGENTDEX_ALLOWED_NETWORKS (comma-separated CIDRs), e.g. AGENTDEX_ALLOWED_NETWORKS=127.0.0.1/32"
    assert advice in error["message"]
    assert "AGENTDEX_ALLOW_HTTP" not in error["message"]
    assert error["details"]["allowedBy"] == {"AGENTDEX_ALLOWED_NETWORKS": "127.0.0.1/32"}


def test_with_the_network_allowed_plain_http_names_its_setting(database_url, services, loopback_agent):
    with registry_with({"AGENTDEX_ALLOWED_NETWORKS": "127.0.0.0/8"}, database_url) as client:
        response = client.post("/v1/agents", json={"url": loopback_agent.base_url})
    assert response.status_code == 422
    error = response.json["error"]
    assert "plain http is not allowed" in error["message"] and "AGENTDEX_ALLOW_HTTP=true" in error["message"]
    assert "AGENTDEX_ALLOWED_NETWORKS" not in error["message"]
    assert error["details"]["allowedBy"] == {"AGENTDEX_ALLOW_HTTP": "true"}


def test_following_the_advice_registers_the_agent(database_url, services, loopback_agent):
    with registry_with({}, database_url) as client:
        advice = client.post("/v1/agents", json={"url": loopback_agent.base_url}).json["error"]["details"]["allowedBy"]
    with registry_with(advice, database_url) as client:
        response = client.post("/v1/agents", json={"url": loopback_agent.base_url})
    assert response.status_code == 201, response.json


def test_a_name_resolving_to_loopback_is_advised_by_its_addresses(database_url, services, loopback_agent):
    url = loopback_agent.base_url.replace("127.0.0.1", "localhost")
    with registry_with({}, database_url) as client:
        error = client.post("/v1/agents", json={"url": url}).json["error"]
    assert "AGENTDEX_ALLOW_HTTP=true" in error["message"]
    assert "127.0.0.1/32" in error["details"]["allowedBy"]["AGENTDEX_ALLOWED_NETWORKS"].split(",")


@pytest.mark.parametrize(
    ("answers", "advice"),
    [
        (["10.1.2.3"], "10.1.2.3/32"),
        (["::ffff:10.1.2.3"], "10.1.2.3/32"),  # allowed by its IPv4 network
        (["fd00::7", "192.168.1.9"], "fd00::7/128,192.168.1.9/32"),
    ],
)
def test_every_refused_address_of_a_name_is_in_the_advice(answers, advice):
    client = SafeHttpClient(OutboundPolicy(), resolver=fixed_resolver({"agent.internal.example": answers}))
    try:
        with pytest.raises(OutboundRefused) as caught:
            client.get("https://agent.internal.example/card.json")
    finally:
        client.close()
    assert caught.value.details == {"allowedBy": {"AGENTDEX_ALLOWED_NETWORKS": advice}}
    assert f"AGENTDEX_ALLOWED_NETWORKS={advice}" in caught.value.message


def test_the_named_settings_are_the_ones_the_registry_reads():
    policy = OutboundPolicy()
    settings = Settings.from_env(
        {
            policy.allow_http_setting: "true",
            policy.allowed_networks_setting: "10.1.2.3/32",
            "AGENTDEX_SECRET_KEY": "a-test-secret-that-is-long-enough-0123456789",
        }
    )
    assert settings.allow_http is True
    assert [str(network) for network in settings.allowed_networks] == ["10.1.2.3/32"]
