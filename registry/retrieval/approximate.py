"""A shortlist of the agents likely nearest a query, for catalogs too large to scan exactly.

An exact scan reads every agent's 256 int8 values per search. faiss's fast-scan product quantiser
keeps 4 bits per dimension instead (16 levels learned for each dimension from a sample), and
scans those codes with SIMD table lookups; `VectorIndex` asks it for a shortlist several times
longer than the results wanted and scores the shortlist exactly from its own rows, so an agent's
cosine is the same whichever path found it (bench/embedding.py measures speed and recall).

Partitions (faiss's IVF with many lists) were tried first and fail on card embeddings: every card
shares one dominant direction and cards differ in many small ones, so a query's nearest agents lie
in most partitions, and probing half of them still misses the top 100 too often. The one inverted
list used here is only faiss's container that takes agents' pks as ids and removes in place
(faiss's id map around a flat index rewrites every code to remove one).

The codes cannot replace `VectorIndex`'s int8 rows: `among`, `similarities` and the scoring of
the shortlist need each agent's exact vector, which a product quantiser does not keep.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import cast

import faiss
import numpy

_SAMPLE_ROWS = 65_536  # at most this many rows teach the quantiser: plenty for 16 levels a dimension
_CHUNK_ROWS = 65_536  # rows dequantised to float32 at a time while building
_ID_BYTES = 8


class SearchesOrOneWriter:
    """A lock held by many searches at once or by one writer alone: faiss's structures may be
    searched concurrently but not while being changed. A waiting writer holds back new searches,
    so that a steady stream of them cannot keep it waiting. (The standard library has no such
    lock; the searches it guards take milliseconds and release the GIL inside faiss.)"""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._searches = 0
        self._writers = 0  # waiting or writing

    @contextlib.contextmanager
    def searching(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._writers)
            self._searches += 1
        try:
            yield
        finally:
            with self._condition:
                self._searches -= 1
                self._condition.notify_all()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """For one writer at a time (VectorIndex serialises its writers)."""
        with self._condition:
            self._writers += 1
            self._condition.wait_for(lambda: not self._searches)
        try:
            yield
        finally:
            with self._condition:
                self._writers -= 1
                self._condition.notify_all()


class ApproximateIndex:
    """Agents' vectors as faiss product-quantiser codes, by agent pk."""

    def __init__(self, dimensions: int) -> None:
        # PQ<d>x4fs: one sub-quantiser of 4 bits for each dimension; IVF1: the single list. The
        # factory owns the parts it assembles; its result is typed as any index.
        built = faiss.index_factory(dimensions, f"IVF1,PQ{dimensions}x4fs", faiss.METRIC_INNER_PRODUCT)
        self._faiss = cast(faiss.IndexIVFPQFastScan, built)
        self._lock = SearchesOrOneWriter()

    @classmethod
    def build(cls, codes: numpy.ndarray, scales: numpy.ndarray, pks: numpy.ndarray) -> ApproximateIndex:
        """Learn the quantiser's levels from evenly spaced rows of these packed vectors, then hold
        every one of them. Raises what faiss raises (RuntimeError, MemoryError)."""
        _on_this_thread_alone()
        index = cls(codes.shape[1])
        step = max(1, -(-len(pks) // _SAMPLE_ROWS))
        index._faiss.train(_dequantised(codes[::step], scales[::step]))
        for start in range(0, len(pks), _CHUNK_ROWS):
            end = start + _CHUNK_ROWS
            index.add(pks[start:end], codes[start:end], scales[start:end])
        return index

    @property
    def nbytes(self) -> int:
        """The codes at the capacity faiss's table rounds them up to (a power of two), and the ids
        at twice their size, an upper bound of what a growing std::vector holds."""
        count = self._faiss.ntotal
        block = self._faiss.bbs  # codes are stored in blocks of this many vectors
        code_bytes = -(-count // block) * block * self._faiss.code_size
        capacity = 1 << (code_bytes - 1).bit_length() if code_bytes else 0
        return capacity + 2 * count * _ID_BYTES

    def shortlist(self, query: numpy.ndarray, count: int) -> list[int]:
        """The pks of up to `count` agents estimated nearest the float32 `query`, best first."""
        queries = numpy.ascontiguousarray(query, dtype=numpy.float32).reshape(1, -1)
        _on_this_thread_alone()
        with self._lock.searching():
            _, ids = self._faiss.search(queries, count)
        return ids[0][ids[0] >= 0].tolist()

    def add(self, pks: numpy.ndarray, codes: numpy.ndarray, scales: numpy.ndarray) -> None:
        """Hold these agents' packed vectors, replacing any held for the same pks (each pk given
        once)."""
        ids = numpy.ascontiguousarray(pks, dtype=numpy.int64)
        vectors = _dequantised(codes, scales)
        _on_this_thread_alone()
        with self._lock.writing():
            self._faiss.remove_ids(faiss.IDSelectorBatch(ids))
            self._faiss.add_with_ids(vectors, ids)

    def remove(self, pks: Sequence[int]) -> None:
        """Forget these agents; pks not held are ignored."""
        if pks:
            _on_this_thread_alone()
            with self._lock.writing():
                self._faiss.remove_ids(faiss.IDSelectorBatch(numpy.asarray(pks, dtype=numpy.int64)))


class Exhaustive:
    """No shortlist: below the approximate index's threshold every agent is scored exactly."""

    nbytes = 0

    def shortlist(self, query: numpy.ndarray, count: int) -> None:
        return None

    def add(self, pks: numpy.ndarray, codes: numpy.ndarray, scales: numpy.ndarray) -> None:
        pass

    def remove(self, pks: Sequence[int]) -> None:
        pass


def _on_this_thread_alone() -> None:
    """Let faiss compute on the calling thread only. OpenMP's thread count is a setting of each
    thread (in the OpenMP runtime faiss's wheel bundles for itself), and by default every thread
    calling faiss starts a team as large as the machine. The registry calls it from several
    request threads at once, where such teams only compete for the cores and spin between
    regions (a write costs twice the CPU for the same time); a build, in a thread of its own,
    then leaves the other cores to the searches."""
    faiss.omp_set_num_threads(1)


def _dequantised(codes: numpy.ndarray, scales: numpy.ndarray) -> numpy.ndarray:
    return numpy.ascontiguousarray(codes, dtype=numpy.float32) * scales[:, None]
