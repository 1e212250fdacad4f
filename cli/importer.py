"""Streaming a JSON Lines file into the registry's bulk import endpoint, in batches."""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import click

from cli.client import RegistryClient
from cli.exits import CliError, ExitCode

T = TypeVar("T")
R = TypeVar("R")

SHOWN_FAILURES = 20
BOM = b"\xef\xbb\xbf"  # a file saved "with signature" starts with one; it cannot go inside a batch


def read_lines(path: Path, refuse: Callable[[int, dict[str, Any]], None]) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, the line's JSON text), sent as written (no re-encoding). A line the
    registry would refuse with its whole batch (not JSON, nested too deeply, a member name
    repeated in one object, an unpaired surrogate, a NUL character) goes to `refuse` with its
    reason instead, and the lines after it are read on."""
    from registry.jsontext import refuse_nul
    from signing import MAX_JSON_DEPTH, JsonInputError, loads_json

    depth = MAX_JSON_DEPTH - 2  # a line goes into {"items": [...]}, two levels below the body's top
    with _open(path) as handle:
        for number, line in enumerate(handle, start=1):
            line = line.strip().removeprefix(BOM) if number == 1 else line.strip()
            if not line:
                continue
            try:
                refuse_nul(loads_json(line, max_depth=depth), line)
            except JsonInputError as error:
                refuse(
                    number, {"code": "invalid_json", "message": f"not sent: {error}", "details": {"path": error.path}}
                )
                continue
            yield number, line


def _open(path: Path) -> BinaryIO:
    """The file, open for reading; a usage error naming it when it cannot be."""
    try:
        return path.open("rb")
    except OSError as error:
        raise CliError(f"cannot read {path}: {error}", ExitCode.USAGE) from None


def _count_lines(path: Path) -> int:
    with _open(path) as handle:
        return sum(1 for line in handle if line.strip())


def _batches(path: Path, size: int, refuse: Callable[[int, dict[str, Any]], None]) -> Iterator[list[tuple[int, bytes]]]:
    batch: list[tuple[int, bytes]] = []
    for item in read_lines(path, refuse):
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def import_file(
    client: Callable[[], RegistryClient], path: Path, size: int, *, progress: bool, parallel: int = 2
) -> dict[str, Any]:
    """Send the file in batches, `parallel` requests at a time (each web worker validates one
    while the database writes another); return created/failed counts and each failure with its
    line, in line order. A line that is not JSON the registry accepts is not sent, and counts as
    failed.

    `client` makes one RegistryClient per connection.
    """
    summary: dict[str, Any] = {"created": 0, "failed": 0, "errors": []}
    _open(path).close()  # an unreadable file is reported before the registry is reached
    # Connected before the first batch is read: connecting loads the HTTP library (~0.07 s), which
    # the sending threads did while the file was read ahead, all on the interpreter's one lock. Of
    # an import of 10,000 cards (~3 s), the first batch went out 0.22-0.31 s after the command
    # started (9 runs), now 0.16-0.20 (3 runs); the file is counted only for a progress bar.
    spread = Spread(client)
    connections: queue.SimpleQueue[RegistryClient] = queue.SimpleQueue()
    for _ in range(parallel):
        connections.put(spread.connect())

    def send(batch: list[tuple[int, bytes]]) -> tuple[list[tuple[int, bytes]], Any]:
        connection = connections.get()
        try:
            body = b'{"items":[' + b",".join(line for _, line in batch) + b"]}"
            return batch, connection.call_raw("POST", "/v1/agents/import", body)
        finally:
            connections.put(connection)

    # A batch waits behind each request in flight: with only `parallel` read ahead, a connection
    # whose answer came first idled until the oldest one's came, and the web processes went in step.
    bar = click.progressbar(length=_count_lines(path), label="importing") if progress else _NoProgress()

    def refuse(line: int, error: dict[str, Any]) -> None:
        summary["failed"] += 1
        summary["errors"].append({"line": line, "error": error})
        bar.update(1)

    try:
        with bar, ThreadPoolExecutor(max_workers=parallel) as pool:
            for batch, result in _in_order(pool, send, _batches(path, size, refuse), window=2 * parallel):
                summary["created"] += result["created"]
                summary["failed"] += result["failed"]
                for outcome in result["results"]:
                    if outcome["error"]:
                        summary["errors"].append({"line": batch[outcome["index"]][0], "error": outcome["error"]})
                bar.update(len(batch))
    finally:
        while not connections.empty():
            connections.get().close()
    summary["errors"].sort(key=lambda failure: failure["line"])
    for failure in summary["errors"][:SHOWN_FAILURES]:
        click.echo(f"line {failure['line']}: {failure_text(failure['error'])}", err=True)
    if len(summary["errors"]) > SHOWN_FAILURES:
        click.echo(f"... and {len(summary['errors']) - SHOWN_FAILURES} more (all of them with --json)", err=True)
    return summary


def failure_text(error: dict[str, Any]) -> str:
    """One line for a person: the message, then the card's first issue (the registry lists them
    all in `details.issues`, shown with --json), errors before warnings."""
    issues = (error.get("details") or {}).get("issues") or []
    if not issues:
        return str(error.get("message"))
    first = next((issue for issue in issues if issue.get("severity") == "error"), issues[0])
    more = f" (and {len(issues) - 1} more issue(s))" if len(issues) > 1 else ""
    return f"{error.get('message')} — {first.get('path') or 'the card'}: {first.get('message')}{more}"


class Spread:
    """Connects each of an import's connections to the registry's web process that holds the
    fewest of them. A multi-process server gives a new connection to whichever process accepts
    first, often the same one for all: measured on a two-process server, `--parallel 2` imported
    1,670–1,720 cards/s with both connections on one process, 2,640–3,530 with one on each. A connection
    asks `/healthz` which process it reached and is made again (up to `tries` times) while another
    process has fewer, or while only one process has been seen and already holds one. Back-to-back
    connections tend to reach the same process in runs (eight in a row, seen on granian), so the
    tries are a little apart."""

    def __init__(self, client: Callable[[], RegistryClient], tries: int = 32, pause: float = 0.002) -> None:
        self._client = client
        self._tries = tries
        self._pause = pause
        self._lock = threading.Lock()
        self._held: collections.Counter[str] = collections.Counter()  # connections per process

    def connect(self) -> RegistryClient:
        tries = 0
        while True:
            connection, tries = self._client(), tries + 1
            worker = connection.worker()
            with self._lock:
                if worker is None or tries == self._tries or self._fits(worker):
                    if worker is not None:
                        self._held[worker] += 1
                    return connection
            connection.close()
            time.sleep(self._pause)

    def _fits(self, worker: str) -> bool:
        self._held.setdefault(worker, 0)  # now known, holding none yet
        if len(self._held) == 1:
            return self._held[worker] == 0  # another process may exist: look for it first
        return self._held[worker] == min(self._held.values())

    @property
    def held(self) -> dict[str, int]:
        """How many connections each process seen holds."""
        with self._lock:
            return dict(self._held)


def _in_order(pool: ThreadPoolExecutor, fn: Callable[[T], R], items: Iterable[T], window: int) -> Iterator[R]:
    """`pool.map` that reads ahead at most `window` items (the file may be larger than memory)."""
    pending: collections.deque[Future[R]] = collections.deque()
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


class _NoProgress:
    """A progress bar that shows nothing (`--json`): the file is not counted first."""

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *_exc: object) -> None:
        pass

    def update(self, _count: int) -> None:
        pass
