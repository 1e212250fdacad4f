"""A real A2A agent with push notifications, built with the official `a2a-sdk` 1.x, on loopback.

The SDK's own `BasePushNotificationSender` delivers the notifications: for every task event it
POSTs a `StreamResponse` to the push config's URL with the config's token in
`X-A2A-Notification-Token`. Its httpx client records what it sent (`sent`), so a test can compare
what the agent pushed with what the client's webhook received through the relay.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from tests.support.a2a_agents import serve_in_thread
from tests.support.cards import make_card

AGENT_PATH = "/a2a"


class PushSdkAgent:
    """An SDK agent whose task runs submit -> working -> artifact -> completed, pushing each step."""

    def __init__(self, name: str = "Push Agent") -> None:
        self.name = name
        self.sent: list[tuple[str, bytes]] = []  # (url, body) of every push the SDK sent, in order
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port = int(self._sock.getsockname()[1])
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def card_dict(self) -> dict[str, Any]:
        return make_card(self.name, tags=["push"], url=self.base_url + AGENT_PATH, push=True)

    def close(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            assert self._thread is not None
            self._thread.join(timeout=10)
        self._sock.close()

    def _start(self) -> None:
        self._server, self._thread = serve_in_thread(self._app(), self._sock, "the SDK push agent")

    def _app(self) -> Any:
        import httpx
        from a2a.server.request_handlers import DefaultRequestHandler
        from a2a.server.routes import create_agent_card_routes
        from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
        from a2a.server.tasks import BasePushNotificationSender, InMemoryPushNotificationConfigStore, InMemoryTaskStore
        from a2a.types import AgentCard
        from google.protobuf.json_format import ParseDict
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        async def record(request: httpx.Request) -> None:
            self.sent.append((str(request.url), request.content))

        card = ParseDict(self.card_dict(), AgentCard())
        store = InMemoryPushNotificationConfigStore()
        sender = BasePushNotificationSender(httpx.AsyncClient(event_hooks={"request": [record]}), store)
        handler = DefaultRequestHandler(
            _executor(), InMemoryTaskStore(), card, push_config_store=store, push_sender=sender
        )
        dispatcher = JsonRpcDispatcher(handler)

        async def rpc(request: Request) -> Response:
            return await dispatcher.handle_requests(request)

        return Starlette(routes=[Route(AGENT_PATH, rpc, methods=["POST"]), *create_agent_card_routes(card)])


def _executor() -> Any:
    from a2a.helpers import new_task
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types import Part, TaskState

    class ReportExecutor(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            if context.current_task is None:  # the SDK wants the Task before any update of it
                await event_queue.enqueue_event(
                    new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED)
                )
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.start_work()
            await updater.add_artifact([Part(text="the report")], name="report")
            await updater.complete()

        async def cancel(self, context: Any, event_queue: Any) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    return ReportExecutor()


async def send_with_push(agent: PushSdkAgent, push_url: str, token: str, text: str = "make the report") -> Any:
    """As a client would: one message, with the relay URL and token as the push notification config."""
    import uuid

    from a2a.client import ClientConfig, create_client
    from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest, TaskPushNotificationConfig
    from google.protobuf.json_format import ParseDict

    config = ClientConfig(
        streaming=False, push_notification_config=TaskPushNotificationConfig(url=push_url, token=token)
    )
    client = await create_client(ParseDict(agent.card_dict(), AgentCard()), config)
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    results = [event async for event in client.send_message(SendMessageRequest(message=message))]
    await client.close()
    return results
