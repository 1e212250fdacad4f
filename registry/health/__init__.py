"""Health: keeping the catalog true. JSON-RPC probes of each agent's own endpoints rolled up by
thresholds, and the re-crawl of its card on its own schedule. Uses the catalog and trust faces."""

from registry.health.check_series import CheckPoint, check_series
from registry.health.crawler import CrawlService
from registry.health.errors import HealthError, ProbeInProgress
from registry.health.probe import HealthProbe
from registry.health.schedule_state import ScheduleState, schedule_state
from registry.health.service import HealthCheck, HealthService
from registry.health.state import HealthPolicy
from registry.jobs import CrawlPolicy

__all__ = [
    "CheckPoint",
    "CrawlPolicy",
    "CrawlService",
    "HealthCheck",
    "HealthError",
    "HealthPolicy",
    "HealthProbe",
    "HealthService",
    "ProbeInProgress",
    "ScheduleState",
    "check_series",
    "schedule_state",
]
