"""The stronger ingress mode: a JWT the agent signs for every notification, as the A2A samples do.

It must verify with a key bound to the agent's card (one the registry's key policy accepts for it,
or one in the JWKS at the card origin's `/.well-known/jwks.json`), its `aud` be this relay URL,
`iat`/`exp` within the allowed age, `request_body_sha256` the body's SHA-256 and `jti` unique (the
outbox's unique index is the replay cache).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from joserfc import jwk, jws, jwt
from joserfc.errors import JoseError

from registry.db.types import utcnow
from registry.errors import Unauthorized
from registry.trust import KeyPolicy, KeyScope
from signing import CARD_ALGORITHMS, ChainResolver, JwksUrlResolver, KeyResolver, VerificationKey, public_jwk
from signing.errors import PolicyError
from signing.fetch import JwksFetcher, UnsafeHttp, origin_of

# RFC 9864 names Ed25519 "Ed25519"; agents (and the A2A SDKs) still say "EdDSA": accept both.
ALGORITHMS = frozenset({alg.value for alg in CARD_ALGORITHMS} | {"Ed25519"})
BODY_HASH_CLAIM = "request_body_sha256"
MAX_JTI = 200
CLOCK_SKEW = 30
MAX_RESOLVERS = 1_000


@dataclasses.dataclass(frozen=True)
class AgentBinding:
    """What ties keys to an agent: its card URL, owner and declared JWKS URL."""

    agent_pk: int
    card_url: str
    owner_id: int | None = None
    jwks_url: str | None = None


ResolverFactory = Callable[[AgentBinding], KeyResolver]


def card_key_sources(policy: KeyPolicy, fetch: JwksFetcher, *, unsafe: UnsafeHttp | None = None) -> ResolverFactory:
    """The card's key sources by the registry's policy, then its origin's `/.well-known/jwks.json`."""

    def make(agent: AgentBinding) -> KeyResolver:
        sources = [policy.resolver(agent.card_url, KeyScope(agent.owner_id, agent.agent_pk, agent.jwks_url))]
        try:
            url = f"{origin_of(agent.card_url)}/.well-known/jwks.json"
            sources.append(JwksUrlResolver([url], fetcher=fetch, unsafe=unsafe))
        except PolicyError:  # e.g. a plain-http card while http is not allowed: no such source
            pass
        return ChainResolver(sources)

    return make


class AgentJwtVerifier:
    """Checks the JWT of one notification; returns its `jti`. Resolvers are kept per agent."""

    def __init__(
        self, resolvers: ResolverFactory, *, max_age: float = 300.0, clock: Callable[[], dt.datetime] = utcnow
    ) -> None:
        self._resolvers = resolvers
        self._max_age = max_age
        self._clock = clock
        self._cache: dict[int, tuple[AgentBinding, KeyResolver]] = {}
        self._lock = threading.Lock()

    def verify(self, authorization: str | None, agent: AgentBinding, audience: str, body: bytes) -> str:
        """The JWT's `jti`. Raises Unauthorized saying what was wrong."""
        token = bearer(authorization)
        if token is None:
            raise Unauthorized("this subscription needs Authorization: Bearer <JWT signed by the agent>")
        header = _header(token)
        claims = self._verified_claims(token, header, agent)
        self._check_claims(claims, audience, body)
        return str(claims["jti"])

    def _verified_claims(self, token: str, header: dict[str, Any], agent: AgentBinding) -> dict[str, Any]:
        """Key sources are consulted in policy order and lazily: the first that verifies ends it."""
        tried, problems = 0, list[str]()
        for lookup in self._resolver(agent).resolve(header.get("kid"), header.get("jku")):
            problems.extend(lookup.problems)
            tried += len(lookup.keys)
            claims = _decode(token, header["alg"], lookup.keys)
            if claims is not None:
                return claims
        if not tried:
            detail = "; ".join(problems) or "no key with this kid"
            raise Unauthorized(f"no key bound to the agent's card verifies this JWT: {detail}")
        raise Unauthorized("the JWT's signature does not verify with the keys bound to the agent's card")

    def _resolver(self, agent: AgentBinding) -> KeyResolver:
        with self._lock:
            cached = self._cache.get(agent.agent_pk)
            if cached is not None and cached[0] == agent:
                return cached[1]
        resolver = self._resolvers(agent)  # the card moved (new URL or interfaces): new key sources
        with self._lock:
            if len(self._cache) >= MAX_RESOLVERS:
                self._cache.clear()
            self._cache[agent.agent_pk] = (agent, resolver)
        return resolver

    def _check_claims(self, claims: dict[str, Any], audience: str, body: bytes) -> None:
        now = int(self._clock().timestamp())
        aud = claims.get("aud")
        if audience not in (aud if isinstance(aud, list) else [aud]):
            raise Unauthorized(f"the JWT's aud must be this relay URL ({audience})")
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int | float) or not isinstance(exp, int | float):
            raise Unauthorized("the JWT needs numeric iat and exp claims")
        if not now - self._max_age <= iat <= now + CLOCK_SKEW:
            raise Unauthorized(f"the JWT's iat is not within {int(self._max_age)} s of now")
        if not now < exp <= now + self._max_age + CLOCK_SKEW:
            raise Unauthorized(f"the JWT has expired or lives longer than {int(self._max_age)} s")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI:
            raise Unauthorized(f"the JWT needs a jti claim (a string of at most {MAX_JTI} characters)")
        digest = hashlib.sha256(body).hexdigest()
        if not hmac.compare_digest(str(claims.get(BODY_HASH_CLAIM, "")).lower(), digest):
            raise Unauthorized(f"the JWT's {BODY_HASH_CLAIM} is not the SHA-256 of this body")


def bearer(authorization: str | None) -> str | None:
    """The value of `Authorization: Bearer <value>`, else None."""
    scheme, _, value = (authorization or "").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def _header(token: str) -> dict[str, Any]:
    try:
        header = dict(jws.extract_compact(token.encode("ascii")).protected)
    except (JoseError, ValueError, UnicodeError):
        raise Unauthorized("the Authorization bearer value is not a compact JWT") from None
    if header.get("alg") not in ALGORITHMS:
        raise Unauthorized(f"JWT algorithm {header.get('alg')!r} is not accepted; use one of {sorted(ALGORITHMS)}")
    return header


def _decode(token: str, alg: str, keys: Iterable[VerificationKey]) -> dict[str, Any] | None:
    for key in keys:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # joserfc warns that "EdDSA" is deprecated (RFC 9864)
                return dict(jwt.decode(token, jwk.import_key(dict(public_jwk(key))), algorithms=[alg]).claims)
        except (JoseError, ValueError):
            continue
    return None
