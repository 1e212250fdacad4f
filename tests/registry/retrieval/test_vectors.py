"""`vectors`: the in-process index finds the nearest agents by int8 cosine, stays right through
replacements, removals and growth, fits 100,000 agents in 64 MiB, and `LiveVectors` keeps it
current one refresh at a time."""

from __future__ import annotations

import threading

import numpy
import pytest

from registry.retrieval.embedding import pack
from registry.retrieval.vectors import LiveVectors, VectorIndex

D = 256


def unit(vectors: numpy.ndarray) -> numpy.ndarray:
    return (vectors / numpy.linalg.norm(vectors, axis=-1, keepdims=True)).astype(numpy.float32)


def random_units(count: int, seed: int = 1) -> numpy.ndarray:
    return unit(numpy.random.default_rng(seed).standard_normal((count, D), dtype=numpy.float32))


def toward(query: numpy.ndarray, cosine: float, seed: int) -> numpy.ndarray:
    """A unit vector whose cosine with the unit `query` is `cosine`."""
    noise = numpy.random.default_rng(seed).standard_normal(D).astype(numpy.float32)
    orthogonal = unit(noise - (noise @ query) * query)
    return unit(cosine * query + numpy.sqrt(1 - cosine**2) * orthogonal)


def index_of(vectors: dict[int, numpy.ndarray]) -> VectorIndex:
    index = VectorIndex(D)
    index.upsert(zip(vectors, pack(numpy.stack(list(vectors.values())))))
    return index


@pytest.fixture
def query() -> numpy.ndarray:
    return random_units(1, seed=99)[0]


@pytest.fixture
def graded(query: numpy.ndarray) -> VectorIndex:
    """pk n has cosine n/10 with `query`, for n in -9..9."""
    return index_of({n: toward(query, n / 10, seed=n + 50) for n in range(-9, 10)})


def test_nearest_lists_agents_best_first_with_their_cosines(graded: VectorIndex, query: numpy.ndarray):
    found = graded.nearest(query, k=5)
    assert [pk for pk, _ in found] == [9, 8, 7, 6, 5]
    assert [cosine for _, cosine in found] == pytest.approx([0.9, 0.8, 0.7, 0.6, 0.5], abs=0.01)


def test_nearest_returns_at_most_k(graded: VectorIndex, query: numpy.ndarray):
    assert graded.nearest(query, k=0) == []
    assert len(graded.nearest(query, k=1)) == 1
    everything = graded.nearest(query, k=1000)
    assert [pk for pk, _ in everything] == list(range(9, -10, -1))


def test_nearest_among_ranks_only_those_agents_and_skips_unknown_ones(graded: VectorIndex, query: numpy.ndarray):
    found = graded.nearest(query, k=2, among={-3, 1, 4, 12345})
    assert [pk for pk, _ in found] == [4, 1]
    assert graded.nearest(query, k=2, among=[]) == []


def test_similarities_of_the_given_agents_that_have_a_vector(graded: VectorIndex, query: numpy.ndarray):
    cosines = graded.similarities(query, [3, -7, 404])
    assert cosines.keys() == {3, -7}
    assert cosines[3] == pytest.approx(0.3, abs=0.01)
    assert cosines[-7] == pytest.approx(-0.7, abs=0.01)


def test_int8_cosines_are_within_a_hundredth_of_float_cosines(query: numpy.ndarray):
    rows = numpy.stack([toward(query, c, seed=i) for i, c in enumerate(numpy.linspace(-1, 1, 201))])
    rows = numpy.concatenate([rows, random_units(500, seed=7)])
    index = index_of(dict(enumerate(rows)))
    approximate = index.similarities(query, range(len(rows)))
    exact = rows @ query
    assert max(abs(approximate[i] - exact[i]) for i in range(len(rows))) < 0.01


def test_upserting_a_new_vector_moves_the_agent(graded: VectorIndex, query: numpy.ndarray):
    graded.upsert([(-9, pack(toward(query, 0.95, seed=1)[None, :])[0])])
    assert graded.nearest(query, k=1)[0][0] == -9
    assert len(graded) == 19


def test_of_one_agent_upserted_twice_in_a_batch_the_later_vector_wins(query: numpy.ndarray):
    index = VectorIndex(D)
    near, far = pack(numpy.stack([toward(query, 0.9, seed=1), toward(query, -0.9, seed=2)]))
    index.upsert([(1, near), (1, far)])
    assert len(index) == 1
    assert index.similarities(query, [1])[1] == pytest.approx(-0.9, abs=0.01)


def test_removed_agents_are_gone_and_the_others_keep_their_cosines(graded: VectorIndex, query: numpy.ndarray):
    before = graded.similarities(query, range(-9, 10))
    graded.remove([9, -2, 0, 777])  # 777 never had a vector
    after = graded.similarities(query, range(-9, 10))
    assert after == {pk: cosine for pk, cosine in before.items() if pk not in {9, -2, 0}}
    assert graded.nearest(query, k=1)[0][0] == 8
    assert len(graded) == 16


