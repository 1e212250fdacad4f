"""The benchmarks' corpora of realistic cards (bench/search_corpus.py) at several scales, loaded
once through the API and kept for reuse, and a registry serving one of them.

Loading is the slow part (1,000,000 cards take minutes), so loaded databases are kept: with
--keep DIR, SQLite files DIR/search-10k.db, …; on PostgreSQL one database per scale, named after
the URL's with the scale appended (search_bench_10k, search_bench_100k, search_bench_1m) and
created when missing. A database is reused when it holds the expected number of agents and the
marker of a complete load (on PostgreSQL the database's comment, on SQLite a `.corpus` file beside
it) names this corpus (generator version, vocabulary) and the migrations it was loaded under: after
a change of either it is loaded again, as with --reload. bench/search.py, bench/ard.py and
bench/a2a.py share them, and how they time requests over them (`timed_in_turn`, `ShapeRow`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson

from bench.common import (
    ROOT,
    add_database_options,
    cpu_ticks,
    percentile,
    reference_loop_ms,
    registry_server,
    reset_postgres,
    settle,
)
from bench.http_load import Http
from bench.search_corpus import CardGenerator, Vocabulary

Row = TypeVar("Row")


def load(port: int, token: str, generator: CardGenerator, scale: int, batch: int, parallel: int) -> float:
    """Register cards 0 … scale-1 with `POST /v1/agents/import`, `parallel` batches in flight (each
    sender makes its own batch, so one makes cards while another waits for its answer); seconds."""
    from concurrent.futures import ThreadPoolExecutor

    from cli.importer import Spread

    spread = Spread(lambda: Http(port, token))  # one connection on each web process
    idle = [spread.connect() for _ in range(parallel)]

    def send(start: int) -> int:
        http = idle.pop()
        try:
            items = b",".join(map(orjson.dumps, generator.items(start, min(start + batch, scale))))
            status, raw = http.send("POST", "/v1/agents/import", b'{"items":[' + items + b"]}")
        finally:
            idle.append(http)
        answer = orjson.loads(raw)
        if status != 200 or answer["failed"]:
            raise RuntimeError(f"import of cards {start}… failed ({status}): {raw[:500]!r}")
        return int(answer["created"])

    t0, done, shown = time.perf_counter(), 0, 0
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for created in pool.map(send, range(0, scale, batch)):
            done += created
            if done * 10 // scale > shown:
                shown = done * 10 // scale
                print(f"    {done:,} agents, {done / (time.perf_counter() - t0):,.0f}/s", flush=True)
    for http in idle:
        http.close()
    return time.perf_counter() - t0


def _schema() -> str:
    """Identifies the migrations a database was loaded under: a schema that changed in place (an
    edited baseline) is not what `db upgrade` finds to do, so such a database is loaded again."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "migrations").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _scale_name(scale: int) -> str:
    return (
        f"{scale // 1_000_000}m" if scale % 1_000_000 == 0 else f"{scale // 1000}k" if scale % 1000 == 0 else str(scale)
    )


