"""Realistic Agent Cards for the search benchmark (`bench/search.py`), generated from a seed.

Words come from real card text (the 128 cards of bench/relevance/cards) and, to reach the
thousands of distinct words a large catalog holds, from English prose that ships with Python
(the language reference's topics and the standard library's docstrings; no network). They are
ranked card words first, then prose words, and drawn Zipf-distributed (rank r has weight
1/r^1.1): a few words are on most cards and most words on few, as in real text, so that a
planner's choice for a common word and for a rare one differ. Card n depends only on the seed and
n: the first 10,000 cards of every scale are the same.

Some words are placed rather than drawn, so that each kind of query exists at every scale:
- rare words: `rare[j]` is on every `period(j)`-th card (periods 100 … 1,000,000, a geometric
  series), so its number of agents at any scale is known exactly (`rare_words`);
- absent words: real words on no card, sharing no five-letter prefix with any word that is (a
  prefix or stemmed search finds nothing either);
- two tags, `bench-left` and `bench-right`, each on 1.5 % of agents and never both on one.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
import hashlib
import itertools
import json
import random
import re
import sysconfig
from collections.abc import Iterable
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 1  # raise when cards change: kept databases are then loaded again
SEED = 20_260_817
CARDS = Path(__file__).resolve().parent / "relevance" / "cards"
QUERIES = Path(__file__).resolve().parent / "relevance" / "queries.json"

ZIPF_S = 1.1
PROSE_WORDS = 3_000  # drawn words taken from prose, after every card word
RARE_WORDS = 400
ABSENT_WORDS = 100
RARE_PERIODS = (100, 1_000_000)
TAGS = 300
LEFT_TAG, RIGHT_TAG = "bench-left", "bench-right"
SIDE_TAG_SHARE = 0.015
STOPWORDS = frozenset(
    "a an and are as at be by can for from has have how i in is it its me my of on or our so that the "
    "their this to was we what when which who will with you your".split()
)
NAME_SUFFIXES = ("Agent", "Assistant", "Bot", "Service", "Copilot", "Helper")
ORG_SUFFIXES = ("Labs", "Systems", "Technologies", "Group", "Software", "Partners")

_CARD_WORD = re.compile(r"[a-z]+")
# In prose, a word not part of a dotted name and not a call: `os.path` and `len(` are code.
_PROSE_WORD = re.compile(r"(?<![\w.])[a-z]{3,14}(?![\w.(])")
_VOWEL = re.compile(r"[aeiouy]")  # "wxrwxr" is a file mode, not a word


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    words: tuple[str, ...]  # drawn, most frequent first
    rare: tuple[str, ...]  # placed on every period(j)-th card
    absent: tuple[str, ...]  # on no card
    tags: tuple[str, ...]  # drawn, most frequent first
    examples: tuple[str, ...]  # real skill examples, some cards carry them verbatim
    sentences: tuple[str, ...]  # natural queries in users' words

    @functools.cached_property
    def fingerprint(self) -> str:
        """Identifies the cards: another Python's prose would give other words."""
        data = json.dumps([GENERATOR_VERSION, SEED, dataclasses.astuple(self)]).encode()
        return hashlib.sha256(data).hexdigest()[:12]

    def content_words(self) -> list[str]:
        """The drawn words a user types into a search box, most frequent first."""
        return [w for w in self.words if w not in STOPWORDS and len(w) >= 3]

    def period(self, j: int) -> int:
        low, high = RARE_PERIODS
        return round(low * (high / low) ** (j / (len(self.rare) - 1)))

    def offset(self, j: int) -> int:
        return (j * 7_919) % self.period(j)

    def agents_with_rare(self, j: int, scale: int) -> int:
        """How many of cards 0 … scale-1 hold `rare[j]`."""
        period, offset = self.period(j), self.offset(j)
        return 0 if offset >= scale else (scale - 1 - offset) // period + 1

    def rare_words(self, scale: int, low: int = 5, high: int = 50) -> list[str]:
        """Placed words held by `low`…`high` agents at this scale."""
        return [w for j, w in enumerate(self.rare) if low <= self.agents_with_rare(j, scale) <= high]


