"""Key resolution as policy (A2A §8.4.3; DESIGN "Signing"): which keys may verify a card.

In order, the first key that verifies wins:
1. keys the agent's owner registered (`POST /v1/keys`, for all its agents or one), then the
   JWKS at the agent's own `jwksUrl`;
2. the JWKS at a signature's `jku`, only when it is https and on the card URL's own origin or
   an origin the operator allowlisted (anything else is never fetched, and says so);
3. the operator's static trust store (`AGENTDEX_TRUSTED_JWKS`).
Every JWKS URL is fetched through one shared `JwksCache` over the safe outbound client.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from sqlalchemy import delete, insert, or_, select
from sqlalchemy.orm import Session, sessionmaker

from registry.auth import Actor
from registry.db.types import utcnow
from registry.errors import Forbidden, InvalidRequest, NotFound
from registry.trust.catalog_tables import AGENTS
from registry.trust.models import TrustedKey
from signing import (
    ChainResolver,
    JwksCache,
    JwksUrlResolver,
    KeyFormatError,
    KeyLookup,
    KeyResolver,
    KeySet,
    PolicyError,
    StaticKeyResolver,
    VerificationKey,
    parse_jwks,
)
from signing.fetch import UnsafeHttp, check_url, origin_of

PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


@dataclasses.dataclass(frozen=True)
class KeyScope:
    """Whose registered keys may verify a card: its owner's, and the agent's own JWKS URL."""

    owner_id: int | None
    agent_pk: int | None = None
    jwks_url: str | None = None


class KeyHolder(Protocol):
    """An agent as key resolution sees it (the catalog's `Agent`, or `OwnedAgent`)."""

    @property
    def pk(self) -> int: ...

    @property
    def owner_id(self) -> int | None: ...

    @property
    def jwks_url(self) -> str | None: ...


@dataclasses.dataclass(frozen=True)
class OwnedAgent:
    """An agent whose keys are being changed, as read for the owner check."""

    pk: int
    id: str
    owner_id: int | None
    jwks_url: str | None


@dataclasses.dataclass(frozen=True)
class TrustedKeyInfo:
    id: str
    agent_id: str | None
    kids: tuple[str, ...]
    created_at: dt.datetime

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "agentId": self.agent_id, "kids": list(self.kids),
                "createdAt": self.created_at.isoformat().replace("+00:00", "Z")}


