"""The agents' vectors held in process, searched by brute force, and kept current from the database.

Vectors arrive packed (`embedding.pack`: int8 codes and a float32 scale per row) and stay that
way: an int32 dot product of int8 rows is the cheapest exact-enough cosine numpy offers, and int8
keeps 100,000 agents of 256 dimensions within 64 MiB. From `APPROXIMATE_ROWS` agents on, a scan of
every row costs too much per search: an approximate index (`approximate.py`) shortlists the
likely nearest, and only those are scored from the rows.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy

from registry.retrieval.approximate import ApproximateIndex, Exhaustive
from registry.retrieval.embedding import quantise, unpack

logger = logging.getLogger(__name__)

# Each dict entry holds a key and a value int object. Summing sys.getsizeof over a million entries
# takes a noticeable fraction of a second, so `nbytes` costs every int as a large one instead.
_INT_BYTES = sys.getsizeof(2**40)

# Below this many agents every search scans them all exactly, with no index to train; from here
# on the scan is a large part of a search's time (bench/embedding.py).
APPROXIMATE_ROWS = 200_000
# The approximate index is built again, on a fresh sample, when the catalog has grown this much
# since it was last built: its levels were learned from the agents of that time.
REBUILD_GROWTH = 4
# `nearest` without `among` scores exactly this many agents shortlisted by the approximate index
# per agent wanted, and at least SHORTLIST_MIN (bench/embedding.py measures the recall).
SHORTLIST_FACTOR, SHORTLIST_MIN = 5, 500

Task = Callable[[], None]


def in_background(task: Task) -> None:
    threading.Thread(target=task, name="vector-index-build", daemon=True).start()


class VectorIndex:
    """Packed vectors of agents by pk, in process, searched by brute force: all of them, or once
    there are many, those the approximate index shortlists.

    Rows 0..len-1 of the arrays are the vectors, with no holes: `remove` moves the last row into
    the freed one. Several threads may search while one writes. A search takes a snapshot of the
    arrays under the lock and computes outside it; growth replaces the arrays, so a snapshot
    stays whole, but a row written in place during a search (a replaced vector, or the last row
    moved by a removal) may be scored from a mix of its old and new values. That touches one
    agent in searches that raced the write, and the next search sees the new values: accepted
    rather than copying the arrays on every write.

    Once it holds `approximate_rows` vectors, `build_with` runs a task that builds the approximate
    index from a copy of the rows (in a thread of its own by default: it takes seconds, during
    which searches stay exact and writes are recorded, then applied to the new index before it
    takes over)."""

    _INITIAL_CAPACITY = 1024

    def __init__(
        self,
        dimensions: int,
        approximate_rows: int = APPROXIMATE_ROWS,
        build_with: Callable[[Task], None] = in_background,
    ) -> None:
        self._dimensions = dimensions
        self._approximate_rows = approximate_rows
        self._build_with = build_with
        self._lock = threading.Lock()  # the arrays and the map, held briefly by searches and writers
        self._writing = threading.RLock()  # one writer at a time; re-entered by a build run in place
        self._shortlister: ApproximateIndex | Exhaustive = Exhaustive()
        self._built_at = 0  # rows when the approximate index was last built
        self._written_during_build: set[int] | None = None  # pks written while a build runs
        self._codes = numpy.zeros((self._INITIAL_CAPACITY, dimensions), dtype=numpy.int8)
        self._scales = numpy.zeros(self._INITIAL_CAPACITY, dtype=numpy.float32)
        self._pks = numpy.zeros(self._INITIAL_CAPACITY, dtype=numpy.int64)
        self._rows: dict[int, int] = {}  # agent pk -> row

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (at their capacity), the pk -> row map (estimated) and the
        approximate index, if built (not counting one being built)."""
        with self._lock:
            arrays = self._codes.nbytes + self._scales.nbytes + self._pks.nbytes
            rows = sys.getsizeof(self._rows) + len(self._rows) * 2 * _INT_BYTES
        return arrays + rows + self._shortlister.nbytes

    def upsert(self, rows: Iterable[tuple[int, bytes]]) -> None:
        """Store each (agent pk, packed vector), replacing the pk's vector if it has one; of one
        pk given twice, the later wins.

        Raises ValueError if a packed vector is not of this index's dimensions."""
        batch = dict(rows)
        if not batch:
            return
        codes, scales = unpack(list(batch.values()), self._dimensions)
        pks = numpy.fromiter(batch, dtype=numpy.int64, count=len(batch))
        with self._writing:
            with self._lock:
                self._reserve(len(self._rows) + sum(pk not in self._rows for pk in batch))
                targets = numpy.fromiter(map(self._row_of, batch), dtype=numpy.intp, count=len(batch))
                self._codes[targets] = codes
                self._scales[targets] = scales
                self._pks[targets] = pks
            self._shortlister.add(pks, codes, scales)
            self._written(batch)

    def remove(self, pks: Iterable[int]) -> None:
        """Forget these agents' vectors; pks without one are ignored."""
        with self._writing:
            removed = []
            with self._lock:
                for pk in pks:
                    row = self._rows.pop(pk, None)
                    if row is not None:
                        self._fill_from_last(row)
                        removed.append(pk)
            self._shortlister.remove(removed)
            self._written(removed)

    def nearest(self, query: numpy.ndarray, k: int, among: Collection[int] | None = None) -> list[tuple[int, float]]:
        """Up to `k` (agent pk, cosine) nearest the normalised float32 `query`, best first; with
        `among`, only those of these pks that have a vector.

        Raises ValueError if `query` is not one finite vector of this index's dimensions."""
        query_codes, query_scale = self._quantised(query)
        if k <= 0:
            return []
        if among is None:
            among = self._shortlister.shortlist(query, max(SHORTLIST_FACTOR * k, SHORTLIST_MIN))
        codes, scales, pks = self._snapshot() if among is None else self._gather(among)
        cosines = _cosines(codes, scales, query_codes, query_scale)
        return [(int(pks[i]), float(cosines[i])) for i in _best(cosines, k)]

    def similarities(self, query: numpy.ndarray, pks: Iterable[int]) -> dict[int, float]:
        """The cosine to the normalised float32 `query` of each of these agents that has a vector.

        Raises ValueError if `query` is not one finite vector of this index's dimensions."""
        query_codes, query_scale = self._quantised(query)
        codes, scales, found = self._gather(pks)
        cosines = _cosines(codes, scales, query_codes, query_scale)
        return dict(zip(found.tolist(), cosines.tolist()))

    def _quantised(self, query: numpy.ndarray) -> tuple[numpy.ndarray, numpy.float32]:
        if numpy.shape(query) != (self._dimensions,):
            raise ValueError(f"query must be one vector of {self._dimensions} dimensions, not {numpy.shape(query)}")
        codes, scales = quantise(numpy.asarray(query)[None, :])
        return codes[0], scales[0]

    def _snapshot(self) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """Views of the rows in use, with a copy of their pks: a removal during the search moves
        a row, and the copy keeps every row labelled as it was when the search began."""
        with self._lock:
            count = len(self._rows)
            return self._codes[:count], self._scales[:count], self._pks[:count].copy()

    def _gather(self, pks: Iterable[int]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """The codes, scales and pks of those of `pks` that have a vector; the rows are looked up
        under the lock and copied out of the arrays after it."""
        with self._lock:
            found = [(pk, self._rows[pk]) for pk in pks if pk in self._rows]
            codes, scales = self._codes, self._scales
        rows = numpy.fromiter((row for _, row in found), dtype=numpy.intp, count=len(found))
        labels = numpy.fromiter((pk for pk, _ in found), dtype=numpy.int64, count=len(found))
        return codes[rows], scales[rows], labels

    def _written(self, pks: Iterable[int]) -> None:
        """After a write: note its pks for a build under way, or start a build if the index has
        reached the threshold or grown enough since the last (the caller is the writer)."""
        if self._written_during_build is not None:
            self._written_during_build.update(pks)
        elif len(self._rows) >= max(self._approximate_rows, REBUILD_GROWTH * self._built_at):
            count = self._built_at = len(self._rows)
            # Copies: writers may change the arrays while the build runs.
            rows = self._codes[:count].copy(), self._scales[:count].copy(), self._pks[:count].copy()
            self._written_during_build = set()
            self._build_with(functools.partial(self._build, *rows))

    def _build(self, codes: numpy.ndarray, scales: numpy.ndarray, pks: numpy.ndarray) -> None:
        """Build the approximate index from these rows, bring it up to date with the writes made
        meanwhile, and let searches use it. A failure is logged, not raised: this may be the end
        of a thread of its own, and searches can go on as they were (another build is tried when
        the index has grown again)."""
        built = None
        try:
            built = ApproximateIndex.build(codes, scales, pks)
        except Exception:
            logger.exception("building the approximate vector index of %d agents failed", len(pks))
        with self._writing:
            written, self._written_during_build = self._written_during_build or set(), None
            if built is not None:
                built.remove(list(written))
                codes, scales, found = self._gather(written)
                built.add(found, codes, scales)
                self._shortlister = built
                logger.info("approximate vector index built over %d agents", len(self._rows))

    def _row_of(self, pk: int) -> int:
        """The pk's row, a new one at the end if it has none (the caller holds the lock and has
        reserved room)."""
        row = self._rows.get(pk)
        if row is None:
            row = self._rows[pk] = len(self._rows)
        return row

    def _reserve(self, count: int) -> None:
        """Room for `count` rows, growing the capacity by half (fewer spare rows than doubling, at a
        million agents) so that a stream of inserts copies each row O(1) times; the new arrays
        leave searches' snapshots of the old ones intact."""
        capacity = self._codes.shape[0]
        if count <= capacity:
            return
        capacity = max(count, capacity + capacity // 2)
        used = len(self._rows)
        codes = numpy.zeros((capacity, self._dimensions), dtype=numpy.int8)
        scales = numpy.zeros(capacity, dtype=numpy.float32)
        pks = numpy.zeros(capacity, dtype=numpy.int64)
        codes[:used], scales[:used], pks[:used] = self._codes[:used], self._scales[:used], self._pks[:used]
        self._codes, self._scales, self._pks = codes, scales, pks

    def _fill_from_last(self, row: int) -> None:
        """Move the last row into `row`, just freed, so that rows in use stay contiguous (the
        caller holds the lock and has already dropped the freed pk from the map)."""
        last = len(self._rows)
        if row == last:
            return
        moved = int(self._pks[last])
        self._codes[row], self._scales[row], self._pks[row] = self._codes[last], self._scales[last], moved
        self._rows[moved] = row


def _cosines(
    codes: numpy.ndarray, scales: numpy.ndarray, query_codes: numpy.ndarray, query_scale: numpy.float32
) -> numpy.ndarray:
    """Approximate cosines: rows were normalised before packing, so the dequantised dot product is
    the cosine up to quantisation error. int8 × int8 summed in int32 cannot overflow below 133,000
    dimensions, and needs no float copy of the matrix."""
    if codes.shape[0] >= _SPLIT_ROWS:
        # numpy releases the GIL in einsum: a large index is scanned by every core at once
        # (bench/embedding.py, 1,000,000 rows: 76 ms on one core of this host, 42 ms on two).
        parts = numpy.array_split(codes, _CORES)
        dots = numpy.concatenate(list(_scanners().map(lambda part: _dots(part, query_codes), parts)))
    else:
        dots = _dots(codes, query_codes)
    return dots.astype(numpy.float32) * scales * query_scale


def _dots(codes: numpy.ndarray, query_codes: numpy.ndarray) -> numpy.ndarray:
    return numpy.einsum("ij,j->i", codes, query_codes, dtype=numpy.int32)


_CORES = max(1, os.cpu_count() or 1)
_SPLIT_ROWS = 200_000  # below this a scan takes ~15 ms or less, and threads cost more than they save


@functools.cache
def _scanners() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_CORES, thread_name_prefix="vector-scan")


def _best(scores: numpy.ndarray, k: int) -> numpy.ndarray:
    """Positions of the `k` highest scores, highest first (partitioned, then only those sorted)."""
    if k < scores.shape[0]:
        chosen = numpy.argpartition(-scores, k - 1)[:k]
    else:
        chosen = numpy.arange(scores.shape[0])
    return chosen[numpy.argsort(-scores[chosen], kind="stable")]


Loader = Callable[[Any], tuple[list[tuple[int, bytes]], Any]]


class LiveVectors:
    """A VectorIndex kept current from the database: before each search, `refresh()` reads the
    vectors written since the last marker.

    `load_since(marker)` returns (rows of (agent pk, packed vector), the marker to pass next); the
    first call passes None and should return every vector. The marker means nothing here."""

    def __init__(self, index: VectorIndex, load_since: Loader) -> None:
        self._index = index
        self._load_since = load_since
        self._marker: Any = None
        self._refresh_lock = threading.Lock()

    @property
    def index(self) -> VectorIndex:
        return self._index

    def refresh(self) -> None:
        """Read and apply what was written since the previous refresh.

        One refresh runs at a time. A thread arriving during another's waits for it and then runs
        its own, since the running one may have read before the arrival's agents were written:
        after `refresh()` returns, the index holds every vector written before it was called.
        Raises what `load_since` raises, and ValueError for a vector of the wrong dimensions; the
        marker is then left where it was."""
        with self._refresh_lock:
            rows, marker = self._load_since(self._marker)
            self._index.upsert(rows)
            self._marker = marker
