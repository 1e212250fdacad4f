"""What authenticating a bearer token costs a request, now that nothing is cached.

In process, on one database, variants taken in turn round by round (so that the machine's drift
falls on all alike):
- `TokenService.authenticate` as shipped: one indexed lookup of the token's row per request, and
  a write of its last-used time once a minute;
- the same with a write on every call (the clock moved a minute on each): what the once-a-minute
  rule saves;
- the 5-second actor cache it replaced (`CachedTokens` below, the old code): a dict lookup on a hit;
- a whole request (`GET /v1/tokens?limit=1`, Flask test client, no HTTP) with each of the first
  and third.

    python bench/token_auth.py
    python bench/token_auth.py --skip-sqlite --postgres postgresql+psycopg://postgres@127.0.0.1:55433/agentdex_t_own_tokens
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import Table, in_process_services, percentile, run_on_each_database  # noqa: E402
from registry.app import create_app  # noqa: E402
from registry.auth import Actor, TokenService  # noqa: E402
from registry.auth.tokens import hash_token  # noqa: E402
from registry.db.types import utcnow  # noqa: E402

OLD_CACHE_SECONDS = 5.0


class CachedTokens(TokenService):
    """The actor cache this release removed: a token's actor kept for 5 s per process (so a token
    revoked elsewhere kept working that long)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._cache: dict[str, tuple[float, Actor]] = {}

    def authenticate(self, token: str) -> Actor:
        digest, now = hash_token(token), time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            return cached[1]
        actor = super().authenticate(token)
        self._cache[digest] = (now + OLD_CACHE_SECONDS, actor)
        return actor


def timed_in_turn(variants: dict[str, Callable[[], object]], rounds: int, per_round: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(rounds):
        order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
        for name in order:
            for _ in range(per_round):
                t0 = time.perf_counter()
                variants[name]()
                times[name].append((time.perf_counter() - t0) * 1000)
    return times


def run(url: str, label: str, args: argparse.Namespace, table: Table) -> None:
    services = in_process_services(url)
    try:
        token = services.tokens.create("bench", ["agents:write"]).token
        minutes = [utcnow()]

        def a_minute_later() -> dt.datetime:
            minutes[0] += dt.timedelta(minutes=1, seconds=1)
            return minutes[0]

        shipped, cached = services.tokens, CachedTokens(services.sessions)
        writing = TokenService(services.sessions, clock=a_minute_later)
        lookups = {
            "lookup as shipped": lambda: shipped.authenticate(token),
            "lookup writing last use every time": lambda: writing.authenticate(token),
            "lookup with the old 5 s cache": lambda: cached.authenticate(token),
        }
        _report(table, label, timed_in_turn(lookups, args.rounds, args.per_round))

        headers = {"Authorization": f"Bearer {token}"}
        apps = {
            "GET /v1/tokens as shipped": create_app(services=services).test_client(),
            "GET /v1/tokens with the old cache": create_app(
                services=dataclasses.replace(services, tokens=cached)
            ).test_client(),
        }
        requests = {name: _getter(client, headers) for name, client in apps.items()}
        _report(table, label, timed_in_turn(requests, args.rounds, args.per_round // 4))
    finally:
        services.close()


def _getter(client: object, headers: dict[str, str]) -> Callable[[], object]:
    def get() -> object:
        response = client.get("/v1/tokens?limit=1", headers=headers)  # type: ignore[attr-defined]
        assert response.status_code == 200, response.json
        return response

    return get


def _report(table: Table, label: str, times: dict[str, list[float]]) -> None:
    for name, ms in times.items():
        table.add(f"{label}: {name}", len(ms), sum(ms) / 1000, ms)
    names = list(times)
    base = percentile(times[names[-1]], 50)
    for name in names[:-1]:
        print(f"  {label}: {name}: p50 {percentile(times[name], 50) - base:+.3f} ms against {names[-1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=400)
    run_on_each_database(parser, run)


if __name__ == "__main__":
    main()