class OwnerKeys:
    """JWKS documents owners register; parsed once per row (rows are never changed, only removed).

    An owner's key set is cached for `cache_seconds` (registration is a hot path): like API
    tokens, keys registered or removed through another process take effect here within that
    time; through this process, at once.
    """

    def __init__(self, sessions: sessionmaker[Session], *, clock: Callable[[], dt.datetime] = utcnow,
                 new_id: Callable[[], str] = lambda: str(uuid.uuid4()), cache_seconds: float = 5.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._sessions = sessions
        self._clock = clock
        self._new_id = new_id
        self._parsed: dict[int, KeySet] = {}
        self._sets: dict[tuple[int, int | None], tuple[float, KeySet]] = {}
        self._cache_seconds = cache_seconds
        self._monotonic = monotonic

    def add(self, actor: Actor, document: object, agent: OwnedAgent | None) -> TrustedKeyInfo:
        """Register a public JWKS. Raises InvalidRequest (not a public JWKS, no usable key)."""
        keys = public_key_set(document)
        row: dict[str, Any] = {"id": self._new_id(), "principal_id": agent.owner_id if agent and agent.owner_id else actor.principal_id,
               "agent_pk": agent.pk if agent else None, "jwks": document,
               "kids": [key.kid for key in keys.keys if key.kid], "created_at": self._clock()}
        with self._sessions.begin() as session:
            session.execute(insert(TrustedKey), [row])
        self._sets.clear()
        return TrustedKeyInfo(row["id"], agent.id if agent else None, tuple(row["kids"]), row["created_at"])

    def list(self, actor: Actor) -> list[TrustedKeyInfo]:
        stmt = (select(TrustedKey, AGENTS.c.id).outerjoin(AGENTS, AGENTS.c.pk == TrustedKey.agent_pk)
                .where(TrustedKey.principal_id == actor.principal_id).order_by(TrustedKey.pk))
        with self._sessions() as session:
            return [TrustedKeyInfo(key.id, agent_id, tuple(key.kids), key.created_at) for key, agent_id in session.execute(stmt)]

    def remove(self, actor: Actor, key_id: str) -> TrustedKey:
        """Delete one registered JWKS; returns it. Raises NotFound, Forbidden."""
        with self._sessions.begin() as session:
            key = session.scalar(select(TrustedKey).where(TrustedKey.id == key_id))
            if key is None:
                raise NotFound(f"no registered keys with id {key_id!r}")
            if not actor.is_admin and key.principal_id != actor.principal_id:
                raise Forbidden("only the owner of these keys or an admin may remove them")
            session.execute(delete(TrustedKey).where(TrustedKey.pk == key.pk))
        self._parsed.pop(key.pk, None)
        self._sets.clear()
        return key

    def key_set(self, scope: KeyScope) -> KeySet:
        """Every key registered for the scope's owner (all agents) and for its agent."""
        if scope.owner_id is None:
            return KeySet(())
        cached = self._sets.get((scope.owner_id, scope.agent_pk))
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        found = self._load(scope)
        if len(self._sets) > 10_000:
            self._sets.clear()
        self._sets[(scope.owner_id, scope.agent_pk)] = (self._monotonic() + self._cache_seconds, found)
        return found

    def _load(self, scope: KeyScope) -> KeySet:
        mine = or_(TrustedKey.agent_pk.is_(None), TrustedKey.agent_pk == scope.agent_pk) if scope.agent_pk else TrustedKey.agent_pk.is_(None)
        stmt = select(TrustedKey.pk, TrustedKey.jwks).where(TrustedKey.principal_id == scope.owner_id, mine)
        with self._sessions() as session:
            rows = session.execute(stmt).all()
        keys: list[VerificationKey] = []
        rejected: list[Any] = []  # signing's rejected keys, each with its reason
        for pk, jwks in rows:
            parsed = self._parsed.get(pk) or self._parsed.setdefault(pk, parse_jwks(jwks))
            keys.extend(parsed.keys)
            rejected.extend(parsed.rejected)
        return KeySet(tuple(keys), tuple(rejected))


def public_key_set(document: object) -> KeySet:
    """The keys of a JWKS an owner sends. Raises InvalidRequest for private members, no usable key."""
    if not isinstance(document, Mapping) or not isinstance(document.get("keys"), list):
        raise InvalidRequest('jwks must be a JWK Set: {"keys": [...]}')
    for index, key in enumerate(document["keys"]):
        if isinstance(key, Mapping) and PRIVATE_MEMBERS & key.keys():
            raise InvalidRequest(f"jwks.keys[{index}] holds private key material; send only public keys")
    try:
        keys = parse_jwks(document)
    except KeyFormatError as error:
        raise InvalidRequest(f"jwks is not usable: {error}") from None
    if not keys.keys:
        raise InvalidRequest("jwks has no usable key", {"rejected": [r.reason for r in keys.rejected]})
    return keys


class _Lazy:
    """A resolver built on first use: an unsigned card never reads its owner's keys, and most
    signed cards verify with them and never need their JWKS URLs parsed and checked."""

    def __init__(self, build: Callable[[], KeyResolver]) -> None:
        self._build = build
        self._resolver: KeyResolver | None = None

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        if self._resolver is None:
            self._resolver = self._build()
        yield from self._resolver.resolve(kid, jku)


class _Refused:
    """A key source the policy cannot use, reported in the signature's detail."""

    def __init__(self, source: str, problem: str) -> None:
        self._lookup = KeyLookup(source, (), problems=(problem,))

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        yield self._lookup


class KeyPolicy:
    def __init__(self, owner_keys: OwnerKeys, cache: JwksCache, *, trust_store: KeySet | None,
                 jku_origins: tuple[str, ...], unsafe: UnsafeHttp | None) -> None:
        self._owner_keys = owner_keys
        self._cache = cache
        self._trust_store = StaticKeyResolver(trust_store, source="trust-store") if trust_store else None
        self._jku_origins = jku_origins
        self._unsafe = unsafe

    def check_jwks_url(self, url: str) -> str:
        """`url` if the agent's JWKS may be fetched from it. Raises InvalidRequest."""
        try:
            return check_url(url, self._unsafe)
        except PolicyError as error:
            raise InvalidRequest(f"jwksUrl: {error}") from None

    def resolver(self, card_url: str, scope: KeyScope) -> KeyResolver:
        """The sources for one card, in policy order."""
        owner = self._owner_keys
        sources: list[KeyResolver] = [_Lazy(lambda: StaticKeyResolver(owner.key_set(scope), source="owner"))]
        if scope.jwks_url:
            sources.append(_Lazy(lambda: self._url_source([scope.jwks_url], ())))
        sources.append(_Lazy(lambda: self._url_source((), (*self._card_origin(card_url), *self._jku_origins))))
        if self._trust_store is not None:
            sources.append(self._trust_store)
        return ChainResolver(sources)

    def _url_source(self, urls: Any, origins: tuple[str, ...]) -> KeyResolver:
        try:
            return JwksUrlResolver(urls, allowed_origins=origins, cache=self._cache, unsafe=self._unsafe)
        except PolicyError as error:  # e.g. an http jwksUrl kept from when the operator allowed http
            return _Refused(f"jwks:{urls[0] if urls else ''}", f"not fetched: {error}")

    def _card_origin(self, card_url: str) -> tuple[str, ...]:
        """The card's own origin, when keys may be fetched from it at all (https, or http if allowed)."""
        try:
            return (origin_of(check_url(card_url, self._unsafe)),)
        except PolicyError:
            return ()
