"""API tokens: created once and shown once, stored as SHA-256, checked on every write, listed
and revoked by an admin (a revoked token stays listed, never works again)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from registry.audit import AuditEntry
from registry.auth.models import ApiToken, Principal
from registry.cursors import parse_pk
from registry.db.types import utcnow
from registry.errors import AmbiguousId, InvalidRequest, NotFound, Unauthorized

TOKEN_PREFIX = "adx_"
KNOWN_SCOPES = frozenset({"agents:write", "relay", "metrics:read", "admin"})
# Every write request authenticates: caching an actor takes a query off that path, at the price of a
# revoked token working for at most this long.
CACHE_SECONDS = 5.0
LISTING = "`agentdex tokens list --all` (GET /v1/tokens?includeRevoked=true) lists them"


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


@dataclasses.dataclass(frozen=True)
class TokenInfo:
    """What may be shown of a token: never the token, nor its hash. `prefix` is its first
    characters, enough to tell which token a pipeline holds."""

    id: int
    name: str
    principal: str
    scopes: tuple[str, ...]
    prefix: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None

    @classmethod
    def of(cls, row: Any) -> TokenInfo:
        return cls(
            row.id, row.name, row.principal, tuple(row.scopes.split()), row.prefix, row.created_at, row.revoked_at
        )

    def to_dict(self) -> dict[str, Any]:
        """As the API and `agentdex tokens --json` show it."""
        return {
            "id": self.id,
            "name": self.name,
            "principal": self.principal,
            "scopes": list(self.scopes),
            "prefix": self.prefix,
            "createdAt": _api_time(self.created_at),
            "revokedAt": _api_time(self.revoked_at),
        }


class TokenRevoked(Unauthorized):
    """A token that once worked and was revoked: the caller needs a new one, not a fix."""

    code = "token_revoked"


# What `TokenInfo` is read from: the token's columns but its hash, and its principal's name.
TOKEN_INFO = select(
    ApiToken.id,
    ApiToken.name,
    Principal.name.label("principal"),
    ApiToken.scopes,
    ApiToken.prefix,
    ApiToken.created_at,
    ApiToken.revoked_at,
).join(Principal, Principal.id == ApiToken.principal_id)


def _api_time(value: dt.datetime | None) -> str | None:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if value else None


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
        """Return the actor behind a bearer token. Raises Unauthorized, TokenRevoked."""
        digest = hash_token(token)
        cached = self._cache.get(digest)
        now = self._monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        with self._sessions() as session:
            row = session.execute(
                select(ApiToken.token_hash, ApiToken.scopes, ApiToken.revoked_at, Principal.id, Principal.name)
                .join(Principal, Principal.id == ApiToken.principal_id)
                .where(ApiToken.token_hash == digest)
            ).first()
        # The lookup is by hash, so timing reveals nothing about the token; the compare is belt and braces.
        if row is None or not hmac.compare_digest(row.token_hash, digest):
            raise Unauthorized("the bearer token is not valid; create one with `agentdex tokens create`")
        if row.revoked_at is not None:
            raise TokenRevoked(
                f"the bearer token was revoked at {row.revoked_at.isoformat()}; ask the registry's operator "
                "for a new one (`agentdex tokens create`)"
            )
        actor = Actor(principal_id=row.id, principal_name=row.name, scopes=frozenset(row.scopes.split()))
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[digest] = (now + CACHE_SECONDS, actor)
        return actor

    def listed(self, *, include_revoked: bool = False, after: int = 0, limit: int = 100) -> list[TokenInfo]:
        """Tokens in the order they were created, after token id `after`; revoked ones on request."""
        where = [ApiToken.id > after] + ([] if include_revoked else [ApiToken.revoked_at.is_(None)])
        return self._infos(*where, limit=limit)

    def find(self, ref: str) -> TokenInfo:
        """The token that `ref` names: its id (all digits), or the name of the one token by that
        name that is not revoked (names need not be unique). Raises NotFound, AmbiguousId."""
        pk = parse_pk(ref)
        if pk is not None or ref.isdigit():  # digits beyond any key name no token either
            found = self._infos(ApiToken.id == pk) if pk is not None else []
            if not found:
                raise NotFound(f"no token with id {ref}; {LISTING}")
            return found[0]
        found = self._infos(ApiToken.name == ref, ApiToken.revoked_at.is_(None))
        if len(found) > 1:
            ids = [info.id for info in found]
            raise AmbiguousId(f"{len(found)} tokens are named {ref!r} (ids {ids}); give the id", {"candidates": ids})
        if not found:
            raise NotFound(f"no token named {ref!r} that is not revoked; {LISTING}")
        return found[0]

    def revoke(self, token_id: int, actor: Actor | None = None) -> tuple[TokenInfo, bool]:
        """Revoke a token for good: (the token, whether this call revoked it; False when it already
        was). `actor` None: the operator, at the database. Raises NotFound."""
        now = self._clock()
        with self._sessions.begin() as session:
            still_live = ApiToken.revoked_at.is_(None)
            revoked = (
                session.connection()
                .execute(update(ApiToken).where(ApiToken.id == token_id, still_live).values(revoked_at=now))
                .rowcount
            )
            row = session.execute(TOKEN_INFO.add_columns(ApiToken.token_hash).where(ApiToken.id == token_id)).first()
            if row is None:
                raise NotFound(f"no token with id {token_id}; {LISTING}")
            if revoked:
                detail = {"tokenId": token_id, "name": row.name, "principal": row.principal}
                by = actor.principal_id if actor else None
                session.add(AuditEntry(at=now, principal_id=by, action="token.revoke", detail=detail))
        # This process refuses it from now on; other processes once their cached actor expires.
        self._cache.pop(row.token_hash, None)
        return TokenInfo.of(row), bool(revoked)

    def _infos(self, *where: Any, limit: int | None = None) -> list[TokenInfo]:
        with self._sessions() as session:
            rows = session.execute(TOKEN_INFO.where(*where).order_by(ApiToken.id).limit(limit))
            return [TokenInfo.of(row) for row in rows]

    def bootstrap_admin(self) -> IssuedToken | None:
        """On an empty registry, create the first admin token (printed once by `agentdex serve`)."""
        with self._sessions() as session:
            if session.scalar(select(ApiToken.id).limit(1)) is not None:
                return None
        return self.create("admin", ["admin"], principal="admin")
