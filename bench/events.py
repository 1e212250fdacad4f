"""What the change-event outbox costs a registration, and how fast the fan-out runs.

In process, on one database: single registrations (`CatalogService.register_card`, validation
included, one transaction each) through two catalog stores taken in turn, round by round, one
writing the `.registered` event row with the agent's rows (as shipped) and one that leaves it
out, so that the machine's drift falls on both alike. No HTTP: the relative cost shown is an upper
bound of what a registration over the API pays. Then the fan-out turns the outbox into relay
messages for one subscriber.

    python bench/events.py                      # SQLite; target: <= 3 % of registration throughput
    python bench/events.py --skip-sqlite --postgres postgresql+psycopg://postgres@127.0.0.1:55433/agentdex_t_events_bench
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.catalog import make_card  # noqa: E402
from bench.common import Table, in_process_services, percentile, run_on_each_database  # noqa: E402
from registry.catalog import CardFetcher, CatalogService, CatalogStore  # noqa: E402
from registry.change_events import ChangeEvent  # noqa: E402
from registry.container import catalog_store  # noqa: E402
from registry.db import single_statements  # noqa: E402
from registry.events.subscriptions import EventSubscriptionRequest  # noqa: E402
from registry.retrieval.embedding import NullEmbedder  # noqa: E402

TARGET = 3.0  # % of registration throughput


def without_events(store: CatalogStore) -> CatalogStore:
    """The same store, minus the event row of each new agent (what the outbox adds)."""

    class Silent(type(store)):  # type: ignore[misc]
        def rows_of(self, *args: Any) -> Any:
            rows = super().rows_of(*args)
            rows.pop(ChangeEvent.__table__, None)
            return rows

    return Silent(store.engine, single_statements(store.engine), NullEmbedder())  # type: ignore[no-any-return]


def run(url: str, label: str, args: argparse.Namespace, table: Table) -> None:
    services = in_process_services(url, allow_http=True)
    settings = services.settings
    try:
        actor = services.tokens.authenticate(services.tokens.create("bench", ["agents:write"]).token)
        fetcher = CardFetcher(services.http, max_card_bytes=settings.max_card_bytes)
        shipped = catalog_store(services.engine, NullEmbedder())
        variants = {
            "with the event row": CatalogService(shipped, fetcher, services.limits, services.trust),
            "without it": CatalogService(without_events(shipped), fetcher, services.limits, services.trust),
        }
        times: dict[str, list[float]] = {name: [] for name in variants}
        rng, n = random.Random(7), 0
        for round_ in range(args.rounds):
            order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for name in order:
                for _ in range(args.per_round):
                    card, n = make_card(rng, n), n + 1
                    t0 = time.perf_counter()
                    variants[name].register_card(actor, card, f"https://bench-{n}.example.com/card.json")
                    times[name].append((time.perf_counter() - t0) * 1000)
        for name, ms in times.items():
            table.add(f"{label}: single registrations, {name}", len(ms), sum(ms) / 1000, ms)
        rates = {name: len(ms) / sum(ms) for name, ms in times.items()}
        cost = 100 * (1 - rates["with the event row"] / rates["without it"])
        medians = {name: percentile(ms, 50) for name, ms in times.items()}
        at_p50 = 100 * (medians["with the event row"] / medians["without it"] - 1)
        print(
            f"  {label}: the event row costs {cost:.1f} % of registration throughput, {at_p50:.1f} % of the p50"
            f" (target <= {TARGET} %)"
        )

        request = EventSubscriptionRequest("http://127.0.0.1:9/hook", ["registered"])
        services.events.subscriptions.create(actor, request, source="http://bench.example")
        events = len(times["with the event row"])
        t0 = time.perf_counter()
        taken = services.events.fanout.run()
        table.add(f"{label}: fan-out to one subscriber (events)", taken, time.perf_counter() - t0)
        assert taken == events, (taken, events)
    finally:
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=200)
    run_on_each_database(parser, run)


if __name__ == "__main__":
    main()
