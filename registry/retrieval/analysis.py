"""How text becomes search terms: case- and accent-folded words, English stop words dropped,
Snowball-stemmed. Cards and queries go through the same function, on both databases: the index
stores the terms this module makes, so SQLite and PostgreSQL match the same agents."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable

import Stemmer

MAX_TERM = 64  # characters; a longer "word" is a hash or an encoded blob, kept by its head
MAX_QUERY_TERMS = 16  # distinct terms of a query that count

_WORDS = re.compile(r"[^\W_]+")
# ASCII text, the common case, is split without a regular expression: letters and digits kept
# (in lower case), everything else a separator.
_ASCII_WORDS = str.maketrans({c: chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})

# NLTK's English stop words (the list BM25 implementations ship), without the negations, which
# carry meaning in a query ("not", "no").
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself nor now of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours yourself yourselves""".split()
)

_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    # A Stemmer keeps a cache and is not safe to share between threads: one per thread.
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def words(text: str) -> list[str]:
    """The words of `text`, folded: runs of letters and digits, lower case, no diacritics."""
    if text.isascii():
        return text.translate(_ASCII_WORDS).split()
    # Decomposed first: compatibility forms ("№", "™", "ℍ") decompose into capitals, folded next.
    folded = "".join(c for c in unicodedata.normalize("NFKD", text).casefold() if not unicodedata.combining(c))
    return _WORDS.findall(folded)


def terms(text: str) -> list[str]:
    """The search terms of `text`, in order: its words without stop words, stemmed."""
    kept = [word[:MAX_TERM] for word in words(text) if word not in STOP_WORDS]
    return _stemmer().stemWords(kept) if kept else []


def field_text(texts: Iterable[str]) -> str:
    """Texts as one field of the index: their terms joined by spaces (the index splits on spaces)."""
    return " ".join(term for text in texts if text for term in terms(text))


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in order, at most MAX_QUERY_TERMS."""
    return list(dict.fromkeys(terms(text)))[:MAX_QUERY_TERMS]
