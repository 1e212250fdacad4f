"""`vectors`: the in-process index finds the nearest agents by int8 cosine, stays right through
replacements, removals and growth, fits 100,000 agents in 64 MiB, and `LiveVectors` keeps it
current one refresh at a time. Past its threshold the approximate index shortlists the agents:
nearly the same nearest agents as an exact scan, with the same cosines, through the same writes."""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy
import pytest

from bench.search_corpus import CardGenerator
from registry.catalog.records import embedding_text
from registry.retrieval.approximate import ApproximateIndex
from registry.retrieval.embedding import WordLlamaEmbedder, pack
from registry.retrieval.vectors import LiveVectors, VectorIndex
from registry.validation import summarize_card

D = 256
QUERIES = Path(__file__).resolve().parents[3] / "bench" / "relevance" / "queries.json"


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
    assert searches_beside_a_writer(index, blobs, query, stop=2000, step=50) == []


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


# The approximate index, crossed into with a small threshold and built in the writing thread.


def run_now(task: Callable[[], None]) -> None:
    task()


@functools.cache
def real_embeddings(count: int = 3000) -> tuple[list[bytes], numpy.ndarray]:
    """Packed embeddings of `count` of the search benchmark's generated cards, and the embeddings
    of the relevance set's queries: text like a catalog's, not random directions."""
    embedder = WordLlamaEmbedder()
    texts = [embedding_text(summarize_card(item["card"])) for item in CardGenerator().items(0, count)]
    queries = [query["text"] for query in json.loads(QUERIES.read_text())["queries"]]
    return pack(embedder.embed(texts)), embedder.embed(queries)


def filled(blobs: list[bytes], approximate_rows: int, build_with: Callable[[Callable[[], None]], None] = run_now):
    index = VectorIndex(D, approximate_rows=approximate_rows, build_with=build_with)
    for start in range(0, len(blobs), 500):
        index.upsert(zip(range(start, start + 500), blobs[start : start + 500]))
    return index


@pytest.fixture(scope="module")
def exact_and_approximate() -> tuple[VectorIndex, VectorIndex]:
    blobs, _ = real_embeddings()
    return filled(blobs, approximate_rows=10**9), filled(blobs, approximate_rows=2000)


