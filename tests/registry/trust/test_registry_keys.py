"""The registry's own keys: created on first use, sealed at rest (or in key files), rotated with
a grace period during which the retired key stays published, one active key per algorithm."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from sqlalchemy import select, update

from registry.container import Services
from registry.schema import RegistryKey
from registry.trust import KeySealer, RegistryKeys, RegistryKeyUnavailable
from signing import Algorithm, StaticKeyResolver, parse_jwks, sign_card, verify_card
from tests.support.cards import make_card
from tests.support.jobs import FakeClock

DAY = 86_400.0


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def registry_keys(
    services: Services,
    clock: FakeClock | None = None,
    ticks: Ticks | None = None,
    secret: str = "test-secret-key-0123456789",
    key_dir: Path | None = None,
) -> RegistryKeys:
    return RegistryKeys(
        services.sessions,
        KeySealer(secret),
        grace=7 * DAY,
        key_dir=key_dir,
        clock=clock or FakeClock(),
        monotonic=ticks or Ticks(),
    )


def stored(services: Services, kid: str) -> RegistryKey:
    with services.sessions() as session:
        return session.scalars(select(RegistryKey).where(RegistryKey.kid == kid)).one()


def test_the_first_key_is_ed25519_created_on_first_use_and_sealed_at_rest(services: Services) -> None:
    keys = registry_keys(services)
    key = keys.active()
    assert key.algorithm is Algorithm.EDDSA and keys.active() is key
    row = stored(services, key.kid)
    assert row.status == "active" and row.key_file is None
    assert b"PRIVATE KEY" not in row.sealed_private_key and key.kid == row.public_jwk["kid"]
    assert "d" not in row.public_jwk
    assert registry_keys(services).active().kid == key.kid  # another process finds the same key
    with pytest.raises(RegistryKeyUnavailable, match="AGENTDEX_SECRET_KEY"):
        registry_keys(services, secret="another-secret-0123456789").active()


def test_a_sealed_key_does_not_open_on_another_row() -> None:
    sealer = KeySealer("test-secret-key-0123456789")
    sealed = sealer.seal("kid-a", b"private")
    assert sealer.unseal("kid-a", sealed) == b"private"
    with pytest.raises(RegistryKeyUnavailable):
        sealer.unseal("kid-b", sealed)


def test_rotation_keeps_the_retired_key_published_for_the_grace_period(services: Services) -> None:
    clock, ticks = FakeClock(), Ticks()
    keys = registry_keys(services, clock, ticks)
    old = keys.active()
    card = sign_card(make_card("A"), old)
    new = keys.rotate()
    assert keys.active().kid == new.kid != old.kid
    published = parse_jwks(keys.jwks())
    assert [k.kid for k in published.keys] == [new.kid, old.kid]
    assert verify_card(card, StaticKeyResolver(published)).ok  # signed before: still verifies
    clock.advance(7 * DAY + 1)
    ticks.now += 10
    assert [k["kid"] for k in keys.jwks()["keys"]] == [new.kid]
    assert not verify_card(card, StaticKeyResolver(parse_jwks(keys.jwks()))).ok
    assert [(i.kid, i.status) for i in keys.list()] == [(new.kid, "active"), (old.kid, "expired")]
    keys.rotate()
    assert stored(services, old.kid).sealed_private_key is None  # nobody needs it any more


def test_another_process_picks_up_a_rotation_within_its_cache_time(services: Services) -> None:
    ticks = Ticks()
    server = registry_keys(services, ticks=ticks)
    before = server.active()
    rotated = registry_keys(services).rotate()  # `agentdex keys rotate` elsewhere
    assert server.active().kid == before.kid
    ticks.now += 6
    assert server.active().kid == rotated.kid


def test_keys_can_live_in_key_files(services: Services, tmp_path: Path) -> None:
    keys = registry_keys(services, key_dir=tmp_path / "keys")
    key = keys.active("ES256")
    row = stored(services, key.kid)
    assert row.sealed_private_key is None and row.key_file == str((tmp_path / "keys" / f"{key.kid}.pem").resolve())
    assert os.stat(row.key_file).st_mode & 0o777 == 0o600
    assert registry_keys(services, key_dir=tmp_path / "keys").active("ES256").kid == key.kid
    Path(row.key_file).unlink()
    with pytest.raises(RegistryKeyUnavailable, match="cannot read"):
        registry_keys(services).active("ES256")


def test_concurrent_first_uses_agree_on_one_key(services: Services) -> None:
    kids: list[str] = []
    start = threading.Barrier(4)

    def first_use() -> None:
        start.wait()
        kids.append(registry_keys(services).active().kid)

    threads = [threading.Thread(target=first_use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(kids)) == 1
    with services.sessions() as session:
        assert len(session.scalars(select(RegistryKey)).all()) == 1


def test_one_active_key_per_algorithm_is_enforced_by_the_database(services: Services) -> None:
    keys = registry_keys(services)
    first = keys.active()
    keys.active("ES256")
    with services.sessions.begin() as session, pytest.raises(Exception):  # noqa: B017, PT011
        session.execute(update(RegistryKey).where(RegistryKey.alg == "ES256").values(alg="EdDSA"))
    assert keys.active().kid == first.kid
