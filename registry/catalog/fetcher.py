"""Fetching Agent Cards: discovery from a URL, and conditional re-fetches for re-crawls.

Discovery (A2A well-known URI; RFC 8615): a URL ending in ``.json`` or ``/agentCard`` is the card
URL itself; otherwise, with ``P`` its path, ``P/.well-known/agent-card.json`` then
``P/.well-known/agent.json`` (pre-0.3 agents), then the same two at the origin root (users paste an
agent's endpoint URL while its card sits at the root), and last ``P/agentCard`` then ``/agentCard``:
agents built after the seed document "Protocol Details" serve their card at ``GET /agentCard`` and
JSON-RPC at the server root. A 404/410, or a 200 that is not JSON (catch-all HTML pages), moves on
to the next candidate; anything else ends discovery. Every fetch goes through the safe outbound
client; policy refusals propagate as ``OutboundRefused``, other failures are ``CardFetchError``s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from registry.catalog.errors import CatalogError
from registry.db.types import utcnow
from registry.outbound import (
    OutboundError,
    OutboundInvalidJson,
    OutboundRefused,
    OutboundResponse,
    OutboundTimeout,
    OutboundTooLarge,
    SafeHttpClient,
)
from registry.outbound.target import parse_target

ACCEPT = "application/a2a+json, application/json;q=0.9, */*;q=0.1"
WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
SEED_CARD_PATH = "/agentCard"  # "Protocol Details": "The AgentCard is served at GET /agentCard"
# RFC 9111 §1.2.2: delta-seconds beyond 2^31 are treated as 2^31.
_MAX_DELTA_SECONDS = 2**31
_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


class CardFetchError(CatalogError):
    """Root of card fetching failures; ``url`` is the URL that failed."""

    code = "agent_unreachable"

    def __init__(self, message: str, *, url: str, details: dict[str, object] | None = None) -> None:
        super().__init__(message, details)
        self.url = url


class CardNotFound(CardFetchError):
    """Every candidate URL answered 404/410; ``tried`` lists them in order."""

    def __init__(self, message: str, *, url: str, tried: tuple[str, ...]) -> None:
        super().__init__(message, url=url, details={"reason": "CardNotFound"})
        self.tried = tried


class CardNotJson(CardFetchError):
    """The body is not JSON, or JSON that is not an object."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message, url=url, details={"reason": "CardNotJson"})


class CardTooLarge(CardFetchError):
    """The card is larger than ``limit`` bytes."""

    code = "payload_too_large"

    def __init__(self, message: str, *, url: str, limit: int) -> None:
        super().__init__(message, url=url)
        self.limit = limit


class AgentUnreachable(CardFetchError):
    """No usable answer: connection or TLS failure, broken HTTP, or an error status.

    ``status`` is the HTTP status when the agent answered one (5xx, 401, 403, …).
    """

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message, url=url)
        self.status = status


class AgentTimeout(CardFetchError):
    """The agent did not answer completely within the client's timeouts."""

    code = "agent_timeout"


@dataclass(frozen=True)
class FetchedCard:
    """A card as served. ``card_url`` is where it was found (after redirects)."""

    card_url: str
    body: bytes
    card: object
    etag: str | None
    last_modified: str | None
    max_age: int | None
    fetched_at: datetime


@dataclass(frozen=True)
class NotModified:
    """A conditional fetch answered 304; the validators and freshness it sent along."""

    card_url: str
    etag: str | None
    last_modified: str | None
    max_age: int | None
    fetched_at: datetime


def card_candidates(url: str) -> list[str]:
    """The URLs discovery tries for ``url``, in order (see the module docstring).

    Raises OutboundInvalidUrl (an OutboundRefused) when ``url`` is not an http(s) URL.
    """
    target = parse_target(url)
    path = target.request_target.partition("?")[0]
    if path.lower().endswith(".json") or path.endswith(SEED_CARD_PATH):
        return [target.url]
    origin = f"{target.scheme}://{target.authority}"
    prefix = path.rstrip("/").removesuffix("/.well-known")
    bases = [prefix, ""] if prefix else [""]
    well_known = [f"{origin}{base}{name}" for base in bases for name in WELL_KNOWN_PATHS]
    return well_known + [f"{origin}{base}{SEED_CARD_PATH}" for base in bases]


def parse_max_age(cache_control: str | None) -> int | None:
    """Seconds the card may be reused: ``s-maxage`` (we are a shared cache), else ``max-age``.

    0 for ``no-store``/``no-cache``; None when absent or malformed. Never raises.
    """
    directives: dict[str, str] = {}
    for part in (cache_control or "").split(","):
        name, _, value = part.partition("=")
        directives.setdefault(name.strip().lower(), value.strip().strip('"'))
    if "no-store" in directives or "no-cache" in directives:
        return 0
    for name in ("s-maxage", "max-age"):
        seconds = directives.get(name)
        if seconds and seconds.isascii() and seconds.isdigit():
            return min(int(seconds), _MAX_DELTA_SECONDS)
    return None


