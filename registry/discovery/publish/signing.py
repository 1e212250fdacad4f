"""The manifest's `host`, and its signed trust manifest (AI Catalog, "Host Info" and "Trust
Manifest Signatures").

AI Catalog §"Trust Manifest Signatures": the signature is a detached JWS (RFC 7515 Appendix F,
compact serialization, payload omitted) over the RFC 8785 (JCS) form of the trust manifest itself
with `signature` removed. It covers the trust manifest only — the identity the registry claims —
not the entries beside it (the spec: "verified independently of the artifact content"). The key is
the registry's own, the one that signs its Agent Card and endorsements; `kid` and `jku` (the
registry's `/.well-known/jwks.json`) name it, as AI Catalog §"Key Resolution" has an https
identity's key found in a JWK Set by `kid`.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from registry.trust import JWKS_PATH, RegistryKeys
from signing import SigningKey, jcs
from signing.jws import b64url_encode, build_protected_header, encode_protected_header, sign_detached

DISPLAY_NAME = "Agentdex"
_KEPT_BASES = 16  # signed trust manifests kept, by public base URL (one, unless hosts vary)


class ManifestHost(Protocol):
    def host(self, base: str) -> dict[str, Any]:
        """The `host` member of the manifest served at `base`. Raises RegistryKeyUnavailable."""
        ...


def host_info(base: str) -> dict[str, Any]:
    """AI Catalog §"Host Info": who operates this catalog. The identifier is the registry's public
    URL, which its trust manifest's `identity` then matches (AI Catalog: it SHOULD)."""
    return {"displayName": DISPLAY_NAME, "identifier": base, "documentationUrl": f"{base}/openapi.json"}


class UnsignedHost:
    """The host when AGENTDEX_ARD_SIGN_MANIFEST is off: no trust manifest."""

    def host(self, base: str) -> dict[str, Any]:
        return host_info(base)


class SignedHost:
    """The host with a trust manifest signed by the registry's active `alg` key, signed again only
    when that key or the base URL changes (an ES256 signature differs each time it is made, and
    the manifest's ETag should not)."""

    def __init__(self, keys: RegistryKeys, *, alg: str) -> None:
        self._keys = keys
        self._alg = alg
        self._lock = threading.Lock()
        self._signed: dict[str, tuple[str, dict[str, Any]]] = {}

    def host(self, base: str) -> dict[str, Any]:
        key = self._keys.active(self._alg)
        with self._lock:
            kept = self._signed.get(base)
        if kept is not None and kept[0] == key.kid:
            return kept[1]
        host = {
            **host_info(base),
            "trustManifest": signed_trust_manifest({"identity": base}, key, jku=base + JWKS_PATH),
        }
        with self._lock:
            if len(self._signed) >= _KEPT_BASES:
                self._signed.clear()  # hosts the proxy let through vary: keep the memory bounded
            self._signed[base] = (key.kid, host)
        return host


def signed_trust_manifest(trust_manifest: dict[str, Any], key: SigningKey, *, jku: str) -> dict[str, Any]:
    """`trust_manifest` with its `signature`: `BASE64URL(header) ".." BASE64URL(sig)` over
    `BASE64URL(header) "." BASE64URL(JCS(trust_manifest))` (AI Catalog §"Trust Manifest
    Signatures" steps 1–3). The header is `{"alg", "kid", "typ": "JOSE", "jku"}`."""
    unsigned = {name: value for name, value in trust_manifest.items() if name != "signature"}
    protected = encode_protected_header(build_protected_header(key, kid=key.kid, jku=jku, extras=None))
    signature = sign_detached(b64url_encode(jcs(unsigned)), protected, key)
    return {**unsigned, "signature": f"{protected}..{signature}"}
