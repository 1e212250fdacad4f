"""WSGI entry point for gunicorn: `gunicorn "registry.wsgi:app"`. The schema must be migrated first
(`agentdex db upgrade`); web processes never run jobs."""

from registry.app import create_app

app = create_app()