def _real_cards() -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(CARDS.glob("*.json"))]


def _card_texts(card: dict[str, Any]) -> list[str]:
    texts = [card.get("name"), card.get("description")]
    for skill in card.get("skills") or []:
        texts += [skill.get("name"), skill.get("description"), *(skill.get("tags") or [])]
        texts += skill.get("examples") or []
    return [t for t in texts if isinstance(t, str)]


def _prose() -> collections.Counter[str]:
    """Words of the language reference's topics and of the top-level standard modules' docstrings."""
    from pydoc_data.topics import topics

    counts = collections.Counter(_PROSE_WORD.findall(" ".join(topics[k] for k in sorted(topics))))
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                counts.update(_PROSE_WORD.findall(ast.get_docstring(node) or ""))
    return counts


@functools.cache
def vocabulary() -> Vocabulary:
    cards = _real_cards()
    # Ranked by how many real cards hold the word, not how often it occurs: one sample written
    # nine ways ("route", "traffic") would otherwise lead the catalog.
    in_cards = collections.Counter(w for c in cards for w in _words(_card_texts(c)))
    prose = _prose()
    card_words = sorted(in_cards, key=lambda w: (-in_cards[w], -prose[w], w))
    prose_only = sorted((w for w in prose if w not in in_cards), key=lambda w: (-prose[w], w))
    drawn = card_words + prose_only[:PROSE_WORDS]
    tags = _tags(cards, drawn)
    examples = sorted({e.strip() for c in cards for s in c.get("skills") or [] for e in s.get("examples") or []})
    emitted = {*drawn, *_words([*tags, *examples, *NAME_SUFFIXES, *ORG_SUFFIXES, LEFT_TAG, RIGHT_TAG])}
    # Placed and absent words share no five-letter prefix with any other word, so that neither a
    # prefix match nor a stemmer joins them to another word: their agent counts stay exact.
    taken = {w[:5] for w in emitted}
    distinct = []
    for word in _shuffled(prose_only[PROSE_WORDS:]):
        if len(word) >= 5 and word[:5] not in taken and _VOWEL.search(word):
            taken.add(word[:5])
            distinct.append(word)
    rare, absent = distinct[:RARE_WORDS], distinct[RARE_WORDS : RARE_WORDS + ABSENT_WORDS]
    queries = json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]
    sentences = [q["text"] for q in queries if q["kind"] in ("natural", "none")]
    return Vocabulary(tuple(drawn), tuple(rare), tuple(absent), tuple(tags), tuple(examples), tuple(sentences))


def _shuffled(words: list[str]) -> list[str]:
    """The tail of the prose ranking is alphabetical (one occurrence each): mixed, so that the
    placed words do not all start with "d"."""
    mixed = list(words)
    random.Random(SEED).shuffle(mixed)
    return mixed


def _tags(cards: list[dict[str, Any]], drawn: list[str]) -> list[str]:
    """Real tags, most used first, then content words, up to TAGS."""
    used = collections.Counter(
        t.strip().lower() for c in cards for s in c.get("skills") or [] for t in s.get("tags") or [] if t.strip()
    )
    tags = sorted(used, key=lambda t: (-used[t], t))
    extra = (w for w in drawn if len(w) >= 4 and w not in STOPWORDS and w not in used)
    return (tags + list(extra))[:TAGS]


def _words(texts: Iterable[str]) -> set[str]:
    return {w for t in texts for w in _CARD_WORD.findall(t.lower())}


def _zipf_cumulative(n: int, shift: float = 0.0) -> list[float]:
    """Cumulative weights of ranks 1 … n, weight 1/(r + shift)^s (`shift` flattens the head)."""
    return list(itertools.accumulate(1 / (r + shift) ** ZIPF_S for r in range(1, n + 1)))


