"""The agent's skills as its card lists them, what a skill is handed and what it answers, and which
skill a message asks for.

A message names its skill in `metadata.skill` (of the message or of the request), or says it by
what it holds: `verify https://…` / `register https://…` as its text, a data part holding a card
(`{"card": {...}}`) or a card URL (`{"url": "…"}`) for `verify-card`; anything else is a search,
`find-agents`. Registering is never guessed from data alone: it writes to the catalog.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from typing import Any

from registry.a2a.errors import InvalidParams
from registry.a2a.messages import INPUT_MODES, JSON, OUTPUT_MODES, TEXT, IncomingMessage, data_part, text_part
from registry.auth import Actor

FIND_AGENTS, VERIFY_CARD, REGISTER_AGENT = "find-agents", "verify-card", "register-agent"
WRITE_SCOPE = "agents:write"
TOKEN_SCHEME = "agentdexToken"  # the card's securitySchemes entry: a bearer token of Agentdex's own
_COMMAND = re.compile(r"^\s*(verify|validate|check|register)\s+(https?://\S+)\s*$", re.IGNORECASE)
CARD_FIELDS = ("card", "url", "cardUrl")


@dataclasses.dataclass(frozen=True)
class SkillCard:
    """A skill as the registry's Agent Card describes it."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    examples: tuple[str, ...]
    needs_token: bool = False

    def card_json(self) -> dict[str, Any]:
        skill: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "tags": list(self.tags),
            "examples": list(self.examples),
            "inputModes": list(INPUT_MODES),
            "outputModes": list(OUTPUT_MODES),
        }
        if self.needs_token:
            skill["securityRequirements"] = [{"schemes": {TOKEN_SCHEME: {}}}]  # as the SDK renders an empty list
            skill["security"] = [{TOKEN_SCHEME: []}]  # 0.3 compatibility field
        return skill


SKILLS = (
    SkillCard(
        FIND_AGENTS,
        "Find agents",
        "Search the registered A2A agents. Send text: plain words search names, skills and "
        "descriptions; tag:weather, input:text/plain, output:application/json, cap:streaming, "
        "proto:1.0, health:up and is:signed filter. Or send a data part "
        '{"tags": [...], "match": "all"|"any", "q", "inputModes", "outputModes", "capabilities", '
        '"protocolVersion", "health", "signature", "limit", "cursor"}. The answer is a completed task '
        'whose artifact holds {"agents": [{"id", "name", "description", "cardUrl", "interfaces", '
        '"matchedSkills", "health", "signature"}], "total", "nextCursor"} (total: the agents answered '
        'so far, the whole count once nextCursor is null; send {"cursor": nextCursor} for more) and a '
        "short text; with no match it suggests the closest tags.",
        ("discovery", "search", "registry"),
        ("Find verified agents tagged weather that stream", "tag:currency is:up convert", '{"tags": ["weather"]}'),
    ),
    SkillCard(
        VERIFY_CARD,
        "Verify an Agent Card",
        'Validate an Agent Card and verify its signatures: send a data part {"card": {...}} '
        '(with "cardUrl" where it is published) or {"url": "https://..."}, or the text '
        '"verify https://...". The answer holds the validation report (as POST /v1/validate gives '
        "it) and the signature verdict of the registry's trust policy.",
        ("validation", "signing", "trust"),
        ("verify https://agent.example.com/.well-known/agent-card.json", '{"card": {"name": "..."}}'),
    ),
    SkillCard(
        REGISTER_AGENT,
        "Register an agent",
        'List an agent in the registry: send the text "register https://..." (its base URL or '
        'card URL), or a data part {"url": "..."} with metadata {"skill": "register-agent"}. '
        f"Needs an Agentdex token with the {WRITE_SCOPE} scope (securitySchemes.{TOKEN_SCHEME}); "
        "without one the task stops in auth-required, to be continued with the token.",
        ("registry", "registration"),
        ("register https://agent.example.com",),
        needs_token=True,
    ),
)
SKILL_IDS = tuple(skill.id for skill in SKILLS)


@dataclasses.dataclass(frozen=True)
class Call:
    """What a skill is handed: the user's message, who sent it, the output modes it accepts."""

    message: IncomingMessage
    caller: Actor | None
    output_modes: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a skill answers: the task's final (or interrupted) state, its artifacts, and the
    parts of the status message that says why it stopped where it did."""

    state: str
    artifacts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    message: list[dict[str, Any]] | None = None


def artifact(name: str, description: str, data: Any, text: str, modes: tuple[str, ...]) -> dict[str, Any]:
    """An artifact of a data part and a text part, each kept if the client accepts its mode."""
    parts = [data_part(data)] if JSON in modes else []
    parts += [text_part(text)] if TEXT in modes else []
    return {"artifactId": str(uuid.uuid4()), "name": name, "description": description, "parts": parts}


def command(message: IncomingMessage) -> tuple[str, str] | None:
    """A text message `verify URL` / `register URL`: (skill, URL)."""
    found = _COMMAND.match(message.text) if not message.data else None
    if found is None:
        return None
    return (REGISTER_AGENT if found.group(1).lower() == "register" else VERIFY_CARD), found.group(2)


def choose(message: IncomingMessage, metadata: dict[str, Any]) -> str:
    """The skill the message asks for. Raises InvalidParams for a skill the agent has not."""
    named = message.metadata.get("skill", metadata.get("skill"))
    if named is not None:
        if named not in SKILL_IDS:
            raise InvalidParams(f"metadata.skill must be one of {', '.join(SKILL_IDS)}, not {named!r}")
        return str(named)
    said = command(message)
    if said is not None:
        return said[0]
    if any(isinstance(data, dict) and data.keys() & set(CARD_FIELDS) for data in message.data):
        return VERIFY_CARD
    return FIND_AGENTS
