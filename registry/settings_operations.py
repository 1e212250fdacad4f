"""Settings for operating Agentdex (issue 35): metrics, traces, log format, change events."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from registry.settings_env import SettingsError, env_float, env_int

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
    # Change events: how often a worker fans the outbox out to the subscribers, and how many at a time.
    events_tick: float = 1.0
    events_batch: int = 500
    # Shared by every process of one host that should be counted together (`registry.metrics.multiprocess`).
    metrics_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.metrics not in METRICS_MODES:
            raise SettingsError(f"AGENTDEX_METRICS={self.metrics!r} is not one of {', '.join(METRICS_MODES)}")
        if self.log_format not in LOG_FORMATS:
            raise SettingsError(f"AGENTDEX_LOG_FORMAT={self.log_format!r} is not one of {', '.join(LOG_FORMATS)}")
        if self.otlp_endpoint is not None:
            from registry.observability.tracing import check_tracing_endpoint  # the `otel` extra, looked up

            check_tracing_endpoint(self.otlp_endpoint)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OperationsSettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        return cls(
            metrics=env.get("AGENTDEX_METRICS", cls.metrics).strip().lower() or cls.metrics,
            log_format=env.get("AGENTDEX_LOG_FORMAT", cls.log_format).strip().lower() or cls.log_format,
            otlp_endpoint=(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip() or None,
            events_tick=env_float(env, "AGENTDEX_EVENTS_TICK", cls.events_tick),
            events_batch=env_int(env, "AGENTDEX_EVENTS_BATCH", cls.events_batch),
            metrics_dir=Path(directory) if (directory := env.get("AGENTDEX_METRICS_DIR", "").strip()) else None,
        )
