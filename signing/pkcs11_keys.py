"""Signing keys held in a PKCS#11 token or HSM, named by an RFC 7512 `pkcs11:` URI.

The private key never leaves the token: the JWS signing input goes to the token, which returns
the signature (Ed25519 with CKM_EDDSA; ECDSA with CKM_ECDSA over the digest, whose output is the
raw r||s JWS wants, RFC 7518 §3.4; RSA with CKM_SHA*_RSA_PKCS(_PSS)). The public key, read from
the token, decides the algorithm and the default kid as for any other key.

The binding is `python-pkcs11` (the `pkcs11` extra), imported only when a token is opened.

URI attributes understood (RFC 7512 §2.3): `token`, `manufacturer`, `serial`, `model` pick the
token; `object` (CKA_LABEL) and `id` (CKA_ID) pick the key; `type` may only be `private`.
Query: `module-path` (required: the PKCS#11 library to load), and the PIN as `pin-value=1234`
or, so that it stays out of command lines and logs, `pin-source=env:VAR` (an extension of this
package: the PIN is the value of environment variable VAR) or `pin-source=file:/path`
(RFC 7512's own form).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, unquote_to_bytes

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from signing.algorithms import AlgorithmSpec, KeyType, Signer
from signing.errors import TokenKeyError
from signing.keys import SigningKey, held_signing_key

if TYPE_CHECKING:
    import pkcs11

SCHEME = "pkcs11:"
_TOKEN_FIELDS = {"token": "label", "manufacturer": "manufacturer_id", "model": "model"}
_PATH_ATTRIBUTES = frozenset({*_TOKEN_FIELDS, "serial", "object", "id", "type"})
_QUERY_ATTRIBUTES = frozenset({"module-path", "module-name", "pin-value", "pin-source"})


@dataclass(frozen=True)
class Pkcs11Uri:
    """The parts of an RFC 7512 URI this package uses. `path` and `query` hold the decoded
    attributes (`id` stays percent-encoded there; `key_id` is its bytes)."""

    path: Mapping[str, str]
    query: Mapping[str, str]
    key_id: bytes | None = field(default=None)

    @classmethod
    def parse(cls, text: str) -> Pkcs11Uri:
        """Parse `pkcs11:path?query`.

        Raises TokenKeyError naming the attribute that is unknown, repeated or missing (no
        `object` or `id`, no `module-path`). The PIN is never repeated in a message.
        """
        if not text.startswith(SCHEME):
            raise TokenKeyError("a PKCS#11 key is named by a URI starting with 'pkcs11:' (RFC 7512)")
        path_part, _, query_part = text[len(SCHEME) :].partition("?")
        path = _attributes(path_part, ";", _PATH_ATTRIBUTES, "path")
        query = _attributes(query_part, "&", _QUERY_ATTRIBUTES, "query")
        if "object" not in path and "id" not in path:
            raise TokenKeyError("the pkcs11: URI names no key: give object=LABEL or id=%XX..")
        if path.get("type", "private") != "private":
            raise TokenKeyError(f"the pkcs11: URI has type={path['type']}; a signing key is type=private")
        if "module-path" not in query:
            raise TokenKeyError("the pkcs11: URI needs module-path=/path/to/the/pkcs11/library.so")
        key_id = unquote_to_bytes(path["id"]) if "id" in path else None
        decoded = {name: value if name == "id" else unquote(value) for name, value in path.items()}
        return cls(decoded, {name: unquote(value) for name, value in query.items()}, key_id)

    def pin(self, environ: Mapping[str, str]) -> str | None:
        """The user PIN: `pin-value`, or what `pin-source` points to (`env:VAR`, `file:/path`);
        None when neither is given (a token without login).

        Raises TokenKeyError naming the variable or file when it cannot be read.
        """
        if "pin-value" in self.query:
            return self.query["pin-value"]
        source = self.query.get("pin-source")
        if source is None:
            return None
        scheme, _, name = source.partition(":")
        if scheme == "env" and name:
            if name not in environ:
                raise TokenKeyError(f"pin-source: environment variable {name} is not set")
            return environ[name]
        if scheme == "file" and name:
            try:
                return Path(name.removeprefix("//")).read_text().strip()
            except OSError as error:
                raise TokenKeyError(f"pin-source: cannot read {name}: {error.strerror or error}") from None
        raise TokenKeyError("pin-source must be env:VAR or file:/path")

    def describe(self) -> str:
        """The URI's key and token, without the PIN, for messages."""
        parts = [f"{name}={value}" for name, value in self.path.items()]
        return f"pkcs11:{';'.join(parts)}"


