"""API tokens: created once and shown once, stored as SHA-256, checked on every write."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from registry.auth.models import ApiToken, Principal
from registry.db.types import utcnow
from registry.errors import InvalidRequest, Unauthorized

TOKEN_PREFIX = "adx_"
KNOWN_SCOPES = frozenset({"agents:write", "relay", "admin"})
# Every write request authenticates: caching an actor takes a query off that path, at the price of a
# revoked token working for at most this long.
CACHE_SECONDS = 5.0


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
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        self._monotonic = monotonic
        self._cache: dict[str, tuple[float, Actor]] = {}

    def create(self, name: str, scopes: Iterable[str], principal: str | None = None) -> IssuedToken:
        """Create a token for `principal` (default: a principal named like the token). Raises
        InvalidRequest for an unknown scope or an empty name."""
        scope_list = tuple(sorted(set(scopes)))
        unknown = set(scope_list) - KNOWN_SCOPES
        if unknown or not scope_list:
            raise InvalidRequest(f"unknown or missing scopes {sorted(unknown)}; choose from {sorted(KNOWN_SCOPES)}")
        if not name.strip():
            raise InvalidRequest("a token needs a name")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        owner_name = principal or name
        with self._sessions.begin() as session:
            owner = session.scalar(select(Principal).where(Principal.name == owner_name))
            session.add(
                ApiToken(
                    principal=owner or Principal(name=owner_name, created_at=self._clock()),
                    name=name,
                    token_hash=hash_token(token),
                    prefix=token[:10],
                    scopes=" ".join(scope_list),
                    created_at=self._clock(),
                )
            )
        return IssuedToken(token=token, name=name, principal=owner_name, scopes=scope_list)

    def authenticate(self, token: str) -> Actor:
        """Return the actor behind a bearer token. Raises Unauthorized."""
        digest = hash_token(token)
        cached = self._cache.get(digest)
        now = self._monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        with self._sessions() as session:
            row = session.execute(
                select(ApiToken.token_hash, ApiToken.scopes, Principal.id, Principal.name)
                .join(Principal, Principal.id == ApiToken.principal_id)
                .where(ApiToken.token_hash == digest, ApiToken.revoked_at.is_(None))
            ).first()
        # The lookup is by hash, so timing reveals nothing about the token; the compare is belt and braces.
        if row is None or not hmac.compare_digest(row.token_hash, digest):
            raise Unauthorized("the bearer token is not valid; create one with `agentdex tokens create`")
        actor = Actor(principal_id=row.id, principal_name=row.name, scopes=frozenset(row.scopes.split()))
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now + CACHE_SECONDS, actor)
        return actor

    def bootstrap_admin(self) -> IssuedToken | None:
        """On an empty registry, create the first admin token (printed once by `agentdex serve`)."""
        with self._sessions() as session:
            if session.scalar(select(ApiToken.id).limit(1)) is not None:
                return None
        return self.create("admin", ["admin"], principal="admin")
