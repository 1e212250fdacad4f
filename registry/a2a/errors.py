"""A2A's errors, each with what both bindings say for it: the JSON-RPC code (A2A v1.0 §9.5 and the
0.3 spec §8, with the numbers the official SDKs use) and, for HTTP+JSON, the HTTP status, the
`google.rpc.Status` name and the `ErrorInfo` reason (A2A v1.0 §11.6) — the SDK clients map the
reason back to the same error type."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar, NoReturn

from registry.errors import BadRequest
from registry.errors import InvalidRequest as RegistryInvalidRequest
from registry.outbound import OutboundRefused

log = logging.getLogger(__name__)

DOMAIN = "a2a-protocol.org"  # ErrorInfo.domain of the A2A errors
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


class A2AError(Exception):
    """Root of the errors an A2A endpoint answers. `data`: structured details (JSON-RPC `data`,
    HTTP+JSON `ErrorInfo.metadata`)."""

    code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    status: ClassVar[str] = "INTERNAL"
    reason: ClassVar[str] = "INTERNAL_ERROR"
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, data: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.data = data or {}
        super().__init__(self.message)

    def jsonrpc_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data:
            error["data"] = self.data
        return error

    def rest_error(self) -> dict[str, Any]:
        """The `google.rpc.Status` body of the HTTP+JSON binding."""
        info = {"@type": ERROR_INFO, "reason": self.reason, "domain": DOMAIN, "metadata": _strings(self.data)}
        return {"error": {"code": self.http_status, "status": self.status, "message": self.message, "details": [info]}}


def _strings(data: dict[str, Any]) -> dict[str, str]:
    # ErrorInfo.metadata is a map of strings.
    return {key: value if isinstance(value, str) else str(value) for key, value in data.items()}


class ParseError(A2AError):
    code, http_status, status, reason = -32700, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"
    default_message = "Invalid JSON payload"


class InvalidRequest(A2AError):
    code, http_status, status, reason = -32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"
    default_message = "Invalid Request"


class MethodNotFound(A2AError):
    code, http_status, status, reason = -32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND"
    default_message = "Method not found"


class InvalidParams(A2AError):
    code, http_status, status, reason = -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"
    default_message = "Invalid params"


class InternalError(A2AError):
    pass


class TaskNotFound(A2AError):
    code, http_status, status, reason = -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"
    default_message = "Task not found"


class TaskNotCancelable(A2AError):
    code, http_status, status, reason = -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"
    default_message = "Task cannot be canceled"


class PushNotificationNotSupported(A2AError):
    code, http_status, status, reason = -32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"
    default_message = "Push Notification is not supported"


class UnsupportedOperation(A2AError):
    code, http_status, status, reason = -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"
    default_message = "This operation is not supported"


class ContentTypeNotSupported(A2AError):
    code, http_status, status, reason = -32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"
    default_message = "Incompatible content types"


class VersionNotSupported(A2AError):
    code, http_status, status, reason = -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"
    default_message = "Version not supported"


class Unauthenticated(A2AError):
    """A bearer token that is not valid (A2A v1.0 §3.3.2: rejected, HTTP 401). JSON-RPC has no
    A2A code for it: -32600 with `data.reason`, the HTTP status saying the rest."""

    code, http_status, status, reason = -32600, 401, "UNAUTHENTICATED", "UNAUTHENTICATED"
    default_message = "The bearer token was not accepted"

    def __init__(self, message: str | None = None, data: dict[str, Any] | None = None) -> None:
        super().__init__(message, {"reason": "UNAUTHENTICATED", **(data or {})})


class PayloadTooLarge(InvalidRequest):
    http_status = 413
    default_message = "Payload too large"


def refusing(kind: type[A2AError], message: str) -> Callable[..., NoReturn]:
    """An operation the agent does not offer, for either binding's table: it raises a new `kind`
    each call (raising one shared instance would grow its traceback with every request)."""

    def refuse(*args: Any) -> NoReturn:
        raise kind(message)

    return refuse


def from_exception(error: Exception) -> A2AError:
    """Any error a request ran into, as A2A says it: the registry's refusals of what the caller
    sent (a bad query, a refused URL) are invalid params; anything else is internal (logged)."""
    if isinstance(error, A2AError):
        return error
    if isinstance(error, BadRequest | RegistryInvalidRequest | OutboundRefused):
        return InvalidParams(error.message, {"code": error.code, **_strings(error.details)})
    log.error("A2A request failed", exc_info=error)
    return InternalError("the registry failed unexpectedly; the error was logged")
