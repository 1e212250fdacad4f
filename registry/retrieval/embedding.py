"""Text embeddings for semantic search, and their packed form in the database.

The model is wordllama's `l2_supercat` at 256 dimensions: a static table of token vectors whose
mean is the text's vector. It ships inside the wordllama wheel and is read from there only, never
downloaded, once per process on first use. A stored vector is int8 with a float32 scale per row
(`pack`), so that the in-process index of 100,000 agents fits in 64 MiB.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

import numpy

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# Stored beside every vector: a vector is only comparable with vectors of the same model and
# packing, so changing either must change this id (and re-embed the catalog).
MODEL_ID = "wordllama-l2_supercat-256-int8"
DIMENSIONS = 256

_SCALE_BYTES = 4  # a little-endian float32 before the int8 values of each packed row
_INT8_PEAK = 127  # -128 is left unused so that quantisation is symmetric around zero


class Embedder(Protocol):
    """Turns texts into comparable vectors."""

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """A (len(texts), dimensions) float32 array, each row of L2 norm 1 (all zeros for a text
        with no words)."""
        ...


class WordLlamaEmbedder:
    """wordllama's l2_supercat model, loaded from the wheel on the first `embed` of the process."""

    model_id = MODEL_ID
    dimensions = DIMENSIONS

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Raises FileNotFoundError if the installed wordllama wheel lacks the model's files (it
        never downloads them)."""
        return _normalised(_loaded_model().sum_token_vectors(texts))


class NullEmbedder:
    """Semantic search turned off: no model is loaded and every vector is empty."""

    model_id = "off"
    dimensions = 0

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        return numpy.zeros((len(texts), 0), dtype=numpy.float32)


class _TokenTable:
    """The model proper: a tokenizer and one vector per token id.

    wordllama's own `embed` pads every text of a batch to the longest one and multiplies the
    padded block by a mask; summing each text's token vectors directly gives the same vectors
    (tests/registry/retrieval/test_embedding.py compares them) for less work per card
    (bench/embedding.py times both)."""

    def __init__(self, tokenizer: Tokenizer, vectors: numpy.ndarray) -> None:
        tokenizer.no_padding()  # this copy is ours: wordllama's `embed` is never called on it
        self._tokenizer = tokenizer
        self._vectors = vectors
        self._last_id = vectors.shape[0] - 1

    def sum_token_vectors(self, texts: Sequence[str]) -> numpy.ndarray:
        """Per text, the sum of its token vectors (the mean's direction: rows are normalised next,
        so dividing by the token count would change nothing)."""
        sums = numpy.zeros((len(texts), self._vectors.shape[1]), dtype=numpy.float32)
        if not texts:
            return sums
        # `encode_batch_fast` (tokenizers >= 0.20) skips the character offsets, which are unused here.
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        ids = [encoding.ids for encoding in encodings]
        lengths = [len(text_ids) for text_ids in ids]
        flat = numpy.fromiter(chain.from_iterable(ids), dtype=numpy.intp, count=sum(lengths))
        numpy.minimum(flat, self._last_id, out=flat)  # as wordllama clamps ids beyond its table
        start = 0
        for row, length in enumerate(lengths):
            # One gather and sum per text: numpy.add.reduceat over all texts at once is several
            # times slower along axis 0.
            if length:
                sums[row] = self._vectors[flat[start : start + length]].sum(axis=0)
            start += length
        return sums


_model: _TokenTable | None = None
_model_lock = threading.Lock()


def _loaded_model() -> _TokenTable:
    """The process's model, loaded by the first caller while any others wait for it."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                _model = _load_model()
    return _model


def _load_model() -> _TokenTable:
    wordllama = _import_wordllama()
    # `WordLlama.load()` alone looks for the bundled tokenizer in `wordllama/tokenizer/` while the
    # wheel ships it in `wordllama/tokenizers/`, and so downloads it; naming the package directory
    # as the cache finds it there, and `disable_download` turns any other miss into
    # FileNotFoundError instead of a request to Hugging Face.
    package_directory = Path(wordllama.__path__[0])
    inference = wordllama.WordLlama.load(
        "l2_supercat", dim=DIMENSIONS, cache_dir=package_directory, disable_download=True
    )
    return _TokenTable(inference.tokenizer, inference.embedding)


def _import_wordllama() -> ModuleType:
    """`import wordllama`, leaving the root logger as it was.

    Importing wordllama calls `logging.basicConfig(level=INFO)`: on a process whose root logger has
    no handler yet, that would add a stderr handler and lower the level, and every library's INFO
    records would start appearing in the registry's output. The import happens lazily, after the
    registry has configured its logging, so the level and handlers are put back as they were."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        import wordllama
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)
    return wordllama


def _normalised(vectors: numpy.ndarray) -> numpy.ndarray:
    """Rows scaled to norm 1; a zero row (a text with no tokens) stays zero."""
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    return numpy.divide(vectors, norms, out=numpy.zeros_like(vectors), where=norms > 0)


def quantise(vectors: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Each row of a 2-D array as int8 codes and a float32 scale, row ≈ codes × scale.

    Raises ValueError if `vectors` is not 2-D or holds a value that is not finite."""
    vectors = numpy.asarray(vectors, dtype=numpy.float32)
    if vectors.ndim != 2:
        raise ValueError(f"vectors must be a 2-D array of rows, not {vectors.ndim}-D")
    if not numpy.isfinite(vectors).all():
        raise ValueError("vectors hold a value that is not finite")
    peaks = numpy.abs(vectors).max(axis=1, initial=0.0)
    scales = (peaks / _INT8_PEAK).astype(numpy.float32)
    divisors = numpy.where(scales > 0, scales, 1.0).astype(numpy.float32)
    codes = numpy.rint(vectors / divisors[:, None]).clip(-_INT8_PEAK, _INT8_PEAK).astype(numpy.int8)
    return codes, scales


def pack(vectors: numpy.ndarray) -> list[bytes]:
    """Each row as bytes: its float32 scale (little-endian), then its int8 codes.

    Raises ValueError if `vectors` is not 2-D or holds a value that is not finite."""
    codes, scales = quantise(vectors)
    records = numpy.empty((codes.shape[0], _SCALE_BYTES + codes.shape[1]), dtype=numpy.uint8)
    records[:, :_SCALE_BYTES] = scales.astype("<f4").view(numpy.uint8).reshape(-1, _SCALE_BYTES)
    records[:, _SCALE_BYTES:] = codes.view(numpy.uint8)
    return [record.tobytes() for record in records]


def unpack(blobs: Sequence[bytes], dimensions: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The int8 codes (len(blobs), dimensions) and float32 scales (len(blobs),) of packed rows.

    Raises ValueError if a blob's length is not that of `dimensions` packed values."""
    width = _SCALE_BYTES + dimensions
    for position, blob in enumerate(blobs):
        if len(blob) != width:
            raise ValueError(
                f"packed vector {position} is {len(blob)} bytes; {dimensions} dimensions pack into {width}"
            )
    records = numpy.frombuffer(b"".join(blobs), dtype=numpy.uint8).reshape(len(blobs), width)
    scales = numpy.ascontiguousarray(records[:, :_SCALE_BYTES]).view("<f4").reshape(-1)
    codes = numpy.ascontiguousarray(records[:, _SCALE_BYTES:]).view(numpy.int8)
    return codes, scales.astype(numpy.float32)
