"""The reference semantic ranker: wordllama's static embeddings, loaded from the wheel alone."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.relevance.dataset import card_text
from bench.relevance.metrics import Ranking


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Any connection attempted inside fails: proves a model loads from the wheel's own files."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("network access attempted while loading the model")

    saved = socket.socket.connect, socket.create_connection, socket.getaddrinfo
    socket.socket.connect = socket.create_connection = socket.getaddrinfo = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.socket.connect, socket.create_connection, socket.getaddrinfo = saved  # type: ignore[method-assign]


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclasses.dataclass
class ModelLoad:
    seconds: float
    rss_delta: int
    matrix_bytes: int


def load_wordllama() -> tuple[Any, ModelLoad]:
    """wordllama's bundled 256-dimension l2_supercat model, from the files inside the wheel.

    `WordLlama.load()` alone looks for the bundled tokenizer in `wordllama/tokenizer/` while the
    wheel ships it in `wordllama/tokenizers/`, and so downloads it from Hugging Face; naming the
    package directory as the cache finds it (`<cache>/tokenizers/`), and `disable_download`
    turns any other miss into FileNotFoundError instead of a download."""
    import wordllama

    before, t0 = rss_bytes(), time.perf_counter()
    with no_network():
        package = Path(wordllama.__file__).parent
        model = wordllama.WordLlama.load("l2_supercat", dim=256, cache_dir=package, disable_download=True)
    load = ModelLoad(time.perf_counter() - t0, rss_bytes() - before, int(model.embedding.nbytes))
    return model, load


class SemanticRanker:
    """Cosine between the query's and each card's wordllama embedding (card text: name,
    description, skill names, descriptions, tags and examples); cards under `floor` are not shown."""

    def __init__(self, cards: dict[str, dict[str, Any]], model: Any, floor: float) -> None:
        self.ids = list(cards)
        self._model = model
        self.floor = floor
        self._matrix = model.embed([card_text(cards[i]) for i in self.ids], norm=True)

    def with_floor(self, floor: float) -> SemanticRanker:
        """The same embeddings behind another floor."""
        other = copy.copy(self)
        other.floor = floor
        return other

    def similarities(self, text: str) -> list[float]:
        return [float(x) for x in self._matrix @ self._model.embed([text], norm=True)[0]]

    def rank(self, text: str) -> Ranking:
        pairs = [(i, s) for i, s in zip(self.ids, self.similarities(text)) if s >= self.floor]
        return sorted(pairs, key=lambda p: -p[1])
