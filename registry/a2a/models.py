"""The tasks of the registry's own A2A agent, kept for `GetTask` in the database, which every web
process shares (a task made by one process is read by another), for a bounded time."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime

MAX_ID = 200  # task and context ids: ours are UUIDs; a client's contextId is kept up to this


class A2ATask(Base):
    """One task as the A2A v1.0 JSON `Task` (`body`, history included), its state apart for the
    conditional updates of cancelling and continuing. `principal_id`: the authenticated caller
    whose task it is (A2A v1.0 §13.1: visible to that caller only); anonymous tasks are reached by
    their unguessable id."""

    __tablename__ = "a2a_tasks"

    id: Mapped[str] = mapped_column(String(MAX_ID), primary_key=True)
    context_id: Mapped[str] = mapped_column(String(MAX_ID))
    state: Mapped[str] = mapped_column(String(40))
    principal_id: Mapped[int | None] = mapped_column(
        ForeignKey("principals.id", ondelete="CASCADE"), nullable=True, index=True
    )
    body: Mapped[bytes] = mapped_column(LargeBinary)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)
