"""What one crawl of a domain's manifest did, as the API and the CLI show it."""

from __future__ import annotations

import dataclasses
from typing import Any

from registry.discovery.crawl.reader import Refusal

# The rule of a card the catalog refused, by the catalog's error code.
CARD_RULES = {
    "invalid_card": "ard.card-invalid",
    "payload_too_large": "ard.card-too-large",
    "signature_required": "ard.card-signature-required",
    "target_refused": "ard.card-refused",
    "agent_timeout": "ard.card-unreachable",
    "agent_unreachable": "ard.card-unreachable",
}


@dataclasses.dataclass
class CrawlReport:
    """`listed`: entries that say they are A2A agents, at every depth (refused ones and older
    versions of one identifier included); `ignored`: entries of other types, and older versions.
    `registered`: agents
    the crawl created; `linked`: listed agents registered before, by anyone (their provenance is
    kept, the crawl never changes them); `updated`: new card versions of changed entries;
    `deprecated` / `reactivated`: agents whose entry disappeared / came back; `skipped`: entries
    whose agent its owner deleted (a scheduled crawl does not bring it back). `complete`: every
    catalog was read, so absent entries were taken as removed."""

    url: str
    found_via: str
    listed: int = 0
    registered: list[dict[str, str]] = dataclasses.field(default_factory=list)
    linked: list[dict[str, str]] = dataclasses.field(default_factory=list)
    updated: list[dict[str, str]] = dataclasses.field(default_factory=list)
    unchanged: int = 0
    deprecated: list[dict[str, str]] = dataclasses.field(default_factory=list)
    reactivated: list[dict[str, str]] = dataclasses.field(default_factory=list)
    skipped: int = 0
    refused: list[Refusal] = dataclasses.field(default_factory=list)
    ignored: int = 0
    catalogs: int = 0
    complete: bool = True

    def refuse(self, identifier: str, rule: str, message: str) -> None:
        self.refused.append(Refusal(identifier, rule, message))

    def refuse_error(self, identifier: str, error: dict[str, Any]) -> None:
        """A card the catalog would not take (`error`: its `{code, message, details}`)."""
        code = str(error.get("code", "error"))
        message = str(error.get("message", ""))
        issues = (error.get("details") or {}).get("issues") or []
        if issues:
            first = issues[0]
            more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
            message = f"{message}: {first.get('path') or '/'} {first.get('message')}{more}"
        self.refuse(identifier, CARD_RULES.get(code, "ard.card-" + code.replace("_", "-")), message)

    def sort(self) -> None:
        """Every list in identifier order (cards are fetched concurrently: they finish in any order)."""
        for named_agents in (self.registered, self.linked, self.updated, self.deprecated, self.reactivated):
            named_agents.sort(key=lambda item: item["identifier"])
        self.refused.sort(key=lambda refusal: refusal.identifier)

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "foundVia": self.found_via,
            "listed": self.listed,
            "registered": self.registered,
            "linked": self.linked,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deprecated": self.deprecated,
            "reactivated": self.reactivated,
            "skipped": self.skipped,
            "refused": [refusal.to_json() for refusal in self.refused],
            "ignored": self.ignored,
            "catalogs": self.catalogs,
            "complete": self.complete,
        }


def named(identifier: str, agent_id: str) -> dict[str, str]:
    return {"identifier": identifier, "id": agent_id}