class CardGenerator:
    """Card n of the corpus, always the same for the same n."""

    def __init__(self, vocab: Vocabulary | None = None, seed: int = SEED) -> None:
        self.vocab = vocab or vocabulary()
        self._seed = seed
        self._words = self.vocab.words
        self._word_weights = _zipf_cumulative(len(self._words))
        # Tags are chosen per skill from a short list: with a flatter head, the most used tag is
        # on about a third of the agents rather than nearly all.
        self._tag_weights = _zipf_cumulative(len(self.vocab.tags), shift=5)
        self._rare = [(w, self.vocab.period(j), self.vocab.offset(j)) for j, w in enumerate(self.vocab.rare)]
        content = self.vocab.content_words()
        self._orgs = [f"{content[i].title()} {ORG_SUFFIXES[i % len(ORG_SUFFIXES)]}" for i in range(0, 800, 4)]
        self._org_weights = _zipf_cumulative(len(self._orgs))

    def items(self, start: int, stop: int) -> list[dict[str, Any]]:
        """What `POST /v1/agents/import` takes for cards start … stop-1."""
        placed: dict[int, list[str]] = collections.defaultdict(list)
        for word, period, offset in self._rare:  # by stepping: testing each card for each word was slow
            for n in range(start + (offset - start) % period, stop, period):
                placed[n].append(word)
        return [
            {"card": self.card(n, placed[n]), "cardUrl": f"https://agent{n}.example.com/.well-known/agent-card.json"}
            for n in range(start, stop)
        ]

    def card(self, n: int, placed: list[str]) -> dict[str, Any]:
        """Card n; `placed`, its rare words (`items` finds them)."""
        rng = random.Random(self._seed * 10_000_019 + n)
        description = self._text(rng, 10, 40)
        for word in placed:  # anywhere in it
            description.insert(rng.randrange(len(description) + 1), word)
        skills = [self._skill(rng, s) for s in range(rng.randint(1, 4))]
        side = rng.random()
        if side < 2 * SIDE_TAG_SHARE:
            skills[0]["tags"].append(LEFT_TAG if side < SIDE_TAG_SHARE else RIGHT_TAG)
        org = rng.choices(self._orgs, cum_weights=self._org_weights)[0]
        return {
            "name": f"{self._title(rng)} {rng.choice(NAME_SUFFIXES)}",
            "description": _sentence(description),
            "version": f"{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}",
            "supportedInterfaces": [
                {"url": f"https://agent{n}.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "provider": {"organization": org, "url": f"https://{org.split()[0].lower()}.example.com"},
            "capabilities": {"streaming": rng.random() < 0.5, "pushNotifications": rng.random() < 0.3},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain", "application/json"],
            "skills": skills,
        }

    def _skill(self, rng: random.Random, index: int) -> dict[str, Any]:
        tags = dict.fromkeys(rng.choices(self.vocab.tags, cum_weights=self._tag_weights, k=rng.randint(1, 5)))
        examples = []
        for _ in range(rng.randint(0, 2)):
            real = rng.random() < 0.15
            examples.append(rng.choice(self.vocab.examples) if real else _sentence(self._text(rng, 5, 12)))
        return {
            "id": f"skill-{index}",
            "name": self._title(rng),
            "description": _sentence(self._text(rng, 5, 20)),
            "tags": list(tags),
            "examples": examples,
        }

    def _text(self, rng: random.Random, low: int, high: int) -> list[str]:
        return rng.choices(self._words, cum_weights=self._word_weights, k=rng.randint(low, high))

    def _title(self, rng: random.Random) -> str:
        words = [w for w in self._text(rng, 2, 4) if w not in STOPWORDS] or ["general"]
        return " ".join(w.title() for w in words[:3])


def _sentence(words: list[str]) -> str:
    text = " ".join(words)
    return text[:1].upper() + text[1:] + "."


if __name__ == "__main__":  # a look at the corpus: python bench/search_corpus.py
    vocab = vocabulary()
    print(f"{len(vocab.words)} drawn words, {len(vocab.rare)} rare, {len(vocab.absent)} absent, {len(vocab.tags)} tags")
    print("fingerprint", vocab.fingerprint, "absent e.g.", vocab.absent[:8])
    print(json.dumps(CardGenerator(vocab).items(0, 1)[0], indent=1))
