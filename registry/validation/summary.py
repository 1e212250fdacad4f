"""The denormalised search fields of a valid card of any version (`summarize_card`).

One shape for every version, so the catalogue indexes 0.1, 0.2, 0.3, 1.0 and hybrid cards alike:
- interfaces: v1.0 `supportedInterfaces` with their `tenant` (for a hybrid too: its 0.3 fields
  are derived from them); 0.x the main `url` with `preferredTransport` (default JSONRPC, §5.5), then
  `additionalInterfaces`, each carrying the card's protocol version;
- protocol versions: as declared, in order, without repeats (v1.0 per interface, plus a hybrid's
  top-level `protocolVersion`); a 0.2 card without one counts as "0.2.0", a 0.1 card as "0.1";
- capabilities: 0.3's top-level `supportsAuthenticatedExtendedCard` is 1.0's `extendedAgentCard`.
Fields of the wrong type read as absent, so summarising never fails on a card that slipped through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from registry.validation.detection import detect
from registry.validation.transport_rules import DEFAULT_TRANSPORT

CAPABILITY_NAMES = ("streaming", "pushNotifications", "extendedAgentCard")


class InterfaceSummary(NamedTuple):
    url: str
    binding: str  # "JSONRPC", "GRPC", "HTTP+JSON" or an extension's name
    protocol_version: str | None
    tenant: str | None = None  # v1.0 AgentInterface.tenant: clients send it with every request


@dataclass(frozen=True)
class SkillSummary:
    id: str
    name: str
    description: str
    tags: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    input_modes: list[str] = field(default_factory=list)
    output_modes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CardSummary:
    name: str
    description: str
    version: str
    provider_org: str | None
    provider_url: str | None
    protocol_versions: list[str]
    interfaces: list[InterfaceSummary]
    capabilities: dict[str, bool]
    default_input_modes: list[str]
    default_output_modes: list[str]
    documentation_url: str | None
    icon_url: str | None
    skills: list[SkillSummary]
    signatures_count: int


def summarize_card(card: dict[str, Any]) -> CardSummary:
    """Extract the search fields of a card that `validate_card` accepted."""
    detection, _ = detect(card)
    flavor = detection.flavor or ""
    provider = _object(card.get("provider"))
    input_modes, output_modes = _strings(card.get("defaultInputModes")), _strings(card.get("defaultOutputModes"))
    return CardSummary(
        name=_text(card.get("name")) or "",
        description=_text(card.get("description")) or "",
        version=_text(card.get("version")) or "",
        provider_org=_text(provider.get("organization")),
        provider_url=_text(provider.get("url")),
        protocol_versions=_protocol_versions(card, flavor, detection.protocol_version),
        interfaces=_interfaces(card, flavor, detection.protocol_version),
        capabilities=_capabilities(card),
        default_input_modes=input_modes,
        default_output_modes=output_modes,
        documentation_url=_text(card.get("documentationUrl")),
        icon_url=_text(card.get("iconUrl")),
        skills=[_skill(skill, input_modes, output_modes) for skill in _objects(card.get("skills"))],
        signatures_count=len(card["signatures"]) if isinstance(card.get("signatures"), list) else 0,
    )


def _interfaces(card: dict[str, Any], flavor: str, card_version: str | None) -> list[InterfaceSummary]:
    if flavor.startswith("1.0"):
        return [
            InterfaceSummary(
                url,
                _text(entry.get("protocolBinding")) or "",
                _text(entry.get("protocolVersion")),
                _text(entry.get("tenant")) or None,  # proto3: an empty tenant is no tenant
            )
            for entry in _objects(card.get("supportedInterfaces"))
            if (url := _text(entry.get("url")))
        ]
    found: list[InterfaceSummary] = []
    main_url = _text(card.get("url"))
    if main_url:
        found.append(
            InterfaceSummary(main_url, _text(card.get("preferredTransport")) or DEFAULT_TRANSPORT, card_version)
        )
    for entry in _objects(card.get("additionalInterfaces")):
        url, transport = _text(entry.get("url")), _text(entry.get("transport")) or DEFAULT_TRANSPORT
        if url and InterfaceSummary(url, transport, card_version) not in found:
            found.append(InterfaceSummary(url, transport, card_version))
    return found


def _protocol_versions(card: dict[str, Any], flavor: str, card_version: str | None) -> list[str]:
    declared: list[str | None] = []
    if flavor.startswith("1.0"):
        declared += [_text(entry.get("protocolVersion")) for entry in _objects(card.get("supportedInterfaces"))]
        declared.append(_text(card.get("protocolVersion")))  # a hybrid's 0.3 view
    else:
        declared.append(card_version)
    return list(dict.fromkeys(version for version in declared if version))


def _capabilities(card: dict[str, Any]) -> dict[str, bool]:
    declared = _object(card.get("capabilities"))
    capabilities = {name: declared.get(name) is True for name in CAPABILITY_NAMES}
    if card.get("supportsAuthenticatedExtendedCard") is True:
        capabilities["extendedAgentCard"] = True
    return capabilities


def _skill(skill: dict[str, Any], input_modes: list[str], output_modes: list[str]) -> SkillSummary:
    # §5.5.4: a skill's modes override the card's defaults; absent or empty means the defaults.
    return SkillSummary(
        id=_text(skill.get("id")) or "",
        name=_text(skill.get("name")) or "",
        description=_text(skill.get("description")) or "",
        tags=_strings(skill.get("tags")),
        examples=_strings(skill.get("examples")),
        input_modes=_strings(skill.get("inputModes")) or list(input_modes),
        output_modes=_strings(skill.get("outputModes")) or list(output_modes),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
