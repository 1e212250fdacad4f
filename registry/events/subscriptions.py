"""Change-event subscriptions: anyone with a token subscribes a webhook to event types, for every
agent or those with given tags and/or owner. Each is a relay subscription of kind `events` (the
target, its credentials, the status, the delivery log) plus an `event_subscriptions` row, written
in one transaction. Anyone but the owner (or an admin) gets 404, as with the relay.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, insert, select
from sqlalchemy.orm import Session, sessionmaker

from registry import errors
from registry.auth import Actor, Principal
from registry.catalog import normalize_tag
from registry.change_events import EVENT_TYPES, PREFIX
from registry.events.models import EventSubscription
from registry.relay import SubscriptionRequest as TargetRequest
from registry.relay import SubscriptionService

KIND = "events"
ID_PREFIX = "evs_"
MAX_TAGS = 32
ES = EventSubscription


@dataclasses.dataclass(frozen=True)
class EventSubscriptionRequest:
    target_url: str
    types: Sequence[str]
    tags: Sequence[str] = ()
    owner: str | None = None  # a principal's name
    target_token: str | None = None
    target_authorization: str | None = None


@dataclasses.dataclass(frozen=True)
class Subscribed:
    """A subscription: its relay row (target, status, times) and what it follows."""

    target: Row[Any]
    types: list[str]
    tags: list[str]
    owner: str | None


@dataclasses.dataclass(frozen=True)
class SubscribedPage:
    items: Sequence[Subscribed]
    next_cursor: str | None


def event_types(given: object) -> list[str]:
    """The types asked for, each in full (`io.agentdex.agent.registered`) or short (`registered`).
    Raises InvalidRequest."""
    if not isinstance(given, list) or not given or not all(isinstance(t, str) for t in given):
        raise errors.InvalidRequest("types must be a non-empty list of event types", {"field": "types"})
    full = [t if t.startswith(PREFIX) else PREFIX + t for t in given]
    if unknown := sorted(set(full) - set(EVENT_TYPES)):
        raise errors.InvalidRequest(
            f"unknown event types {unknown}; known: {list(EVENT_TYPES)}", {"field": "types", "known": list(EVENT_TYPES)}
        )
    return sorted(set(full), key=EVENT_TYPES.index)


class EventSubscriptions:
    def __init__(self, sessions: sessionmaker[Session], targets: SubscriptionService) -> None:
        """`targets`: the relay's subscriptions, which hold each one's target and deliver to it."""
        self._sessions = sessions
        self._targets = targets

    def create(self, actor: Actor, request: EventSubscriptionRequest, *, source: str) -> Subscribed:
        """`source`: the registry's public URL, the events' CloudEvents `source`. Raises InvalidRequest,
        OutboundRefused (target)."""
        types = event_types(list(request.types))
        tags = sorted({normalize_tag(tag) for tag in request.tags} - {""})
        if len(tags) > MAX_TAGS:
            raise errors.InvalidRequest(f"filter.tags takes at most {MAX_TAGS} tags", {"field": "filter.tags"})
        owner_id = self._principal_id(request.owner) if request.owner is not None else None
        target = TargetRequest(
            agent_id="",
            target_url=request.target_url,
            target_token=request.target_token,
            target_authorization=request.target_authorization,
        )

        def attach(session: Session, pk: int) -> None:
            values = {"pk": pk, "types": types, "tags": tags, "owner_id": owner_id, "source": source}
            session.execute(insert(ES).values(values))

        row = self._targets.create_sink(actor, target, kind=KIND, prefix=ID_PREFIX, attach=attach)
        return Subscribed(row, types, tags, request.owner)

    def get(self, actor: Actor, sub_id: str) -> Subscribed:
        """Raises NotFound (also for someone else's subscription)."""
        return self._with_filters([self._targets.get(actor, sub_id, kind=KIND)])[0]

    def list(self, actor: Actor, *, limit: int, cursor: str | None) -> SubscribedPage:
        """The caller's subscriptions, newest first (an admin sees everyone's)."""
        page = self._targets.list(actor, limit=limit, cursor=cursor, kind=KIND)
        return SubscribedPage(self._with_filters(page.items), page.next_cursor)

    def set_status(self, actor: Actor, sub_id: str, status: str) -> Subscribed:
        """Enable (e.g. after the target answered 410) or disable delivery. Raises NotFound, InvalidRequest."""
        return self._with_filters([self._targets.set_status(actor, sub_id, status, kind=KIND)])[0]

    def delete(self, actor: Actor, sub_id: str) -> None:
        """No more events; undelivered ones are dead-lettered. Raises NotFound."""
        self._targets.delete(actor, sub_id, kind=KIND)

    def _with_filters(self, rows: Sequence[Row[Any]]) -> Sequence[Subscribed]:
        if not rows:
            return []
        stmt = select(ES.pk, ES.types, ES.tags, Principal.name).outerjoin(Principal, Principal.id == ES.owner_id)
        with self._sessions() as session:
            kept = {row.pk: row for row in session.execute(stmt.where(ES.pk.in_([row.pk for row in rows])))}
        return [Subscribed(row, kept[row.pk].types, kept[row.pk].tags, kept[row.pk].name) for row in rows]

    def _principal_id(self, name: str) -> int:
        with self._sessions() as session:
            principal_id = session.scalar(select(Principal.id).where(Principal.name == name))
        if principal_id is None:
            raise errors.InvalidRequest(f"no principal named {name!r}", {"field": "filter.owner"})
        return int(principal_id)
