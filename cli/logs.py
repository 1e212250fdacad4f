"""Logging for the long-running commands: our INFO, the libraries' chatter only when it matters."""

from __future__ import annotations

import logging

# APScheduler logs every tick and Alembic every plugin at INFO; operators need neither.
QUIET_LOGGERS = ("apscheduler", "alembic")


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