def test_the_index_grows_past_its_initial_capacity_and_keeps_every_vector(query: numpy.ndarray):
    vectors = random_units(3000, seed=3)
    index = VectorIndex(D)
    small = index.nbytes
    for start in range(0, 3000, 700):
        index.upsert(zip(range(start, start + 700), pack(vectors[start : start + 700])))
    assert len(index) == 3000
    assert index.nbytes > small
    cosines = index.similarities(query, range(3000))
    assert numpy.allclose([cosines[pk] for pk in range(3000)], vectors @ query, atol=0.01)
    best = int(numpy.argmax(vectors @ query))
    assert index.nearest(query, k=1)[0][0] == best


def test_an_empty_index_finds_nothing(query: numpy.ndarray):
    index = VectorIndex(D)
    assert index.nearest(query, k=10) == []
    assert index.similarities(query, [1, 2]) == {}
    assert len(index) == 0


def test_a_query_or_vector_of_other_dimensions_is_refused(graded: VectorIndex):
    with pytest.raises(ValueError):
        graded.nearest(numpy.ones(D + 1, dtype=numpy.float32), k=1)
    with pytest.raises(ValueError):
        graded.upsert([(1, pack(numpy.ones((1, D - 1), dtype=numpy.float32))[0])])


def test_a_hundred_thousand_agents_fit_in_64_mib():
    index = VectorIndex(D)
    for start in range(0, 100_000, 25_000):
        index.upsert(zip(range(start, start + 25_000), pack(random_units(25_000, seed=start))))
    assert len(index) == 100_000
    assert index.nbytes <= 64 * 1024 * 1024


def test_searches_running_beside_a_writer_return_well_formed_results(query: numpy.ndarray):
    vectors = random_units(2000, seed=5)
    blobs = pack(vectors)
    index = VectorIndex(D)
    index.upsert(zip(range(1000), blobs[:1000]))
    done, problems = threading.Event(), []

    def write() -> None:
        for start in range(1000, 2000, 50):  # growth, replacements and removals in turn
            index.upsert(zip(range(start, start + 50), blobs[start : start + 50]))
            index.upsert(zip(range(start - 1000, start - 950), blobs[start : start + 50]))
            index.remove(range(start - 500, start - 480))
        done.set()

    def search() -> None:
        while not done.is_set():
            found = index.nearest(query, k=20)
            pks = [pk for pk, _ in found]
            if len(pks) != 20 or len(set(pks)) != 20 or not all(0 <= pk < 2000 for pk in pks):
                problems.append(found)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []


def test_live_vectors_start_from_everything_then_pass_each_marker_back(query: numpy.ndarray):
    near, far = pack(numpy.stack([toward(query, 0.9, seed=1), toward(query, 0.2, seed=2)]))
    batches = {None: ([(1, far)], "m1"), "m1": ([(2, near)], "m2"), "m2": ([], "m2")}
    markers = []

    def load_since(marker: object) -> tuple[list[tuple[int, bytes]], object]:
        markers.append(marker)
        return batches[marker]  # type: ignore[index]

    live = LiveVectors(VectorIndex(D), load_since)
    for _ in range(3):
        live.refresh()
    assert markers == [None, "m1", "m2"]
    assert [pk for pk, _ in live.index.nearest(query, k=5)] == [2, 1]


def test_a_failed_load_leaves_the_marker_where_it_was():
    markers, failures = [], [OSError("database unavailable")]

    def load_since(marker: object) -> tuple[list[tuple[int, bytes]], object]:
        markers.append(marker)
        if marker == "m1" and failures:
            raise failures.pop()
        return [], "m1" if marker is None else "m2"

    live = LiveVectors(VectorIndex(D), load_since)
    live.refresh()
    with pytest.raises(OSError):
        live.refresh()
    live.refresh()
    assert markers == [None, "m1", "m1"]


def test_a_refresh_arriving_during_another_waits_for_it_then_reads_from_its_marker(query: numpy.ndarray):
    first_inside, release_first = threading.Event(), threading.Event()
    log: list[str] = []

    def load_since(marker: object) -> tuple[list[tuple[int, bytes]], object]:
        log.append(f"enter {marker}")
        if marker is None:
            first_inside.set()
            release_first.wait(timeout=30)  # bounded, so a broken lock fails the test, not hangs it
        log.append(f"leave {marker}")
        return [], "after-first" if marker is None else "after-second"

    live = LiveVectors(VectorIndex(D), load_since)
    first = threading.Thread(target=live.refresh)
    first.start()
    assert first_inside.wait(timeout=30)
    second = threading.Thread(target=live.refresh)
    second.start()
    # The first refresh is held inside load_since, so a second that waits cannot finish: the
    # timeout only bounds how long a broken lock gets to show itself, it orders nothing.
    second.join(timeout=0.2)
    assert second.is_alive()
    assert log == ["enter None"]
    release_first.set()
    first.join(timeout=30)
    second.join(timeout=30)
    assert log == ["enter None", "leave None", "enter after-first", "leave after-first"]
