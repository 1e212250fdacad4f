"""Semantic rules on endpoints: URL form, transport names, and the url/transport consistency of
A2A v0.3 §5.6.4 (and its v1.0 counterpart, the `supportedInterfaces` list)."""

from __future__ import annotations

import json
from typing import Any

from registry.validation.detection import Detection, parse_version
from registry.validation.paths import object_items, pointer
from registry.validation.report import Issue, make_issue
from registry.validation.urls import INVALID_RULE, UrlProblem, check_url_syntax

Where = tuple[str | int, ...]  # a path as segments; made a JSON pointer only for an issue

CORE_TRANSPORTS = ("JSONRPC", "GRPC", "HTTP+JSON")
DEFAULT_TRANSPORT = "JSONRPC"  # §5.5: "If not specified, defaults to 'JSONRPC'"
_HTTP_SCHEMES = frozenset({"http", "https"})
# gRPC endpoints are HTTP/2 (§3.2.2); cards in the wild (a2a-java fixtures) write them as
# grpc://host:port, and the official SDKs hand the interface url to the gRPC channel as is.
_GRPC_SCHEMES = _HTTP_SCHEMES | {"grpc", "grpcs"}


def transport_issues(card: dict[str, Any], detection: Detection) -> list[Issue]:
    issues: list[Issue] = []
    flavor = detection.flavor or ""
    if flavor.startswith("1.0"):
        issues += _v1_interface_issues(card.get("supportedInterfaces"))
    if flavor == "1.0+0.3":
        issues += _compat_interface_issues(card)
    elif not flavor.startswith("1.0"):
        issues += _v03_transport_issues(card, flavor)
    issues += _descriptive_url_issues(card)
    return issues


def check_url(value: Any, where: Where, *, grpc: bool = False, required: bool = False) -> list[Issue]:
    """An absolute URL (`urls.check_url_syntax`) with an allowed scheme; plain http is only a
    warning (§4.1: HTTPS in production). `where` is the path as segments: the pointer is built
    only when there is something to say."""
    if not isinstance(value, str) or (value == "" and not required):
        return []  # wrong types are structural issues; an empty optional URL is unset
    checked = check_url_syntax(value)
    if isinstance(checked, UrlProblem):
        quoted = json.dumps(value, ensure_ascii=False)  # control characters shown escaped
        if checked.rule != INVALID_RULE:
            return [make_issue(checked.rule, pointer(*where), f"{quoted}: {checked.reason}")]
        example = "grpc://agent.example.com:443" if grpc else "https://agent.example.com/a2a"
        message = f"{quoted} is not a valid URL: {checked.reason} (a valid one looks like {example})"
        return [make_issue(checked.rule, pointer(*where), message)]
    allowed = _GRPC_SCHEMES if grpc else _HTTP_SCHEMES
    if checked.scheme not in allowed:
        return [
            make_issue(
                "url-scheme",
                pointer(*where),
                f"the {checked.scheme}: scheme is not allowed here; use "
                f"{' or '.join(sorted(allowed))} (A2A §3.1: all A2A traffic is HTTP(S))",
            )
        ]
    if checked.scheme == "http":
        return [
            make_issue(
                "url-insecure", pointer(*where), f'"{value}" is plain http; production agents must use https (A2A §4.1)'
            )
        ]
    return []


def transport_name_issues(value: Any, where: Where) -> list[Issue]:
    if not isinstance(value, str) or value in CORE_TRANSPORTS:
        return []
    same_letters = [core for core in CORE_TRANSPORTS if core.lower() == value.lower()]
    hint = (
        f'; names are case-sensitive: use "{same_letters[0]}"'
        if same_letters
        else f"; the core transports are {', '.join(CORE_TRANSPORTS)} (others are extensions, §3.2.4)"
    )
    return [make_issue("transport-unknown", pointer(*where), f'"{value}" is not a core A2A transport{hint}')]


def _v1_interface_issues(interfaces: Any) -> list[Issue]:
    issues: list[Issue] = []
    seen: set[tuple[Any, ...]] = set()
    for index, interface in object_items(interfaces):
        binding = interface.get("protocolBinding")
        issues += transport_name_issues(binding, ("supportedInterfaces", index, "protocolBinding"))
        issues += check_url(interface.get("url"), ("supportedInterfaces", index, "url"), grpc=binding == "GRPC")
        issues += _interface_version_issues(
            interface.get("protocolVersion"), ("supportedInterfaces", index, "protocolVersion")
        )
        identity = tuple(
            str(interface.get(key) or "") for key in ("url", "protocolBinding", "protocolVersion", "tenant")
        )
        if identity in seen:
            issues.append(
                make_issue(
                    "interface-duplicate",
                    pointer("supportedInterfaces", index),
                    "this interface repeats an earlier entry (same url, protocolBinding, protocolVersion and tenant)",
                )
            )
        seen.add(identity)
    return issues


def _interface_version_issues(value: Any, where: Where) -> list[Issue]:
    if not isinstance(value, str) or not value:
        return []  # missing or empty is a REQUIRED-field issue
    version = parse_version(value)
    if version is None:
        return [
            make_issue(
                "protocol-version-unknown",
                pointer(*where),
                f'"{value}" is not a Major.Minor version such as "1.0" or "0.3"',
            )
        ]
    if version[0] >= 1 and value.count(".") == 2:
        return [
            make_issue(
                "protocol-version-patch",
                pointer(*where),
                f'declare "{version[0]}.{version[1]}": patch '
                "numbers should not appear in Agent Cards and never affect compatibility "
                "(A2A v1.0 §3.6)",
            )
        ]
    return []


