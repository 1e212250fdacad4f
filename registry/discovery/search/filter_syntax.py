"""The `filter` of `GET {base}/agents` (ARD Appendix A), read by recursive descent into a `Selection`.

Appendix A names the fields and says that values of one field are ORed (comma-separated) and
fields ANDed; the OpenAPI example joins comparisons with AND (`type = 'application/…' AND
createdAfter > '2026-01-01'`). The spec publishes no grammar, so this is the subset Agentdex reads,
with the precedence of Google's AIP-160 filters (OR binds tighter than AND):

    filter      = conjunction
    conjunction = disjunction { "AND" disjunction }
    disjunction = primary { "OR" primary }
    primary     = "(" conjunction ")" | comparison
    comparison  = field operator value
    operator    = "=" | ":" | ">" | ">="
    value       = quoted | word     quoted: '…' or "…" (\\ escapes the next character), one value;
                                    word: up to a space or ")", its commas separating values

Fields: `displayName` (`=` equals, `:` contains, both case-insensitive); `createdAfter`,
`updatedAfter` (`=` and `>`: after an ISO 8601 time, `>=`: at or after); `createdAt`, `updatedAt`
(`>`, `>=`); `publisherId` (or `publisher`), `type`, and the search filter's keys (`tags`,
`inputModes`, `outputModes`, `capabilities`, `protocolVersion`, `health`, `signature`,
`identifier`), with `=` or `:`. OR joins comparisons of one field, since values of one key are
ORed and different keys cannot be. NOT, `-`, `!=`, `<`, `<=`, OR across fields and functions are
refused with a 400 that says where.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import NoReturn

from registry.discovery.search.request import FILTER_KEYS, InvalidArgument, Selection, constrain

MAX_COMPARISONS = 32
MAX_DEPTH = 8
TIME_FIELDS = {
    "createdAfter": ("=", ">", ">="),
    "updatedAfter": ("=", ">", ">="),
    "createdAt": (">", ">="),
    "updatedAt": (">", ">="),
}
NAME_FIELD = "displayName"
ALIASES = {"publisherId": "publisher"}
FIELDS = (NAME_FIELD, "publisherId", *FILTER_KEYS, *TIME_FIELDS)
_OPERATORS = (">=", "<=", "!=", "=", ":", ">", "<")
_VALUE_END = " \t\r\n)"


@dataclasses.dataclass(frozen=True)
class Comparison:
    field: str
    operator: str
    values: tuple[str, ...]
    at: int  # character position, for messages


def parse_filter(text: str) -> Selection:
    """The agents `text` selects. Raises InvalidArgument naming the position of what it cannot read."""
    if not text.strip():
        return Selection()
    selection = Selection()
    for comparison in _Parser(text).parse():
        selection = _apply(selection, comparison)
    return selection


class _Parser:
    def __init__(self, text: str) -> None:
        self._text = text
        self._at = 0
        self._count = 0

    def parse(self) -> list[Comparison]:
        comparisons = self._conjunction(0)
        self._skip_spaces()
        if self._at < len(self._text):
            self._fail("expected AND, OR or the end of the filter")
        return comparisons

    def _conjunction(self, depth: int) -> list[Comparison]:
        comparisons = self._disjunction(depth)
        while self._keyword("AND"):
            comparisons += self._disjunction(depth)
        return comparisons

    def _disjunction(self, depth: int) -> list[Comparison]:
        start = self._at
        alternatives = [self._primary(depth)]
        while self._keyword("OR"):
            alternatives.append(self._primary(depth))
        if len(alternatives) == 1:
            return alternatives[0]
        flat = [group[0] for group in alternatives if len(group) == 1]
        fields = {(c.field, c.operator) for c in flat}
        if len(flat) < len(alternatives) or len(fields) > 1 or flat[0].field in TIME_FIELDS:
            self._fail("OR joins comparisons of one field with one operator (values of one key are ORed)", start)
        return [dataclasses.replace(flat[0], values=tuple(v for c in flat for v in c.values))]

    def _primary(self, depth: int) -> list[Comparison]:
        self._skip_spaces()
        if self._peek() == "(":
            if depth >= MAX_DEPTH:
                self._fail(f"parentheses nest deeper than {MAX_DEPTH}")
            self._at += 1
            inner = self._conjunction(depth + 1)
            self._skip_spaces()
            if self._peek() != ")":
                self._fail("expected ')'")
            self._at += 1
            return inner
        return [self._comparison()]

    def _comparison(self) -> Comparison:
        at = self._at
        field = self._field()
        operator = self._operator(field)
        values = self._values()
        self._count += 1
        if self._count > MAX_COMPARISONS:
            self._fail(f"a filter holds at most {MAX_COMPARISONS} comparisons", at)
        return Comparison(field, operator, values, at)

    def _field(self) -> str:
        start = self._at
        while self._at < len(self._text) and (self._text[self._at].isalnum() or self._text[self._at] in "_."):
            self._at += 1
        field = self._text[start : self._at]
        if not field:
            if self._peek() in ("-", "!"):
                self._fail("negation (NOT, -, !) is not supported", start)
            self._fail(f"expected a field ({', '.join(FIELDS)})", start)
        if field in ("NOT", "and", "or", "not"):
            self._fail("write AND and OR in capitals; NOT is not supported", start)
        if field not in FIELDS:
            self._fail(f"unknown field {field!r}; the fields are {', '.join(FIELDS)}", start)
        return field

    def _operator(self, field: str) -> str:
        self._skip_spaces()
        for operator in _OPERATORS:
            if self._text.startswith(operator, self._at):
                allowed = TIME_FIELDS.get(field, ("=", ":"))
                if operator not in allowed:
                    self._fail(f"{field} takes {' or '.join(allowed)}, not {operator}")
                self._at += len(operator)
                return operator
        if self._peek() == "(":
            self._fail("functions are not supported")
        self._fail(f"expected an operator (=, :, >, >=) after {field!r}")

    def _values(self) -> tuple[str, ...]:
        self._skip_spaces()
        quote = self._peek()
        if quote in ("'", '"'):
            return (self._quoted(quote),)
        start = self._at
        while self._at < len(self._text) and self._text[self._at] not in _VALUE_END:
            self._at += 1
        values = tuple(value for value in self._text[start : self._at].split(",") if value)
        if not values:
            self._fail("expected a value", start)
        return values

    def _quoted(self, quote: str) -> str:
        start, self._at = self._at, self._at + 1
        out: list[str] = []
        while self._at < len(self._text):
            char = self._text[self._at]
            self._at += 1
            if char == quote:
                return "".join(out)
            if char == "\\" and self._at < len(self._text):
                char = self._text[self._at]
                self._at += 1
            out.append(char)
        self._fail(f"the value opened with {quote} is not closed", start)

    def _keyword(self, word: str) -> bool:
        self._skip_spaces()
        end = self._at + len(word)
        if self._text.startswith(word, self._at) and (end == len(self._text) or self._text[end] in " \t\r\n("):
            self._at = end
            return True
        return False

    def _skip_spaces(self) -> None:
        while self._at < len(self._text) and self._text[self._at].isspace():
            self._at += 1

    def _peek(self) -> str:
        return self._text[self._at] if self._at < len(self._text) else ""

    def _fail(self, message: str, at: int | None = None) -> NoReturn:
        raise InvalidArgument(f"filter: {message} (at character {(self._at if at is None else at) + 1})")


def _apply(selection: Selection, comparison: Comparison) -> Selection:
    field = ALIASES.get(comparison.field, comparison.field)
    where = f"filter {comparison.field} (at character {comparison.at + 1})"
    if field in TIME_FIELDS:
        return _after(selection, field, comparison, where)
    if field == NAME_FIELD:
        if len(comparison.values) != 1:
            raise InvalidArgument(f"{where} takes one name; quote a name that holds a comma")
        name = comparison.values[0].casefold()
        if comparison.operator == "=":
            if selection.name_equals is not None:
                raise InvalidArgument(f"{where}: displayName = appears twice")
            return dataclasses.replace(selection, name_equals=name)
        if selection.name_contains is not None:
            raise InvalidArgument(f"{where}: displayName : appears twice")
        return dataclasses.replace(selection, name_contains=name)
    return constrain(selection, field, comparison.values, where)


def _after(selection: Selection, field: str, comparison: Comparison, where: str) -> Selection:
    if len(comparison.values) != 1:
        raise InvalidArgument(f"{where} takes one time")
    since = _time(comparison.values[0], where)
    if comparison.operator != ">=":
        since += dt.timedelta(microseconds=1)  # after it: times are kept to the microsecond
    # An agent is updated when it is created, so "created since" also narrows by update time.
    updated = max(since, selection.updated_since) if selection.updated_since else since
    if field.startswith("created"):
        created = max(since, selection.created_since) if selection.created_since else since
        return dataclasses.replace(selection, created_since=created, updated_since=updated)
    return dataclasses.replace(selection, updated_since=updated)


def _time(value: str, where: str) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(value)
        return parsed.astimezone(dt.UTC) if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{where} must be an ISO 8601 time such as 2026-01-31T12:00:00Z") from None


def check_order(text: str | None) -> None:
    """`orderBy` of `GET {base}/agents` must be registration order (`createdAt`, ascending, the
    default): the catalog pages by registration number, so that a page stays exact while agents
    are added, change or leave; no other order can be paged so. Raises InvalidArgument saying so."""
    words = (text or "").split() or ["createdAt"]
    if words[0] == "createdAt" and (len(words) == 1 or (len(words) == 2 and words[1].lower() == "asc")):
        return
    raise InvalidArgument(
        f"orderBy {' '.join(words)!r} is not offered: agents are listed in registration order (createdAt asc), "
        "the one order whose pages stay exact while agents are added and change; filter with "
        "updatedAfter for what changed"
    )
