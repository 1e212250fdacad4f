"""The `register-agent` skill: `POST /v1/agents` for a caller that talks A2A. It needs what that
endpoint needs, an Agentdex token with the `agents:write` scope (the card's `securitySchemes`);
a caller without one gets the task back in `auth-required` (A2A v1.0 §4.1.3), to continue it by
sending a message with the task's id and the token."""

from __future__ import annotations

from typing import Any

from registry.a2a.errors import InvalidParams
from registry.a2a.find_agents import SkillCriteria, agent_json
from registry.a2a.messages import AUTH_REQUIRED, COMPLETED, FAILED, IncomingMessage, data_part, text_part
from registry.a2a.skills import TOKEN_SCHEME, WRITE_SCOPE, Call, Outcome, artifact, command
from registry.catalog import AgentQuery, CatalogService
from registry.errors import InvalidRequest, RegistryError
from registry.outbound import OutboundRefused

FIELDS = ("url", "card", "cardUrl", "jwksUrl")


class RegisterAgent:
    def __init__(self, catalog: CatalogService) -> None:
        self._catalog = catalog

    def __call__(self, call: Call) -> Outcome:
        asked = asked_registration(call.message)
        if call.caller is None or not call.caller.can(WRITE_SCOPE):
            return _token_needed(call)
        try:
            if "card" in asked:
                snapshot = self._catalog.register_card(
                    call.caller, asked["card"], asked.get("cardUrl") or "", jwks_url=asked.get("jwksUrl")
                )
            else:
                snapshot = self._catalog.register_from_url(call.caller, asked["url"], jwks_url=asked.get("jwksUrl"))
        except (InvalidRequest, OutboundRefused):
            raise  # the request itself is wrong: the caller can fix it
        except RegistryError as error:  # the card is invalid, unsigned, taken, unreachable
            return Outcome(FAILED, message=[text_part(f"Not registered: {error.message}"), data_part(_error(error))])
        agent = agent_json(snapshot.agent, SkillCriteria.of(AgentQuery()))
        text = f"Registered {agent['name']} as {agent['id']} ({agent['cardUrl']})."
        return Outcome(COMPLETED, [artifact("agent", "The agent as registered", agent, text, call.output_modes)])


def asked_registration(message: IncomingMessage) -> dict[str, Any]:
    """What to register: {"url"} or {"card", "cardUrl"}, with "jwksUrl" if given. Raises InvalidParams."""
    said = command(message)
    if said is not None:
        return {"url": said[1]}
    fields = [data for data in message.data if isinstance(data, dict)]
    if len(fields) != 1 or len(message.data) != 1:
        raise InvalidParams('register-agent takes the text "register https://..." or one data part {"url": "..."}')
    unknown = sorted(set(fields[0]) - set(FIELDS))
    if unknown:
        raise InvalidParams(f"register-agent does not know {unknown}; it takes {list(FIELDS)}")
    asked = fields[0]
    for name in ("url", "cardUrl", "jwksUrl"):
        if asked.get(name) is not None and not isinstance(asked[name], str):
            raise InvalidParams(f"{name} must be a string")
    if "card" in asked and not (isinstance(asked["card"], dict) and asked.get("cardUrl")):
        raise InvalidParams('a card to register is {"card": {...}, "cardUrl": "where it is published"}')
    if "card" not in asked and not asked.get("url"):
        raise InvalidParams('register-agent needs {"url": "https://..."}: the agent\'s base URL or card URL')
    return asked


def _token_needed(call: Call) -> Outcome:
    lacking = "this token lacks" if call.caller is not None else "send"
    text = (
        f"Registering an agent needs an Agentdex token with the {WRITE_SCOPE} scope: {lacking} "
        f"Authorization: Bearer <token> ({WRITE_SCOPE}). Send a message with this task's id and the token to go on."
    )
    need = {"securityScheme": TOKEN_SCHEME, "scheme": "Bearer", "scopes": [WRITE_SCOPE]}
    return Outcome(AUTH_REQUIRED, message=[text_part(text), data_part(need)])


def _error(error: RegistryError) -> dict[str, Any]:
    return {"error": {"code": error.code, "message": error.message, "details": error.details}}
