"""Relay subscriptions, created by a client (the `relay` scope) for an agent that pushes, and the
relay tokens the agent presents. Refused unless the card says `capabilities.pushNotifications: true`
(A2A v0.3 §7.5, v1.0 §3.3.4), the target passes the outbound policy (delivery checks it again: DNS
can change) and header values are single lines. Anyone but the owner (or an admin) gets 404.
A subscription of another kind (`create_sink`: no agent, no relay token) is fed by the registry itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
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
from registry.relay.models import AUTH_MODES, MAX_TASK_ID, RelayMessage, RelaySubscription
from registry.relay.secret_box import SecretBox
from registry.relay.task_order import IS_PENDING

MAX_HEADER_VALUE = 4096
TOKEN_PREFIX = "adxr_"
S, M = RelaySubscription, RelayMessage
SHOWN: tuple[Any, ...] = (S.pk, S.id, S.agent_id, S.task_id, S.target_url, S.auth_mode, S.status, S.status_reason)
SHOWN += (S.previous_token_until, S.created_at, S.updated_at, S.target_secrets)


def new_relay_token() -> str:
    """256 random bits, shown once and stored as SHA-256 (a fast hash: there is nothing to brute-force)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_relay_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class TokenHashes:
    """What a subscription stores of its tokens."""

    current: str | None
    previous: str | None = None
    previous_until: dt.datetime | None = None

    def accepts(self, presented: str, now: dt.datetime) -> bool:
        """True when `presented` is the current token, or the previous one within its grace."""
        digest = hash_relay_token(presented)
        # Both comparisons always run, so the time taken does not say which one matched.
        current = hmac.compare_digest(digest, self.current or "")
        previous = hmac.compare_digest(digest, self.previous or "")
        in_grace = self.previous_until is not None and now < self.previous_until
        return (current and bool(self.current)) or (previous and bool(self.previous) and in_grace)


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
class Page:
    items: list[Row[*tuple[Any, ...]]]
    next_cursor: str | None

    @classmethod
    def of(cls, rows: list[Row[*tuple[Any, ...]]], limit: int) -> Page:
        """`rows`: up to `limit + 1` rows, newest first (one more means there is a next page)."""
        return cls(rows[:limit], encode_cursor(rows[limit - 1].pk) if len(rows) > limit else None)


