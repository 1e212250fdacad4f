"""Full-text search over agents: the document a card gives, and how each database indexes and
matches it (FTS5 on SQLite, a tsvector with a GIN index on PostgreSQL)."""

from __future__ import annotations

import re
import unicodedata

from sqlalchemy import Connection, text

from registry.db import DriverInsert
from registry.validation import CardSummary

_WORDS = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 8


def search_document(summary: CardSummary) -> str:
    """What a text query searches: names, descriptions, the provider, and each skill's tags and examples."""
    parts = [summary.name, summary.description, summary.provider_org or ""]
    for skill in summary.skills:
        parts.extend([skill.name, skill.description, " ".join(skill.tags), " ".join(skill.examples)])
    return "\n".join(p for p in parts if p)


_LEXEMES = re.compile(r"[^\W_]+")
# ASCII text, the common case, is split without a regular expression: letters and digits kept
# (in lower case), everything else a separator. A bench card's document took 26 µs instead of 59.
_ASCII_WORDS = str.maketrans({c: chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})
MAX_LEXEME = 200  # characters; PostgreSQL refuses a lexeme over 2,047 bytes


def lexemes(source: str) -> list[str]:
    """The words of `source` as the PostgreSQL index keeps them, in order: runs of letters and
    digits, in lower case and without diacritics, as SQLite's FTS5 table tokenises them
    (`unicode61 remove_diacritics 2`), so that both databases find the same agents."""
    if source.isascii():
        words = source.translate(_ASCII_WORDS).split()
    else:
        folded = "".join(c for c in unicodedata.normalize("NFKD", source.lower()) if not unicodedata.combining(c))
        words = _LEXEMES.findall(folded)
    if words and len(max(words, key=len)) > MAX_LEXEME:
        words = [word[:MAX_LEXEME] for word in words]
    return words


class TextIndex:
    """Full-text search over agents: FTS5 on SQLite, a GIN-indexed tsvector on PostgreSQL.

    On PostgreSQL the vector is built here (`lexemes`) and stored as given (migration 0012):
    `to_tsvector` cost the server 0.13–0.16 ms a document, a fifth of its work per registration.
    """

    def __init__(self, dialect: str) -> None:
        self.sqlite = dialect == "sqlite"
        if self.sqlite:
            self._table, self._key, value = "agent_fts", "rowid", {"document": "text"}
        else:
            self._table, self._key, value = "agent_search", "agent_pk", {"document_tsv": "tsvector"}
        self._insert = DriverInsert(dialect, self._table, {self._key: "integer", **value})

    def value(self, document: str) -> str:
        """What the index stores of a document: the document (SQLite), its vector (PostgreSQL)."""
        return document if self.sqlite else self.vector(document)

    def write(self, conn: Connection, rows: list[tuple[int, str]]) -> None:
        """Insert documents: (agent pk, `value`) rows."""
        self._insert.run(conn, rows)

    @staticmethod
    def vector(document: str) -> str:
        """A document as PostgreSQL tsvector text (lexemes without positions: matching needs none)."""
        words = sorted(set(lexemes(document)))
        return "'" + "' '".join(words) + "'" if words else ""

    def remove(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(text(f"DELETE FROM {self._table} WHERE {self._key} = :pk"), {"pk": agent_pk})

    def query(self, user_text: str) -> str | None:
        """Every word must match, each as a prefix. None when the text has no words."""
        if self.sqlite:
            words = _WORDS.findall(user_text)[:MAX_QUERY_WORDS]  # FTS5 folds them as it folded the documents
            return " ".join(f'"{w}"*' for w in words) or None
        words = list(dict.fromkeys(lexemes(user_text)))[:MAX_QUERY_WORDS]
        return " & ".join(f"'{w}':*" for w in words) or None


# The PostgreSQL condition for `TextIndex.query`'s :q (a tsquery as text, words already lexemes).
TSQUERY_MATCH = "{table}.document_tsv @@ CAST(:q AS tsquery)"
