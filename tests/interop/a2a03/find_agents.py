"""Finds agents through Agentdex with the official A2A Python SDK of the 0.3 generation (run by
tests/interop/test_a2a_v03_sdk.py with the interpreter of the virtualenv beside this file): it
resolves the registry's card, takes the interface the card's 0.3 fields name, sends a find-agents
message, reads the task back and tries to cancel it.

    python find_agents.py REGISTRY_URL QUERY   -> one JSON object on stdout

QUERY is text in Agentdex's query syntax, or a JSON object (a data part of filters) when it
starts with "{".
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientJSONRPCError
from a2a.types import DataPart, Message, Part, Role, TaskIdParams, TaskQueryParams, TextPart


async def main(registry_url: str, query: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, registry_url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        content = DataPart(data=json.loads(query)) if query.startswith("{") else TextPart(text=query)
        message = Message(message_id=str(uuid.uuid4()), role=Role.user, parts=[Part(root=content)])
        task, _ = await anext(aiter(client.send_message(message)))
        parts = [part.root for artifact in task.artifacts or [] for part in artifact.parts]
        found = next(part.data for part in parts if isinstance(part, DataPart))
        text = next(part.text for part in parts if isinstance(part, TextPart))
        again = await client.get_task(TaskQueryParams(id=task.id, history_length=0))
        try:
            await client.cancel_task(TaskIdParams(id=task.id))
            cancel = "canceled"
        except A2AClientJSONRPCError as error:
            cancel = error.error.code
        return {
            "card": {"url": card.url, "preferredTransport": card.preferred_transport, "version": card.protocol_version},
            "state": task.status.state.value,
            "agents": [agent["name"] for agent in found["agents"]],
            "total": found["total"],
            "text": text,
            "readBack": {"id": again.id, "state": again.status.state.value, "history": len(again.history or [])},
            "cancel": cancel,
        }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
