"""The registry's own signing keys: endorsements of cards, its own Agent Card, and the
push relay's `webhook-signature`s all sign with `RegistryKeys.active(alg)`.

A key is created on first use, so the embedded default needs no setup. `rotate` retires the
active key of an algorithm and creates a new one in one transaction; a retired key stays in
`jwks()` until `not_after` (the grace period), so anything it signed keeps verifying while
clients move over. Private keys are sealed in the database (`KeySealer`) or, when the operator
configures a key directory, written there as PEM files the row names.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from registry.db.types import utcnow
from registry.errors import Conflict
from registry.trust.errors import RegistryKeyUnavailable
from registry.trust.key_sealing import KeySealer
from registry.trust.models import RegistryKey
from signing import SigningKey, generate_key, load_private_key_pem, public_jwk, save_private_key_pem
from signing.errors import SigningError


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
        def iso(value: dt.datetime | None) -> str | None:
            return value.isoformat().replace("+00:00", "Z") if value else None

        return {"kid": self.kid, "alg": self.alg, "status": self.status, "createdAt": iso(self.created_at),
                "retiredAt": iso(self.retired_at), "notAfter": iso(self.not_after), "storage": self.storage}


class RegistryKeys:
    """Reads are cached for `cache_seconds`, so a rotation made by another process (the CLI) is
    picked up within that time; the retired key stays published far longer (`grace`)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        sealer: KeySealer,
        *,
        grace: float,
        key_dir: Path | None = None,
        clock: Callable[[], dt.datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
        cache_seconds: float = 5.0,
    ) -> None:
        self._sessions = sessions
        self._sealer = sealer
        self._grace = dt.timedelta(seconds=grace)
        self._key_dir = key_dir
        self._clock = clock
        self._monotonic = monotonic
        self._cache_seconds = cache_seconds
        self._active: dict[str, tuple[float, SigningKey]] = {}
        self._jwks: tuple[float, dict[str, Any]] | None = None
        self._loaded: dict[str, SigningKey] = {}
        self._lock = threading.Lock()

    def active(self, alg: str = "EdDSA") -> SigningKey:
        """The key that signs now for `alg`, created on first use. Raises RegistryKeyUnavailable."""
        cached = self._active.get(alg)
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        key = self._load_active(alg) or self._create_first(alg)
        with self._lock:
            self._active[alg] = (self._monotonic() + self._cache_seconds, key)
        return key

    def jwks(self) -> dict[str, Any]:
        """The published JWK Set: active keys, then retired keys still within their grace period."""
        cached = self._jwks
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        now = self._clock()
        with self._sessions() as session:
            rows = session.scalars(select(RegistryKey).order_by(RegistryKey.status, RegistryKey.created_at.desc()))
            document = {"keys": [dict(row.public_jwk) for row in rows if _published(row, now)]}
        self._jwks = (self._monotonic() + self._cache_seconds, document)
        return document

    def rotate(self, alg: str = "EdDSA") -> RegistryKeyInfo:
        """Retire the active `alg` key (published for the grace period) and make a new one active.

        Raises Conflict when another rotation of the same algorithm commits first.
        """
        key = generate_key(alg)
        row = self._new_row(key)
        now = self._clock()
        try:
            with self._sessions.begin() as session:
                session.execute(
                    update(RegistryKey).where(RegistryKey.alg == alg, RegistryKey.status == "active")
                    .values(status="retired", retired_at=now, not_after=now + self._grace)
                )
                # Past their grace period, sealed private halves are no longer needed by anyone.
                session.execute(
                    update(RegistryKey).where(RegistryKey.status == "retired", RegistryKey.not_after < now)
                    .values(sealed_private_key=None)
                )
                session.execute(insert(RegistryKey), [row])
        except IntegrityError:
            self._discard_file(row)
            raise Conflict(f"another rotation of the {alg} registry key happened at the same time; list the keys") from None
        self.forget()
        return self._info(RegistryKey(**row), now)

    def list(self) -> list[RegistryKeyInfo]:
        """Every key the registry has had, newest first."""
        now = self._clock()
        with self._sessions() as session:
            rows = session.scalars(select(RegistryKey).order_by(RegistryKey.created_at.desc(), RegistryKey.pk.desc()))
            return [self._info(row, now) for row in rows]

    def forget(self) -> None:
        """Drop cached reads (after a rotation in this process)."""
        with self._lock:
            self._active.clear()
            self._jwks = None

    # -- internals ------------------------------------------------------------------------

    def _load_active(self, alg: str) -> SigningKey | None:
        with self._sessions() as session:
            row = session.scalar(select(RegistryKey).where(RegistryKey.alg == alg, RegistryKey.status == "active"))
        return None if row is None else self._private(row)

    def _create_first(self, alg: str) -> SigningKey:
        key = generate_key(alg)
        row = self._new_row(key)
        try:
            with self._sessions.begin() as session:
                session.execute(insert(RegistryKey), [row])
        except IntegrityError:  # another process created the first key at the same moment: use it
            self._discard_file(row)
            existing = self._load_active(alg)
            if existing is None:
                raise
            return existing
        self._jwks = None
        return key

    def _new_row(self, key: SigningKey) -> dict[str, Any]:
        pem = save_private_key_pem(key)
        row: dict[str, Any] = {
            "kid": key.kid, "alg": key.algorithm.value, "public_jwk": public_jwk(key), "status": "active",
            "created_at": self._clock(), "retired_at": None, "not_after": None,
            "sealed_private_key": None, "key_file": None,
        }
        if self._key_dir is None:
            row["sealed_private_key"] = self._sealer.seal(key.kid, pem)
        else:
            row["key_file"] = str(_write_key_file(self._key_dir, key.kid, pem))
        return row

    def _private(self, row: RegistryKey) -> SigningKey:
        loaded = self._loaded.get(row.kid)
        if loaded is None:
            loaded = self._loaded[row.kid] = _load_private(row, self._sealer)
        return loaded

    def _info(self, row: RegistryKey, now: dt.datetime) -> RegistryKeyInfo:
        status = row.status if row.status == "active" or _published(row, now) else "expired"
        storage = f"file:{row.key_file}" if row.key_file else "sealed"
        return RegistryKeyInfo(row.kid, row.alg, status, row.created_at, row.retired_at, row.not_after, storage)

    @staticmethod
    def _discard_file(row: dict[str, Any]) -> None:
        if row.get("key_file"):
            Path(row["key_file"]).unlink(missing_ok=True)


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
