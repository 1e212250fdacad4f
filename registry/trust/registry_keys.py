"""The registry's own signing keys, and its endorsements of the cards it validated.

`RegistryKeys.active(alg)`, created on first use, signs endorsements, the registry's own card and
the relay's webhooks. `rotate` retires it; a retired key stays in `jwks()` for the grace period.
Private keys are sealed in the database (`KeySealer`) or kept in PEM files in a key directory.

An endorsement (A2A §8.4.2) is a detached JWS made as the SDKs make it (`jku` = the registry's
JWKS). The attestation travels in the unprotected header; as anyone can edit that, its SHA-256
(RFC 8785) is protected too. It is made when a version is stored if the public URL is known,
else (and after a rotation) on read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from registry.db.types import utcnow
from registry.errors import Conflict
from registry.trust.errors import RegistryKeyUnavailable
from registry.trust.models import RegistryKey, iso
from registry.trust.state import Provenance
from signing import (
    CardPayloads,
    SigningKey,
    generate_key,
    jcs,
    load_private_key_pem,
    public_jwk,
    save_private_key_pem,
    sign_card,
)
from signing.errors import SigningError
from signing.jws import b64url_encode

JWKS_PATH = "/.well-known/jwks.json"
ACTIVE_KEY_SECONDS = 5.0
_SEALED_FORMAT = b"\x01"  # then the 12-byte nonce, then the ciphertext with its 16-byte tag
_NONCE_BYTES = 12


class KeySealer:
    """AES-256-GCM under a key HKDF derives from `AGENTDEX_SECRET_KEY` (with a purpose label, so the
    secret can key other things too); the kid is the associated data, so a sealed key copied onto
    another row does not open."""

    def __init__(self, secret: str) -> None:
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"agentdex registry signing keys v1")
        self._aead = AESGCM(hkdf.derive(secret.encode("utf-8")))

    def seal(self, kid: str, private_key: bytes) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return _SEALED_FORMAT + nonce + self._aead.encrypt(nonce, private_key, kid.encode("utf-8"))

    def unseal(self, kid: str, sealed: bytes) -> bytes:
        """The private key bytes. Raises RegistryKeyUnavailable if they do not open (another secret)."""
        if sealed[:1] != _SEALED_FORMAT or len(sealed) < 1 + _NONCE_BYTES + 16:
            raise RegistryKeyUnavailable(f"registry key {kid} is not sealed in a format this version reads")
        nonce, ciphertext = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
        try:
            return self._aead.decrypt(nonce, ciphertext, kid.encode("utf-8"))
        except InvalidTag:
            raise RegistryKeyUnavailable(
                f"registry key {kid} does not open with this AGENTDEX_SECRET_KEY (was the secret changed?)"
            ) from None


@dataclasses.dataclass(frozen=True)
class RegistryKeyInfo:
    """What `agentdex keys list` shows of a key (never the private half)."""

    kid: str
    alg: str
    status: str  # active, retired (still published), expired (past its grace period)
    created_at: dt.datetime
    retired_at: dt.datetime | None
    not_after: dt.datetime | None
    storage: str  # "sealed" or "file:<path>"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kid": self.kid,
            "alg": self.alg,
            "status": self.status,
            "createdAt": iso(self.created_at),
            "retiredAt": iso(self.retired_at),
            "notAfter": iso(self.not_after),
            "storage": self.storage,
        }


class RegistryKeys:
    """The active key is cached for `ACTIVE_KEY_SECONDS` (it signs every endorsement and webhook),
    so a rotation made by another process (the CLI) is picked up within that time."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        sealer: KeySealer,
        *,
        grace: float,
        key_dir: Path | None = None,
        clock: Callable[[], dt.datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._sealer = sealer
        self._grace = dt.timedelta(seconds=grace)
        self._key_dir = key_dir
        self._clock = clock
        self._monotonic = monotonic
        self._active: dict[str, tuple[float, SigningKey]] = {}

    def active(self, alg: str = "EdDSA") -> SigningKey:
        """The key that signs now for `alg`, created on first use. Raises RegistryKeyUnavailable."""
        cached = self._active.get(alg)
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        key = self._load_active(alg) or self._create_first(alg)
        self._active[alg] = (self._monotonic() + ACTIVE_KEY_SECONDS, key)
        return key

    def jwks(self) -> dict[str, Any]:
        """The published JWK Set: active keys, then retired keys still within their grace period."""
        now = self._clock()
        with self._sessions() as session:
            rows = session.scalars(select(RegistryKey).order_by(RegistryKey.status, RegistryKey.created_at.desc()))
            return {"keys": [dict(row.public_jwk) for row in rows if _published(row, now)]}

    def rotate(self, alg: str = "EdDSA") -> RegistryKeyInfo:
        """Retire the active `alg` key (published for the grace period) and make a new one active.

        Raises Conflict when another rotation of the same algorithm commits first.
        """
        row = self._new_row(generate_key(alg))
        now = self._clock()
        retire = update(RegistryKey).where(RegistryKey.alg == alg, RegistryKey.status == "active")
        expired = update(RegistryKey).where(RegistryKey.status == "retired", RegistryKey.not_after < now)
        try:
            with self._sessions.begin() as session:
                session.execute(retire.values(status="retired", retired_at=now, not_after=now + self._grace))
                session.execute(expired.values(sealed_private_key=None))  # nobody needs their private halves
                session.add(row)
        except IntegrityError:
            _discard_file(row)
            raise Conflict(
                f"another rotation of the {alg} registry key happened at the same time; list the keys"
            ) from None
        self.forget()
        return self._info(row, now)

    def list(self) -> list[RegistryKeyInfo]:
        """Every key the registry has had, newest first."""
        now = self._clock()
        with self._sessions() as session:
            rows = session.scalars(select(RegistryKey).order_by(RegistryKey.created_at.desc(), RegistryKey.pk.desc()))
            return [self._info(row, now) for row in rows]

    def forget(self) -> None:
        """Drop the cached active keys (after a rotation in this process)."""
        self._active.clear()

    def _load_active(self, alg: str) -> SigningKey | None:
        with self._sessions() as session:
            row = session.scalar(select(RegistryKey).where(RegistryKey.alg == alg, RegistryKey.status == "active"))
        return None if row is None else _load_private(row, self._sealer)

    def _create_first(self, alg: str) -> SigningKey:
        key = generate_key(alg)
        row = self._new_row(key)
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError:  # another process created the first key at the same moment: use it
            _discard_file(row)
            existing = self._load_active(alg)
            if existing is None:
                raise
            return existing
        return key

    def _new_row(self, key: SigningKey) -> RegistryKey:
        pem = save_private_key_pem(key)
        return RegistryKey(
            kid=key.kid,
            alg=key.algorithm.value,
            public_jwk=public_jwk(key),
            status="active",
            created_at=self._clock(),
            sealed_private_key=self._sealer.seal(key.kid, pem) if self._key_dir is None else None,
            key_file=str(_write_key_file(self._key_dir, key.kid, pem)) if self._key_dir else None,
        )

    @staticmethod
    def _info(row: RegistryKey, now: dt.datetime) -> RegistryKeyInfo:
        status = row.status if _published(row, now) else "expired"
        storage = f"file:{row.key_file}" if row.key_file else "sealed"
        return RegistryKeyInfo(row.kid, row.alg, status, row.created_at, row.retired_at, row.not_after, storage)


def _published(row: RegistryKey, now: dt.datetime) -> bool:
    return row.status == "active" or (row.not_after is not None and row.not_after > now)


def _load_private(row: RegistryKey, sealer: KeySealer) -> SigningKey:
    """Raises RegistryKeyUnavailable (no private half, unreadable file, wrong secret)."""
    try:
        if row.key_file:
            pem = Path(row.key_file).read_bytes()
        elif row.sealed_private_key:
            pem = sealer.unseal(row.kid, row.sealed_private_key)
        else:
            raise RegistryKeyUnavailable(f"registry key {row.kid} has no private key any more")
        return load_private_key_pem(pem)
    except OSError as error:
        raise RegistryKeyUnavailable(f"registry key {row.kid}: cannot read {row.key_file}: {error.strerror}") from None
    except SigningError as error:
        raise RegistryKeyUnavailable(f"registry key {row.kid} cannot be loaded: {error}") from None


def _write_key_file(key_dir: Path, kid: str, pem: bytes) -> Path:
    key_dir.mkdir(parents=True, exist_ok=True)
    path = (key_dir / f"{kid}.pem").resolve()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    return path


def _discard_file(row: RegistryKey) -> None:
    if row.key_file:
        Path(row.key_file).unlink(missing_ok=True)


def attestation(
    registry: str, card: Provenance, state: str, kids: Sequence[str], checked_at: dt.datetime
) -> dict[str, Any]:
    """What the registry vouches for: it validated this card, got it from where and when, and
    found the agent's own signatures in `state` (verified by `kids`)."""
    return {
        "registry": registry,
        "validated": True,
        "cardUrl": card.card_url,
        "source": card.source,
        "fetchedFrom": card.fetched_from,
        "fetchedAt": iso(card.fetched_at),
        "signature": {"state": state, "kids": list(kids), "checkedAt": iso(checked_at)},
    }


def attestation_digest(claims: Mapping[str, Any]) -> str:
    return b64url_encode(hashlib.sha256(jcs(claims)).digest())


class Endorser:
    """Signs with the registry's active key for `alg`."""

    def __init__(self, keys: RegistryKeys, *, alg: str, public_url: str | None) -> None:
        self._keys = keys
        self._alg = alg
        self.public_url = public_url

    def base_url(self, request_base: str | None = None) -> str | None:
        """The registry's public base URL: configured, else the one the request came in on."""
        return self.public_url or (request_base.rstrip("/") if request_base else None)

    def endorse(
        self, card: Mapping[str, Any], claims: Mapping[str, Any], base: str, payloads: CardPayloads | None = None
    ) -> dict[str, Any]:
        """`{"kid", "jku", "entry"}`: the signature entry to append to the card's `signatures`."""
        key = self._keys.active(self._alg)
        jku = base + JWKS_PATH
        signed = sign_card(
            card,
            key,
            jku=jku,
            header_extras={"agentdexAttestation": attestation_digest(claims)},
            unprotected_header={"agentdex": dict(claims)},
            payloads=payloads,
        )
        return {"kid": key.kid, "jku": jku, "entry": signed["signatures"][-1]}

    def is_current(self, stored: Mapping[str, Any], base: str) -> bool:
        """True when a stored endorsement was made with the active key for this `jku`."""
        return (stored["jku"], stored["kid"]) == (base + JWKS_PATH, self._keys.active(self._alg).kid)
