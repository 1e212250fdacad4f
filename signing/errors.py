"""The errors of the `signing` package: one root, one subclass per kind of failure.

Callers translate these at one edge (exit codes in `cli/exits.py`, HTTP in the registry);
they never match on message text. Bad *signatures* are not errors: `verify_card` reports
them as per-signature outcomes. Errors are for input that cannot be processed at all.
"""

from __future__ import annotations


class SigningError(Exception):
    """Root of every error raised by `signing`."""


class CardFormatError(SigningError):
    """The card is not something that can be signed or verified (not a JSON object, ...)."""


class CanonicalizationError(CardFormatError):
    """The card has no RFC 8785 canonical form (NaN, integers beyond 2**53, lone surrogates, ...)."""


class KeyFormatError(SigningError):
    """A key, PEM, JWK or JWKS could not be read (bad encoding, wrong password, unknown kty)."""


class WeakKeyError(KeyFormatError):
    """The key is too weak for any algorithm the policy allows (e.g. RSA below 2048 bits)."""


class TokenKeyError(KeyFormatError):
    """A key in a PKCS#11 token (RFC 7512 URI) could not be reached or used: bad URI, module not
    loadable, no such token or key, wrong PIN, or the token refused to sign."""


class UnsupportedAlgorithmError(SigningError):
    """The algorithm is unknown, forbidden for cards (`none`, HMAC) or not allowed for this key."""


class HeaderError(SigningError):
    """A JWS protected header given for signing is not acceptable (reserved or critical names)."""


class PolicyError(SigningError):
    """A verification policy or resolver is misconfigured (empty algorithm list, bad origin, ...)."""


class UnsafeUrlError(PolicyError):
    """A JWKS URL is not https (and http on loopback was not explicitly allowed as unsafe)."""


class KeyResolutionError(SigningError):
    """Keys could not be obtained from a source (JWKS fetch failed, invalid JWKS document)."""


class JwksFetchError(KeyResolutionError):
    """Fetching a JWKS document failed (network, status, size, content type)."""


class MalformedSignatureError(SigningError):
    """A signature entry cannot be parsed: bad base64url, non-JSON or oversized header, missing alg."""


class UnsupportedSignatureError(SigningError):
    """A signature uses something this verifier refuses: `none`/HMAC/unknown alg, `crit`, `b64: false`."""


class JsonInputError(SigningError, ValueError):
    """Text that `signing.json_input` refuses to read as JSON. `path` is the JSONPath of the place
    (`$.skills[0].name`; `$` for the text as a whole). A ValueError, as `json`'s own errors are."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


class JsonSyntaxError(JsonInputError):
    """Not JSON: bad syntax, NaN or Infinity, a number beyond double range, bytes that are not UTF-8."""


class JsonTooDeepError(JsonInputError):
    """Arrays and objects nested deeper than the reader's limit (`limit`)."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class DuplicateMemberError(JsonInputError):
    """An object repeats a member name (`name`): readers disagree on which value wins."""

    def __init__(self, message: str, path: str, name: str) -> None:
        super().__init__(message, path)
        self.name = name


class LoneSurrogateError(JsonInputError):
    """A string or member name holds an unpaired UTF-16 surrogate (`"\\ud800"`): not Unicode text."""