def recall(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> float:
    return len({pk for pk, _ in found} & {pk for pk, _ in expected}) / len(expected)


def test_the_approximate_index_is_built_once_the_threshold_is_crossed_then_after_fourfold_growth():
    blobs, _ = real_embeddings()
    sizes: list[int] = []
    index = VectorIndex(D, approximate_rows=600, build_with=lambda task: (sizes.append(len(index)), task()))
    for start in range(0, 3000, 250):
        index.upsert(zip(range(start, start + 250), blobs[start : start + 250]))
    assert sizes == [750, 3000]


@pytest.mark.parametrize("k", [10, 100])
def test_the_approximate_index_finds_nearly_every_agent_an_exact_scan_does(exact_and_approximate, k: int):
    exact, approximate = exact_and_approximate
    _, queries = real_embeddings()
    recalls = [recall(approximate.nearest(query, k), exact.nearest(query, k)) for query in queries]
    assert numpy.mean(recalls) >= 0.95


def test_agents_found_approximately_have_their_exact_cosines(exact_and_approximate):
    exact, approximate = exact_and_approximate
    _, queries = real_embeddings()
    for query in queries[:10]:
        found = approximate.nearest(query, 50)
        assert found == sorted(found, key=lambda pair: -pair[1])
        assert dict(found) == exact.similarities(query, [pk for pk, _ in found])


def test_among_and_similarities_stay_exact_past_the_threshold(exact_and_approximate):
    exact, approximate = exact_and_approximate
    _, queries = real_embeddings()
    among = list(range(0, 3000, 7))
    for query in queries[:10]:
        assert approximate.nearest(query, 20, among) == exact.nearest(query, 20, among)
        assert approximate.similarities(query, among) == exact.similarities(query, among)


def test_past_the_threshold_an_upsert_replaces_the_vector_and_a_removal_forgets_the_agent(query: numpy.ndarray):
    blobs, _ = real_embeddings()
    index = filled(blobs, approximate_rows=2000)
    index.upsert(
        [(17, pack(toward(query, 0.97, seed=1)[None, :])[0]), (5000, pack(toward(query, 0.95, seed=2)[None, :])[0])]
    )
    assert [pk for pk, _ in index.nearest(query, 2)] == [17, 5000]
    index.remove([17, 4])
    assert [pk for pk, _ in index.nearest(query, 1)] == [5000]
    assert 17 not in {pk for pk, _ in index.nearest(query, 3000)}
    assert len(index) == 3000 - 1


def test_agents_removed_past_the_threshold_leave_the_shortlist_to_the_others():
    blobs, queries = real_embeddings()
    index, exact = filled(blobs, approximate_rows=2000), filled(blobs, approximate_rows=10**9)
    nearest = [pk for pk, _ in exact.nearest(queries[0], 800)]
    for each in (index, exact):
        each.remove(nearest)  # more than a shortlist
    assert index.nearest(queries[0], 10) == exact.nearest(queries[0], 10)


def test_writes_made_while_the_approximate_index_is_built_reach_it(query: numpy.ndarray):
    blobs, _ = real_embeddings()
    builds: list[Callable[[], None]] = []
    index = filled(blobs[:2000], approximate_rows=2000, build_with=builds.append)
    near = pack(numpy.stack([toward(query, cosine, seed=n) for n, cosine in enumerate([0.97, 0.96, 0.95])]))
    index.upsert([(3, near[0]), (7, near[1]), (9000, near[2])])  # 3 and 7 replaced, 9000 new
    index.remove([3, 11])
    assert [pk for pk, _ in index.nearest(query, 2)] == [7, 9000]  # exact until the build is done
    builds.pop()()
    assert [pk for pk, _ in index.nearest(query, 2)] == [7, 9000]  # from a shortlist of 500
    found = [pk for pk, _ in index.nearest(query, 2000)]
    assert 3 not in found and 11 not in found
    assert len(found) == len(index) == 2000 - 2 + 1


def test_a_failed_build_is_logged_and_searches_stay_exact(monkeypatch, caplog, query: numpy.ndarray):
    def fail(*args: object) -> ApproximateIndex:
        raise MemoryError

    monkeypatch.setattr(ApproximateIndex, "build", fail)
    blobs, _ = real_embeddings()
    with caplog.at_level(logging.ERROR, logger="registry.retrieval.vectors"):
        index = filled(blobs[:1000], approximate_rows=500)
    assert "approximate vector index" in caplog.text
    exact = filled(blobs[:1000], approximate_rows=10**9)
    assert index.nearest(query, 10) == exact.nearest(query, 10)


def test_searches_beside_a_writer_past_the_threshold_return_well_formed_results(query: numpy.ndarray):
    blobs, _ = real_embeddings()
    index = filled(blobs[:1000], approximate_rows=500)
    assert searches_beside_a_writer(index, blobs, query, stop=3000, step=100) == []


def searches_beside_a_writer(
    index: VectorIndex, blobs: list[bytes], query: numpy.ndarray, stop: int, step: int
) -> list[object]:
    """Three threads search while one writes agents 1000..stop, `step` at a time (additions,
    replacements and removals in turn); the searches whose answer was not 20 distinct known pks."""
    done, problems = threading.Event(), []

    def write() -> None:
        for start in range(1000, stop, step):
            index.upsert(zip(range(start, start + step), blobs[start : start + step]))
            index.upsert(zip(range(start - 1000, start - 1000 + step), blobs[start : start + step]))
            index.remove(range(start - 500, start - 480))
        done.set()

    def search() -> None:
        while not done.is_set():
            found = index.nearest(query, k=20)
            pks = [pk for pk, _ in found]
            if len(pks) != 20 or len(set(pks)) != 20 or not all(0 <= pk < stop for pk in pks):
                problems.append(found)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return problems
