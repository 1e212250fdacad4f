"""Endorsement: the registry's own detached JWS over a card it validated (A2A §8.4.2).

The signature is made exactly as the SDKs sign (the same canonical form; protected header
`alg`, `kid`, `typ: "JOSE"`, `jku` = the registry's `/.well-known/jwks.json`), so any A2A SDK
verifies it with the registry's published keys. What the registry attests travels in the
unprotected header (`header.agentdex`: where and when the card was fetched, the agent's own
signature state); since an unprotected header can be edited by anyone, its SHA-256 (over the
RFC 8785 form) is also in the protected header as `agentdexAttestation`, so a client can check
that the attestation it reads is the one the registry signed.

When: an endorsement is made when a card version is stored (its canonical form and the facts
it attests are at hand then, and a card is read far more often than it is written), provided
the registry knows its public URL (`AGENTDEX_PUBLIC_URL`) for `jku`. On read, the stored
signature is served when it was made with the key that is active now and the `jku` of this
request; otherwise (after `agentdex keys rotate`, without a configured public URL) the card is
endorsed again on read and the result cached, so clients always get the active key.
"""

from __future__ import annotations

import collections
import datetime as dt
import hashlib
import threading
from collections.abc import Mapping
from typing import Any

from registry.trust.registry_keys import RegistryKeys
from signing import CardPayloads, jcs, sign_card
from signing.jws import b64url_encode

ATTESTATION = "agentdex"
ATTESTATION_DIGEST = "agentdexAttestation"
JWKS_PATH = "/.well-known/jwks.json"


def iso(value: dt.datetime | None) -> str | None:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if value else None


def attestation(
    *, registry: str, card_url: str, source: str, fetched_from: str | None, fetched_at: dt.datetime,
    state: str, kids: tuple[str, ...] | list[str], checked_at: dt.datetime,
) -> dict[str, Any]:
    """What the registry vouches for: it validated this card, got it from where and when, and
    found the agent's own signatures in `state` (verified by `kids`)."""
    return {
        "registry": registry, "validated": True, "cardUrl": card_url, "source": source,
        "fetchedFrom": fetched_from, "fetchedAt": iso(fetched_at),
        "signature": {"state": state, "kids": list(kids), "checkedAt": iso(checked_at)},
    }


def attestation_digest(claims: Mapping[str, Any]) -> str:
    return b64url_encode(hashlib.sha256(jcs(claims)).digest())


class Endorser:
    """Signs with the registry's active key for `alg`; caches endorsements made on read."""

    def __init__(self, keys: RegistryKeys, *, alg: str, public_url: str | None, cache_size: int = 4096) -> None:
        self._keys = keys
        self._alg = alg
        self.public_url = public_url
        self._cache: collections.OrderedDict[tuple[Any, ...], dict[str, Any]] = collections.OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def base_url(self, request_base: str | None = None) -> str | None:
        """The registry's public base URL: configured, else the one the request came in on."""
        return self.public_url or (request_base.rstrip("/") if request_base else None)

    def jku(self, base: str) -> str:
        return base + JWKS_PATH

    def endorse(self, card: Mapping[str, Any], claims: Mapping[str, Any], base: str,
                payloads: CardPayloads | None = None) -> dict[str, Any]:
        """`{"kid", "jku", "entry"}`: the signature entry to append to the card's `signatures`."""
        key = self._keys.active(self._alg)
        jku = self.jku(base)
        signed = sign_card(
            card, key, jku=jku, header_extras={ATTESTATION_DIGEST: attestation_digest(claims)},
            unprotected_header={ATTESTATION: dict(claims)}, payloads=payloads,
        )
        return {"kid": key.kid, "jku": jku, "entry": signed["signatures"][-1]}

    def is_current(self, stored: Mapping[str, Any] | None, base: str) -> bool:
        """True when a stored endorsement was made with the active key for this `jku`."""
        return (stored is not None and stored["jku"] == self.jku(base)
                and stored["kid"] == self._keys.active(self._alg).kid)

    def cached(self, identity: tuple[Any, ...], card: Mapping[str, Any], claims: Mapping[str, Any],
               base: str) -> dict[str, Any]:
        """`endorse`, remembered under `identity` (+ the active kid and jku) for later reads."""
        key = (*identity, self._keys.active(self._alg).kid, self.jku(base))
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        made = self.endorse(card, claims, base)
        with self._lock:
            self._cache[key] = made
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return made
