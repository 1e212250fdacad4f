"""The text query syntax of catalog search, shared by the registry's A2A agent (`find-agents`) and
the web catalog: one line a person or an orchestrating agent types, read into an `AgentQuery`.

Plain words (and "quoted phrases") search the text: name, skills, tags, descriptions, ranked best
first. Words of the form `key:value` filter, as the REST API's query parameters of
`GET /v1/agents` do; every filter narrows the result:

    tag:weather            skills tagged `weather` (repeat for more: all must match)
    tag:"machine learning" a value with spaces, in double quotes
    match:any              the tags match if any one does (default: all)
    skill:forecast         a skill with this id
    input:text/plain       accepts this media type (alias in:)
    output:image/png       produces this media type (alias out:)
    mode:application/json  accepts and produces it
    cap:streaming          a capability: streaming, push (pushNotifications), extended (extendedAgentCard)
    proto:1.0              speaks this protocol version (alias protocol:)
    health:up              up, degraded, down or unknown
    sig:verified           signature state: verified, invalid, unverifiable, unsigned (alias signature:)
    status:deprecated      active (default), deprecated or any
    include:dead           also agents down for long (hidden by default)
    rank:lexical           with text: fused (default), lexical or semantic

Shorthands: `is:signed` (= `sig:verified`), `is:unsigned`, `is:up` (= `health:up`, also
`is:healthy`), `is:streaming`, `is:push`, `is:deprecated`.

Keys are case-insensitive. A word whose key is not one of these (`https://…`, `10:30`) is text.
A known key with a value it does not take, an empty value, or a negated filter (`-tag:x`, which
search cannot express) raises `QuerySyntaxError` with a message that says what would do.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

from registry.catalog.search import CAPABILITIES, HEALTH_FILTERS, STATUS_FILTERS, AgentQuery
from registry.errors import InvalidRequest
from registry.retrieval.scoring import RANKINGS
from registry.trust import SIGNATURE_STATES

MAX_QUERY_CHARS = 1_024  # as a REST query parameter (`registry.request_input.MAX_QUERY_VALUE_CHARS`)
# A word: runs of characters other than white space and quotes, and quoted stretches ("…"; an
# unclosed quote runs to the end).
_WORD = re.compile(r'(?:[^\s"]|"[^"]*"?)+')
_KEY = re.compile(r"^(-?)([A-Za-z]+):(.*)$", re.DOTALL)
CAPABILITY_NAMES = {
    "streaming": "streaming",
    "push": "pushNotifications",
    "pushnotifications": "pushNotifications",
    "extended": "extendedAgentCard",
    "extendedagentcard": "extendedAgentCard",
}
SHORTHANDS: dict[str, tuple[str, str]] = {
    "signed": ("sig", "verified"),
    "verified": ("sig", "verified"),
    "unsigned": ("sig", "unsigned"),
    "up": ("health", "up"),
    "healthy": ("health", "up"),
    "streaming": ("cap", "streaming"),
    "push": ("cap", "push"),
    "deprecated": ("status", "deprecated"),
}
ALIASES = {"in": "input", "out": "output", "protocol": "proto", "signature": "sig"}


class QuerySyntaxError(InvalidRequest):
    """A query the syntax cannot read; the message names the word and what it takes."""

    code = "invalid_query"


def parse_query(text: str, base: AgentQuery | None = None) -> AgentQuery:
    """`text` read as a catalog search, over `base` (its limit, cursor and the like; by default
    `AgentQuery()`). Raises QuerySyntaxError."""
    if len(text) > MAX_QUERY_CHARS:
        raise QuerySyntaxError(f"the query is over the limit of {MAX_QUERY_CHARS} characters")
    reading = _Reading(base or AgentQuery())
    for match in _WORD.finditer(text):
        reading.read(match.group())
    return reading.result()


def filtered_query(filters: Iterable[tuple[str, str]], base: AgentQuery | None = None) -> AgentQuery:
    """`base` narrowed by filters given apart, as a structured request holds them: (key, value)
    pairs of the syntax, `("tag", "machine learning")`, `("health", "up")`. A filter `base`
    already has with another value is refused, as in one query. Raises QuerySyntaxError."""
    reading = _Reading(base or AgentQuery())
    for key, value in filters:
        reading.apply(key, value)
    return reading.result()


def _key(name: str) -> str:
    return ALIASES.get(name.lower(), name.lower())


def _unquoted(value: str) -> str:
    return value.replace('"', "").strip()


def _choice(key: str, value: str, choices: tuple[str, ...] | list[str]) -> str:
    folded = value.lower()
    for choice in choices:
        if choice.lower() == folded:
            return choice
    raise QuerySyntaxError(f"{key}: takes one of {', '.join(choices)}, not {value!r}")


class _Reading:
    """The filters read so far; `result()` is the query they make."""

    def __init__(self, base: AgentQuery) -> None:
        self.base = base
        self.words: list[str] = [base.text] if base.text else []
        self.changes: dict[str, Any] = {}
        self.tags: list[str] = list(base.tags)
        self.capabilities: list[str] = list(base.capabilities)
        self._filters: dict[str, Callable[[str, str], None]] = {
            "tag": lambda key, value: self.tags.append(value),
            "match": lambda key, value: self._set("match_any", _choice(key, value, ("all", "any")) == "any"),
            "skill": lambda key, value: self._set("skill", value),
            "input": lambda key, value: self._set("input_mode", value),
            "output": lambda key, value: self._set("output_mode", value),
            "mode": self._mode,
            "cap": self._capability,
            "proto": lambda key, value: self._set("protocol_version", value),
            "health": lambda key, value: self._set("health", _choice(key, value, HEALTH_FILTERS)),
            "sig": lambda key, value: self._set("signature", _choice(key, value, SIGNATURE_STATES)),
            "status": lambda key, value: self._set("status", _choice(key, value, STATUS_FILTERS)),
            "include": lambda key, value: self._set("include_dead", _choice(key, value, ("dead",)) == "dead"),
            "rank": lambda key, value: self._set("ranking", _choice(key, value, RANKINGS)),
            "is": self._shorthand,
        }

    def read(self, word: str) -> None:
        found = _KEY.match(word)
        key = _key(found.group(2)) if found else ""
        if not found or key not in self._filters:
            phrase = _unquoted(word)
            if phrase:
                self.words.append(phrase)
            return
        if found.group(1):
            raise QuerySyntaxError(f"{word!r}: search cannot exclude; leave the filter out")
        self.apply(key, _unquoted(found.group(3)))

    def apply(self, key: str, value: str) -> None:
        key = _key(key)
        if key not in self._filters:
            raise QuerySyntaxError(f"{key!r} is no filter; the filters are {', '.join(self._filters)}")
        if not value.strip():
            raise QuerySyntaxError(f"{key}: needs a value (for example {key}:{_EXAMPLES[key]})")
        self._filters[key](key, value.strip())

    def result(self) -> AgentQuery:
        return dataclasses.replace(
            self.base,
            text=" ".join(self.words) or None,
            tags=tuple(self.tags),
            capabilities=tuple(dict.fromkeys(self.capabilities)),
            **self.changes,
        )

    def _set(self, field: str, value: object) -> None:
        base = getattr(self.base, field)
        given = self.changes[field] if field in self.changes else None if base == getattr(_DEFAULT, field) else base
        if given is not None and given != value:
            raise QuerySyntaxError(f"{_FIELD_KEYS[field]}: given twice with different values; search takes one")
        self.changes[field] = value

    def _mode(self, key: str, value: str) -> None:
        self._set("input_mode", value)
        self._set("output_mode", value)

    def _capability(self, key: str, value: str) -> None:
        name = CAPABILITY_NAMES.get(value.lower())
        if name is None:
            raise QuerySyntaxError(f"cap: takes one of streaming, push, extended ({', '.join(CAPABILITIES)})")
        self.capabilities.append(name)

    def _shorthand(self, key: str, value: str) -> None:
        meaning = SHORTHANDS.get(value.lower())
        if meaning is None:
            raise QuerySyntaxError(f"is: takes one of {', '.join(SHORTHANDS)}, not {value!r}")
        self._filters[meaning[0]](meaning[0], meaning[1])


_DEFAULT = AgentQuery()
_EXAMPLES = {
    "tag": "weather",
    "match": "any",
    "skill": "forecast",
    "input": "text/plain",
    "output": "application/json",
    "mode": "text/plain",
    "cap": "streaming",
    "proto": "1.0",
    "health": "up",
    "sig": "verified",
    "status": "any",
    "include": "dead",
    "rank": "lexical",
    "is": "signed",
}
_FIELD_KEYS = {
    "match_any": "match",
    "skill": "skill",
    "input_mode": "input (or mode)",
    "output_mode": "output (or mode)",
    "protocol_version": "proto",
    "health": "health",
    "signature": "sig",
    "status": "status",
    "include_dead": "include",
    "ranking": "rank",
}