def _agents(url: str) -> int | None:
    """How many agents the database holds; None when it has no catalog (yet)."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from registry.db import make_engine

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.scalar(text("SELECT count(*) FROM agents")) or 0)
    except DBAPIError as error:
        print(f"  no catalog to reuse in {url}: {error.orig}", flush=True)
        return None
    finally:
        engine.dispose()


class SqliteCorpusStore:
    """SQLite files in a folder, one per scale, each with a `.corpus` file naming its complete load."""

    label = "sqlite"

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def where(self, scale: int) -> Path:
        return self._folder / f"search-{_scale_name(scale)}.db"

    def url(self, scale: int) -> str:
        return f"sqlite:///{self.where(scale)}"

    def holds(self, scale: int, marker: str) -> bool:
        sidecar = self.where(scale).with_suffix(".corpus")
        return sidecar.exists() and sidecar.read_text() == marker and _agents(self.url(scale)) == scale

    def reset(self, scale: int) -> None:
        for suffix in (".corpus", ".db", ".db-wal", ".db-shm"):
            self.where(scale).with_suffix(suffix).unlink(missing_ok=True)

    def mark(self, scale: int, marker: str) -> None:
        self.where(scale).with_suffix(".corpus").write_text(marker)


class PostgresCorpusStore:
    """A PostgreSQL database per scale beside the given URL's (search_bench → search_bench_10k),
    whose comment names its complete load."""

    label = "postgres"

    def __init__(self, url: str) -> None:
        from sqlalchemy import make_url

        self._base = make_url(url)

    def where(self, scale: int) -> str:
        return f"{self._base.database}_{_scale_name(scale)}"

    def url(self, scale: int) -> str:
        return self._base.set(database=self.where(scale)).render_as_string(hide_password=False)

    def holds(self, scale: int, marker: str) -> bool:
        comment = self._admin("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = :d", scale)
        return comment == marker and _agents(self.url(scale)) == scale

    def reset(self, scale: int) -> None:
        if self._admin("SELECT count(*) FROM pg_database WHERE datname = :d", scale) == 0:
            self._admin(f'CREATE DATABASE "{self.where(scale)}"', scale)
        self._admin(f'COMMENT ON DATABASE "{self.where(scale)}" IS NULL', scale)
        reset_postgres(self.url(scale))

    def mark(self, scale: int, marker: str) -> None:
        self._admin(f'COMMENT ON DATABASE "{self.where(scale)}" IS {_quoted(marker)}', scale)

    def _admin(self, statement: str, scale: int) -> object:
        """One statement on the server's `postgres` database, outside a transaction."""
        from sqlalchemy import text

        from registry.db import make_engine

        engine = make_engine(self._base.set(database="postgres").render_as_string(hide_password=False))
        try:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                result = conn.execute(text(statement), {"d": self.where(scale)})
                return result.scalar() if result.returns_rows else None
        finally:
            engine.dispose()


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


CorpusStore = SqliteCorpusStore | PostgresCorpusStore


def add_corpus_options(parser: argparse.ArgumentParser, scales: str) -> None:
    parser.add_argument("--scales", default=scales, help="agent counts, comma-separated")
    parser.add_argument("--keep", type=Path, default=None, help="keep SQLite databases in this folder")
    parser.add_argument("--reload", action="store_true", help="load every database again, from scratch")
    parser.add_argument("--batch", type=int, default=1000, help="cards per import request")
    parser.add_argument("--load-parallel", type=int, default=2, help="import requests in flight")
    add_database_options(parser)
    parser.add_argument("--server-workers", type=int, default=2, help="web worker processes")
    parser.add_argument("--server-threads", type=int, default=8, help="request threads per web worker")


def corpus_stores(args: argparse.Namespace, scratch: Path) -> list[CorpusStore]:
    """The stores the options name: SQLite files in --keep (else `scratch`), PostgreSQL databases."""
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    stores: list[CorpusStore] = [] if args.skip_sqlite else [SqliteCorpusStore(args.keep or scratch)]
    return stores + ([PostgresCorpusStore(args.postgres)] if args.postgres else [])


def scales(args: argparse.Namespace) -> list[int]:
    return sorted({int(s) for s in args.scales.split(",")})


@contextlib.contextmanager
def serving_corpus(
    store: CorpusStore, scale: int, args: argparse.Namespace, loads: list[str] | None = None
) -> Iterator[int]:
    """The port of a registry serving the corpus of `scale` agents from `store`, loaded first
    unless a complete load is kept there; a line on the load goes to `loads`."""
    generator = CardGenerator()
    marker = f"agentdex search bench: corpus {generator.vocab.fingerprint}, schema {_schema()}, {scale} agents"
    fresh = args.reload or not store.holds(scale, marker)
    if fresh:
        store.reset(scale)
    url = store.url(scale)
    print(f"{store.label}, {scale:,} agents: {'loading' if fresh else 'reusing'} {store.where(scale)}", flush=True)
    with registry_server(url, workers=args.server_workers, threads=args.server_threads) as (port, token, _env):
        if fresh:
            seconds = load(port, token, generator, scale, args.batch, args.load_parallel)
            store.mark(scale, marker)
            if loads is not None:
                loads.append(
                    f"{store.label}: {scale:,} agents loaded in {seconds:.0f} s ({scale / seconds:,.0f} cards/s)"
                )
        print(f"  settled in {settle(url, timeout=600):.1f} s", flush=True)
        yield port


