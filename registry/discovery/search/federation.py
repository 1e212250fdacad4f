"""Federation (ARD v0.91 §5.4): the same search asked of the upstream ARD registries the operator
names (AGENTDEX_ARD_UPSTREAMS), all at once, each within one deadline, through the safe client.

The spec sets no loop or hop limit, so Agentdex sends three headers on every upstream call, and
honours them when another registry sends them:

- `ARD-Federation-Hops`: how many registries forwarded this search before (a client sends none: 0).
  At AGENTDEX_ARD_MAX_HOPS a registry answers from its own index only.
- `ARD-Federation-Request-Id`: the id of the client's search, kept along the chain. A registry that
  saw the id in the last `REMEMBER` seconds answers from its own index only, so two registries
  naming each other ask each other once. The memory is per process; across processes the hop
  count still bounds a loop.
- `ARD-Federation-Budget-Ms`: how long the caller waits. A registry waits for its own upstreams at
  most `BUDGET_SHARE` of it, so that it can still answer in time with what it has.

An upstream that is slow, down or answers something else costs at most the deadline; it is
reported (`UpstreamFailure`), never fatal.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any
from urllib.parse import urlsplit

from registry.discovery.entries import REGISTRY
from registry.discovery.search.request import InvalidArgument
from registry.discovery.search.upstream_answers import NotASearchAnswer, UpstreamPage, registry_identifier, search_page
from registry.outbound import OutboundError, OutboundTimeout, SafeHttpClient

log = logging.getLogger(__name__)

HOPS = "ARD-Federation-Hops"
REQUEST_ID = "ARD-Federation-Request-Id"
BUDGET = "ARD-Federation-Budget-Ms"
REMEMBER = 60.0  # seconds a request id is remembered
BUDGET_SHARE = 0.75
MIN_DEADLINE = 0.05  # seconds: with less left, ask no upstream
MAX_RESPONSE_BYTES = 4_194_304
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


@dataclasses.dataclass(frozen=True)
class Inbound:
    """What a search's own request says about the federation it is part of."""

    hops: int = 0
    request_id: str | None = None
    budget: float | None = None  # seconds the caller waits

    @classmethod
    def from_headers(cls, header: Callable[[str], str | None]) -> Inbound:
        """`header(name)`: the request's header of that name. Raises InvalidArgument for a header
        that is not what it should be."""
        budget = _whole(header(BUDGET), BUDGET)
        return cls(
            hops=_whole(header(HOPS), HOPS) or 0,
            request_id=_request_id(header(REQUEST_ID)),
            budget=None if budget is None else budget / 1000,
        )


