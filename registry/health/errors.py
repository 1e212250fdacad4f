"""What health reports to a caller (translated to HTTP by `registry.api.errors`)."""

from __future__ import annotations

from registry.errors import Conflict, RegistryError


class HealthError(RegistryError):
    """Root of the health domain's errors."""

    code = "health_error"


class ProbeInProgress(HealthError, Conflict):
    """Another probe of the agent runs right now (its probe lease is held)."""

    code = Conflict.code
