"""What a change-event subscription adds to its relay subscription (kind `events`, one row each):
which event types it wants and the filter that picks the agents."""

from __future__ import annotations

from sqlalchemy import JSON, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base


class EventSubscription(Base):
    """`pk` is the relay subscription's, which holds the target, its credentials and the status."""

    __tablename__ = "event_subscriptions"

    pk: Mapped[int] = mapped_column(
        ForeignKey("relay_subscriptions.pk", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    types: Mapped[list[str]] = mapped_column(JSON)
    tags: Mapped[list[str]] = mapped_column(JSON)  # normalised; an agent matches with any of them ([]: every agent)
    # No foreign key: a filter on an owner who is gone matches nothing, rather than everything.
    owner_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    source: Mapped[str] = mapped_column(String(2048))  # the CloudEvents `source`: the registry's public URL
