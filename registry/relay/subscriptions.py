"""Relay subscriptions: created by a client (the `relay` scope) for an agent that pushes.

A subscription is refused unless the agent's card says `capabilities.pushNotifications: true`
(A2A v0.3 §7.5, v1.0 §3.3.4), the target URL passes the outbound policy now (it is checked again
on every delivery, DNS can change), and the client's header values are single lines. Only the
owner (or an admin) sees a subscription; anyone else gets 404, as if it did not exist.

Deleting one dead-letters its pending messages, but never waits for one: a delivery worker
recording outcomes holds its messages (and the next ones of their tasks that it makes due) and
then, if the target answered 410, disables the subscription, whose row the DELETE already holds.
Waiting for each other's rows, PostgreSQL would abort one of them. So the DELETE passes over
messages someone holds (`dead_letter_unheld`); their holder ends them or leaves them pending for
a subscription that no claim takes, and the prune job dead-letters those
(`registry.relay.operations`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Row, Update, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from registry import errors
from registry.auth import Actor
from registry.cursors import decode_cursor, encode_cursor
from registry.db.types import utcnow
from registry.outbound import OutboundConnectionError, OutboundRefused, SafeHttpClient
from registry.relay.catalog_tables import AGENTS
from registry.relay.errors import PushNotSupported
from registry.relay.models import AUTH_MODES, RelayMessage, RelaySubscription
from registry.relay.relay_tokens import hash_relay_token, new_relay_token
from registry.relay.secret_box import SecretBox
from registry.relay.task_order import IS_PENDING

MAX_TASK_ID = 200
MAX_HEADER_VALUE = 4096
S, M = RelaySubscription, RelayMessage


def new_subscription_id() -> str:
    return "sub_" + secrets.token_hex(12)


@dataclasses.dataclass(frozen=True)
class SubscriptionRequest:
    agent_id: str
    target_url: str
    task_id: str | None = None
    target_token: str | None = None
    target_authorization: str | None = None
    auth_mode: str = "token"


@dataclasses.dataclass(frozen=True)
class IssuedSubscription:
    """A subscription row and its relay token, shown once (at creation or rotation)."""

    subscription: Row[*tuple[Any, ...]]
    relay_token: str


@dataclasses.dataclass(frozen=True)
class SubscriptionPage:
    items: list[Row[*tuple[Any, ...]]]
    next_cursor: str | None


SHOWN = (S.pk, S.id, S.agent_id, S.task_id, S.target_url, S.auth_mode, S.status, S.status_reason,
         S.previous_token_until, S.created_at, S.updated_at, S.target_secrets)


class SubscriptionService:
    def __init__(self, sessions: sessionmaker[Session], http: SafeHttpClient, box: SecretBox, *,
                 token_grace: float, clock: Callable[[], dt.datetime] = utcnow,
                 new_id: Callable[[], str] = new_subscription_id,
                 on_change: Callable[[str], None] = lambda sub_id: None) -> None:
        self._sessions = sessions
        self._http = http
        self._box = box
        self._grace = dt.timedelta(seconds=token_grace)
        self._clock = clock
        self._new_id = new_id
        self._on_change = on_change  # e.g. the ingress forgets its cached row at once

    def create(self, actor: Actor, request: SubscriptionRequest) -> IssuedSubscription:
        """Raises InvalidRequest, NotFound (agent), PushNotSupported, OutboundRefused (target)."""
        _check_request(request)
        agent_pk = self._push_agent(request.agent_id)
        self._check_target(request.target_url)
        token, sub_id, now = new_relay_token(), self._new_id(), self._clock()
        with self._sessions.begin() as session:
            session.execute(insert(S).values(
                id=sub_id, owner_id=actor.principal_id, agent_pk=agent_pk, agent_id=request.agent_id,
                task_id=request.task_id, target_url=request.target_url, target_secrets=self._seal(request, sub_id),
                auth_mode=request.auth_mode, token_hash=hash_relay_token(token), status="active",
                created_at=now, updated_at=now,
            ))
        return IssuedSubscription(self.get(actor, sub_id), token)

    def get(self, actor: Actor, sub_id: str) -> Row[*tuple[Any, ...]]:
        """Raises NotFound (also for someone else's subscription)."""
        with self._sessions() as session:
            row = session.execute(select(*SHOWN, S.owner_id).where(S.id == sub_id, S.status != "deleted")).first()
        if row is None or not (actor.is_admin or row.owner_id == actor.principal_id):
            raise errors.NotFound(f"no relay subscription {sub_id!r}")
        return row

    def list(self, actor: Actor, *, limit: int, cursor: str | None) -> SubscriptionPage:
        """The caller's subscriptions, newest first (an admin sees everyone's)."""
        stmt = select(*SHOWN).where(S.status != "deleted").order_by(S.pk.desc()).limit(limit + 1)
        if not actor.is_admin:
            stmt = stmt.where(S.owner_id == actor.principal_id)
        if cursor:
            stmt = stmt.where(S.pk < decode_cursor(cursor))
        with self._sessions() as session:
            rows = list(session.execute(stmt))
        more = len(rows) > limit
        rows = rows[:limit]
        return SubscriptionPage(rows, encode_cursor(rows[-1].pk) if more else None)

    def rotate(self, actor: Actor, sub_id: str) -> IssuedSubscription:
        """A new relay token; the old one keeps working for the grace period. Raises NotFound."""
        row = self.get(actor, sub_id)
        token, now = new_relay_token(), self._clock()
        with self._sessions.begin() as session:
            session.execute(update(S).where(S.pk == row.pk).values(
                previous_token_hash=S.token_hash, previous_token_until=now + self._grace,
                token_hash=hash_relay_token(token), updated_at=now,
            ))
        self._on_change(sub_id)
        return IssuedSubscription(self.get(actor, sub_id), token)

    def set_status(self, actor: Actor, sub_id: str, status: str) -> Row[*tuple[Any, ...]]:
        """Enable (e.g. after the target answered 410) or disable delivery. Raises NotFound, InvalidRequest."""
        if status not in ("active", "disabled"):
            raise errors.InvalidRequest("status must be active or disabled")
        row = self.get(actor, sub_id)
        reason = None if status == "active" else "disabled by its owner"
        with self._sessions.begin() as session:
            session.execute(update(S).where(S.pk == row.pk).values(status=status, status_reason=reason,
                                                                   updated_at=self._clock()))
        self._on_change(sub_id)
        return self.get(actor, sub_id)

    def delete(self, actor: Actor, sub_id: str) -> None:
        """Stop relaying: the secrets are wiped and undelivered messages dead-lettered. Raises NotFound."""
        row = self.get(actor, sub_id)
        now = self._clock()
        with self._sessions.begin() as session:
            session.execute(update(S).where(S.pk == row.pk).values(
                status="deleted", status_reason="deleted by its owner", token_hash=None, previous_token_hash=None,
                target_secrets=None, updated_at=now,
            ))
            session.execute(dead_letter_unheld(RelayMessage.subscription_pk == row.pk, now))
        self._on_change(sub_id)

    def has_secrets(self, row: Row[*tuple[Any, ...]]) -> dict[str, bool]:
        """Which client credentials are stored (never their values)."""
        opened = self._box.open(row.target_secrets, row.id) if row.target_secrets else {}
        return {"targetToken": "token" in opened, "targetAuthorization": "authorization" in opened}

    # -- internals ------------------------------------------------------------------------

    def _push_agent(self, agent_id: str) -> int:
        with self._sessions() as session:
            agent = session.execute(select(AGENTS.c.pk, AGENTS.c.capabilities).where(AGENTS.c.id == agent_id)).first()
        if agent is None:
            raise errors.NotFound(f"no agent with id {agent_id!r}")
        if (agent.capabilities or {}).get("pushNotifications") is not True:
            raise PushNotSupported(
                f"agent {agent_id} does not support push notifications (its card lacks "
                "capabilities.pushNotifications: true)"
            )
        return int(agent.pk)

    def _check_target(self, url: str) -> None:
        try:
            self._http.check_url(url)
        except OutboundRefused as error:
            raise OutboundRefused(f"targetUrl refused: {error.message}", url=url, details={"field": "targetUrl"}) from None
        except OutboundConnectionError as error:
            raise errors.InvalidRequest(f"targetUrl cannot be used: {error.message}", {"field": "targetUrl"}) from None

    def _seal(self, request: SubscriptionRequest, sub_id: str) -> bytes | None:
        values = {name: value for name, value in (("token", request.target_token),
                                                   ("authorization", request.target_authorization)) if value}
        return self._box.seal(values, sub_id) if values else None


def dead_letter_unheld(where: ColumnElement[bool], now: dt.datetime) -> Update:
    """Dead-letter the pending messages `where` of a deleted subscription that no transaction holds
    (PostgreSQL: `FOR NO KEY UPDATE SKIP LOCKED`; SQLite's single writer holds nothing that another one could wait for)."""
    unheld = (select(M.pk).where(where, M.state == IS_PENDING)
              .with_for_update(skip_locked=True, key_share=True).scalar_subquery())
    return update(M).where(M.pk.in_(unheld)).values(
        state="dead", due_at=None, not_before=None, finished_at=now, last_error="the subscription was deleted",
        lease_owner=None, lease_until=None)


def _check_request(request: SubscriptionRequest) -> None:
    if request.auth_mode not in AUTH_MODES:
        raise errors.InvalidRequest(f"authMode must be one of {list(AUTH_MODES)}", {"field": "authMode"})
    if request.task_id is not None and not 0 < len(request.task_id) <= MAX_TASK_ID:
        raise errors.InvalidRequest(f"taskId must have 1 to {MAX_TASK_ID} characters", {"field": "taskId"})
    for field, value in (("targetToken", request.target_token), ("targetAuthorization", request.target_authorization)):
        if value is None:
            continue
        # Header values go out verbatim: a CR or LF would let a client inject headers (RFC 9110 §5.5).
        if any(ch in value for ch in "\r\n\0") or len(value) > MAX_HEADER_VALUE:
            raise errors.InvalidRequest(f"{field} must be one line (no CR, LF or NUL) of at most "
                                        f"{MAX_HEADER_VALUE} characters", {"field": field})
    if len(request.target_url) > 2048:
        raise errors.InvalidRequest("targetUrl is longer than 2048 characters", {"field": "targetUrl"})
