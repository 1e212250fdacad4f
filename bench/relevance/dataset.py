"""The relevance set: real Agent Cards and graded queries, as stored beside this module."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

SET_DIR = Path(__file__).resolve().parent
KINDS = ("keyword", "natural", "paraphrase")  # and "none": queries nothing in the set answers
RELEVANT = 2  # recall@5 and MRR count cards graded "clearly useful" (2) or "exactly this" (3)


@dataclasses.dataclass(frozen=True)
class Query:
    id: str
    kind: str
    text: str
    grades: dict[str, int]

    def relevant(self) -> set[str]:
        return {card for card, grade in self.grades.items() if grade >= RELEVANT}


@dataclasses.dataclass(frozen=True)
class RelevanceSet:
    cards: dict[str, dict[str, Any]]
    queries: list[Query]

    @classmethod
    def load(cls, directory: Path) -> RelevanceSet:
        cards = {path.stem: json.loads(path.read_text()) for path in sorted((directory / "cards").glob("*.json"))}
        queries = [Query(**q) for q in json.loads((directory / "queries.json").read_text())["queries"]]
        unknown = {card for q in queries for card in q.grades} - cards.keys()
        if unknown:
            raise SystemExit(f"queries.json grades cards that are not in cards/: {sorted(unknown)}")
        return cls(cards, queries)


def card_fields(card: dict[str, Any]) -> dict[str, list[str]]:
    """The searchable text of a card by field (what `registry.catalog.records.search_document`
    indexes, less the provider)."""
    skills = [s for s in card.get("skills") or [] if isinstance(s, dict)]
    return {
        "name": [card.get("name") or ""],
        "skill": [s.get("name") or "" for s in skills],
        "tags": [t for s in skills for t in s.get("tags") or []],
        "description": [card.get("description") or ""] + [s.get("description") or "" for s in skills],
        "examples": [e for s in skills for e in s.get("examples") or []],
    }


def card_text(card: dict[str, Any]) -> str:
    return "\n".join(text for texts in card_fields(card).values() for text in texts if text)
