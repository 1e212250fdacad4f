"""One delivery attempt: POST the body unchanged to the client's webhook, and what came of it.

Headers: the client's own `X-A2A-Notification-Token` and `Authorization` exactly as it gave
them (A2A v0.3 §9.5 shows what a webhook expects), and Standard Webhooks' `webhook-id` (the
message id: stable across retries, so a receiver drops duplicates), `webhook-timestamp` (this
attempt) and `webhook-signature` (the registry's Ed25519 signature). 2xx is delivered; every
other status, a timeout, a refusal and a redirect (never followed) is a failure to retry, and
410 Gone ends delivery for the subscription.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable

from registry.db.types import utcnow
from registry.outbound import (
    OutboundError,
    OutboundRefused,
    OutboundResponse,
    OutboundTimeout,
    OutboundTooLarge,
    SafeHttpClient,
)
from registry.relay.retry_policy import parse_retry_after
from registry.relay.webhook_signer import WebhookSigner

MAX_RESPONSE_TEXT = 1000
MAX_ERROR_TEXT = 500


@dataclasses.dataclass(frozen=True)
class DueDelivery:
    pk: int
    message_id: str
    target_url: str
    body: bytes
    attempt: int
    target_token: str | None = None
    target_authorization: str | None = None
    problem: str | None = None  # the credentials could not be opened: do not send


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
    def __init__(self, http: SafeHttpClient, signer: WebhookSigner, *, timeout: float, max_response_bytes: int,
                 clock: Callable[[], dt.datetime] = utcnow, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._http = http
        self._signer = signer
        self._timeout = timeout
        self._max_response_bytes = max_response_bytes
        self._clock = clock
        self._monotonic = monotonic

    def post(self, item: DueDelivery) -> DeliveryOutcome:
        started = self._clock()
        if item.problem:
            return DeliveryOutcome(item.pk, "failed", started, error=item.problem[:MAX_ERROR_TEXT])
        headers = self.headers(item, int(started.timestamp()))
        began = self._monotonic()
        try:
            response = self._http.post(item.target_url, headers=headers, body=item.body, timeout=self._timeout,
                                       follow_redirects=False, max_bytes=self._max_response_bytes)
        except OutboundError as error:
            return DeliveryOutcome(item.pk, _failure_kind(error), started, latency_ms=self._ms(began),
                                   error=str(error)[:MAX_ERROR_TEXT])
        return self._answered(item, response, started, self._ms(began))

    def headers(self, item: DueDelivery, timestamp: int) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "webhook-id": item.message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": self._signer.sign(item.message_id, timestamp, item.body),
        }
        if item.target_token:
            headers["X-A2A-Notification-Token"] = item.target_token
        if item.target_authorization:
            headers["Authorization"] = item.target_authorization
        return headers

    def _answered(self, item: DueDelivery, response: OutboundResponse, started: dt.datetime, ms: int) -> DeliveryOutcome:
        status = response.status
        text = response.body[:MAX_RESPONSE_TEXT].decode("utf-8", "replace")[:MAX_RESPONSE_TEXT] or None
        if 200 <= status < 300:
            return DeliveryOutcome(item.pk, "delivered", started, status, ms, response=text)
        kind = "gone" if status == 410 else "redirect" if 300 <= status < 400 else "http_error"
        error = f"HTTP {status}" + (f" to {response.headers.get('location')}" if kind == "redirect" else "")
        retry_after = parse_retry_after(response.headers.get("retry-after"), started)
        return DeliveryOutcome(item.pk, kind, started, status, ms, error, text, retry_after)

    def _ms(self, began: float) -> int:
        return int((self._monotonic() - began) * 1000)


def _failure_kind(error: OutboundError) -> str:
    if isinstance(error, OutboundTimeout):
        return "timeout"
    if isinstance(error, OutboundRefused):
        return "refused"
    if isinstance(error, OutboundTooLarge):
        return "too_large"
    return "failed"
