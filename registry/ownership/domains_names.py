"""Domain names as the registry keeps them: lower case, IDNA (A-labels), no trailing dot, and
`host:port` only where plain http is allowed (private deployments, tests)."""

from __future__ import annotations

import ipaddress
import re
import urllib.parse

import idna

from registry.ownership.errors import InvalidDomain

PORT = re.compile(r"^(?P<host>.+):(?P<port>\d{1,5})$")


def normalize_domain(raw: str, *, allow_http: bool) -> str:
    """`Example.COM.` -> `example.com`; `bücher.example` -> `xn--bcher-kva.example`.

    Raises InvalidDomain for URLs, empty or malformed names, and for IP addresses, ports and
    single-label names unless `allow_http` (these are proven over plain http, on allowlisted
    networks only)."""
    text = raw.strip().lower()
    if not text or "/" in text or "@" in text or " " in text:
        raise InvalidDomain(f"{raw!r} is not a domain name: give the host alone, e.g. agent.example.com")
    host, port = _split_port(text)
    if port is not None and not allow_http:
        raise InvalidDomain(f"{raw!r}: a port is accepted only where AGENTDEX_ALLOW_HTTP is on; give the host alone")
    address = _address(host)
    if address is not None:
        if not allow_http:
            raise InvalidDomain(f"{raw!r} is an IP address: prove a domain name instead")
        return _with_port(f"[{address}]" if address.version == 6 else str(address), port)
    name = _idna(host.rstrip("."), raw)
    if "." not in name and not allow_http:
        raise InvalidDomain(f"{raw!r} is a single label: prove a full domain name such as example.com")
    return _with_port(name, port)


def host_of_url(url: str) -> str | None:
    """The domain an URL lies in, written as `normalize_domain` writes it: the hostname for https
    (proving a name covers all its ports), `host:port` for plain http. None when it has no host."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        hostname, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not hostname:
        return None
    try:
        if parts.scheme == "http":
            return normalize_domain(f"{_bracketed(hostname)}:{port or 80}", allow_http=True)
        return normalize_domain(_bracketed(hostname), allow_http=True)
    except InvalidDomain:
        return None


def covering_names(host: str) -> list[str]:
    """`host` and each of its parents, nearest first: `a.b.example.com:8080` -> `a.b.example.com:8080`,
    `b.example.com:8080`, `example.com:8080`, `com:8080`. An IP address has no parents."""
    name, port = _split_port(host)
    if _address(name.strip("[]")) is not None:
        return [host]
    labels = name.split(".")
    return [_with_port(".".join(labels[index:]), port) for index in range(len(labels))]


def hostname_of(domain: str) -> str:
    """The name without its port (what a DNS record is looked up under)."""
    return _split_port(domain)[0]


def is_address(domain: str) -> bool:
    return _address(hostname_of(domain).strip("[]")) is not None


def _split_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):  # [v6] or [v6]:port
        host, _, rest = text.partition("]")
        return host + "]", int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    match = PORT.match(text)
    if match is None:
        return text, None
    port = int(match["port"])
    if not 0 < port < 65536:
        raise InvalidDomain(f"{text!r}: port {port} is out of range")
    return match["host"], port


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _idna(name: str, raw: str) -> str:
    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError as error:
        raise InvalidDomain(f"{raw!r} is not a valid domain name: {error}") from error


def _with_port(host: str, port: int | None) -> str:
    return host if port is None else f"{host}:{port}"


def _bracketed(hostname: str) -> str:
    return f"[{hostname}]" if ":" in hostname else hostname
