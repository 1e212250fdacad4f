"""One delivery attempt: POST the body unchanged to the client's webhook, and when to try again.

Headers: the client's `X-A2A-Notification-Token` and `Authorization` as given (A2A v0.3 §9.5), and
Standard Webhooks' `webhook-id` (the message id, stable across retries), `webhook-timestamp` and
`webhook-signature` (`v1a`: the registry's Ed25519 signature of "{id}.{timestamp}.{body}"). 2xx is
delivered; anything else, a redirect (never followed) included, is retried; 410 Gone disables the subscription.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import email.utils
import random
import time
from collections.abc import Callable

from registry.db.types import utcnow
from registry.outbound import OutboundError, OutboundRefused, OutboundTimeout, OutboundTooLarge, SafeHttpClient
from signing import SigningKey

MAX_RESPONSE_TEXT = 1000
MAX_ERROR_TEXT = 500
MIN_RETRY_AFTER = 1.0
_FAILURES = {OutboundTimeout: "timeout", OutboundRefused: "refused", OutboundTooLarge: "too_large"}


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """`schedule[i]` is the delay before attempt i + 1, spread by +/- `jitter` so that the retries of
    messages failed by one outage do not arrive together. A target's `Retry-After` replaces it,
    bounded to [1 s, `max_retry_after`]: a receiver can neither make us hammer it nor park a message for days."""

    schedule: tuple[float, ...]
    jitter: float = 0.2
    max_retry_after: float = 3600.0

    def first_delay(self, rng: random.Random) -> float:
        return self._spread(self.schedule[0], rng)

    def next_delay(self, attempts_made: int, retry_after: float | None, rng: random.Random) -> float | None:
        """Seconds until the next attempt after `attempts_made` attempts; None when none is left."""
        if attempts_made >= len(self.schedule):
            return None
        if retry_after is not None:
            return min(max(retry_after, MIN_RETRY_AFTER), self.max_retry_after)
        return self._spread(self.schedule[attempts_made], rng)

    def _spread(self, delay: float, rng: random.Random) -> float:
        return delay * (1 + rng.uniform(-self.jitter, self.jitter))


def parse_retry_after(value: str | None, now: dt.datetime) -> float | None:
    """Seconds from `now` a `Retry-After` asks for (RFC 9110 §10.2.3); None when absent or unreadable."""
    value = (value or "").strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when.replace(tzinfo=when.tzinfo or dt.UTC) - now).total_seconds())


@dataclasses.dataclass(frozen=True)
class Target:
    """Where a subscription's messages go, with the client's credentials opened."""

    url: str
    token: str | None
    authorization: str | None
    problem: str | None  # the credentials do not open: never send without them


@dataclasses.dataclass(frozen=True)
class DueDelivery:
    pk: int
    message_id: str
    body: bytes
    attempt: int
    target: Target
    content_type: str = "application/json"


@dataclasses.dataclass(frozen=True)
class DeliveryOutcome:
    """`outcome`: delivered, http_error, redirect, gone, timeout, refused, too_large, failed."""

    pk: int
    outcome: str
    started_at: dt.datetime
    http_status: int | None = None
    latency_ms: int | None = None
    error: str | None = None
    response: str | None = None
    retry_after: float | None = None


class WebhookPoster:
    """`http` has the relay's outbound policy (its timeouts, response cap, no redirects);
    `webhook_key` returns the registry's active Ed25519 key (it may rotate between calls)."""

    def __init__(
        self,
        http: SafeHttpClient,
        webhook_key: Callable[[], SigningKey],
        *,
        clock: Callable[[], dt.datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._http = http
        self._webhook_key = webhook_key
        self._clock = clock
        self._monotonic = monotonic

    def post(self, item: DueDelivery) -> DeliveryOutcome:
        started = self._clock()
        if item.target.problem:
            return DeliveryOutcome(item.pk, "failed", started, error=item.target.problem[:MAX_ERROR_TEXT])
        headers = self._headers(item, int(started.timestamp()))
        began = self._monotonic()
        try:
            response = self._http.post(item.target.url, headers=headers, body=item.body)
        except OutboundError as error:
            kind = next((kind for cls, kind in _FAILURES.items() if isinstance(error, cls)), "failed")
            return DeliveryOutcome(
                item.pk, kind, started, latency_ms=self._ms(began), error=str(error)[:MAX_ERROR_TEXT]
            )
        status, ms = response.status, self._ms(began)
        text = response.body[:MAX_RESPONSE_TEXT].decode("utf-8", "replace")[:MAX_RESPONSE_TEXT] or None
        if 200 <= status < 300:
            return DeliveryOutcome(item.pk, "delivered", started, status, ms, response=text)
        kind = "gone" if status == 410 else "redirect" if 300 <= status < 400 else "http_error"
        problem = f"HTTP {status}" + (f" to {response.headers.get('location')}" if kind == "redirect" else "")
        retry_after = parse_retry_after(response.headers.get("retry-after"), started)
        return DeliveryOutcome(item.pk, kind, started, status, ms, problem, text, retry_after)

    def _headers(self, item: DueDelivery, timestamp: int) -> dict[str, str]:
        key = self._webhook_key()
        if key.algorithm.value != "EdDSA":
            raise ValueError(f"Standard Webhooks v1a signatures need an Ed25519 key, not {key.algorithm.value}")
        signature = key.sign(f"{item.message_id}.{timestamp}.".encode() + item.body)
        headers = {
            "Content-Type": item.content_type,
            "webhook-id": item.message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": f"v1a,{base64.b64encode(signature).decode('ascii')}",
        }
        if item.target.token:
            headers["X-A2A-Notification-Token"] = item.target.token
        if item.target.authorization:
            headers["Authorization"] = item.target.authorization
        return headers

    def _ms(self, began: float) -> int:
        return int((self._monotonic() - began) * 1000)
