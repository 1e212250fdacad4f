"""How agents look in the API. One shape for the list and for a single agent."""

from __future__ import annotations

import datetime as dt
from typing import Any


def _time(value: dt.datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def skill_json(skill: Any) -> dict[str, Any]:
    return {
        "id": skill.skill_id,
        "name": skill.name,
        "description": skill.description,
        "tags": skill.tags,
        "examples": skill.examples,
        "inputModes": skill.input_modes,
        "outputModes": skill.output_modes,
    }


def agent_json(agent: Any, skills: list[Any]) -> dict[str, Any]:
    provider = None
    if agent.provider_org or agent.provider_url:
        provider = {"organization": agent.provider_org, "url": agent.provider_url}
    return {
        "id": agent.id,
        "cardUrl": agent.card_url,
        "name": agent.name,
        "description": agent.description,
        "version": agent.version,
        "provider": provider,
        "documentationUrl": agent.documentation_url,
        "iconUrl": agent.icon_url,
        "protocolVersions": agent.protocol_versions,
        "interfaces": agent.interfaces,
        "capabilities": agent.capabilities,
        "defaultInputModes": agent.input_modes,
        "defaultOutputModes": agent.output_modes,
        "skills": [skill_json(s) for s in skills],
        "tags": agent.tags,
        "status": agent.status,
        "statusMessage": agent.status_message,
        "source": agent.source,
        "cardVersion": agent.card_version,
        "createdAt": _time(agent.created_at),
        "updatedAt": _time(agent.updated_at),
    }
