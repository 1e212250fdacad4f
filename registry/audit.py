"""Who did what to which entry, and when. Rows outlive the agents they mention.

`principal_id` is who acted (None: the registry itself, e.g. a scheduled job); `subject_principal_id`
whom the entry concerns when that is someone other than the actor (the previous owner of a claimed
agent, of a domain taken over or lapsed; the registrant of an entry an admin approved or
rejected): `GET /v1/audit` shows a principal the entries where they are one or the other."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)
    principal_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    subject_principal_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    action: Mapped[str] = mapped_column(String(50))
    agent_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
