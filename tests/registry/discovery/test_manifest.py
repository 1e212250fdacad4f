"""The registry's ARD manifest (`/.well-known/ard.json`, `/.well-known/ai-catalog.json`, the nested
pages `/ard/catalog/<n>`): its shape, its pages, what it leaves out, how it follows changes made by
another instance on the same database, its caching headers, its signature and its URLs."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import rfc8785
from joserfc import jws
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet
from sqlalchemy import update

from registry.app import create_app
from registry.catalog import Agent, AgentQuery, CatalogListing
from registry.container import Services, build_services
from registry.discovery import ListingWatch, ManifestPublisher, PageCache, UnsignedHost
from registry.settings import Settings
from tests.conftest import SHARED
from tests.support.cards import make_card
from tests.support.waiting import wait_for

A2A_CARD = "application/a2a-agent-card+json"
REGISTRY = "application/ai-registry+json"
CATALOG = "application/ai-catalog+json"
PAGE = 3
ARD_SCHEMA = SHARED / "spec" / "ard" / "ard-spec-v0.91-draft" / "spec" / "schemas" / "ard-entry.schema.json"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Pages of three agents, so a few agents make nested pages."""
    return _with(settings, manifest_page=PAGE)


def _with(settings: Settings, **ard: Any) -> Settings:
    return dataclasses.replace(settings, ard=dataclasses.replace(settings.ard, **ard))


@pytest.fixture
def other_instance(settings: Settings) -> Iterator[Services]:
    """A second Agentdex (another web process) on the same database."""
    services = build_services(settings)
    yield services
    services.close()


def _register(services: Services, actor: Any, count: int, first: int = 0) -> list[str]:
    return [
        services.catalog.register_card(
            actor,
            make_card(f"Agent {n}", tags=["weather"]),
            f"https://agent{n}.example.org/.well-known/agent-card.json",
        ).agent.id
        for n in range(first, first + count)
    ]


def _agent_ids(entries: list[dict[str, Any]]) -> list[str]:
    """The agents' ids, read from their card URLs (`…/v1/agents/<id>/card`)."""
    return [entry["url"].split("/")[-2] for entry in entries if entry["type"] == A2A_CARD]


