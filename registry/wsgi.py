"""WSGI entry point for a production server, e.g.
`granian --interface wsgi --workers 2 registry.wsgi:app` or `gunicorn registry.wsgi:app`.
The schema must be migrated first (`agentdex db upgrade`); web processes never run jobs."""

from registry import heap
from registry.app import create_app
from registry.container import build_services
from registry.observability import configure_logging
from registry.settings import Settings

settings = Settings.from_env()
configure_logging(settings.operations.log_format)
app = create_app(services=build_services(settings, long_running=True))
heap.settle()
