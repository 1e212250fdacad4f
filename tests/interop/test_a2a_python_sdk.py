"""The official A2A Python SDK's 1.x client resolves the registry's card (verifying its signature
with the registry's JWKS) and finds agents over each binding the card lists; the SDK's own error
types come back for what the agent refuses."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types import CancelTaskRequest, GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, TaskNotFoundError
from a2a.utils.signing import create_signature_verifier
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct, Value
from jwt.api_jwk import PyJWK

BINDINGS = ["JSONRPC", "HTTP+JSON"]


async def connect(registry_url: str, binding: str) -> Client:
    """A client of the card's `binding` interface; the card's signature checked on the way."""
    jwks = httpx.get(f"{registry_url}/.well-known/jwks.json").json()
    keys = {key["kid"]: PyJWK(key) for key in jwks["keys"]}
    verifier = create_signature_verifier(lambda kid, jku: keys[kid], ["EdDSA", "ES256"])
    config = ClientConfig(streaming=False, supported_protocol_bindings=[binding])
    return await ClientFactory(config).create_from_url(registry_url, signature_verifier=verifier)


def message(text: str | None = None, data: dict[str, Any] | None = None, **fields: Any) -> SendMessageRequest:
    part = Part(text=text) if text is not None else Part(data=Value(struct_value=_struct(data or {})))
    return SendMessageRequest(
        message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[part], **fields)
    )


def _struct(data: dict[str, Any]) -> Struct:
    struct = Struct()
    struct.update(data)
    return struct


async def send(client: Client, request: SendMessageRequest) -> Task:
    async for event in client.send_message(request):
        assert event.HasField("task")
        return event.task
    raise AssertionError("no answer")


def found(task: Task) -> tuple[dict[str, Any], str]:
    """The artifact's data part and text part."""
    parts = [MessageToDict(part) for artifact in task.artifacts for part in artifact.parts]
    return next(p["data"] for p in parts if "data" in p), next(p["text"] for p in parts if "text" in p)


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_python_client_finds_agents_over_each_binding_of_the_card(seeded_registry: str, binding: str) -> None:
    async def scenario() -> None:
        client = await connect(seeded_registry, binding)
        task = await send(client, message("tag:weather forecast"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        data, text = found(task)
        assert [agent["name"] for agent in data["agents"]] == ["Weather Agent"]
        assert data["agents"][0]["matchedSkills"][0]["tags"] == ["weather", "forecast"]
        assert data["total"] == 1 and data["nextCursor"] is None and "Weather Agent" in text
        again = await client.get_task(GetTaskRequest(id=task.id))
        assert again.id == task.id and found(again) == (data, text)
        assert [MessageToDict(p) for p in again.history[0].parts] == [{"text": "tag:weather forecast"}]
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task.id))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=str(uuid.uuid4())))
        await client.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_python_client_sends_filters_as_data_and_pages_with_the_cursor(seeded_registry: str, binding: str) -> None:
    async def scenario() -> None:
        client = await connect(seeded_registry, binding)
        first, _ = found(await send(client, message(data={"limit": 2})))
        assert len(first["agents"]) == 2 and first["total"] == 2 and first["nextCursor"]
        rest, text = found(await send(client, message(data={"limit": 2, "cursor": first["nextCursor"]})))
        assert rest["total"] == 3 and rest["nextCursor"] is None and "after 2 on earlier pages" in text
        names = {agent["name"] for agent in first["agents"] + rest["agents"]}
        assert names == {"Weather Agent", "Currency Agent", "Translator Agent"}
        with pytest.raises(InvalidParamsError, match="health: takes one of"):
            await send(client, message(data={"health": "sideways"}))
        await client.close()

    asyncio.run(scenario())


def test_the_cards_interfaces_answer_the_same_agents(seeded_registry: str) -> None:
    async def names(binding: str) -> list[str]:
        client = await connect(seeded_registry, binding)
        data, _ = found(await send(client, message("translation OR currency is:unsigned")))
        await client.close()
        return [agent["name"] for agent in data["agents"]]

    by_binding = [asyncio.run(names(binding)) for binding in BINDINGS]
    assert by_binding[0] == by_binding[1] and set(by_binding[0]) >= {"Currency Agent", "Translator Agent"}
