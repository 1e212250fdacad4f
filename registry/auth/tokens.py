"""API tokens: created once and shown once, stored as SHA-256, checked on every write."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from registry.auth.models import ApiToken, Principal
from registry.db.types import utcnow
from registry.errors import InvalidRequest, Unauthorized

TOKEN_PREFIX = "adx_"
KNOWN_SCOPES = frozenset({"agents:write", "relay", "admin"})


@dataclasses.dataclass(frozen=True)
class Actor:
    """Who is calling: the principal behind a token and what the token may do."""

    principal_id: int
    principal_name: str
    scopes: frozenset[str]

    @property
    def is_admin(self) -> bool:
        return "admin" in self.scopes

    def can(self, scope: str) -> bool:
        return self.is_admin or scope in self.scopes


@dataclasses.dataclass(frozen=True)
class IssuedToken:
    token: str
    name: str
    principal: str
    scopes: tuple[str, ...]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        clock: Callable[[], dt.datetime] = utcnow,
        *,
        cache_seconds: float = 5.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        # Each write request authenticates; a few seconds of caching removes a query from the hot
        # path. The price: a revoked token keeps working for at most `cache_seconds`.
        self._cache: dict[str, tuple[float, Actor]] = {}
        self._cache_seconds = cache_seconds
        self._monotonic = monotonic

    def create(self, name: str, scopes: Iterable[str], principal: str | None = None) -> IssuedToken:
        """Create a token for `principal` (default: a principal named like the token).

        Raises InvalidRequest for an unknown scope or an empty name.
        """
        scope_list = tuple(sorted(set(scopes)))
        unknown = set(scope_list) - KNOWN_SCOPES
        if unknown or not scope_list:
            raise InvalidRequest(
                f"unknown or missing scopes {sorted(unknown)}; choose from {sorted(KNOWN_SCOPES)}"
            )
        if not name.strip():
            raise InvalidRequest("a token needs a name")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._sessions.begin() as session:
            owner = self._principal(session, principal or name)
            session.add(
                ApiToken(
                    principal=owner,
                    name=name,
                    token_hash=hash_token(token),
                    prefix=token[:10],
                    scopes=" ".join(scope_list),
                    created_at=self._clock(),
                )
            )
            owner_name = owner.name
        return IssuedToken(token=token, name=name, principal=owner_name, scopes=scope_list)

    def authenticate(self, token: str) -> Actor:
        """Return the actor behind a bearer token. Raises Unauthorized."""
        digest = hash_token(token)
        cached = self._cache.get(digest)
        now = self._monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        actor = self._lookup(digest)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now + self._cache_seconds, actor)
        return actor

    def _lookup(self, digest: str) -> Actor:
        with self._sessions() as session:
            row = session.execute(
                select(ApiToken.token_hash, ApiToken.scopes, Principal.id, Principal.name)
                .join(Principal, Principal.id == ApiToken.principal_id)
                .where(ApiToken.token_hash == digest, ApiToken.revoked_at.is_(None))
            ).first()
        # The lookup is by hash, so timing reveals nothing about the token; the compare is belt and braces.
        if row is None or not hmac.compare_digest(row.token_hash, digest):
            raise Unauthorized("the bearer token is not valid; create one with `agentdex tokens create`")
        return Actor(principal_id=row.id, principal_name=row.name, scopes=frozenset(row.scopes.split()))

    def has_tokens(self) -> bool:
        with self._sessions() as session:
            return bool(session.scalar(select(func.count()).select_from(ApiToken)))

    def bootstrap_admin(self) -> IssuedToken | None:
        """On an empty registry, create the first admin token (printed once by `agentdex serve`)."""
        if self.has_tokens():
            return None
        return self.create("admin", ["admin"], principal="admin")

    @staticmethod
    def _principal(session: Session, name: str) -> Principal:
        existing = session.scalar(select(Principal).where(Principal.name == name))
        if existing is not None:
            return existing
        principal = Principal(name=name, created_at=utcnow())
        session.add(principal)
        session.flush()
        return principal
