"""The `find-agents` skill: a search of the catalog, asked in the query syntax of
`registry.catalog.query_syntax` (a text part) or with the filters of a data part, and answered
with the agents found as data and as a few lines a person can read.

`total` counts the agents answered so far: this page's and those of the pages before it (the
cursor carries the count), so it is the whole count once `nextCursor` is null. The search is the
REST API's (`CatalogSearch`), which finds a page at a time and counts no further.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from registry import jsontext
from registry.a2a.errors import InvalidParams
from registry.a2a.messages import COMPLETED
from registry.a2a.skills import Call, Outcome, artifact
from registry.catalog import AgentQuery, CatalogSearch, filtered_query, health_json, normalize_tag, parse_query
from registry.retrieval.analysis import terms

DEFAULT_LIMIT = 10
SUGGESTED = 5
LISTED_IN_TEXT = 10
# The data part's filters: list-valued ones and their key in the query syntax.
LIST_FILTERS = {"tags": "tag", "inputModes": "input", "outputModes": "output", "capabilities": "cap"}
VALUE_FILTERS = {
    "match": "match",
    "protocolVersion": "proto",
    "health": "health",
    "signature": "sig",
    "skill": "skill",
    "status": "status",
    "ranking": "rank",
}
FIELDS = ("q", *LIST_FILTERS, *VALUE_FILTERS, "includeDead", "limit", "cursor")


class FindAgents:
    def __init__(self, search: CatalogSearch, *, max_limit: int) -> None:
        self._search = search
        self._max_limit = max_limit

    def __call__(self, call: Call) -> Outcome:
        query, seen = self.query(call)
        page = self._search.search(query)
        asks = SkillCriteria.of(query)  # once for the page: it analyses the query's text
        agents = [agent_json(row, asks) for row in page.agents]
        found: dict[str, Any] = {
            "agents": agents,
            "total": seen + len(agents),
            "nextCursor": f"{seen + len(agents)}.{page.next_cursor}" if page.next_cursor else None,
        }
        if not agents and seen == 0:
            found["suggestedTags"] = page.suggested_tags or self._suggested(query)
        text = _summary(found, seen, call.message.text or None)
        return Outcome(COMPLETED, [artifact("agents", "Agents matching the query", found, text, call.output_modes)])

    def query(self, call: Call) -> tuple[AgentQuery, int]:
        """The search the message asks for, and how many agents earlier pages answered. Raises
        InvalidParams (and the syntax's QuerySyntaxError, an InvalidRequest)."""
        fields = _fields(call.message.data)
        seen, cursor = _cursor(fields.get("cursor"))
        base = AgentQuery(text=_string(fields, "q"), limit=self._limit(fields.get("limit")), cursor=cursor)
        query = parse_query(call.message.text, base) if call.message.text else base
        return filtered_query(_filters(fields), query), seen

    def _limit(self, value: Any) -> int:
        if value is None:
            return DEFAULT_LIMIT
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # a protobuf Struct (the SDKs' data part) holds every number as a double
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= self._max_limit:
            raise InvalidParams(f"limit must be a whole number from 1 to {self._max_limit}")
        return value

    def _suggested(self, query: AgentQuery) -> list[str]:
        """Tags like the ones asked for (sharing their first letters), else the most used."""
        found = [tag for wanted in query.tags for tag, _ in self._search.tags(SUGGESTED, normalize_tag(wanted)[:3])]
        return list(dict.fromkeys(found))[:SUGGESTED] or [tag for tag, _ in self._search.tags(SUGGESTED)]


def _fields(data: tuple[Any, ...]) -> dict[str, Any]:
    if len(data) > 1:
        raise InvalidParams("find-agents takes one data part of filters")
    if not data:
        return {}
    if not isinstance(data[0], dict):
        raise InvalidParams("the data part of find-agents must be an object of filters")
    unknown = sorted(set(data[0]) - set(FIELDS))
    if unknown:
        raise InvalidParams(f"find-agents does not know {unknown}; its filters are {list(FIELDS)}")
    return data[0]


def _filters(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The data part's filters as (key, value) pairs of the query syntax."""
    pairs: list[tuple[str, str]] = []
    for field, key in LIST_FILTERS.items():
        value = fields.get(field)
        values = [value] if isinstance(value, str) else value or []
        if not isinstance(values, list) or not all(isinstance(item, str) for item in values):
            raise InvalidParams(f"{field} must be a list of strings")
        pairs += [(key, item) for item in values]
    pairs += [(key, value) for field, key in VALUE_FILTERS.items() if (value := _string(fields, field)) is not None]
    if fields.get("includeDead") is not None:
        if not isinstance(fields["includeDead"], bool):
            raise InvalidParams("includeDead must be true or false")
        pairs += [("include", "dead")] if fields["includeDead"] else []
    return pairs


def _string(fields: dict[str, Any], name: str) -> str | None:
    value = fields.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidParams(f"{name} must be a string")
    return value


def _cursor(value: Any) -> tuple[int, str | None]:
    """(agents answered before, the catalog's cursor) from a `nextCursor` of ours."""
    if value is None or value == "":
        return 0, None
    seen, _, cursor = value.partition(".") if isinstance(value, str) else ("", "", "")
    if not (seen.isascii() and seen.isdigit() and len(seen) <= 9 and cursor):
        raise InvalidParams("cursor is not one this agent gave; ask again without it")
    return int(seen), cursor


def agent_json(row: Any, asks: SkillCriteria) -> dict[str, Any]:
    """An agent as find-agents answers it (`row`: the catalog's listed columns); its skills that
    meet what the query asks of one."""
    profile = jsontext.loads_stored(row.profile)
    return {
        "id": row.id,
        "name": profile.get("name") or "",
        "description": profile.get("description") or "",
        "cardUrl": row.card_url,
        "interfaces": profile.get("interfaces") or [],
        "matchedSkills": matched_skills(profile, asks),
        "health": health_json(row),
        "signature": {"state": row.signature_state, "kids": list(row.signature_kids or [])},
    }


def matched_skills(profile: dict[str, Any], asks: SkillCriteria) -> list[dict[str, Any]]:
    """The agent's skills that meet what the query asks of a skill (its id, a tag, a mode, a word
    of the text); every skill when it asks nothing of one."""
    defaults = {"inputModes": profile.get("defaultInputModes"), "outputModes": profile.get("defaultOutputModes")}
    return [
        {"id": s["id"], "name": s["name"], "description": s.get("description"), "tags": s.get("tags")}
        for s in profile.get("skills") or []
        if asks.met_by(s, defaults)
    ]


@dataclasses.dataclass(frozen=True)
class SkillCriteria:
    """What a query asks of one skill; a skill lacking modes of its own has the card's defaults."""

    skill_id: str | None
    tags: frozenset[str]
    words: frozenset[str]
    modes: tuple[tuple[str, str], ...]  # (the skill's field, a mode it must hold)

    @classmethod
    def of(cls, query: AgentQuery) -> SkillCriteria:
        modes = (("inputModes", query.input_mode), ("outputModes", query.output_mode))
        return cls(
            query.skill,
            frozenset(normalize_tag(tag) for tag in query.tags),
            frozenset(terms(query.text) if query.text else ()),
            tuple((field, mode.strip().lower()) for field, mode in modes if mode),
        )

    def met_by(self, skill: dict[str, Any], defaults: dict[str, Any]) -> bool:
        if self.skill_id and skill["id"] != self.skill_id:
            return False
        if self.tags and not self.tags & {normalize_tag(tag) for tag in skill.get("tags") or []}:
            return False
        for field, mode in self.modes:
            if mode not in {held.lower() for held in skill.get(field) or defaults[field] or []}:
                return False
        texts = [
            skill.get("name"),
            skill.get("description"),
            *(skill.get("tags") or []),
            *(skill.get("examples") or []),
        ]
        return not self.words or bool(self.words & set(terms(" ".join(text for text in texts if text))))


def _summary(found: dict[str, Any], seen: int, asked: str | None) -> str:
    agents, about = found["agents"], f' for "{asked}"' if asked else ""
    if not agents:
        tags = found.get("suggestedTags") or []
        hint = f" Closest tags: {', '.join(tags)} (ask with tag:{tags[0]})." if tags else ""
        return f"{'No more agents' if seen else 'No agent'} found{about}.{hint}"
    earlier = f" (after {seen} on earlier pages)" if seen else ""
    lines = [f"Found {len(agents)} agent{'s' if len(agents) != 1 else ''}{about}{earlier}:"]
    for agent in agents[:LISTED_IN_TEXT]:
        state = f"health {agent['health']['state']}, signature {agent['signature']['state']}"
        lines.append(f"- {agent['name']}: {_short(agent['description'])} Card: {agent['cardUrl']} ({state})")
    if len(agents) > LISTED_IN_TEXT:
        lines.append(f"… and {len(agents) - LISTED_IN_TEXT} more in the data part.")
    if found["nextCursor"]:
        lines.append(f'More: ask the same with a data part {{"cursor": "{found["nextCursor"]}"}}.')
    return "\n".join(lines)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