class SubscriptionService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        http: SafeHttpClient,
        box: SecretBox,
        *,
        token_grace: float,
        clock: Callable[[], dt.datetime] = utcnow,
        on_change: Callable[[str], None] = lambda sub_id: None,
    ) -> None:
        self._sessions = sessions
        self._http = http
        self._box = box
        self._grace = dt.timedelta(seconds=token_grace)
        self._clock = clock
        self._on_change = on_change  # e.g. the ingress forgets its cached row at once

    def create(self, actor: Actor, request: SubscriptionRequest) -> IssuedSubscription:
        """Raises InvalidRequest, NotFound (agent), PushNotSupported, OutboundRefused (target)."""
        _check_request(request)
        agent_pk = self._push_agent(request.agent_id)
        token = new_relay_token()
        sub_id = self._insert(actor, request, "sub_", {"agent_pk": agent_pk, "token_hash": hash_relay_token(token)})
        return IssuedSubscription(self.get(actor, sub_id), token)

    def create_sink(
        self,
        actor: Actor,
        request: SubscriptionRequest,
        *,
        kind: str,
        prefix: str,
        attach: Callable[[Session, int], None],
    ) -> Row[*tuple[Any, ...]]:
        """A subscription of `kind` whose messages the registry writes itself: no agent, no relay token
        (nothing can be pushed to it). `attach(session, pk)` writes in the same transaction what the
        caller keeps about it. Raises InvalidRequest, OutboundRefused (target)."""
        _check_request(request)
        sub_id = self._insert(actor, request, prefix, {"agent_pk": None, "token_hash": None, "kind": kind}, attach)
        return self.get(actor, sub_id, kind=kind)

    def _insert(
        self,
        actor: Actor,
        request: SubscriptionRequest,
        prefix: str,
        row: dict[str, Any],
        attach: Callable[[Session, int], None] | None = None,
    ) -> str:
        self._check_target(request.target_url)
        sub_id, now = prefix + secrets.token_hex(12), self._clock()
        secrets_given = {"token": request.target_token, "authorization": request.target_authorization}
        sealed = {name: value for name, value in secrets_given.items() if value}
        row = row | {"id": sub_id, "owner_id": actor.principal_id, "agent_id": request.agent_id}
        row |= {"task_id": request.task_id, "target_url": request.target_url, "auth_mode": request.auth_mode}
        row |= {"target_secrets": self._box.seal(sealed, sub_id) if sealed else None, "status": "active"}
        row |= {"created_at": now, "updated_at": now}
        with self._sessions.begin() as session:
            pk = session.execute(insert(S).values(row).returning(S.pk)).scalar_one()
            if attach is not None:
                attach(session, pk)
        return sub_id

    def get(self, actor: Actor, sub_id: str, *, kind: str | None = "push") -> Row[*tuple[Any, ...]]:
        """Raises NotFound (also for someone else's subscription, or one of another `kind`; None: any)."""
        stmt = select(*SHOWN, S.owner_id).where(S.id == sub_id, S.status != "deleted")
        with self._sessions() as session:
            row = session.execute(stmt.where(S.kind == kind) if kind else stmt).first()
        if row is None or not (actor.is_admin or row.owner_id == actor.principal_id):
            raise errors.NotFound(f"no relay subscription {sub_id!r}")
        return row

    def list(self, actor: Actor, *, limit: int, cursor: str | None, kind: str = "push") -> Page:
        """The caller's subscriptions of `kind`, newest first (an admin sees everyone's)."""
        stmt = select(*SHOWN).where(S.status != "deleted", S.kind == kind).order_by(S.pk.desc()).limit(limit + 1)
        if not actor.is_admin:
            stmt = stmt.where(S.owner_id == actor.principal_id)
        if cursor:
            stmt = stmt.where(S.pk < decode_cursor(cursor))
        with self._sessions() as session:
            return Page.of(list(session.execute(stmt)), limit)

    def rotate(self, actor: Actor, sub_id: str) -> IssuedSubscription:
        """A new relay token; the old one keeps working for the grace period. Raises NotFound."""
        token, now = new_relay_token(), self._clock()
        previous = {"previous_token_hash": S.token_hash, "previous_token_until": now + self._grace}
        self._change(actor, sub_id, "push", token_hash=hash_relay_token(token), updated_at=now, **previous)
        return IssuedSubscription(self.get(actor, sub_id), token)

    def set_status(self, actor: Actor, sub_id: str, status: str, *, kind: str = "push") -> Row[*tuple[Any, ...]]:
        """Enable (e.g. after the target answered 410) or disable delivery. Raises NotFound, InvalidRequest."""
        if status not in ("active", "disabled"):
            raise errors.InvalidRequest("status must be active or disabled")
        reason = None if status == "active" else "disabled by its owner"
        self._change(actor, sub_id, kind, status=status, status_reason=reason, updated_at=self._clock())
        return self.get(actor, sub_id, kind=kind)

    def delete(self, actor: Actor, sub_id: str, *, kind: str = "push") -> None:
        """Stop relaying: the secrets are wiped and undelivered messages dead-lettered. Raises NotFound."""
        row, now = self.get(actor, sub_id, kind=kind), self._clock()
        wiped = {"token_hash": None, "previous_token_hash": None, "target_secrets": None}
        with self._sessions.begin() as session:
            deleted = {"status": "deleted", "status_reason": "deleted by its owner", "updated_at": now}
            session.execute(update(S).where(S.pk == row.pk).values(**deleted, **wiped))
            session.execute(dead_letter_unheld(M.subscription_pk == row.pk, now))
        self._on_change(sub_id)

    def has_secrets(self, row: Row[*tuple[Any, ...]]) -> dict[str, bool]:
        """Which client credentials are stored (never their values)."""
        opened = self._box.open(row.target_secrets, row.id) if row.target_secrets else {}
        return {"targetToken": "token" in opened, "targetAuthorization": "authorization" in opened}

    def _change(self, actor: Actor, sub_id: str, kind: str, **values: Any) -> None:
        row = self.get(actor, sub_id, kind=kind)
        with self._sessions.begin() as session:
            session.execute(update(S).where(S.pk == row.pk).values(**values))
        self._on_change(sub_id)

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
            raise OutboundRefused(
                f"targetUrl refused: {error.message}", url=url, details={"field": "targetUrl"}
            ) from None
        except OutboundConnectionError as error:
            raise errors.InvalidRequest(f"targetUrl cannot be used: {error.message}", {"field": "targetUrl"}) from None


def dead_letter_unheld(where: ColumnElement[bool], now: dt.datetime) -> Update:
    """Dead-letter the pending messages `where` of a deleted subscription that no transaction holds:
    a worker holding them may be about to disable the subscription whose row the DELETE holds (a
    deadlock). Their holder ends them, or the prune job dead-letters what it leaves pending."""
    unheld = select(M.pk).where(where, M.state == IS_PENDING).with_for_update(skip_locked=True, key_share=True)
    dead = {"state": "dead", "due_at": None, "not_before": None, "lease_owner": None, "lease_until": None}
    return (
        update(M)
        .where(M.pk.in_(unheld.scalar_subquery()))
        .values(finished_at=now, last_error="the subscription was deleted", **dead)
    )


def _check_request(request: SubscriptionRequest) -> None:
    if request.auth_mode not in AUTH_MODES:
        raise errors.InvalidRequest(f"authMode must be one of {list(AUTH_MODES)}", {"field": "authMode"})
    if request.task_id is not None and not 0 < len(request.task_id) <= MAX_TASK_ID:
        raise errors.InvalidRequest(f"taskId must have 1 to {MAX_TASK_ID} characters", {"field": "taskId"})
    for field, value in (("targetToken", request.target_token), ("targetAuthorization", request.target_authorization)):
        # Header values go out verbatim: a CR or LF would let a client inject headers (RFC 9110 §5.5).
        if value is not None and (any(ch in value for ch in "\r\n\0") or len(value) > MAX_HEADER_VALUE):
            message = f"{field} must be one line (no CR, LF or NUL) of at most {MAX_HEADER_VALUE} characters"
            raise errors.InvalidRequest(message, {"field": field})
    if len(request.target_url) > 2048:
        raise errors.InvalidRequest("targetUrl is longer than 2048 characters", {"field": "targetUrl"})
