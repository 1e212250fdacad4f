"""API tokens: created once and shown once, stored as SHA-256, checked on every authenticated
request, listed and revoked by their owner (an admin: any token). A revoked token stays listed and
never works again; an expiring token stops working at its time. Both are seen by the next request
in every web process: the token's row is read on each request (one indexed lookup), nothing is
cached."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from registry.audit import AuditEntry
from registry.auth.actor import Actor, normalise_domain
from registry.auth.models import ApiToken, Principal
from registry.auth.token_info import TOKEN_INFO, IssuedToken, TokenInfo, api_time
from registry.cursors import parse_pk
from registry.db import single_statements
from registry.db.types import utcnow
from registry.errors import AmbiguousId, InvalidRequest, NotFound, Unauthorized

TOKEN_PREFIX = "adx_"
KNOWN_SCOPES = frozenset({"agents:write", "relay", "metrics:read", "admin"})
# Last-used times are kept to this precision, so that a busy token costs one write a minute, not
# one a request.
LAST_USED_PRECISION = dt.timedelta(minutes=1)
LISTING = "`agentdex tokens list --all` (GET /v1/tokens?includeRevoked=true) lists them"


class TokenRevoked(Unauthorized):
    """A token that once worked and was revoked: the caller needs a new one, not a fix."""

    code = "token_revoked"


class TokenExpired(Unauthorized):
    """A token past the expiry it was created with: the caller needs a new one."""

    code = "token_expired"


# What `authenticate` reads: all it needs to refuse a token or build its actor, in one query.
ACTOR_ROW = select(
    ApiToken.id,
    ApiToken.token_hash,
    ApiToken.scopes,
    ApiToken.domains,
    ApiToken.revoked_at,
    ApiToken.expires_at,
    ApiToken.last_used_at,
    Principal.id.label("principal_id"),
    Principal.name.label("principal_name"),
).join(Principal, Principal.id == ApiToken.principal_id)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenService:
    def __init__(self, sessions: sessionmaker[Session], clock: Callable[[], dt.datetime] = utcnow) -> None:
        self._sessions = sessions
        self._clock = clock
        # Every authenticated request reads its token's row: one statement, so without the BEGIN and
        # ROLLBACK round trips of a transaction on PostgreSQL.
        self._reads = single_statements(sessions.kw["bind"])

    def create(
        self,
        name: str,
        scopes: Iterable[str],
        principal: str | None = None,
        *,
        expires_in: dt.timedelta | None = None,
        domains: Iterable[str] | None = None,
    ) -> IssuedToken:
        """Create a token for `principal` (default: a principal named like the token), working for
        `expires_in` (None: until revoked) on agents under `domains` (None: anywhere). Raises
        InvalidRequest for an unknown scope, an empty name, a lifetime that is not positive or a
        domain that is not a host."""
        scope_list = tuple(sorted(set(scopes)))
        unknown = set(scope_list) - KNOWN_SCOPES
        if unknown or not scope_list:
            raise InvalidRequest(f"unknown or missing scopes {sorted(unknown)}; choose from {sorted(KNOWN_SCOPES)}")
        if not name.strip():
            raise InvalidRequest("a token needs a name")
        if expires_in is not None and expires_in <= dt.timedelta(0):
            raise InvalidRequest("a token's lifetime must be positive (such as 30d)")
        narrowed = _domains(domains)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        owner_name = principal or name
        now = self._clock()
        expires_at = now + expires_in if expires_in is not None else None
        with self._sessions.begin() as session:
            owner = session.scalar(select(Principal).where(Principal.name == owner_name))
            session.add(
                ApiToken(
                    principal=owner or Principal(name=owner_name, created_at=now),
                    name=name,
                    token_hash=hash_token(token),
                    prefix=token[:10],
                    scopes=" ".join(scope_list),
                    created_at=now,
                    expires_at=expires_at,
                    domains=" ".join(narrowed) if narrowed is not None else None,
                )
            )
        return IssuedToken(token, name, owner_name, scope_list, expires_at, narrowed)

    def authenticate(self, token: str) -> Actor:
        """Return the actor behind a bearer token, noting its use (to the minute). Raises
        Unauthorized, TokenRevoked, TokenExpired."""
        digest = hash_token(token)
        with self._reads.connect() as connection:
            row = connection.execute(ACTOR_ROW.where(ApiToken.token_hash == digest)).first()
        # The lookup is by hash, so timing reveals nothing about the token; the compare is belt and braces.
        if row is None or not hmac.compare_digest(row.token_hash, digest):
            raise Unauthorized("the bearer token is not valid; create one with `agentdex tokens create`")
        now = self._clock()
        _refuse_dead(row, now)
        if row.last_used_at is None or row.last_used_at <= now - LAST_USED_PRECISION:
            self._note_use(row.id, now)
        domains = frozenset(row.domains.split()) if row.domains is not None else None
        return Actor(row.principal_id, row.principal_name, frozenset(row.scopes.split()), domains, row.id)

    def _note_use(self, token_id: int, now: dt.datetime) -> None:
        # Conditional, so that web processes racing on the same minute write it once.
        stale = or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at <= now - LAST_USED_PRECISION)
        with self._reads.begin() as connection:
            connection.execute(update(ApiToken).where(ApiToken.id == token_id, stale).values(last_used_at=now))

    def listed(
        self, *, owner: int | None = None, include_revoked: bool = False, after: int = 0, limit: int = 100
    ) -> list[TokenInfo]:
        """Tokens in the order they were created, after token id `after`: those of principal
        `owner` (None: everyone's); revoked ones on request, expired ones always (they show when)."""
        where = [ApiToken.id > after] + ([] if include_revoked else [ApiToken.revoked_at.is_(None)])
        if owner is not None:
            where.append(ApiToken.principal_id == owner)
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
        was). `actor` None: the operator, at the database; an actor that is not an admin reaches
        only its own principal's tokens, and others' are not found (not even their existence is
        told). Raises NotFound."""
        now = self._clock()
        mine = [] if actor is None or actor.is_admin else [ApiToken.principal_id == actor.principal_id]
        with self._sessions.begin() as session:
            still_live = ApiToken.revoked_at.is_(None)
            revoked = (
                session.connection()
                .execute(update(ApiToken).where(ApiToken.id == token_id, still_live, *mine).values(revoked_at=now))
                .rowcount
            )
            row = session.execute(TOKEN_INFO.where(ApiToken.id == token_id, *mine)).first()
            if row is None:
                raise NotFound(f"no token with id {token_id}; {LISTING}")
            if revoked:
                detail = {"tokenId": token_id, "name": row.name, "principal": row.principal}
                by = actor.principal_id if actor else None
                session.add(AuditEntry(at=now, principal_id=by, action="token.revoke", detail=detail))
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


def _refuse_dead(row: Any, now: dt.datetime) -> None:
    """Raise TokenRevoked or TokenExpired for a token that no longer works."""
    if row.revoked_at is not None:
        raise TokenRevoked(
            f"the bearer token was revoked at {row.revoked_at.isoformat()}; ask the registry's operator "
            "for a new one (`agentdex tokens create`)"
        )
    if row.expires_at is not None and row.expires_at <= now:
        raise TokenExpired(
            f"the bearer token expired at {api_time(row.expires_at)}; ask the registry's operator for a new "
            "one (`agentdex tokens create NAME --expires 30d`)",
            {"expiredAt": api_time(row.expires_at)},
        )


def _domains(domains: Iterable[str] | None) -> tuple[str, ...] | None:
    """The token's domains, normalised and sorted; None when not narrowed. Raises InvalidRequest."""
    if domains is None:
        return None
    narrowed = tuple(sorted({normalise_domain(domain) for domain in domains}))
    if not narrowed:
        raise InvalidRequest("a token narrowed to domains needs at least one (or none: no narrowing)")
    return narrowed
