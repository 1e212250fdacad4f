"""Search benchmark: `GET /v1/agents?q=…` and tag filters over realistic cards
(bench/search_corpus.py) at 10,000 and 100,000 agents, and 1,000,000 on PostgreSQL with --million,
through the HTTP API, one query at a time; each row beside the issue's target for it.

    python bench/search.py                                   # SQLite, 10,000 and 100,000 agents
    python bench/search.py --keep /var/tmp/agentdex-search   # the same, SQLite files kept for reuse
    python bench/search.py --skip-sqlite --million \\
        --postgres postgresql+psycopg://postgres@127.0.0.1:5432/search_bench

Loading is the slow part (1,000,000 cards take minutes), so loaded databases are kept: with
--keep DIR, SQLite files DIR/search-10k.db, …; on PostgreSQL one database per scale, named after
the URL's with the scale appended (search_bench_10k, search_bench_100k, search_bench_1m) and
created when missing. A database is reused when it holds the expected number of agents and the
marker of a complete load (on PostgreSQL the database's comment, on SQLite a `.corpus` file beside
it) names this corpus (generator version, vocabulary) and the migrations it was loaded under: after
a change of either it is loaded again, as with --reload.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    ROOT,
    add_database_options,
    cpu_ticks,
    percentile,
    reference_loop_ms,
    registry_server,
    reset_postgres,
    settle,
)
from bench.http_load import Http  # noqa: E402
from bench.search_corpus import LEFT_TAG, RIGHT_TAG, CardGenerator, Vocabulary  # noqa: E402

# The targets, (p50, p99) in ms: ranked text search at 10,000 and 100,000 agents on both
# databases; every query shape, and tag filters, at 1,000,000 on PostgreSQL.
TEXT_TARGETS = {10_000: (5.0, 15.0), 100_000: (None, 40.0)}
MILLION_TARGETS = {"q": (None, 60.0), "tag": (None, 25.0)}
WARM_UP = 5  # queries per shape before the clock starts, with words of their own
# From 200,000 agents each web process builds its approximate vector index in the background after
# its first search (~25 s at 1,000,000; searches are exact meanwhile): warm up this long first.
INDEX_BUILD = (200_000, 75.0)


@dataclasses.dataclass(frozen=True)
class Shape:
    """A kind of query: `path(rng)` is one such query, its words drawn from the shape's tier."""

    name: str
    kind: str  # "q" (text search) or "tag" (tag filters only)
    path: Callable[[random.Random], str]


def shapes(vocab: Vocabulary, scale: int) -> list[Shape]:
    content = vocab.content_words()
    common, middle = content[:20], content[20:500]  # on ≳25 % of agents; on ~2–25 %
    rare = vocab.rare_words(scale)  # on 5–50 agents at this scale
    sentences = [*vocab.sentences, *vocab.examples]  # real examples: some cards hold them verbatim
    tags = vocab.tags[:50]

    def several(rng: random.Random) -> str:
        return " ".join(rng.sample(content[:1000], rng.randint(2, 4)))

    return [
        Shape("q: common word", "q", lambda rng: _path(q=rng.choice(common))),
        Shape("q: rare word (5-50 agents)", "q", lambda rng: _path(q=rng.choice(rare))),
        Shape("q: absent word", "q", lambda rng: _path(q=rng.choice(vocab.absent))),
        Shape("q: 2-4 words", "q", lambda rng: _path(q=several(rng))),
        Shape("q: sentence", "q", lambda rng: _path(q=rng.choice(sentences))),
        Shape("q + tag", "q", lambda rng: _path(q=rng.choice(middle), tag=rng.choice(tags))),
        Shape("tag: one of top 50", "tag", lambda rng: _path(tag=rng.choice(tags))),
        Shape("tag: 2 sharing no agent (all)", "tag", lambda rng: _path(tag=[LEFT_TAG, RIGHT_TAG])),
    ]


def _path(**params: str | list[str]) -> str:
    return "/v1/agents?" + urlencode(params, doseq=True)


def target(shape: Shape, scale: int, database: str) -> tuple[float | None, float | None]:
    if scale >= 1_000_000:
        return MILLION_TARGETS[shape.kind] if database == "postgres" else (None, None)
    return TEXT_TARGETS.get(scale, (None, None)) if shape.kind == "q" else (None, None)


@dataclasses.dataclass
class Row:
    database: str
    agents: int
    shape: Shape
    latencies: list[float]
    paths: list[str]  # the queries, in the order of `latencies`
    found: int  # answers that held at least one agent
    stolen: float  # % of the machine's CPU the host took while the block of rows was measured
    loop_ms: float  # the machine's pace after the block (`reference_loop_ms`)

    def met(self) -> bool | None:
        """Whether the row meets its target; None without one."""
        limit50, limit99 = target(self.shape, self.agents, self.database)
        if limit50 is None and limit99 is None:
            return None
        return percentile(self.latencies, 50) <= (limit50 or 1e9) and percentile(self.latencies, 99) <= (limit99 or 1e9)

    def slowest(self) -> str:
        ms, path = max(zip(self.latencies, self.paths))
        return f"{self.database} {self.agents:,} {self.shape.name}: {ms:.0f} ms GET {path}"

    def line(self) -> str:
        p50, p99 = percentile(self.latencies, 50), percentile(self.latencies, 99)
        limits = zip((50, 99), target(self.shape, self.agents, self.database))
        wanted = " ".join(f"p{q}≤{v:g}" for q, v in limits if v is not None) or "-"
        met = {None: "-", True: "yes", False: "NO"}[self.met()]
        rate = len(self.latencies) / (sum(self.latencies) / 1000)
        return (
            f"{self.database:<9} {self.agents:>10,} {self.shape.name:<31} {len(self.latencies):>7} {self.found:>6}"
            f" {rate:>7.0f} {p50:>8.2f} {p99:>8.2f}  {wanted:<13} {met:<4} {self.stolen:>5.0f}% {self.loop_ms:>7.1f}"
        )


