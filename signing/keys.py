"""Signing and verification keys: typed wrappers around pyca/cryptography keys.

A key is parsed once and then reused: it caches its per-algorithm sign/verify functions and
its RFC 7638 thumbprint, so verifying many cards costs only the crypto. JWK conversion and
thumbprints come from `joserfc`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from signing.algorithms import (
    ALGORITHM_SPECS,
    ALGORITHMS_BY_KEY_TYPE,
    CARD_ALGORITHMS,
    DEFAULT_ALGORITHM,
    MAX_RSA_BITS,
    MIN_RSA_BITS,
    Algorithm,
    AlgorithmSpec,
    KeyType,
    Signer,
    Verifier,
    generate_private_key,
    key_type_of,
    make_signer,
    make_verifier,
    parse_algorithm,
)
from signing.errors import KeyFormatError, UnsupportedAlgorithmError, WeakKeyError


@dataclass(frozen=True, eq=False)
class VerificationKey:
    """A public key that may verify signatures.

    `kid` is the key id it was published under (None for an anonymous key, e.g. a bare PEM,
    which is tried for any kid). `algorithms` is what the key admits; empty when the key is
    unusable, and then `problem` says why (e.g. RSA below 2048 bits).
    """

    public_key: Any
    key_type: KeyType
    kid: str | None
    algorithms: frozenset[Algorithm]
    problem: str | None = None
    _verifiers: dict[Algorithm, Verifier] = field(default_factory=dict, repr=False)

    def verify(self, alg: Algorithm, signature: bytes, signing_input: bytes) -> bool:
        """True if `signature` is valid over `signing_input` under `alg`, else False; never raises
        for a bad signature. Callers check `alg in self.algorithms` first (the policy)."""
        verifier = self._verifiers.get(alg)
        if verifier is None:
            verifier = self._verifiers[alg] = make_verifier(ALGORITHM_SPECS[alg], self.public_key)
        return verifier(signature, signing_input)

    @functools.cached_property
    def thumbprint(self) -> str:
        """The RFC 7638 SHA-256 thumbprint of the public key (base64url)."""
        return str(_jose_key(self.public_key).thumbprint())


@dataclass(frozen=True, eq=False)
class SigningKey:
    """A private key, the algorithm it signs with and the kid it signs under. `private_key` is a
    cryptography key, or the handle of a key held in a token (which never leaves it)."""

    private_key: Any
    key_type: KeyType
    algorithm: Algorithm
    kid: str
    public: VerificationKey
    _signer: Signer = field(repr=False)

    def sign(self, signing_input: bytes) -> bytes:
        """The raw JWS signature (R||S for ECDSA) over `signing_input`."""
        return self._signer(signing_input)


def verification_key(public_key: Any, *, kid: str | None = None, alg: str | None = None) -> VerificationKey:
    """Wrap a cryptography public key. A key that is too weak gets no algorithms and a `problem`.

    Raises KeyFormatError if the key type cannot sign JWS at all; UnsupportedAlgorithmError if
    `alg` is given and the key type does not admit it.
    """
    key_type = _require_key_type(public_key)
    problem = _weakness(public_key, key_type)
    allowed = ALGORITHMS_BY_KEY_TYPE[key_type]
    if alg is not None:
        allowed = frozenset({_admitted(parse_algorithm(alg), key_type)})
    return VerificationKey(public_key, key_type, kid, frozenset() if problem else allowed, problem)


def signing_key(private_key: Any, *, kid: str | None = None, alg: str | None = None) -> SigningKey:
    """Wrap a cryptography private key; the kid defaults to the RFC 7638 thumbprint.

    Raises KeyFormatError (unusable key type), WeakKeyError (RSA below 2048 bits) or
    UnsupportedAlgorithmError (`alg` not admitted by the key type).
    """
    _require_key_type(private_key)
    return held_signing_key(
        private_key, private_key.public_key(), lambda spec: make_signer(spec, private_key), kid=kid, alg=alg
    )


def held_signing_key(
    handle: Any,
    public_key: Any,
    signer_for: Callable[[AlgorithmSpec], Signer],
    *,
    kid: str | None = None,
    alg: str | None = None,
) -> SigningKey:
    """A signing key whose private half is held elsewhere (a PKCS#11 token): `handle` stands for
    it, `public_key` (cryptography) decides the key type, algorithm and default kid (the RFC 7638
    thumbprint), and `signer_for(spec)` returns the function that signs with it.

    Raises KeyFormatError (unusable key type), WeakKeyError or UnsupportedAlgorithmError.
    """
    key_type = _require_key_type(public_key)
    problem = _weakness(public_key, key_type)
    if problem:
        raise WeakKeyError(problem)
    algorithm = _admitted(parse_algorithm(alg), key_type) if alg else DEFAULT_ALGORITHM[key_type]
    kid = kid or str(_jose_key(public_key).thumbprint())
    public = VerificationKey(public_key, key_type, kid, frozenset({algorithm}))
    return SigningKey(handle, key_type, algorithm, kid, public, signer_for(ALGORITHM_SPECS[algorithm]))


def generate_key(alg: Algorithm | str = Algorithm.EDDSA, *, kid: str | None = None) -> SigningKey:
    """A new key for `alg`: Ed25519 (EdDSA), P-256 (ES256), P-384 (ES384), RSA-3072 (PS256, RS256).

    Raises UnsupportedAlgorithmError for any other algorithm.
    """
    algorithm = parse_algorithm(str(alg))
    key_type = ALGORITHM_SPECS[algorithm].key_type
    if algorithm not in CARD_ALGORITHMS:
        raise UnsupportedAlgorithmError(
            f"cannot generate {algorithm.value} keys; use EdDSA, ES256, ES384, PS256 or RS256"
        )
    return signing_key(generate_private_key(key_type), kid=kid, alg=algorithm.value)


def public_jwk(key: VerificationKey | SigningKey) -> dict[str, str]:
    """The public JWK of a key with `kid` (when it has one), `alg` (when it admits exactly one)
    and `use: sig`. Never contains private members."""
    public = key.public if isinstance(key, SigningKey) else key
    members = {k: str(v) for k, v in _jose_key(public.public_key).as_dict(private=False).items()}
    if public.kid:
        members["kid"] = public.kid
    if len(public.algorithms) == 1:
        members["alg"] = next(iter(public.algorithms)).value
    members["use"] = "sig"
    return members


def private_jwk(key: SigningKey) -> dict[str, str]:
    """The private JWK of a signing key, with its `kid`, `alg` and `use`. Keep it secret.

    Raises KeyFormatError for a key held in a token, whose private half cannot leave it.
    """
    if key_type_of(key.private_key) is None:
        raise KeyFormatError(f"key {key.kid} is held in a token; its private half cannot be exported")
    members = {k: str(v) for k, v in _jose_key(key.private_key).as_dict(private=True).items()}
    members.update(kid=key.kid, alg=key.algorithm.value, use="sig")
    return members


def public_jwks(keys: Iterable[VerificationKey | SigningKey]) -> dict[str, list[dict[str, str]]]:
    """A JWK Set (`{"keys": [...]}`) of the public halves of `keys`."""
    return {"keys": [public_jwk(key) for key in keys]}


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256, base64url) of a JWK; private members are ignored.

    Raises KeyFormatError if the JWK cannot be read (see `import_jwk`).
    """
    return str(_import_jose(jwk).thumbprint())


def import_jwk(jwk: Mapping[str, Any]) -> Any:
    """The cryptography key (private if `d` is present, else public) for a JWK.

    Raises KeyFormatError for symmetric keys, unknown kty/crv and malformed members.
    """
    key = _import_jose(jwk)
    return key.private_key if key.is_private else key.public_key


def _import_jose(jwk: Mapping[str, Any]) -> Any:
    if not isinstance(jwk, Mapping):
        raise KeyFormatError(f"a JWK must be a JSON object, not {type(jwk).__name__}")
    kty = jwk.get("kty")
    if kty == "oct":
        raise KeyFormatError("symmetric (kty 'oct') keys are never accepted for Agent Cards")
    if kty not in ("OKP", "EC", "RSA"):
        raise KeyFormatError(f"unsupported JWK kty {kty!r}; expected OKP, EC or RSA")
    from joserfc import jwk as jose_jwk  # here: signing with a PEM key never needs joserfc

    try:
        return jose_jwk.import_key(dict(jwk), kty)
    except Exception as error:  # joserfc raises ValueError, TypeError, binascii.Error, its own...
        raise KeyFormatError(f"invalid {kty} JWK: {error}") from error


def _jose_key(crypto_key: Any) -> Any:
    from joserfc import jwk as jose_jwk

    key_type = key_type_of(crypto_key)
    if key_type is KeyType.ED25519:
        return jose_jwk.OKPKey.import_key(crypto_key)
    if key_type is KeyType.RSA:
        return jose_jwk.RSAKey.import_key(crypto_key)
    return jose_jwk.ECKey.import_key(crypto_key)


def _require_key_type(key: Any) -> KeyType:
    key_type = key_type_of(key)
    if key_type is None:
        raise KeyFormatError(f"{type(key).__name__} cannot sign JWS here; use Ed25519, P-256, P-384, P-521 or RSA keys")
    return key_type


def _weakness(key: Any, key_type: KeyType) -> str | None:
    if key_type is not KeyType.RSA:
        return None
    if key.key_size < MIN_RSA_BITS:
        return f"RSA key has {key.key_size} bits; at least {MIN_RSA_BITS} are required"
    if key.key_size > MAX_RSA_BITS:
        return f"RSA key has {key.key_size} bits; more than {MAX_RSA_BITS} are not accepted"
    return None


def _admitted(algorithm: Algorithm, key_type: KeyType) -> Algorithm:
    if algorithm not in ALGORITHMS_BY_KEY_TYPE[key_type]:
        needed = ALGORITHM_SPECS[algorithm].key_type.value
        raise UnsupportedAlgorithmError(f"alg {algorithm.value} needs a {needed} key, not {key_type.value}")
    return algorithm
