"""Settings for operating Agentdex (issue 35): metrics, traces, log format, change events."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from registry.settings_env import SettingsError

METRICS_MODES = ("on", "off", "token")
LOG_FORMATS = ("text", "json")


@dataclasses.dataclass(frozen=True)
class OperationsSettings:
    """`metrics`: `/metrics` served to anyone (`on`), not at all (`off`), or only to an admin or
    `metrics:read` token (`token`). `otlp_endpoint`: traces are exported there when set (the
    standard `OTEL_EXPORTER_OTLP_ENDPOINT`); nothing of OpenTelemetry is imported otherwise."""

    metrics: str = "on"
    log_format: str = "text"
    otlp_endpoint: str | None = None

    def __post_init__(self) -> None:
        if self.metrics not in METRICS_MODES:
            raise SettingsError(f"AGENTDEX_METRICS={self.metrics!r} is not one of {', '.join(METRICS_MODES)}")
        if self.log_format not in LOG_FORMATS:
            raise SettingsError(f"AGENTDEX_LOG_FORMAT={self.log_format!r} is not one of {', '.join(LOG_FORMATS)}")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OperationsSettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        return cls(
            metrics=env.get("AGENTDEX_METRICS", cls.metrics).strip().lower() or cls.metrics,
            log_format=env.get("AGENTDEX_LOG_FORMAT", cls.log_format).strip().lower() or cls.log_format,
            otlp_endpoint=(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip() or None,
        )