class CardFetcher:
    """Discovers and fetches Agent Cards through the safe outbound client."""

    def __init__(
        self,
        client: SafeHttpClient,
        *,
        max_card_bytes: int = 262_144,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._client = client
        self._max_card_bytes = max_card_bytes
        self._clock = clock

    def discover(self, url: str) -> FetchedCard:
        """Find and fetch the card for ``url`` (a card URL or an agent's base URL).

        Raises CardNotFound (listing every URL tried), CardNotJson, CardTooLarge,
        AgentUnreachable, AgentTimeout, and OutboundRefused for URLs the policy refuses.
        """
        tried: list[str] = []
        not_json: CardNotJson | None = None
        for candidate in card_candidates(url):
            tried.append(candidate)
            try:
                found = self._get(candidate, {})
            except CardNotJson as error:
                not_json = not_json or error
                continue
            if isinstance(found, FetchedCard):
                return found
        if not_json is not None:
            raise not_json
        raise CardNotFound(f"no Agent Card found; tried {', '.join(tried)}", url=tried[0], tried=tuple(tried))

    def fetch(
        self, card_url: str, *, etag: str | None = None, last_modified: str | None = None
    ) -> FetchedCard | NotModified:
        """Fetch ``card_url``, conditionally when validators of the last fetch are given.

        Returns NotModified on 304. Raises what ``discover`` raises (CardNotFound on 404/410).
        """
        conditional = {}
        if etag:
            conditional["If-None-Match"] = etag
        if last_modified:
            conditional["If-Modified-Since"] = last_modified
        found = self._get(card_url, conditional)
        if found is None:
            raise CardNotFound(
                f"no Agent Card at {card_url} (it answered 404/410)",
                url=card_url,
                tried=(card_url,),
            )
        return found

    def _get(self, card_url: str, conditional: Mapping[str, str]) -> FetchedCard | NotModified | None:
        """The card, NotModified, or None when the URL answered 404/410."""
        response = self._request(card_url, conditional)
        status = response.status
        if status in (404, 410):
            return None
        if status == 304 and conditional:
            return self._not_modified(response, conditional)
        if not 200 <= status < 300:
            kind = "failed" if status >= 500 else "refused the request"
            raise AgentUnreachable(f"{card_url}: the agent {kind} (HTTP {status})", url=card_url, status=status)
        return FetchedCard(
            card_url=response.url,
            body=response.body,
            card=_card_object(response),
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
            max_age=parse_max_age(response.headers.get("cache-control")),
            fetched_at=self._clock(),
        )

    def _request(self, card_url: str, conditional: Mapping[str, str]) -> OutboundResponse:
        headers = {"Accept": ACCEPT, **conditional}
        try:
            return self._client.get(card_url, headers=headers, max_bytes=self._max_card_bytes)
        except OutboundRefused:
            raise
        except OutboundTimeout as error:
            raise AgentTimeout(
                f"{card_url}: the agent did not answer in time ({error.phase} timeout)",
                url=card_url,
            ) from error
        except OutboundTooLarge as error:
            raise CardTooLarge(
                f"the card at {card_url} is larger than {error.limit} bytes",
                url=card_url,
                limit=error.limit,
            ) from error
        except OutboundError as error:
            raise AgentUnreachable(f"cannot fetch {card_url}: {error}", url=card_url) from error

    def _not_modified(self, response: OutboundResponse, conditional: Mapping[str, str]) -> NotModified:
        # A 304 may omit validators that did not change (RFC 9110 §15.4.5): keep ours.
        return NotModified(
            card_url=response.url,
            etag=response.headers.get("etag") or conditional.get("If-None-Match"),
            last_modified=response.headers.get("last-modified") or conditional.get("If-Modified-Since"),
            max_age=parse_max_age(response.headers.get("cache-control")),
            fetched_at=self._clock(),
        )


def _card_object(response: OutboundResponse) -> object:
    # Any JSON body is accepted whatever its Content-Type: many agents serve text/plain.
    content_type = response.headers.get("content-type", "no Content-Type")
    try:
        card = response.json()
    except OutboundInvalidJson as error:
        raise CardNotJson(f"{response.url} did not return JSON ({content_type}): {error}", url=response.url) from error
    if not isinstance(card, dict):
        raise CardNotJson(
            f"{response.url} returned {_JSON_KINDS.get(type(card), 'JSON')}, not a JSON object",
            url=response.url,
        )
    return card