def _walk(client: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The top document, and every agent entry of it and of the pages it nests, in order."""
    top = client.get("/.well-known/ard.json").get_json()
    agents = [entry for entry in top["entries"] if entry["type"] == A2A_CARD]
    for nested in (entry for entry in top["entries"] if entry["type"] == CATALOG):
        page = client.get(urlsplit(nested["url"]).path)
        assert page.status_code == 200
        assert page.get_json()["specVersion"] == "1.0"
        agents += page.get_json()["entries"]
    return top, agents


def test_the_manifest_lists_the_registry_first_then_its_agents(client: Any, services: Services, actor: Any) -> None:
    ids = _register(services, actor, 2)
    response = client.get("/.well-known/ard.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.headers["Vary"] == "Host"  # its URLs are the request's host's
    manifest = response.get_json()
    assert manifest["specVersion"] == "1.0"
    host = manifest["host"]
    assert host["displayName"] == "Agentdex"
    assert host["identifier"] == "http://localhost"
    assert host["documentationUrl"] == "http://localhost/openapi.json"
    registry, *agents = manifest["entries"]
    assert registry["type"] == REGISTRY
    assert registry["url"] == "http://localhost/ard"  # the base of the ARD API
    assert registry["identifier"] == "urn:air:localhost:registry:agentdex"
    assert registry["description"]
    assert 2 <= len(registry["representativeQueries"]) <= 5
    assert _agent_ids(agents) == ids
    assert agents[0]["identifier"] == "urn:air:agent0.example.org:a2a:agent"
    assert agents[0]["url"] == f"http://localhost/v1/agents/{ids[0]}/card"
    assert client.get(urlsplit(agents[0]["url"]).path).status_code == 200  # the card it points at


def test_the_registrys_own_entries_follow_ards_entry_schema(client: Any, services: Services, actor: Any) -> None:
    """ARD v0.91 Appendix D.1: the authoritative schema of an entry (and of a trust manifest). The
    agents' entries are `registry.discovery.entries.agent_entry`'s, tested with it."""
    schema = json.loads(ARD_SCHEMA.read_text())

    def problems(definition: str, document: Any) -> list[str]:
        checked = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
        return [error.message for error in jsonschema.Draft202012Validator(checked).iter_errors(document)]

    _register(services, actor, 7)
    top = client.get("/.well-known/ard.json").get_json()
    own = [entry for entry in top["entries"] if entry["type"] != A2A_CARD]
    assert [entry["type"] for entry in own] == [REGISTRY, CATALOG, CATALOG]
    assert [problems("ardEntry", entry) for entry in own] == [[], [], []]
    assert problems("trustManifest", top["host"]["trustManifest"]) == []


def test_the_legacy_path_serves_the_same_document(client: Any, services: Services, actor: Any) -> None:
    _register(services, actor, 1)
    current, legacy = client.get("/.well-known/ard.json"), client.get("/.well-known/ai-catalog.json")
    assert legacy.status_code == 200
    assert legacy.get_data() == current.get_data()
    assert legacy.headers["ETag"] == current.headers["ETag"]


def test_nested_pages_reach_every_listed_agent_exactly_once(client: Any, services: Services, actor: Any) -> None:
    ids = _register(services, actor, 8)
    top, agents = _walk(client)
    assert [entry["type"] for entry in top["entries"]] == [REGISTRY, A2A_CARD, A2A_CARD, A2A_CARD, CATALOG, CATALOG]
    assert _agent_ids(agents) == ids
    for nested in top["entries"][-2:]:
        assert nested["identifier"].startswith("urn:air:localhost:catalog:")
        assert nested["displayName"] and nested["description"]
        assert 2 <= len(nested["representativeQueries"]) <= 5
        assert nested["url"].startswith("http://localhost/ard/catalog/")
    assert len({entry["identifier"] for entry in top["entries"]}) == len(top["entries"])


def test_an_agent_keeps_its_page_when_others_come_and_go(
    client: Any, services: Services, actor: Any, other_instance: Services, writer_token: str
) -> None:
    ids = _register(services, actor, 8)  # pages: 1-3 in the top document, 4-6, 7-8
    assert _agent_ids(_walk(client)[1]) == ids  # every page cached
    before = client.get("/ard/catalog/3").get_json()
    other_instance.catalog.delete(other_instance.tokens.authenticate(writer_token), ids[1])
    assert wait_for(lambda: ids[1] not in _agent_ids(_walk(client)[1]), 5)
    assert client.get("/ard/catalog/3").get_json() == before  # the others did not move up a page
    top = client.get("/.well-known/ard.json").get_json()
    assert _agent_ids(top["entries"]) == [ids[0], ids[2]]


def test_deprecated_and_dead_agents_are_left_out(client: Any, services: Services, actor: Any) -> None:
    live, deprecated, dead = _register(services, actor, 3)
    services.catalog.update_status(actor, deprecated, "deprecated", "replaced by live")
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=services.settings.worker.hide_dead_after + 3600)
    with services.engine.begin() as conn:  # as the health checks leave an agent that stopped answering long ago
        conn.execute(update(Agent).where(Agent.id == dead).values(health_state="down", health_since=long_ago))
    assert _agent_ids(_walk(client)[1]) == [live]


def test_a_registration_or_deletion_by_another_instance_shows_within_seconds(
    client: Any, services: Services, actor: Any, other_instance: Services, writer_token: str
) -> None:
    (first,) = _register(services, actor, 1)
    assert _agent_ids(_walk(client)[1]) == [first]  # cached now
    other_actor = other_instance.tokens.authenticate(writer_token)
    added = _register(other_instance, other_actor, 4, first=1)
    assert wait_for(lambda: _agent_ids(_walk(client)[1]) == [first, *added], 5)
    other_instance.catalog.delete(other_actor, added[-1])
    assert wait_for(lambda: _agent_ids(_walk(client)[1]) == [first, *added[:-1]], 5)


def test_a_change_rebuilds_only_the_page_it_is_on(services: Services, actor: Any) -> None:
    """At 100,000 agents a page is 1,000 entries: one change must not rebuild a hundred of them."""
    built: list[str | None] = []

    class CountedSearch:  # the real search, counting the pages built from it
        def search(self, query: AgentQuery) -> Any:
            built.append(query.cursor)
            return services.search.search(query)

    listing = CatalogListing(services.engine, hide_dead_after=services.settings.worker.hide_dead_after)
    watch = ListingWatch(listing, PAGE, check_every=0)  # reads the marker on every request
    manifest = ManifestPublisher(CountedSearch(), watch, UnsignedHost(), PageCache(), page_size=PAGE)  # type: ignore[arg-type]
    ids = _register(services, actor, 9)

    def read_all() -> None:
        manifest.top("https://agents.example.net")
        for number in (1, 2, 3):
            manifest.page("https://agents.example.net", number)

    read_all()
    assert len(built) == 3
    services.catalog.update_status(actor, ids[4], "deprecated", None)  # on page 2
    read_all()
    assert len(built) == 4
    assert b"Agent 4" not in manifest.page("https://agents.example.net", 2).body


def test_an_unchanged_manifest_answers_304(client: Any, services: Services, actor: Any) -> None:
    _register(services, actor, 4)
    for path in ("/.well-known/ard.json", "/ard/catalog/2"):
        first = client.get(path)
        assert first.headers["Cache-Control"].startswith("public, max-age=")
        again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304
        assert again.get_data() == b""


def test_a_page_past_the_last_is_not_found_in_ards_envelope(client: Any, services: Services, actor: Any) -> None:
    _register(services, actor, 4)
    for path in ("/ard/catalog/3", "/ard/catalog/0", "/ard/catalog/two", "/ard/catalog/-1"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.get_json()["errorCode"] == "NOT_FOUND"


# The registry's Ed25519 key signs as JOSE's `EdDSA` (RFC 8037), as the A2A SDKs verify it; joserfc
# warns that RFC 9864 names it `Ed25519` now.
@pytest.mark.filterwarnings("ignore:EdDSA is deprecated")
def test_the_signature_verifies_with_the_published_keys(client: Any, services: Services) -> None:
    """AI Catalog, "Trust Manifest Signatures": a detached compact JWS over the JCS form of the
    trust manifest without `signature`; checked here with joserfc and rfc8785, keys from the JWKS."""
    trust = dict(client.get("/.well-known/ard.json").get_json()["host"]["trustManifest"])
    assert trust["identity"] == "http://localhost"
    protected, empty, signature = trust.pop("signature").split(".")
    assert empty == ""  # the payload is detached
    header = _json_of(protected)
    assert header["jku"] == "http://localhost/.well-known/jwks.json"
    keys = KeySet.import_key_set(client.get(urlsplit(header["jku"]).path).get_json())
    payload = rfc8785.dumps(trust)
    verified = jws.deserialize_compact(f"{protected}..{signature}", keys, algorithms=[header["alg"]], payload=payload)
    assert verified.headers()["kid"] == services.registry_keys.active(services.settings.trust.endorsement_alg).kid
    tampered = rfc8785.dumps({**trust, "identity": "https://evil.example"})
    with pytest.raises(BadSignatureError):
        jws.deserialize_compact(f"{protected}..{signature}", keys, algorithms=[header["alg"]], payload=tampered)


def _json_of(segment: str) -> dict[str, Any]:
    return dict(json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))))


def test_unsigned_when_the_operator_says_so(services: Services, settings: Settings) -> None:
    off = _with(settings, sign_manifest=False)
    other = build_services(off)
    try:
        manifest = create_app(services=other).test_client().get("/.well-known/ard.json").get_json()
    finally:
        other.close()
    assert "trustManifest" not in manifest["host"]


def test_without_agents_only_the_registry_is_listed(services: Services, settings: Settings, actor: Any) -> None:
    _register(services, actor, 4)
    other = build_services(_with(settings, list_agents=False))
    try:
        client = create_app(services=other).test_client()
        manifest = client.get("/.well-known/ard.json").get_json()
        assert [entry["type"] for entry in manifest["entries"]] == [REGISTRY]
        assert client.get("/ard/catalog/1").status_code == 404
    finally:
        other.close()


def _urls(document: Any) -> Iterator[str]:
    if isinstance(document, dict):
        for key, value in document.items():
            if key in ("url", "identifier", "documentationUrl", "identity", "jku") and isinstance(value, str):
                if "://" in value:
                    yield value
            yield from _urls(value)
    elif isinstance(document, list):
        for value in document:
            yield from _urls(value)


@pytest.mark.parametrize(
    ("changes", "headers"),
    [
        ({"public_url": "https://agents.example.net"}, {}),
        ({"forwarded_hops": 1}, {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "agents.example.net"}),
    ],
    ids=["AGENTDEX_PUBLIC_URL", "forwarded"],
)
def test_every_url_is_absolute_https_on_the_public_host(
    services: Services, settings: Settings, actor: Any, changes: dict[str, Any], headers: dict[str, str]
) -> None:
    _register(services, actor, 4)
    other = build_services(dataclasses.replace(settings, **changes))
    try:
        client = create_app(services=other).test_client()
        top = client.get("/.well-known/ard.json", headers=headers).get_json()
        page = client.get("/ard/catalog/2", headers=headers).get_json()
    finally:
        other.close()
    urls = list(_urls(top)) + list(_urls(page))
    assert len(urls) > 8
    assert all(url.startswith("https://agents.example.net/") or url == "https://agents.example.net" for url in urls)
    assert top["entries"][0]["identifier"] == "urn:air:agents.example.net:registry:agentdex"
    assert top["host"]["trustManifest"]["identity"] == "https://agents.example.net"
