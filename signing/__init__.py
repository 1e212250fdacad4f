"""Agent Card signing and verification (A2A §8.4), interoperable with the official SDKs.

A standalone library: it imports nothing from `registry/`, `cli/`, Flask or SQLAlchemy.

Canonical payloads (`signing.canonical`)
    canonicalize(card, form=CanonicalForm.SDK) -> bytes
    canonical_payload(card, form=CanonicalForm.SDK) -> CanonicalPayload(form, schema_version, data, uncovered)
    jcs(value) -> bytes                      RFC 8785 of any JSON value
    CanonicalForm.SDK | STRICT | PLAIN       what a2a-sdk/@a2a-js sign | the spec text's rule | JCS of the card
    detect_schema(card) -> CardSchema        which protocol version's fields apply (1.0, 0.3.0, ...)

Signing (`signing.sign`)
    sign_card(card, key, *, kid=None, jku=None, header_extras=None, unprotected_header=None,
              form=CanonicalForm.SDK, payloads=None) -> dict   a copy with one more detached JWS

Verifying (`signing.verify`, `signing.resolvers`, `signing.fetch`)
    verify_card(card, resolver, policy=DEFAULT_POLICY, *, payloads=None) -> VerificationResult(ok, reason, signatures)
    CardPayloads(card)                       canonical forms of one card, shared by verify_card and sign_card
    SignatureResult(index, outcome, kid, alg, key_source, key_thumbprint, form, uncovered, detail)
    Outcome.VALID | INVALID | KEY_NOT_FOUND | UNSUPPORTED | MALFORMED
    VerificationPolicy(mode=PolicyMode.ANY|ALL, required_kids=frozenset(), algorithms=CARD_ALGORITHMS,
                       forms=(SDK, STRICT, PLAIN))
    KeyResolver protocol: resolve(kid, jku) -> Iterator[KeyLookup(source, keys, rejected, problems)]
    StaticKeyResolver(keys | KeySet, source="pinned"), StaticKeyResolver.from_jwks(document)
    JwksUrlResolver(urls=(), *, allowed_origins=(), fetcher=None, ttl=300, min_refresh=60,
                    clock=time.monotonic, unsafe=None, cache=None)  https only; `jku` only from allowed origins
    JwksCache(fetcher=None, *, ttl=300, min_refresh=60, clock, max_urls=10_000)  shared by resolvers:
                    TTL, one refetch per min_refresh for an unknown kid, empty sets never cached,
                    the last good set kept when a fetch fails
    ChainResolver(resolvers)                 consults resolvers in order
    JwksFetcher protocol: (url) -> bytes; RequestsJwksFetcher(timeout, max_bytes);
    UnsafeHttpLoopback() (tests), UnsafeHttpAnyHost() (a fetcher with its own address policy)

Keys (`signing.keys`, `signing.key_files`, `signing.algorithms`)
    generate_key(alg="EdDSA", *, kid=None) -> SigningKey     Ed25519, P-256, P-384, RSA-3072
    SigningKey(kid, algorithm, key_type, public: VerificationKey).sign(data)
    VerificationKey(kid, key_type, algorithms, problem).verify(alg, signature, data), .thumbprint
    signing_key(private_key, *, kid, alg), verification_key(public_key, *, kid, alg)
    load_private_key_pem(data, password=None), save_private_key_pem(key, password=None)
    load_public_key_pem(data), load_private_jwk(jwk), load_public_jwk(jwk), save_private_jwk(key)
    load_signing_key(data, password=None), load_verification_keys(data, password=None) -> KeySet
    open_pkcs11_key(uri, *, environ=None, kid=None, alg=None) -> context manager of SigningKey,
                    a key held in a PKCS#11 token (RFC 7512 URI; extra `pkcs11`); Pkcs11Uri.parse(text)
    parse_jwks(document) -> KeySet, public_jwk(key), private_jwk(key), public_jwks(keys), thumbprint(jwk)
    Algorithm, KeyType, ALGORITHMS_BY_KEY_TYPE, CARD_ALGORITHMS, MIN_RSA_BITS

Reading JSON input (`signing.json_input`), for cards, headers, keys and JWKS alike
    loads_json(data, *, max_depth=MAX_JSON_DEPTH) -> Any   strict: no repeated member names,
                    lone surrogates, NaN or nesting over 64; integers beyond 64 bits exact

Errors (`signing.errors`): SigningError > CardFormatError > CanonicalizationError; KeyFormatError >
WeakKeyError, TokenKeyError; UnsupportedAlgorithmError; HeaderError; PolicyError > UnsafeUrlError;
KeyResolutionError > JwksFetchError; MalformedSignatureError; UnsupportedSignatureError;
JsonInputError (also a ValueError; `.path`) > JsonSyntaxError, JsonTooDeepError,
DuplicateMemberError, LoneSurrogateError.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and readers see; at run time `__getattr__` below imports
    from signing.algorithms import ALGORITHMS_BY_KEY_TYPE, CARD_ALGORITHMS, MIN_RSA_BITS, Algorithm, KeyType
    from signing.canonical import CanonicalForm, CanonicalPayload, canonical_payload, canonicalize, jcs
    from signing.card_schema import CardSchema, detect_schema
    from signing.errors import (
        CanonicalizationError,
        CardFormatError,
        DuplicateMemberError,
        HeaderError,
        JsonInputError,
        JsonSyntaxError,
        JsonTooDeepError,
        JwksFetchError,
        KeyFormatError,
        KeyResolutionError,
        LoneSurrogateError,
        MalformedSignatureError,
        PolicyError,
        SigningError,
        TokenKeyError,
        UnsafeUrlError,
        UnsupportedAlgorithmError,
        UnsupportedSignatureError,
        WeakKeyError,
    )
    from signing.fetch import JwksFetcher, RequestsJwksFetcher, UnsafeHttpAnyHost, UnsafeHttpLoopback
    from signing.json_input import MAX_DEPTH as MAX_JSON_DEPTH
    from signing.json_input import loads as loads_json
    from signing.key_files import (
        KeySet,
        load_private_jwk,
        load_private_key_pem,
        load_public_jwk,
        load_public_key_pem,
        load_signing_key,
        load_verification_keys,
        parse_jwks,
        save_private_jwk,
        save_private_key_pem,
    )
    from signing.keys import (
        SigningKey,
        VerificationKey,
        generate_key,
        private_jwk,
        public_jwk,
        public_jwks,
        signing_key,
        thumbprint,
        verification_key,
    )
    from signing.pkcs11_keys import Pkcs11Uri, open_pkcs11_key
    from signing.resolvers import ChainResolver, JwksCache, JwksUrlResolver, KeyLookup, KeyResolver, StaticKeyResolver
    from signing.sign import sign_card
    from signing.verify import (
        DEFAULT_POLICY,
        CardPayloads,
        Outcome,
        PolicyMode,
        SignatureResult,
        VerificationPolicy,
        VerificationResult,
        verify_card,
    )

__all__ = [
    "ALGORITHMS_BY_KEY_TYPE",
    "CARD_ALGORITHMS",
    "DEFAULT_POLICY",
    "MIN_RSA_BITS",
    "Algorithm",
    "CanonicalForm",
    "CanonicalPayload",
    "CanonicalizationError",
    "CardFormatError",
    "CardPayloads",
    "CardSchema",
    "DuplicateMemberError",
    "ChainResolver",
    "HeaderError",
    "JsonInputError",
    "JsonSyntaxError",
    "JsonTooDeepError",
    "JwksFetchError",
    "JwksCache",
    "JwksFetcher",
    "JwksUrlResolver",
    "KeyFormatError",
    "KeyLookup",
    "KeyResolutionError",
    "KeyResolver",
    "KeySet",
    "KeyType",
    "LoneSurrogateError",
    "MAX_JSON_DEPTH",
    "MalformedSignatureError",
    "Outcome",
    "Pkcs11Uri",
    "PolicyError",
    "PolicyMode",
    "RequestsJwksFetcher",
    "SignatureResult",
    "SigningError",
    "SigningKey",
    "StaticKeyResolver",
    "TokenKeyError",
    "UnsafeHttpAnyHost",
    "UnsafeHttpLoopback",
    "UnsafeUrlError",
    "UnsupportedAlgorithmError",
    "UnsupportedSignatureError",
    "VerificationKey",
    "VerificationPolicy",
    "VerificationResult",
    "WeakKeyError",
    "canonical_payload",
    "canonicalize",
    "detect_schema",
    "generate_key",
    "jcs",
    "load_private_jwk",
    "load_private_key_pem",
    "load_public_jwk",
    "load_public_key_pem",
    "load_signing_key",
    "load_verification_keys",
    "loads_json",
    "open_pkcs11_key",
    "parse_jwks",
    "private_jwk",
    "public_jwk",
    "public_jwks",
    "save_private_jwk",
    "save_private_key_pem",
    "sign_card",
    "signing_key",
    "thumbprint",
    "verification_key",
    "verify_card",
]

# `import signing` loads no submodule: a name's module is imported when the name is first used
# (PEP 562). `cli.files` parses JSON with `loads_json` and `agentdex keys jwks` prints a JWKS without
# paying for `requests` (JWKS URLs), `joserfc` or the card schema tables. The home of each name,
# "module" or "module:attribute" where the names differ; it, the imports above and `__all__` are
# kept in step by tests/cli/test_offline_imports.py.
_HOMES = {
    "ALGORITHMS_BY_KEY_TYPE": "signing.algorithms",
    "CARD_ALGORITHMS": "signing.algorithms",
    "MIN_RSA_BITS": "signing.algorithms",
    "Algorithm": "signing.algorithms",
    "KeyType": "signing.algorithms",
    "CanonicalForm": "signing.canonical",
    "CanonicalPayload": "signing.canonical",
    "canonical_payload": "signing.canonical",
    "canonicalize": "signing.canonical",
    "jcs": "signing.canonical",
    "CardSchema": "signing.card_schema",
    "detect_schema": "signing.card_schema",
    "CanonicalizationError": "signing.errors",
    "CardFormatError": "signing.errors",
    "DuplicateMemberError": "signing.errors",
    "HeaderError": "signing.errors",
    "JsonInputError": "signing.errors",
    "JsonSyntaxError": "signing.errors",
    "JsonTooDeepError": "signing.errors",
    "JwksFetchError": "signing.errors",
    "KeyFormatError": "signing.errors",
    "KeyResolutionError": "signing.errors",
    "LoneSurrogateError": "signing.errors",
    "MalformedSignatureError": "signing.errors",
    "PolicyError": "signing.errors",
    "SigningError": "signing.errors",
    "TokenKeyError": "signing.errors",
    "UnsafeUrlError": "signing.errors",
    "UnsupportedAlgorithmError": "signing.errors",
    "UnsupportedSignatureError": "signing.errors",
    "WeakKeyError": "signing.errors",
    "JwksFetcher": "signing.fetch",
    "RequestsJwksFetcher": "signing.fetch",
    "UnsafeHttpAnyHost": "signing.fetch",
    "UnsafeHttpLoopback": "signing.fetch",
    "MAX_JSON_DEPTH": "signing.json_input:MAX_DEPTH",
    "loads_json": "signing.json_input:loads",
    "KeySet": "signing.key_files",
    "load_private_jwk": "signing.key_files",
    "load_private_key_pem": "signing.key_files",
    "load_public_jwk": "signing.key_files",
    "load_public_key_pem": "signing.key_files",
    "load_signing_key": "signing.key_files",
    "load_verification_keys": "signing.key_files",
    "parse_jwks": "signing.key_files",
    "save_private_jwk": "signing.key_files",
    "save_private_key_pem": "signing.key_files",
    "SigningKey": "signing.keys",
    "VerificationKey": "signing.keys",
    "generate_key": "signing.keys",
    "private_jwk": "signing.keys",
    "public_jwk": "signing.keys",
    "public_jwks": "signing.keys",
    "signing_key": "signing.keys",
    "thumbprint": "signing.keys",
    "verification_key": "signing.keys",
    "Pkcs11Uri": "signing.pkcs11_keys",
    "open_pkcs11_key": "signing.pkcs11_keys",
    "ChainResolver": "signing.resolvers",
    "JwksCache": "signing.resolvers",
    "JwksUrlResolver": "signing.resolvers",
    "KeyLookup": "signing.resolvers",
    "KeyResolver": "signing.resolvers",
    "StaticKeyResolver": "signing.resolvers",
    "sign_card": "signing.sign",
    "DEFAULT_POLICY": "signing.verify",
    "CardPayloads": "signing.verify",
    "Outcome": "signing.verify",
    "PolicyMode": "signing.verify",
    "SignatureResult": "signing.verify",
    "VerificationPolicy": "signing.verify",
    "VerificationResult": "signing.verify",
    "verify_card": "signing.verify",
}


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name as Any

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'signing' has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        globals()[name] = value  # found once; later lookups do not come here
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
