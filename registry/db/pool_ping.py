"""Pessimistic disconnect handling for PostgreSQL, paid only where it can matter: a connection
that sat idle in the pool longer than `after` seconds is pinged before use (after a restart or a
failover a quiet pool is exactly that case), rather than every checkout paying a round trip as
with `pool_pre_ping`. A connection the server dropped meanwhile fails its statement as a
disconnect, and SQLAlchemy then replaces the whole pool.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError

PING_AFTER_IDLE = 5.0  # seconds


class PingWhenIdle:
    def __init__(self, after: float = PING_AFTER_IDLE, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._after = after
        self._monotonic = monotonic

    def attach(self, engine: Engine) -> None:
        self._dialect = engine.dialect
        event.listen(engine, "checkin", self._checked_in)
        event.listen(engine, "checkout", self._checking_out)

    def _checked_in(self, _dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info["idle_since"] = self._monotonic()

    def _checking_out(self, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")  # None: connected just now
        if since is None or self._monotonic() - since < self._after:
            return
        try:
            self._dialect.do_ping(dbapi_connection)
        except self._dialect.loaded_dbapi.Error as error:
            # The pool drops this connection and checks out another (or connects anew).
            raise DisconnectionError("the database closed this pooled connection") from error
