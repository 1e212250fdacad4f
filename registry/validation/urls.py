"""Is a string a usable absolute URL? The one URL syntax check of cards and of card URLs.

A URL passes when it is an RFC 3986 absolute URI with an authority (`scheme://host…`) whose
host is a DNS name of RFC 1123 labels (an internationalised name counts when it has an IDNA
A-label form), an IPv4 address or a bracketed IPv6 address, with a port in 1–65535. No user
credentials (`user:pw@`): a card and an agent's identity are public. Non-ASCII characters in
the path, query and fragment are accepted as an IRI (RFC 3987 §3.1: clients percent-encode
them); whitespace and control characters never are.

A template left unfilled (`https://<AGENT_HOST>/a2a`, `{{host}}`, `${HOST}`, `%HOST%`,
`AGENT_HOST`) is reported as such: a card generated from a template whose variables were
never substituted is a frequent, recognisable mistake, and its fix is not the URL grammar's.
Every placeholder shape is invalid URL syntax too, so the check costs nothing on valid URLs.

Written by hand (STYLE: only what no maintained library does): `urllib.parse` splits anything
without judging hosts, ports or characters, and `rfc3986`'s validator accepts every RFC 3986
reg-name (underscores, %-escapes) and knows no placeholders; `idna` does the IDN part.
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple

import idna

PLACEHOLDER_RULE = "url-template-placeholder"
INVALID_RULE = "url-invalid"

# RFC 3986 §3.3 pchar and "%" (escapes are checked apart), plus IRI characters (RFC 3987
# `ucschar`, `iprivate`); whitespace and formatting characters among them are refused apart.
_PCHAR = "A-Za-z0-9\\-._~!$&'()*+,;=:@%\u00a0-\ud7ff\ue000-\ufdcf\ufdf0-\ufffd\U00010000-\U0010fffd"
# An RFC 1123 name or dotted digits; label lengths, IPv4 and port ranges are checked after.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.?"
# One pass for the common case; an authority that is not `name[:port]` (IPv6, IDN, user@,
# garbage) falls to the second group and is judged by `_authority`.
_URL = re.compile(
    rf"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?:(?P<name>{_NAME})(?::(?P<port>[0-9]*))?|(?P<authority>[^/?#]*))"
    rf"(?:/[{_PCHAR}/]*)?(?:\?[{_PCHAR}/?]*)?(?:#[{_PCHAR}/?]*)?"
)
_NAME_ONLY = re.compile(_NAME)
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_MAX_LABEL, _MAX_NAME = 63, 253  # RFC 1035 §2.3.4 (the name without the root's trailing dot)
# Whitespace, C0/C1 controls, and the invisible formatting characters RFC 3987 §4.1 excludes.
_BAD_CHARACTER = re.compile(r"[\x00-\x20\x7f-\x9f\s\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_PLACEHOLDER = re.compile(
    r"<[^<>]*>"  # <AGENT_HOST>
    r"|\$?\{+[^{}]*\}+"  # {host}, {{host}}, ${HOST}
    r"|%(?![0-9A-Fa-f]{2})[A-Za-z_][A-Za-z0-9_]*%"  # %AGENT_HOST%, never a %XX escape
    r"|\[(?=[^\]]*[G-Zg-z_])[A-Za-z0-9_ \-]+\]"  # [YOUR_HOST], never an IPv6 literal
    r"|(?<=//)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?=[.:/?#]|$)"  # https://AGENT_HOST/…
)
_HOST_HINT = "RFC 1123: labels of letters, digits and inner hyphens, up to 63 characters"


class UrlProblem(NamedTuple):
    """What is wrong with a URL: `rule` is a validation rule id, `reason` a phrase for a person."""

    rule: str
    reason: str


class UrlParts(NamedTuple):
    """A URL that passed `check_url_syntax`: its scheme (lower case), host (as written, an IPv6
    address without brackets) and port (None when absent)."""

    scheme: str
    host: str
    port: int | None


def check_url_syntax(value: str) -> UrlParts | UrlProblem:
    """The URL's parts, or its problem (see the module docstring). Never raises."""
    checked = _check(value)
    if isinstance(checked, UrlProblem):
        placeholder = _PLACEHOLDER.search(value)
        if placeholder is not None:
            return UrlProblem(
                PLACEHOLDER_RULE, f"{placeholder.group()} is a template placeholder; replace it with the real value"
            )
    return checked