HEADER = (
    f"{'database':<9} {'agents':>10} {'shape':<31} {'queries':>7} {'found':>6} {'rate/s':>7} {'p50 ms':>8}"
    f" {'p99 ms':>8}  {'target':<13} {'met':<4} {'stolen':>6} {'loop ms':>7}"
)


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


def measure(port: int, database: str, scale: int, vocab: Vocabulary, queries: int) -> list[Row]:
    """Each shape `queries` times, through one connection, one query at a time; the shapes taken in
    turn, so that a stretch of noise from elsewhere on the machine falls on all of them alike.
    Timed from sending the request to the answer's last byte; the answer is decoded and checked
    (status 200, a page of items) after the clock stops."""
    http, kinds = Http(port), shapes(vocab, scale)
    for shape in kinds:
        rng = random.Random(f"warm-up {shape.name} {scale}")
        for _ in range(WARM_UP):
            http.request("GET", shape.path(rng))
    if scale >= INDEX_BUILD[0]:
        rng, until = random.Random(f"build {scale}"), time.monotonic() + INDEX_BUILD[1]
        while time.monotonic() < until:
            http.request("GET", rng.choice(kinds).path(rng))
    plans = {s.name: [s.path(random.Random(f"{s.name} {scale} {i}")) for i in range(queries)] for s in kinds}
    latencies: dict[str, list[float]] = {s.name: [] for s in kinds}
    found = dict.fromkeys(plans, 0)
    ticks = cpu_ticks()
    for index in range(queries):
        for shape in kinds:
            path = plans[shape.name][index]
            t0 = time.perf_counter()
            status, raw = http.send("GET", path)
            latencies[shape.name].append((time.perf_counter() - t0) * 1000)
            items = orjson.loads(raw).get("items") if status == 200 else None
            if not isinstance(items, list):
                raise RuntimeError(f"GET {path}: {status} {raw[:300]!r}")
            found[shape.name] += bool(items)
    http.close()
    total, stolen = (after - before for after, before in zip(cpu_ticks(), ticks))
    steal, pace = 100 * stolen / total if total else float("nan"), reference_loop_ms()
    return [Row(database, scale, s, latencies[s.name], plans[s.name], found[s.name], steal, pace) for s in kinds]


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


def run_scale(store: CorpusStore, scale: int, args: argparse.Namespace, loads: list[str]) -> list[Row]:
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
            loads.append(f"{store.label}: {scale:,} agents loaded in {seconds:.0f} s ({scale / seconds:,.0f} cards/s)")
        print(f"  settled in {settle(url, timeout=600):.1f} s", flush=True)
        return measure(port, store.label, scale, generator.vocab, args.queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="10000,100000", help="agent counts, comma-separated")
    parser.add_argument("--million", action="store_true", help="PostgreSQL also at 1,000,000 agents")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per shape")
    parser.add_argument("--keep", type=Path, default=None, help="keep SQLite databases in this folder")
    parser.add_argument("--reload", action="store_true", help="load every database again, from scratch")
    parser.add_argument("--batch", type=int, default=1000, help="cards per import request")
    parser.add_argument("--load-parallel", type=int, default=2, help="import requests in flight")
    add_database_options(parser)
    parser.add_argument("--server-workers", type=int, default=2, help="web worker processes")
    parser.add_argument("--server-threads", type=int, default=8, help="request threads per web worker")
    args = parser.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    loads: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        # Each scale has its own database, kept between runs (`bench.common.each_database` hands
        # out one fresh database per run).
        stores: list[CorpusStore] = [] if args.skip_sqlite else [SqliteCorpusStore(args.keep or Path(scratch))]
        stores += [PostgresCorpusStore(args.postgres)] if args.postgres else []
        for store in stores:
            extra = [1_000_000] if args.million and store.label == "postgres" else []
            for scale in sorted(set(scales + extra)):
                rows += run_scale(store, scale, args, loads)
    if loads:
        print("\n" + "\n".join(loads))
    print("\n" + HEADER)
    print("\n".join(row.line() for row in rows))
    print("\nfound: answers holding at least one agent; stolen, loop ms: the machine's state (bench/common.py)")
    missed = [row.slowest() for row in rows if row.met() is False]
    if missed:
        print("\nthe slowest query of each row that missed its target:\n" + "\n".join(missed))
    print(f"reproduce: python {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
