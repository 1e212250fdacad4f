"""The catalog on PostgreSQL: a GIN-indexed tsvector for text, row locks for writers."""

from __future__ import annotations

import re
import unicodedata

from sqlalchemy import Connection, select, text

from registry.catalog.models import Agent
from registry.catalog.store import CatalogStore
from registry.catalog.store_sqlite import MAX_QUERY_WORDS

_LEXEMES = re.compile(r"[^\W_]+")
# ASCII text, the common case, is split without a regular expression: letters and digits kept
# (in lower case), everything else a separator.
_ASCII_WORDS = str.maketrans({c: chr(c).lower() if chr(c).isalnum() else " " for c in range(128)})
MAX_LEXEME = 200  # characters; PostgreSQL refuses a lexeme over 2,047 bytes


def lexemes(source: str) -> list[str]:
    """The words of `source` as the index keeps them, in order: runs of letters and digits, in
    lower case and without diacritics, as SQLite's FTS5 table tokenises them, so that both
    databases find the same agents."""
    if source.isascii():
        words = source.translate(_ASCII_WORDS).split()
    else:
        folded = "".join(c for c in unicodedata.normalize("NFKD", source.lower()) if not unicodedata.combining(c))
        words = _LEXEMES.findall(folded)
    return [word[:MAX_LEXEME] for word in words]


def vector(document: str) -> str:
    """A document as tsvector text: its lexemes without positions (matching needs none). Built
    here rather than by `to_tsvector`, so both databases split words alike."""
    words = sorted(set(lexemes(document)))
    return "'" + "' '".join(words) + "'" if words else ""


class PostgresCatalogStore(CatalogStore):
    def lock_agent(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(select(Agent.pk).where(Agent.pk == agent_pk).with_for_update())

    def write_documents(self, conn: Connection, rows: list[tuple[int, str]]) -> None:
        conn.execute(text("INSERT INTO agent_search (agent_pk, document_tsv) VALUES (:pk, CAST(:vector AS tsvector))"),
                     [{"pk": pk, "vector": vector(document)} for pk, document in rows])

    def remove_document(self, conn: Connection, agent_pk: int) -> None:
        conn.execute(text("DELETE FROM agent_search WHERE agent_pk = :pk"), {"pk": agent_pk})

    def text_query(self, user_text: str) -> str | None:
        words = list(dict.fromkeys(lexemes(user_text)))[:MAX_QUERY_WORDS]
        return " & ".join(f"'{word}':*" for word in words) or None
