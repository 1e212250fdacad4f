"""What the relay reports to a caller; each error also subclasses the generic one whose HTTP status it shares."""

from __future__ import annotations

from registry.errors import Conflict, InvalidRequest, RegistryError


class RelayError(RegistryError):
    """Root of the relay domain's errors."""

    code = "relay_error"


class TaskMismatch(RelayError, Conflict):
    """A push notification names another task than the relay subscription's."""

    code = "task_mismatch"


class ReplayedNotification(RelayError, Conflict):
    """A push notification's JWT id (`jti`) was seen before."""

    code = "replayed"


class InvalidNotification(RelayError, InvalidRequest):
    """A push notification body is not an A2A StreamResponse or Task."""

    code = "invalid_notification"


class PushNotSupported(RelayError, InvalidRequest):
    """The agent's card does not say `capabilities.pushNotifications: true`."""

    code = "push_not_supported"
