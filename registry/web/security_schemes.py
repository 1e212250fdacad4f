"""What a card's security schemes ask of a caller, in words, for every protocol version.

v0.2/v0.3 cards name OpenAPI-style schemes (`{"type": "apiKey", "in", "name"}`) in
`securitySchemes` and list requirements in `security` (an OR of ANDs); v1.0 wraps each scheme in
its oneof member (`{"apiKeySecurityScheme": {"location", "name"}}`) and lists requirements in
`securityRequirements` as `{"schemes": {name: {"list": [scopes]}}}`; v0.1 has only
`authentication.schemes`. The card is untrusted and may hold anything: every read is defensive and
every value stays text for the template to escape.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# v1.0 oneof member → the OpenAPI type name 0.x cards use.
V1_MEMBERS = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}
TYPE_WORDS = {
    "apiKey": "API key",
    "http": "HTTP authentication",
    "oauth2": "OAuth 2.0",
    "openIdConnect": "OpenID Connect",
    "mutualTLS": "mutual TLS",
}
MAX_SCHEMES = 20


@dataclasses.dataclass(frozen=True)
class Requirement:
    """One thing a scheme asks for: a label and a value; `url` when the value is a URL to link."""

    label: str
    value: str
    url: bool = False


@dataclasses.dataclass(frozen=True)
class SchemeView:
    name: str
    kind: str  # in words ("API key", "OAuth 2.0", …)
    description: str
    requires: tuple[Requirement, ...]


@dataclasses.dataclass(frozen=True)
class SecurityView:
    schemes: tuple[SchemeView, ...]
    # Each alternative: the schemes (with scopes) that must all be used together.
    alternatives: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]


def security_view(card: Any) -> SecurityView:
    if not isinstance(card, dict):
        return SecurityView((), ())
    schemes = card.get("securitySchemes")
    views = (
        [_scheme(str(name), spec) for name, spec in list(schemes.items())[:MAX_SCHEMES]]
        if isinstance(schemes, dict)
        else []
    )
    legacy = card.get("authentication")  # v0.1
    if isinstance(legacy, dict) and isinstance(legacy.get("schemes"), list):
        names = ", ".join(str(s) for s in legacy["schemes"][:MAX_SCHEMES])
        views.append(SchemeView("authentication", "authentication (v0.1)", "", (Requirement("schemes", names),)))
    requirements = card.get("securityRequirements", card.get("security"))
    return SecurityView(tuple(views), _alternatives(requirements))


def _scheme(name: str, spec: Any) -> SchemeView:
    if not isinstance(spec, dict):
        return SchemeView(name, "unreadable", "", ())
    member = next((key for key in V1_MEMBERS if isinstance(spec.get(key), dict)), None)
    body: dict[str, Any] = spec[member] if member else spec
    kind = V1_MEMBERS[member] if member else str(spec.get("type", ""))
    return SchemeView(
        name, TYPE_WORDS.get(kind, kind or "unknown"), _text(body.get("description")), _requires(kind, body)
    )


def _requires(kind: str, body: dict[str, Any]) -> tuple[Requirement, ...]:
    if kind == "apiKey":
        where = _text(body.get("location", body.get("in"))) or "?"
        return (Requirement(f"key in {where}", _text(body.get("name"))),)
    if kind == "http":
        found = [Requirement("scheme", _text(body.get("scheme")))]
        if body.get("bearerFormat"):
            found.append(Requirement("bearer format", _text(body["bearerFormat"])))
        return tuple(found)
    if kind == "oauth2":
        return _oauth_flows(body)
    if kind == "openIdConnect":
        return (Requirement("discovery", _text(body.get("openIdConnectUrl")), url=True),)
    if kind == "mutualTLS":
        return (Requirement("client certificate", "required"),)
    return ()


def _oauth_flows(body: dict[str, Any]) -> tuple[Requirement, ...]:
    found: list[Requirement] = []
    if body.get("oauth2MetadataUrl"):
        found.append(Requirement("metadata", _text(body["oauth2MetadataUrl"]), url=True))
    flows = body.get("flows")
    for flow, spec in flows.items() if isinstance(flows, dict) else ():
        if not isinstance(spec, dict):
            continue
        for key in ("authorizationUrl", "tokenUrl", "deviceAuthorizationUrl"):
            if spec.get(key):
                found.append(Requirement(f"{flow} {key}", _text(spec[key]), url=True))
        scopes = spec.get("scopes")
        if isinstance(scopes, dict) and scopes:
            found.append(Requirement(f"{flow} scopes", ", ".join(str(s) for s in list(scopes)[:50])))
    return tuple(found)


def _alternatives(requirements: Any) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]:
    if not isinstance(requirements, list):
        return ()
    alternatives = []
    for requirement in requirements[:MAX_SCHEMES]:
        if not isinstance(requirement, dict):
            continue
        schemes: dict[Any, Any] = (
            requirement["schemes"] if isinstance(requirement.get("schemes"), dict) else requirement
        )
        alternatives.append(tuple((str(name), _scopes(scopes)) for name, scopes in schemes.items()))
    return tuple(alternatives)


def _scopes(value: Any) -> tuple[str, ...]:
    if isinstance(value, dict):  # v1.0 StringList
        value = value.get("list")
    return tuple(str(scope) for scope in value) if isinstance(value, list) else ()


def _text(value: Any) -> str:
    return "" if value is None else str(value)