def _compat_interface_issues(card: dict[str, Any]) -> list[Issue]:
    """A hybrid's 0.3 view (url + preferredTransport) should be one of its 1.0 interfaces, as the
    SDK derives it from them; otherwise 0.3 and 1.0 clients are sent to different endpoints."""
    url = card.get("url")
    issues = check_url(url, ("url",), grpc=card.get("preferredTransport") == "GRPC", required=True)
    issues += transport_name_issues(card.get("preferredTransport"), ("preferredTransport",))
    transport = card.get("preferredTransport", DEFAULT_TRANSPORT)
    interfaces = [interface for _, interface in object_items(card.get("supportedInterfaces"))]
    if (
        isinstance(url, str)
        and interfaces
        and not any(i.get("url") == url and i.get("protocolBinding") == transport for i in interfaces)
    ):
        issues.append(
            make_issue(
                "compat-interface-mismatch",
                "/url",
                f'the 0.3 view points to {transport} at "{url}", which no entry of `supportedInterfaces` declares',
            )
        )
    for index, interface in object_items(card.get("additionalInterfaces")):
        issues += check_url(
            interface.get("url"), ("additionalInterfaces", index, "url"), grpc=interface.get("transport") == "GRPC"
        )
    return issues


def _v03_transport_issues(card: dict[str, Any], flavor: str) -> list[Issue]:
    preferred = card.get("preferredTransport")
    url = card.get("url")
    issues = check_url(url, ("url",), grpc=preferred == "GRPC", required=True)
    issues += transport_name_issues(preferred, ("preferredTransport",))
    if preferred is None and flavor == "0.3":
        issues.append(
            make_issue(
                "preferred-transport-missing",
                "/preferredTransport",
                "A2A §5.6.1 requires `preferredTransport`; clients will assume JSONRPC at `url`",
            )
        )
    declared = _additional_interfaces(card.get("additionalInterfaces"), issues)
    transport = DEFAULT_TRANSPORT if preferred is None else preferred
    if isinstance(url, str) and isinstance(transport, str) and "additionalInterfaces" in card:
        issues += _main_url_consistency(url, transport, declared)
    return issues


def _additional_interfaces(interfaces: Any, issues: list[Issue]) -> list[tuple[Any, Any]]:
    """Check each 0.x AgentInterface; return the (url, transport) pairs they declare."""
    declared: list[tuple[Any, Any]] = []
    for index, interface in object_items(interfaces):
        url, transport = interface.get("url"), interface.get("transport")
        issues += transport_name_issues(transport, ("additionalInterfaces", index, "transport"))
        issues += check_url(url, ("additionalInterfaces", index, "url"), grpc=transport == "GRPC", required=True)
        if (url, transport) in declared:
            issues.append(
                make_issue(
                    "interface-duplicate",
                    pointer("additionalInterfaces", index),
                    "this interface repeats an earlier entry",
                )
            )
        declared.append((url, transport))
    return declared


def _main_url_consistency(url: str, transport: str, declared: list[tuple[Any, Any]]) -> list[Issue]:
    """§5.6.4: the same URL must not declare conflicting transports, and additionalInterfaces
    should include the main url with its preferredTransport. A URL may serve several transports
    (§5.6.2), so a conflict is the main url listed only with transports other than the preferred one."""
    at_main_url = {transport_ for url_, transport_ in declared if url_ == url and isinstance(transport_, str)}
    if at_main_url and transport not in at_main_url:
        listed = ", ".join(sorted(str(t) for t in at_main_url))
        return [
            make_issue(
                "transport-conflict",
                "/url",
                f"`url` serves {transport} (preferredTransport), but "
                f"`additionalInterfaces` declares it as {listed} (A2A §5.6.4)",
            )
        ]
    if transport not in at_main_url:
        return [
            make_issue(
                "interface-completeness",
                "/additionalInterfaces",
                f"should include "
                f'{{"url": "{url}", "transport": "{transport}"}}, the main url and '
                "preferredTransport (A2A §5.6.4)",
            )
        ]
    return []


def _descriptive_url_issues(card: dict[str, Any]) -> list[Issue]:
    issues = check_url(card.get("documentationUrl"), ("documentationUrl",))
    issues += check_url(card.get("iconUrl"), ("iconUrl",))
    provider = card.get("provider")
    if isinstance(provider, dict):
        issues += check_url(provider.get("url"), ("provider", "url"))
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        for name, scheme in schemes.items():
            issues += _security_scheme_url_issues(scheme, ("securitySchemes", name))
    return issues


def _security_scheme_url_issues(scheme: Any, where: Where) -> list[Issue]:
    """URLs of OpenID Connect and OAuth 2 schemes, in the 0.x shape or inside a v1.0 wrapper."""
    if not isinstance(scheme, dict):
        return []
    issues: list[Issue] = []
    for key, value in scheme.items():
        if key.endswith("SecurityScheme") and isinstance(value, dict):
            issues += _security_scheme_url_issues(value, (*where, key))
        elif key in ("openIdConnectUrl", "oauth2MetadataUrl"):
            issues += check_url(value, (*where, key))
    flows = scheme.get("flows")
    if isinstance(flows, dict):
        for flow_name, flow in flows.items():
            if isinstance(flow, dict):
                issues += [
                    issue
                    for key, value in flow.items()
                    if key.endswith("Url")
                    for issue in check_url(value, (*where, "flows", flow_name, key))
                ]
    return issues