@contextlib.contextmanager
def open_pkcs11_key(
    uri: str | Pkcs11Uri,
    *,
    environ: Mapping[str, str] | None = None,
    kid: str | None = None,
    alg: str | None = None,
) -> Iterator[SigningKey]:
    """A signing key for the token key `uri` names, usable until the block ends (the token
    session is then closed). `environ` is where `pin-source=env:VAR` looks (none if omitted).

    Raises TokenKeyError (bad URI, binding or module missing, no such token or key, wrong PIN,
    no public key object beside the private one); KeyFormatError, WeakKeyError or
    UnsupportedAlgorithmError as for any key.
    """
    parsed = uri if isinstance(uri, Pkcs11Uri) else Pkcs11Uri.parse(uri)
    pin = parsed.pin(environ or {})
    p11 = _binding()
    with _token_errors(parsed, p11):
        token = _token(parsed, p11)
        with token.open(user_pin=pin) as session:
            private = session.get_key(p11.ObjectClass.PRIVATE_KEY, **_key_search(parsed))
            public_key = _public_key(session, private, p11)
            yield held_signing_key(
                private, public_key, lambda spec: _token_signer(spec, private, parsed, p11), kid=kid, alg=alg
            )


def _attributes(text: str, separator: str, known: frozenset[str], where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in filter(None, text.split(separator)):
        name, equals, value = item.partition("=")
        if not equals or name not in known:
            raise TokenKeyError(f"the pkcs11: URI {where} attribute {name!r} is not understood here")
        if name in found:
            raise TokenKeyError(f"the pkcs11: URI repeats the {where} attribute {name!r}")
        found[name] = value
    return found


def _binding() -> Any:
    try:
        import pkcs11
    except ImportError as error:
        raise TokenKeyError("pkcs11: keys need python-pkcs11: pip install 'agentdex[pkcs11]'") from error
    return pkcs11


@contextlib.contextmanager
def _token_errors(uri: Pkcs11Uri, p11: Any) -> Iterator[None]:
    # The binding's errors name PKCS#11 return codes; say which URI part they concern instead.
    try:
        yield
    except p11.exceptions.PinIncorrect:
        raise TokenKeyError(f"{uri.describe()}: the token refused the PIN") from None
    except p11.exceptions.NoSuchToken:
        raise TokenKeyError(f"{uri.describe()}: no such token in {uri.query['module-path']}") from None
    except p11.exceptions.NoSuchKey:
        raise TokenKeyError(f"{uri.describe()}: no private key with this object/id in the token") from None
    except p11.exceptions.MultipleObjectsReturned:
        raise TokenKeyError(f"{uri.describe()}: several keys match; add id= or object= to pick one") from None
    except p11.exceptions.PKCS11Error as error:
        raise TokenKeyError(f"{uri.describe()}: the token failed: {type(error).__name__}") from None


def _token(uri: Pkcs11Uri, p11: Any) -> pkcs11.Token:
    try:
        library = p11.lib(uri.query["module-path"])
    except (RuntimeError, OSError) as error:  # the library could not be loaded or initialised
        raise TokenKeyError(f"module-path {uri.query['module-path']}: cannot load it: {error}") from None
    serial = uri.path["serial"].encode() if "serial" in uri.path else None
    tokens = [
        token
        for token in library.get_tokens(token_label=uri.path.get("token"), token_serial=serial)
        if all(getattr(token, field) == uri.path[name] for name, field in _TOKEN_FIELDS.items() if name in uri.path)
    ]
    if len(tokens) != 1:
        which = "no token matches" if not tokens else f"{len(tokens)} tokens match"
        raise TokenKeyError(f"{uri.describe()}: {which} in {uri.query['module-path']}")
    return tokens[0]


def _key_search(uri: Pkcs11Uri) -> dict[str, Any]:
    search: dict[str, Any] = {}
    if "object" in uri.path:
        search["label"] = uri.path["object"]
    if uri.key_id is not None:
        search["id"] = uri.key_id
    return search


def _public_key(session: Any, private: Any, p11: Any) -> Any:
    attribute, key_types = p11.Attribute, p11.KeyType
    if private.key_type == key_types.RSA:  # an RSA private key object carries its public half
        modulus = int.from_bytes(private[attribute.MODULUS], "big")
        exponent = int.from_bytes(private[attribute.PUBLIC_EXPONENT], "big")
        return rsa.RSAPublicNumbers(exponent, modulus).public_key()
    public = _public_object(session, private, p11)
    if private.key_type == key_types.EC_EDWARDS:
        point = public[attribute.EC_POINT]
        # CKA_EC_POINT is a DER OCTET STRING (PKCS#11 3.0 §2.3.5); some tokens store it raw.
        raw = point[2:] if len(point) == 34 and point[:2] == b"\x04\x20" else point
        return ed25519.Ed25519PublicKey.from_public_bytes(raw)
    from pkcs11.util.ec import encode_ec_public_key

    return serialization.load_der_public_key(encode_ec_public_key(public))


def _public_object(session: Any, private: Any, p11: Any) -> Any:
    key_id = private[p11.Attribute.ID]
    search = {"id": key_id} if key_id else {"label": private.label}
    try:
        return session.get_key(p11.ObjectClass.PUBLIC_KEY, **search)
    except p11.exceptions.NoSuchKey:
        raise TokenKeyError(
            "the token holds no public key object with the private key's id (or label); "
            "its public key decides the kid and lets verifiers check the signature"
        ) from None


def _token_signer(spec: AlgorithmSpec, private: Any, uri: Pkcs11Uri, p11: Any) -> Signer:
    mechanism, param = _mechanism(spec, p11)
    prehash = spec.key_type not in (KeyType.ED25519, KeyType.RSA)  # CKM_ECDSA signs a digest

    def sign(signing_input: bytes) -> bytes:
        data = _digest(spec, signing_input) if prehash else signing_input
        with _token_errors(uri, p11):
            signature = bytes(private.sign(data, mechanism=mechanism, mechanism_param=param))
        if spec.signature_size is not None and len(signature) != spec.signature_size:
            raise TokenKeyError(f"{uri.describe()}: the token returned a {len(signature)}-byte signature")
        return signature

    return sign


def _mechanism(spec: AlgorithmSpec, p11: Any) -> tuple[Any, Any]:
    mechanisms = p11.Mechanism
    if spec.key_type is KeyType.ED25519:
        return mechanisms.EDDSA, None
    if spec.key_type is not KeyType.RSA:
        return mechanisms.ECDSA, None
    bits = spec.digest().digest_size * 8  # type: ignore[misc]
    if not spec.pss:
        return getattr(mechanisms, f"SHA{bits}_RSA_PKCS"), None
    # RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash output.
    hash_mechanism, mgf = getattr(mechanisms, f"SHA{bits}"), getattr(p11.MGF, f"SHA{bits}")
    return getattr(mechanisms, f"SHA{bits}_RSA_PKCS_PSS"), (hash_mechanism, mgf, bits // 8)


def _digest(spec: AlgorithmSpec, data: bytes) -> bytes:
    digest = hashes.Hash(spec.digest())  # type: ignore[misc]
    digest.update(data)
    return digest.finalize()
