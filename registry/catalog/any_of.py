"""Any-of groups of a catalog query (`AgentQuery.any_of`): an agent matches a group when it has at
least one of the group's values; groups are ANDed with each other and with every other filter.

A group is validated and its values normalised as the single filter of its kind normalises them;
then it becomes what the store runs. A group of one value is the single filter of its kind (a
required term, or the agent's one health or status); a term group of several is an any-of group of
`SearchFilters`; health and status groups narrow the agent's one state to the values they share.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from registry.catalog.records import MAX_TERM, normalize_host, normalize_mode, normalize_tag
from registry.errors import InvalidRequest

HEALTH_STATES = ("up", "degraded", "down", "unknown")
STATUSES = ("active", "deprecated")
_TERM_KINDS: dict[str, Callable[[str], str]] = {
    "tag": normalize_tag,
    "host": normalize_host,
    "input": normalize_mode,
    "output": normalize_mode,
    "cap": str,
    "proto": str.strip,
    "sig": str,
}
_STATE_KINDS = {"health": HEALTH_STATES, "status": STATUSES}
KINDS = (*_TERM_KINDS, *_STATE_KINDS)
# Each group value is a term whose agents are counted to plan the search (`store_search`), and
# each group a probe or a range of its own in the statement.
MAX_GROUPS = 8
MAX_GROUP_VALUES = 32
MAX_VALUES = 64


@dataclasses.dataclass(frozen=True)
class AnyOf:
    """A query's groups as the store runs them."""

    terms: list[tuple[str, str]]  # from groups of one value: required, like a single filter
    groups: list[tuple[str, tuple[str, ...]]]  # term groups of several values
    health: frozenset[str] | None  # the health states allowed (None: any)
    status: frozenset[str] | None

    @classmethod
    def of(cls, any_of: Iterable[tuple[str, Sequence[str]]]) -> AnyOf:
        """Raises InvalidRequest for an unknown kind, an empty group, a health or status that does
        not exist, or more than MAX_GROUPS groups, MAX_GROUP_VALUES values in one, MAX_VALUES in all."""
        groups = [(kind, _values(kind, values)) for kind, values in any_of]
        _check_bounds(groups)
        terms: list[tuple[str, str]] = []
        term_groups: list[tuple[str, tuple[str, ...]]] = []
        states: dict[str, frozenset[str] | None] = dict.fromkeys(_STATE_KINDS)
        for kind, values in groups:
            if kind in _STATE_KINDS:
                allowed, before = _states(kind, values), states[kind]
                states[kind] = allowed if before is None else allowed & before
                continue
            normalized = tuple(dict.fromkeys(_TERM_KINDS[kind](value)[:MAX_TERM] for value in values))  # as indexed
            if len(normalized) == 1:
                terms.append((kind, normalized[0]))
            else:
                term_groups.append((kind, normalized))
        return cls(terms, term_groups, states["health"], states["status"])

    def groups_beside(self, required: Sequence[tuple[str, str]]) -> list[tuple[str, tuple[str, ...]]]:
        """The term groups that the `required` terms do not already satisfy."""
        held = set(required)
        return [(kind, values) for kind, values in self.groups if not any((kind, v) in held for v in values)]


def narrowed(kind: str, single: str | None, allowed: frozenset[str] | None) -> tuple[str, ...] | None:
    """The health states (`kind`: health) or statuses an agent may be in, given a query's single
    filter and its groups: None for any, () for none (they share no value)."""
    if allowed is None or (single is None and allowed == frozenset(_STATE_KINDS[kind])):
        return None if single is None else (single,)
    return tuple(sorted(allowed if single is None else allowed & {single}))


def _check_bounds(groups: list[tuple[str, list[str]]]) -> None:
    if len(groups) > MAX_GROUPS:
        raise InvalidRequest(f"a search takes at most {MAX_GROUPS} any-of groups, not {len(groups)}")
    for kind, values in groups:
        if kind not in KINDS:
            raise InvalidRequest(f"no filter of kind {kind!r}: the kinds are {', '.join(KINDS)}")
        if not values:
            raise InvalidRequest(f"an any-of group of {kind!r} needs at least one value")
        if len(values) > MAX_GROUP_VALUES:
            raise InvalidRequest(f"an any-of group takes at most {MAX_GROUP_VALUES} values, not {len(values)}")
    total = sum(len(values) for _, values in groups)
    if total > MAX_VALUES:
        raise InvalidRequest(f"a search takes at most {MAX_VALUES} any-of values in all, not {total}")


def _values(kind: str, values: Sequence[str]) -> list[str]:
    # A string is a sequence too: ("tag", "red") would otherwise be the tags r, e and d.
    if isinstance(values, str) or not all(isinstance(value, str) for value in values):
        raise InvalidRequest(f"the values of an any-of group of {kind!r} are a list of strings")
    return list(values)


def _states(kind: str, values: list[str]) -> frozenset[str]:
    unknown = [value for value in values if value not in _STATE_KINDS[kind]]
    if unknown:
        raise InvalidRequest(f"{kind} is one of {', '.join(_STATE_KINDS[kind])}, not {unknown[0]!r}")
    return frozenset(values)