def measured_corpora(
    args: argparse.Namespace, measure: Callable[[int, str, int, Vocabulary, int], list[Row]]
) -> list[Row]:
    """`measure(port, database, scale, vocabulary, queries)` for every scale of every store the
    options name, each served by its own registry; the rows in that order."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as scratch:
        for store in corpus_stores(args, Path(scratch)):
            for scale in scales(args):
                with serving_corpus(store, scale, args) as port:
                    rows += measure(port, store.label, scale, CardGenerator().vocab, args.queries)
    return rows


Request = tuple[Any, ...]  # the arguments of `Http.send`
Check = Callable[[str, Request, int, bytes], None]  # (shape, request, status, body); raises when wrong


def timed_in_turn(
    http: Http, plans: Mapping[str, Sequence[Request]], check: Check
) -> tuple[dict[str, list[float]], float, float]:
    """Each shape's planned requests, one at a time through `http`, the shapes taken in turn so
    that a stretch of noise from elsewhere on the machine falls on all alike; each timed from
    sending to the answer's last byte and checked after the clock stops. (Milliseconds by shape,
    the % of the machine's CPU the host took meanwhile, the machine's pace after: `reference_loop_ms`.)"""
    latencies: dict[str, list[float]] = {name: [] for name in plans}
    rounds = min((len(requests) for requests in plans.values()), default=0)
    ticks = cpu_ticks()
    for index in range(rounds):
        for name, requests in plans.items():
            t0 = time.perf_counter()
            status, raw = http.send(*requests[index])
            latencies[name].append((time.perf_counter() - t0) * 1000)
            check(name, requests[index], status, raw)
    http.close()
    total, stolen = (after - before for after, before in zip(cpu_ticks(), ticks))
    return latencies, 100 * stolen / total if total else float("nan"), reference_loop_ms()


@dataclasses.dataclass
class ShapeRow:
    """One request shape's times on one corpus, beside its target, (p50, p99) in ms."""

    database: str
    agents: int
    shape: str
    latencies: list[float]
    stolen: float  # % of the machine's CPU the host took while the block of rows was measured
    loop_ms: float  # the machine's pace after the block (`reference_loop_ms`)
    target: tuple[float | None, float | None] = (None, None)

    @property
    def p50(self) -> float:
        return percentile(self.latencies, 50)

    def line(self) -> str:
        p50, p99 = self.p50, percentile(self.latencies, 99)
        limits = self.target
        wanted = " ".join(f"p{q}≤{v:g}" for q, v in zip((50, 99), limits) if v is not None) or "-"
        met = "-" if wanted == "-" else "yes" if p50 <= (limits[0] or 1e9) and p99 <= (limits[1] or 1e9) else "NO"
        rate = len(self.latencies) / (sum(self.latencies) / 1000)
        return (
            f"{self.database:<9} {self.agents:>8,} {self.shape:<38} {len(self.latencies):>7} {rate:>7.0f}"
            f" {p50:>8.2f} {p99:>8.2f}  {wanted:<13} {met:<4} {self.stolen:>5.0f}% {self.loop_ms:>7.1f}"
        )


SHAPE_HEADER = (
    f"{'database':<9} {'agents':>8} {'what':<38} {'how many':>7} {'rate/s':>7} {'p50 ms':>8} {'p99 ms':>8}"
    f"  {'target':<13} {'met':<4} {'stolen':>6} {'loop ms':>7}"
)
