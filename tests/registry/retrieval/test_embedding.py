"""`embedding`: wordllama's bundled model loads from the wheel alone and leaves logging alone; its
vectors carry meaning; packing keeps them within quantisation error."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from registry.retrieval.embedding import (
    DIMENSIONS,
    MODEL_ID,
    NullEmbedder,
    WordLlamaEmbedder,
    pack,
    unpack,
)

ROOT = Path(__file__).resolve().parents[3]

# Run in a fresh interpreter: in this one, another test may already have imported wordllama or
# loaded the model, and then neither the network nor the logger would be put to the test.
FIRST_LOAD = """
import json, logging, socket, sys

def refuse(*args, **kwargs):
    raise OSError("network access attempted")

socket.socket.connect = socket.create_connection = socket.getaddrinfo = refuse
root = logging.getLogger()
before = [root.level, [repr(h) for h in root.handlers]]
from registry.retrieval.embedding import WordLlamaEmbedder
imported_with_module = "wordllama" in sys.modules
vectors = WordLlamaEmbedder().embed(["find me a hotel in Lisbon"])
print(json.dumps({
    "before": before,
    "after": [root.level, [repr(h) for h in root.handlers]],
    "imported_with_module": imported_with_module,
    "imported_on_use": "wordllama" in sys.modules,
    "shape": list(vectors.shape),
}))
"""

CURRENCY_AGENT = (
    "Currency Exchange Agent. Converts amounts between currencies at live exchange rates. "
    "Skills: convert currency, list supported currencies. Examples: how much is 100 USD in EUR?"
)
WEATHER_AGENT = (
    "Weather Forecast Agent. Gives the weather forecast for any city: temperature, rain and wind "
    "for the next seven days. Examples: will it rain in Paris tomorrow?"
)


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    model = WordLlamaEmbedder()
    model.embed(["load the model once for the module"])
    return model


def test_the_model_loads_on_first_use_from_the_wheel_with_the_network_refused_and_logging_untouched():
    child = subprocess.run([sys.executable, "-c", FIRST_LOAD], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    report = json.loads(child.stdout)
    assert report["after"] == report["before"]
    assert not report["imported_with_module"]  # importing the module costs nothing until a search
    assert report["imported_on_use"]
    assert report["shape"] == [1, DIMENSIONS]
    assert child.stderr == ""  # wordllama's INFO records did not reach stderr


def test_embeddings_are_unit_float32_rows_of_256_dimensions(embedder: WordLlamaEmbedder):
    vectors = embedder.embed([CURRENCY_AGENT, "weather", "東京の天気"])
    assert vectors.dtype == numpy.float32
    assert vectors.shape == (3, DIMENSIONS)
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (embedder.model_id, embedder.dimensions) == (MODEL_ID, DIMENSIONS)


def test_an_empty_text_embeds_as_a_zero_row_and_no_texts_as_no_rows(embedder: WordLlamaEmbedder):
    vectors = embedder.embed(["", "weather"])
    assert not vectors[0].any()
    assert numpy.linalg.norm(vectors[1]) == pytest.approx(1.0)
    assert embedder.embed([]).shape == (0, DIMENSIONS)


def test_a_paraphrase_sits_nearer_the_agent_it_means_than_an_unrelated_one(embedder: WordLlamaEmbedder):
    query, currency, weather = embedder.embed(["convert euros to yen", CURRENCY_AGENT, WEATHER_AGENT])
    assert query @ currency > query @ weather + 0.1


def test_vectors_are_those_of_wordllama_itself(embedder: WordLlamaEmbedder):
    import wordllama

    reference = wordllama.WordLlama.load(
        "l2_supercat", dim=DIMENSIONS, cache_dir=Path(wordllama.__file__).parent, disable_download=True
    )
    texts = [CURRENCY_AGENT, WEATHER_AGENT, "convert euros to yen", "a"]
    expected = reference.embed(texts, norm=True)
    assert numpy.allclose(embedder.embed(texts), expected, atol=1e-5)


def test_the_null_embedder_gives_empty_vectors_without_loading_anything():
    off = NullEmbedder()
    assert (off.model_id, off.dimensions) == ("off", 0)
    assert off.embed(["anything", "else"]).shape == (2, 0)


def test_a_packed_row_is_its_scale_then_its_int8_values():
    vector = numpy.array([[0.5, -0.25, 0.0, 0.125]], dtype=numpy.float32)
    (blob,) = pack(vector)
    assert len(blob) == 4 + 4
    (scale,) = struct.unpack("<f", blob[:4])
    assert scale == pytest.approx(0.5 / 127)
    assert list(struct.unpack("4b", blob[4:])) == [127, -64, 0, 32]


def test_a_zero_row_packs_with_scale_zero():
    codes, scales = unpack(pack(numpy.zeros((1, 8), dtype=numpy.float32)), 8)
    assert scales.tolist() == [0.0]
    assert not codes.any()


@given(
    hnp.arrays(
        numpy.float32,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40),
        elements=st.floats(-1e6, 1e6, width=32, allow_subnormal=False),
    )
)
def test_unpacking_what_was_packed_gives_each_value_within_half_a_step(vectors: numpy.ndarray):
    codes, scales = unpack(pack(vectors), vectors.shape[1])
    assert codes.dtype == numpy.int8 and scales.dtype == numpy.float32
    assert codes.shape == vectors.shape and scales.shape == (vectors.shape[0],)
    error = numpy.abs(codes * scales[:, None] - vectors)
    step = numpy.abs(vectors).max(axis=1, keepdims=True) / 127
    assert (error <= step * 0.5001 + 1e-37).all()


def test_a_blob_of_the_wrong_length_is_refused():
    blobs = pack(numpy.ones((2, 8), dtype=numpy.float32))
    with pytest.raises(ValueError, match="packed vector 1 is 11 bytes"):
        unpack([blobs[0], blobs[1][:-1]], 8)
    with pytest.raises(ValueError):
        unpack(blobs, 16)


def test_packing_refuses_what_is_not_finite_rows():
    with pytest.raises(ValueError):
        pack(numpy.array([[1.0, numpy.nan]], dtype=numpy.float32))
    with pytest.raises(ValueError):
        pack(numpy.ones(8, dtype=numpy.float32))


def test_threads_embedding_at_once_get_the_vectors_one_thread_gets(embedder: WordLlamaEmbedder):
    texts = [CURRENCY_AGENT, WEATHER_AGENT, "convert euros to yen", "book a table for two"] * 25
    expected = embedder.embed(texts)
    start, results = threading.Barrier(4), {}

    def embed(worker: int) -> None:
        start.wait()
        results[worker] = numpy.concatenate([embedder.embed(texts), *(embedder.embed([text]) for text in texts)])

    threads = [threading.Thread(target=embed, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(
        numpy.allclose(vectors, numpy.concatenate([expected, expected]), atol=1e-6) for vectors in results.values()
    )
    assert len(results) == 4
