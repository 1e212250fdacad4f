"""Crypto policy as data: which JWS algorithms exist here, which key type each needs, and
the raw sign/verify primitives (pyca/cryptography) behind them.

The key decides the algorithm: a key type admits a fixed set of algorithms
(`ALGORITHMS_BY_KEY_TYPE`), a signature whose `alg` is outside that set is refused before
any crypto runs. `none` and the HMAC family are not in the table at all, so no policy can
enable them for Agent Cards.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from signing.errors import UnsupportedAlgorithmError

MIN_RSA_BITS = 2048
MAX_RSA_BITS = 16384  # bounds the verify cost an attacker-supplied JWKS can impose
GENERATED_RSA_BITS = 3072


class KeyType(enum.Enum):
    """Asymmetric key types usable for JWS, named after their JWK `crv` (or `kty` for RSA)."""

    ED25519 = "Ed25519"
    P256 = "P-256"
    P384 = "P-384"
    P521 = "P-521"
    RSA = "RSA"


class Algorithm(enum.StrEnum):
    """JWS `alg` values (RFC 7518, RFC 8037) that this package implements."""

    EDDSA = "EdDSA"
    ES256 = "ES256"
    ES384 = "ES384"
    ES512 = "ES512"
    PS256 = "PS256"
    PS384 = "PS384"
    PS512 = "PS512"
    RS256 = "RS256"
    RS384 = "RS384"
    RS512 = "RS512"


@dataclass(frozen=True)
class AlgorithmSpec:
    """How one algorithm signs: key type, digest, RSA padding, fixed signature size."""

    algorithm: Algorithm
    key_type: KeyType
    digest: type[hashes.HashAlgorithm] | None = None
    pss: bool = False
    signature_size: int | None = None  # None: RSA, the modulus decides


ALGORITHM_SPECS: dict[Algorithm, AlgorithmSpec] = {
    spec.algorithm: spec
    for spec in (
        AlgorithmSpec(Algorithm.EDDSA, KeyType.ED25519, signature_size=64),
        AlgorithmSpec(Algorithm.ES256, KeyType.P256, hashes.SHA256, signature_size=64),
        AlgorithmSpec(Algorithm.ES384, KeyType.P384, hashes.SHA384, signature_size=96),
        AlgorithmSpec(Algorithm.ES512, KeyType.P521, hashes.SHA512, signature_size=132),
        AlgorithmSpec(Algorithm.PS256, KeyType.RSA, hashes.SHA256, pss=True),
        AlgorithmSpec(Algorithm.PS384, KeyType.RSA, hashes.SHA384, pss=True),
        AlgorithmSpec(Algorithm.PS512, KeyType.RSA, hashes.SHA512, pss=True),
        AlgorithmSpec(Algorithm.RS256, KeyType.RSA, hashes.SHA256),
        AlgorithmSpec(Algorithm.RS384, KeyType.RSA, hashes.SHA384),
        AlgorithmSpec(Algorithm.RS512, KeyType.RSA, hashes.SHA512),
    )
}

ALGORITHMS_BY_KEY_TYPE: dict[KeyType, frozenset[Algorithm]] = {
    key_type: frozenset(a for a, spec in ALGORITHM_SPECS.items() if spec.key_type is key_type) for key_type in KeyType
}

# Issue 3: the algorithms Agentdex signs and, by default, accepts on Agent Cards.
CARD_ALGORITHMS: frozenset[Algorithm] = frozenset(
    {Algorithm.EDDSA, Algorithm.ES256, Algorithm.ES384, Algorithm.PS256, Algorithm.RS256}
)
ALL_ALGORITHMS: frozenset[Algorithm] = frozenset(ALGORITHM_SPECS)

# The algorithm a key signs with unless told otherwise (RSA: RS256, the most widely verified).
DEFAULT_ALGORITHM: dict[KeyType, Algorithm] = {
    KeyType.ED25519: Algorithm.EDDSA,
    KeyType.P256: Algorithm.ES256,
    KeyType.P384: Algorithm.ES384,
    KeyType.P521: Algorithm.ES512,
    KeyType.RSA: Algorithm.RS256,
}

_CURVES = {"secp256r1": KeyType.P256, "secp384r1": KeyType.P384, "secp521r1": KeyType.P521}
_CURVE_CLASSES: dict[KeyType, Callable[[], ec.EllipticCurve]] = {
    KeyType.P256: ec.SECP256R1,
    KeyType.P384: ec.SECP384R1,
    KeyType.P521: ec.SECP521R1,
}

Verifier = Callable[[bytes, bytes], bool]
Signer = Callable[[bytes], bytes]


def parse_algorithm(name: object) -> Algorithm:
    """The `Algorithm` named `name`.

    Raises UnsupportedAlgorithmError for `none`, HMAC and anything else not implemented here.
    """
    if isinstance(name, str):
        try:
            return Algorithm(name)
        except ValueError:
            pass
        if name == "none":
            raise UnsupportedAlgorithmError("alg 'none' (unsecured JWS) is never accepted for Agent Cards")
        if name.startswith("HS"):
            raise UnsupportedAlgorithmError(
                f"alg {name!r} is HMAC (a shared secret); Agent Cards need public-key signatures"
            )
    raise UnsupportedAlgorithmError(
        f"alg {name!r} is not supported; use one of {', '.join(sorted(a.value for a in ALGORITHM_SPECS))}"
    )


def key_type_of(key: Any) -> KeyType | None:
    """The `KeyType` of a cryptography private or public key, or None if it is not usable for JWS."""
    if isinstance(key, ed25519.Ed25519PublicKey | ed25519.Ed25519PrivateKey):
        return KeyType.ED25519
    if isinstance(key, ec.EllipticCurvePublicKey | ec.EllipticCurvePrivateKey):
        return _CURVES.get(key.curve.name)
    if isinstance(key, rsa.RSAPublicKey | rsa.RSAPrivateKey):
        return KeyType.RSA
    return None


def generate_private_key(key_type: KeyType) -> Any:
    """A fresh cryptography private key of `key_type` (RSA keys get 3072 bits)."""
    if key_type is KeyType.ED25519:
        return ed25519.Ed25519PrivateKey.generate()
    if key_type is KeyType.RSA:
        return rsa.generate_private_key(public_exponent=65537, key_size=GENERATED_RSA_BITS)
    return ec.generate_private_key(_CURVE_CLASSES[key_type]())


def make_verifier(spec: AlgorithmSpec, public_key: Any) -> Verifier:
    """A function `(signature, signing_input) -> bool` for `spec` and a matching public key."""
    if spec.key_type is KeyType.ED25519:
        return _checked(public_key.verify, spec.signature_size)
    if spec.key_type is KeyType.RSA:
        pad = _rsa_padding(spec)
        digest = spec.digest()  # type: ignore[misc]
        size = (public_key.key_size + 7) // 8
        return _checked(lambda sig, data: public_key.verify(sig, data, pad, digest), size)
    half = spec.signature_size // 2  # type: ignore[operator]
    algorithm = ec.ECDSA(spec.digest())  # type: ignore[misc]

    def verify_raw(sig: bytes, data: bytes) -> None:
        # JWS carries ECDSA signatures as raw R || S (RFC 7518 §3.4); cryptography wants DER.
        der = encode_dss_signature(int.from_bytes(sig[:half], "big"), int.from_bytes(sig[half:], "big"))
        public_key.verify(der, data, algorithm)

    return _checked(verify_raw, spec.signature_size)


def _checked(verify: Callable[[bytes, bytes], None], size: int | None) -> Verifier:
    def verifier(signature: bytes, signing_input: bytes) -> bool:
        if len(signature) != size:
            return False
        try:
            verify(signature, signing_input)
        except InvalidSignature:
            return False
        return True

    return verifier


def make_signer(spec: AlgorithmSpec, private_key: Any) -> Signer:
    """A function `signing_input -> signature bytes` (JWS encoding) for `spec` and a private key."""
    if spec.key_type is KeyType.ED25519:
        return private_key.sign
    if spec.key_type is KeyType.RSA:
        pad, digest = _rsa_padding(spec), spec.digest()  # type: ignore[misc]
        return lambda data: private_key.sign(data, pad, digest)
    half = spec.signature_size // 2  # type: ignore[operator]
    algorithm = ec.ECDSA(spec.digest())  # type: ignore[misc]

    def sign_raw(data: bytes) -> bytes:
        r, s = decode_dss_signature(private_key.sign(data, algorithm))
        return r.to_bytes(half, "big") + s.to_bytes(half, "big")

    return sign_raw


def _rsa_padding(spec: AlgorithmSpec) -> padding.AsymmetricPadding:
    if not spec.pss:
        return padding.PKCS1v15()
    # RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash output.
    digest = spec.digest()  # type: ignore[misc]
    return padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