def _whole(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    if not (value.isascii() and value.strip().isdigit() and len(value.strip()) <= 9):
        raise InvalidArgument(f"header {name} must be a whole number, not {value[:40]!r}")
    return int(value)


def _request_id(value: str | None) -> str | None:
    if value is not None and not _REQUEST_ID.match(value):
        raise InvalidArgument(f"header {REQUEST_ID} must be 1-128 letters, digits or ._:-")
    return value


@dataclasses.dataclass(frozen=True)
class Plan:
    """How this search federates: the headers for upstream calls, and the deadline (None: it
    stays local, `local_only` saying why)."""

    request_id: str
    hops: int
    deadline: float | None
    local_only: str | None = None

    def headers(self) -> dict[str, str]:
        assert self.deadline is not None
        return {
            "Accept": "application/json",
            HOPS: str(self.hops + 1),
            REQUEST_ID: self.request_id,
            BUDGET: str(int(self.deadline * 1000)),
        }


@dataclasses.dataclass(frozen=True)
class UpstreamFailure:
    upstream: str
    reason: str


class SeenRequests:
    """Request ids seen in the last `remember` seconds (at most `capacity`, oldest forgotten first)."""

    def __init__(self, remember: float, monotonic: Callable[[], float], capacity: int = 10_000) -> None:
        self._remember = remember
        self._monotonic = monotonic
        self._capacity = capacity
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def seen_before(self, request_id: str) -> bool:
        """Whether the id was seen recently; remembers it either way."""
        now = self._monotonic()
        with self._lock:
            while self._seen and (next(iter(self._seen.values())) < now or len(self._seen) >= self._capacity):
                self._seen.popitem(last=False)
            seen = request_id in self._seen
            self._seen[request_id] = now + self._remember
            self._seen.move_to_end(request_id)
            return seen


class Asked:
    """The upstream calls of one search, under way."""

    def __init__(
        self,
        futures: dict[int, Future[UpstreamPage | UpstreamFailure]],
        upstreams: tuple[str, ...],
        deadline: float,
        monotonic: Callable[[], float],
    ) -> None:
        self._futures = futures
        self._upstreams = upstreams
        self._deadline = deadline
        self._monotonic = monotonic
        self._until = monotonic() + deadline + 0.05

    def answers(self) -> dict[int, UpstreamPage | UpstreamFailure]:
        """Every upstream's answer by the deadline; one that has not answered by then is a failure."""
        wait(self._futures.values(), timeout=max(0.0, self._until - self._monotonic()))
        answers = {
            index: future.result()
            if future.done()
            else UpstreamFailure(self._upstreams[index], f"no answer within {self._deadline:g} s")
            for index, future in self._futures.items()
        }
        for answer in answers.values():
            if isinstance(answer, UpstreamFailure):
                log.warning("ARD upstream %s left out of a federated search: %s", answer.upstream, answer.reason)
        return answers


class Federation:
    """The upstream registries (`upstreams`: base URLs of their ARD APIs) and how to ask them."""

    def __init__(
        self,
        http: SafeHttpClient,
        upstreams: tuple[str, ...],
        *,
        timeout: float,
        max_hops: int,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._http = http
        # A base URL, as ard-sdk reads a referral: one given with its search route is its base.
        self.upstreams = tuple(upstream.rstrip("/").removesuffix("/search") for upstream in upstreams)
        self._timeout = timeout
        self._max_hops = max_hops
        self._new_id = new_id
        self._monotonic = monotonic
        self._seen = SeenRequests(REMEMBER, monotonic)

    def plan(self, inbound: Inbound) -> Plan:
        """Whether and how long to ask the upstreams for a search that arrived with `inbound`."""
        request_id = inbound.request_id or self._new_id()
        plan = Plan(request_id, inbound.hops, None)
        if inbound.request_id is not None and self._seen.seen_before(inbound.request_id):
            return dataclasses.replace(plan, local_only="repeated-request")  # a loop came back here
        if inbound.request_id is None:
            self._seen.seen_before(request_id)
        if inbound.hops >= self._max_hops:
            return dataclasses.replace(plan, local_only="max-hops")
        deadline = self._timeout if inbound.budget is None else min(self._timeout, inbound.budget * BUDGET_SHARE)
        if deadline < MIN_DEADLINE:
            return dataclasses.replace(plan, local_only="no-time-left")
        return dataclasses.replace(plan, deadline=deadline)

    def ask(self, plan: Plan, bodies: dict[int, dict[str, Any]]) -> Asked:
        """Send each upstream its search body (`bodies`, by index into `upstreams`) at once, and
        return at once: the answers are collected with `Asked.answers`, while our own index is read."""
        if not bodies or plan.deadline is None:
            return Asked({}, self.upstreams, 0.0, self._monotonic)
        pool = ThreadPoolExecutor(max_workers=len(bodies), thread_name_prefix="ard-federation")
        futures = {
            index: pool.submit(self._ask_one, self.upstreams[index], body, plan) for index, body in bodies.items()
        }
        # A call is bounded by the client's own deadline; `Asked.answers` also bounds what it
        # cannot interrupt (a slow DNS answer): the pool is left behind rather than joined.
        pool.shutdown(wait=False)
        return Asked(futures, self.upstreams, plan.deadline, self._monotonic)

    def _ask_one(self, upstream: str, body: dict[str, Any], plan: Plan) -> UpstreamPage | UpstreamFailure:
        try:
            response = self._http.post(
                f"{upstream}/search",
                json=body,
                headers=plan.headers(),
                timeout=plan.deadline,
                max_bytes=MAX_RESPONSE_BYTES,
                follow_redirects=False,
            )
            if response.status != 200:
                return UpstreamFailure(upstream, f"HTTP {response.status}")
            page = search_page(response.json(), upstream)
        except OutboundTimeout:
            return UpstreamFailure(upstream, f"no answer within {plan.deadline:g} s")
        except (OutboundError, NotASearchAnswer) as error:
            return UpstreamFailure(upstream, error.message)
        except Exception as error:  # a failure of ours must not fail the search: recorded
            log.exception("federated search of %s failed", upstream)
            return UpstreamFailure(upstream, f"failed: {type(error).__name__}")
        if page.dropped:
            log.warning("ARD upstream %s: %d results an ARD client would refuse were left out", upstream, page.dropped)
        return page

    def referrals(self) -> list[dict[str, Any]]:
        """The upstreams as ARD referrals (§5.4): identifier, displayName, type and the URL of
        their search route, all four of which ard-sdk requires."""
        return [
            {
                "identifier": registry_identifier(upstream),
                "displayName": f"ARD registry at {urlsplit(upstream).netloc}",
                "type": REGISTRY,
                "url": f"{upstream}/search",
            }
            for upstream in self.upstreams
        ]
