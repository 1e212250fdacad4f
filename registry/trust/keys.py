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
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session, sessionmaker

from registry.auth import Actor
from registry.db.types import utcnow
from registry.errors import Forbidden, InvalidRequest, NotFound
from registry.metrics import NULL_METRICS, Metrics
from registry.outbound import OutboundError, SafeHttpClient
from registry.trust.models import AGENTS, TrustedKey
from signing import (
    ChainResolver,
    JwksCache,
    JwksFetchError,
    JwksUrlResolver,
    KeyFormatError,
    KeyLookup,
    KeyResolver,
    KeySet,
    PolicyError,
    StaticKeyResolver,
    parse_jwks,
)
from signing.fetch import UnsafeHttp, check_url, origin_of

PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
CACHE_SECONDS = 5.0


@dataclasses.dataclass(frozen=True)
class KeyScope:
    """Whose registered keys may verify a card: its owner's, and the agent's own JWKS URL."""

    owner_id: int | None
    agent_pk: int | None = None
    jwks_url: str | None = None


class KeyHolder(Protocol):
    """An agent as key resolution sees it (the catalog's `Agent`)."""

    @property
    def pk(self) -> int: ...

    @property
    def owner_id(self) -> int | None: ...

    @property
    def jwks_url(self) -> str | None: ...


class OwnerKeys:
    """JWKS documents owners register. An owner's key set is cached for `CACHE_SECONDS` (it is read
    on every registration): keys registered or removed through another process take effect here
    within that time; through this process, at once."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        self._monotonic = monotonic
        self._sets: dict[tuple[int, int | None], tuple[float, KeySet]] = {}

    def add(self, actor: Actor, document: object, scope: KeyScope | None) -> TrustedKey:
        """Register a public JWKS for the actor's agents, or the one of `scope`. Raises InvalidRequest
        (not a public JWKS, no usable key)."""
        keys = public_key_set(document)
        key = TrustedKey(
            id=str(uuid.uuid4()),
            principal_id=scope.owner_id if scope and scope.owner_id else actor.principal_id,
            agent_pk=scope.agent_pk if scope else None,
            jwks=document,
            kids=[k.kid for k in keys.keys if k.kid],
            created_at=self._clock(),
        )
        with self._sessions.begin() as session:
            session.add(key)
        self._sets.clear()
        return key

    def list(self, actor: Actor) -> list[tuple[TrustedKey, str | None]]:
        """The actor's registered keys, each with the id of the agent it is limited to."""
        stmt = (
            select(TrustedKey, AGENTS.c.id)
            .outerjoin(AGENTS, AGENTS.c.pk == TrustedKey.agent_pk)
            .where(TrustedKey.principal_id == actor.principal_id)
            .order_by(TrustedKey.pk)
        )
        with self._sessions() as session:
            return [(key, agent_id) for key, agent_id in session.execute(stmt)]

    def remove(self, actor: Actor, key_id: str) -> TrustedKey:
        """Delete one registered JWKS; returns it. Raises NotFound, Forbidden."""
        with self._sessions.begin() as session:
            key = session.scalar(select(TrustedKey).where(TrustedKey.id == key_id))
            if key is None:
                raise NotFound(f"no registered keys with id {key_id!r}")
            if not actor.is_admin and key.principal_id != actor.principal_id:
                raise Forbidden("only the owner of these keys or an admin may remove them")
            session.execute(delete(TrustedKey).where(TrustedKey.pk == key.pk))
        self._sets.clear()
        return key

    def key_set(self, scope: KeyScope) -> KeySet:
        """Every key registered for the scope's owner (all agents) and for its agent."""
        if scope.owner_id is None:
            return KeySet(())
        cached = self._sets.get((scope.owner_id, scope.agent_pk))
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        mine = or_(TrustedKey.agent_pk.is_(None), TrustedKey.agent_pk == scope.agent_pk)  # all agents, or this one
        with self._sessions() as session:
            documents = session.scalars(select(TrustedKey.jwks).where(TrustedKey.principal_id == scope.owner_id, mine))
            parsed = [parse_jwks(document) for document in documents]
        found = KeySet(tuple(k for one in parsed for k in one.keys), tuple(r for one in parsed for r in one.rejected))
        if len(self._sets) > 10_000:
            self._sets.clear()
        self._sets[(scope.owner_id, scope.agent_pk)] = (self._monotonic() + CACHE_SECONDS, found)
        return found


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


class SafeJwksFetcher:
    """JWKS documents over the safe outbound client (address policy, DNS pinning, size cap,
    deadline). Redirects are not followed: a JWKS URL is trusted for its origin only."""

    def __init__(
        self, http: SafeHttpClient, *, max_bytes: int, timeout: float, metrics: Metrics = NULL_METRICS
    ) -> None:
        self._http = http
        self._max_bytes = max_bytes
        self._timeout = timeout
        self._metrics = metrics

    def __call__(self, url: str) -> bytes:
        """The body of `url`. Raises JwksFetchError (refused, timeout, too large, not HTTP 200)."""
        try:
            body = self._fetch(url)
        except JwksFetchError:
            self._metrics.jwks_fetch("failed")
            raise
        self._metrics.jwks_fetch("ok")
        return body

    def _fetch(self, url: str) -> bytes:
        accept = {"Accept": "application/jwk-set+json, application/json;q=0.9"}
        try:
            response = self._http.get(
                url, headers=accept, max_bytes=self._max_bytes, timeout=self._timeout, follow_redirects=False
            )
        except OutboundError as error:
            raise JwksFetchError(f"JWKS {url} could not be fetched: {error}") from error
        if 300 <= response.status < 400:
            raise JwksFetchError(
                f"JWKS {url} answered HTTP {response.status} (a redirect); keys are never fetched elsewhere"
            )
        if response.status != 200:
            raise JwksFetchError(f"JWKS {url} answered HTTP {response.status}")
        return response.body


class _Refused:
    """A key source the policy cannot use, reported in the signature's detail."""

    def __init__(self, source: str, problem: str) -> None:
        self._lookup = KeyLookup(source, (), problems=(problem,))

    def resolve(self, kid: str | None, jku: str | None) -> Iterator[KeyLookup]:
        yield self._lookup


class KeyPolicy:
    def __init__(
        self,
        owner_keys: OwnerKeys,
        cache: JwksCache,
        *,
        trust_store: KeySet | None,
        jku_origins: tuple[str, ...],
        unsafe: UnsafeHttp | None,
    ) -> None:
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
        """The sources for one card, in policy order (consulted lazily: nothing is fetched until needed)."""
        sources: list[KeyResolver] = [StaticKeyResolver(self._owner_keys.key_set(scope), source="owner")]
        if scope.jwks_url:
            sources.append(self._url_source([scope.jwks_url], ()))
        sources.append(self._url_source((), (*self._card_origin(card_url), *self._jku_origins)))
        if self._trust_store is not None:
            sources.append(self._trust_store)
        return ChainResolver(sources)

    def _url_source(self, urls: Sequence[str], origins: tuple[str, ...]) -> KeyResolver:
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