def _check(value: str) -> UrlParts | UrlProblem:
    match = _URL.fullmatch(value)
    if (
        match is None
        or ("%" in value and _BAD_ESCAPE.search(value))
        or (not value.isascii() and _BAD_CHARACTER.search(value))  # the grammar keeps out ASCII ones
    ):
        return _diagnose(value)
    scheme = match["scheme"].lower()
    name = match["name"]
    if name is None:
        return _authority(scheme, match["authority"])
    problem = _name_problem(name, name)
    return problem if problem is not None else _with_port(scheme, name, match["port"])


def _authority(scheme: str, authority: str) -> UrlParts | UrlProblem:
    """The slow path: an IPv6 literal, an internationalised name, credentials or a bad host."""
    if "@" in authority:
        return UrlProblem(INVALID_RULE, "it carries user credentials (user:password@); they do not belong in a URL")
    if authority.startswith("["):
        host, bracket, port_text = authority[1:].partition("]")
        if not bracket or (port_text and not port_text.startswith(":")):
            return UrlProblem(INVALID_RULE, f"{authority!r} is not a host with an optional :port")
        problem = _ipv6_problem(host)
        port_text = port_text[1:]
    else:
        host, _, port_text = authority.partition(":")
        name = host if host.isascii() else _a_labels(host)
        if not host:
            problem = UrlProblem(INVALID_RULE, "it has no host")
        elif name is None or not _NAME_ONLY.fullmatch(name):
            problem = UrlProblem(INVALID_RULE, f"the host {host!r} is not a valid host name ({_HOST_HINT})")
        else:
            problem = _name_problem(name, host)
    return problem if problem is not None else _with_port(scheme, host, port_text)


def _with_port(scheme: str, host: str, port_text: str | None) -> UrlParts | UrlProblem:
    if not port_text:
        return UrlParts(scheme, host, None)  # RFC 3986 §3.2.3: an empty port is no port
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65_535:
        return UrlProblem(INVALID_RULE, f"the port {port_text!r} is not a number from 1 to 65535")
    return UrlParts(scheme, host, int(port_text))


def _name_problem(name: str, host: str) -> UrlProblem | None:
    """Lengths and numbers of a name that has the shape of `_NAME`; `host` is how the URL wrote it."""
    if len(name) > _MAX_LABEL and (
        len(name.rstrip(".")) > _MAX_NAME or any(len(label) > _MAX_LABEL for label in name.split("."))
    ):
        return UrlProblem(INVALID_RULE, f"the host {host!r} is not a valid host name ({_HOST_HINT})")
    if name.rstrip(".")[-1:].isdigit():  # no top-level domain is numeric (RFC 3696 §2): an IPv4 address
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            return UrlProblem(INVALID_RULE, f"the host {host!r} is neither an IPv4 address nor a host name")
    return None


def _a_labels(host: str) -> str | None:
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError:
        return None


def _ipv6_problem(literal: str) -> UrlProblem | None:
    try:
        ipaddress.IPv6Address(literal)
    except ValueError:
        return UrlProblem(INVALID_RULE, f"[{literal}] is not an IPv6 address")
    if "%" in literal:  # zone ids (RFC 6874) only mean something on the host that wrote them
        return UrlProblem(INVALID_RULE, f"[{literal}] has a zone id, which only means something on one host")
    return None


def _diagnose(value: str) -> UrlProblem:
    """Why `value` failed the grammar."""
    bad = _BAD_CHARACTER.search(value)
    if bad is not None:
        return UrlProblem(INVALID_RULE, f"it contains {_describe(bad.group())}, which URLs cannot hold")
    scheme, separator, rest = value.partition("://")
    if not separator or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*", scheme):
        return UrlProblem(INVALID_RULE, "it is not an absolute URL (scheme://host/…)")
    odd = _BAD_ESCAPE.search(rest) or re.search(rf"[^{_PCHAR}/?#\[\]]", rest)
    if odd is not None:
        what = "a % that starts no %XX escape" if odd.group() == "%" else f"the character {odd.group()!r}"
        return UrlProblem(INVALID_RULE, f"it contains {what}; percent-encode it")
    return UrlProblem(INVALID_RULE, "it is not a valid URL (RFC 3986)")


def _describe(character: str) -> str:
    if character == " ":
        return "a space"
    if character < " " or "\x7f" <= character <= "\x9f":
        return f"a control character ({character!r})"
    if character.isspace():
        return f"whitespace ({character!r})"
    return f"an invisible formatting character ({character!r})"
