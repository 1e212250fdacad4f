"""ARD queries as catalog searches (ARD v0.91 §5.3.1): the `query` object that `POST {base}/search`
and `POST {base}/explore` share, its `@context` and `filter`, and what a filter selects.

Filter keys this registry answers (a value is one string or an array of strings; the values of one
key are ORed, keys are ANDed; an empty array matches nothing, as ard-sdk's own `matches` reads it):

  tags, publisher (the URN's publisher: the card's host), inputModes, outputModes, capabilities,
  protocolVersion, health (up, degraded, unknown, down), signature (verified, unsigned,
  unverifiable, invalid), type (only `application/a2a-agent-card+json` matches anything here),
  identifier (the agents' `urn:air:` URNs).

Any other key is refused (§5.3.1: "A registry MAY reject a filter that references an unsupported
term path with a 400"). Keys resolve through the query's `@context` (§5.3.1 "Term resolution"): a
compact IRI whose prefix the context binds to the ARD namespace, or the full IRI, names the same
term; a context given by reference is not fetched, so terms only it would define stay unknown.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import ipaddress
from collections.abc import Iterable
from typing import Any

from registry.catalog import AgentQuery, normalize_tag
from registry.discovery.entries import A2A_CARD, URN, agent_identifier, publisher_of
from registry.discovery.errors import ArdError
from registry.errors import BadRequest
from registry.trust import SIGNATURE_STATES

ARD_NAMESPACE = "https://agenticresourcediscovery.org/ns#"
# Best first, as the ranked search breaks ties (registry.catalog.ranking.HEALTH_ORDER).
HEALTH_STATES = ("up", "degraded", "unknown", "down")
# The catalog's term kinds (`AgentQuery.any_of`) of the filter keys that map onto one.
KINDS = {
    "tags": "tag",
    "publisher": "host",
    "inputModes": "input",
    "outputModes": "output",
    "capabilities": "cap",
    "protocolVersion": "proto",
    "health": "health",
    "signature": "sig",
}
FILTER_KEYS = (*KINDS, "type", "identifier")
SINGLE_VALUED = ("host", "health", "sig")  # an agent has one of each
MAX_VALUES = 32  # per key, as the catalog takes at most 32 tags
MAX_VALUE_CHARS = 1_000
MAX_TEXT_CHARS = 2_000


class InvalidArgument(ArdError, BadRequest):
    """A request the ARD API refuses: 400 INVALID_ARGUMENT (ARD Appendix B), naming the member."""

    code = "invalid_argument"


@dataclasses.dataclass(frozen=True)
class Selection:
    """The agents a filter selects: term groups the catalog matches (`AgentQuery.any_of`), and
    what it cannot match, checked on each listed row (`admits`)."""

    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    nothing: bool = False  # no agent here can match (a type other than A2A cards, a key without values)
    identifiers: frozenset[str] | None = None
    updated_since: dt.datetime | None = None
    created_since: dt.datetime | None = None
    name_equals: str | None = None  # case-folded
    name_contains: str | None = None  # case-folded

    @property
    def checks_rows(self) -> bool:
        """Whether some agents the catalog finds are left out by `admits`."""
        return bool(self.identifiers is not None or self.created_since or self.name_equals or self.name_contains)

    def agent_query(self, **fields: Any) -> AgentQuery:
        """The catalog search of these agents (listed, live: the catalog's default status and its
        hiding of long-dead agents, as the manifest lists them)."""
        return AgentQuery(any_of=self.groups, updated_since=self.updated_since, **fields)

    def admits(self, card_url: str, name: str, created_at: dt.datetime) -> bool:
        if self.identifiers is not None and agent_identifier(card_url) not in self.identifiers:
            return False
        if self.created_since is not None and _aware(created_at) < self.created_since:
            return False
        folded = name.casefold()
        if self.name_equals is not None and folded != self.name_equals:
            return False
        return self.name_contains is None or self.name_contains in folded

    def narrowed(self, kind: str, values: tuple[str, ...]) -> Selection:
        """This selection, also requiring one of `values` of `kind`. An agent has one host, health
        and signature state, so two groups of those are one: the values they share."""
        if kind in SINGLE_VALUED:
            for index, (held_kind, held) in enumerate(self.groups):
                if held_kind == kind:
                    shared = tuple(value for value in held if value in values)
                    groups = (*self.groups[:index], (kind, shared), *self.groups[index + 1 :])
                    return dataclasses.replace(self, groups=groups, nothing=self.nothing or not shared)
        return dataclasses.replace(self, groups=(*self.groups, (kind, values)))


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


@dataclasses.dataclass(frozen=True)
class Query:
    """A checked `query` object: its text (None when absent) and what its filter selects."""

    text: str | None
    selection: Selection


def read_query(body: dict[str, Any], *, text_required: bool) -> Query:
    """The `query` member of a search or explore body. Raises InvalidArgument."""
    query = body.get("query")
    if query is None and not text_required:
        return Query(None, Selection())
    if not isinstance(query, dict):
        raise InvalidArgument(
            'query must be an object such as {"text": "convert currency", "filter": {"tags": "finance"}}'
        )
    refuse_members(query, ("@context", "text", "filter"), "query")
    text = query.get("text")
    if text is None and text_required:
        raise InvalidArgument("query.text is required (an empty string lists every agent the filter selects)")
    if text is not None and not isinstance(text, str):
        raise InvalidArgument("query.text must be a string")
    if text is not None and len(text) > MAX_TEXT_CHARS:
        raise InvalidArgument(f"query.text is over the limit of {MAX_TEXT_CHARS} characters")
    return Query(text, read_filter(query.get("filter"), context_prefixes(query.get("@context"))))


def refuse_members(value: dict[str, Any], allowed: Iterable[str], where: str, noun: str = "member") -> None:
    """The ARD request schemas are `additionalProperties: false`. Raises InvalidArgument."""
    names = list(allowed)
    unknown = sorted(set(value) - set(names))
    if unknown:
        shown = ", ".join(repr(name) for name in unknown)
        raise InvalidArgument(f"{where} has unknown {noun} {shown}; its {noun}s are {', '.join(names)}")


def context_prefixes(context: Any) -> dict[str, str]:
    """The names the query's `@context` binds to IRIs (prefixes and term aliases), layered on the
    base context, which it never removes (ARD v0.91 §4.1). Raises InvalidArgument."""
    prefixes: dict[str, str] = {}
    for item in context if isinstance(context, list) else [context]:
        if item is None or isinstance(item, str):
            continue  # a context by reference: the base context, or one this registry does not fetch
        if not isinstance(item, dict):
            raise InvalidArgument("query.@context must be an IRI, an object or an array of them")
        for name, value in item.items():
            iri = value.get("@id") if isinstance(value, dict) else value
            if not name.startswith("@") and isinstance(iri, str):
                prefixes[name] = iri
    return prefixes


def resolve_key(key: str, prefixes: dict[str, str]) -> str:
    """The filter key this registry supports that `key` names. Raises InvalidArgument."""
    iri = _expanded(key, prefixes)
    if iri is not None and iri.startswith(ARD_NAMESPACE):
        key = iri[len(ARD_NAMESPACE) :]
    if key in FILTER_KEYS:
        return key
    shown = key if iri is None or iri == key else f"{key} ({iri})"
    raise InvalidArgument(f"query.filter key {shown!r} is not supported; filter on {', '.join(FILTER_KEYS)}")


def _expanded(key: str, prefixes: dict[str, str]) -> str | None:
    if key in prefixes:
        key = prefixes[key]  # a term alias
    prefix, colon, rest = key.partition(":")
    if not colon or rest.startswith("//"):
        return key  # a plain term, or an absolute IRI
    if prefix in prefixes:
        return prefixes[prefix] + rest
    return None


def read_filter(value: Any, prefixes: dict[str, str]) -> Selection:
    """What `query.filter` selects. Raises InvalidArgument."""
    if value is None:
        return Selection()
    if not isinstance(value, dict):
        raise InvalidArgument('query.filter must be an object such as {"tags": ["finance"], "health": "up"}')
    selection = Selection()
    for key, raw in value.items():
        selection = constrain(selection, resolve_key(key, prefixes), filter_values(key, raw), f"query.filter.{key}")
    return selection


def filter_values(key: str, raw: Any) -> tuple[str, ...]:
    """One string or an array of strings (ARD v0.91 §5.3.1). Raises InvalidArgument."""
    values = [raw] if isinstance(raw, str) else raw
    if not isinstance(values, list) or not all(isinstance(item, str) for item in values):
        raise InvalidArgument(f"query.filter.{key} must be a string or an array of strings")
    if len(values) > MAX_VALUES:
        raise InvalidArgument(f"query.filter.{key} has {len(values)} values; at most {MAX_VALUES}")
    if any(len(item) > MAX_VALUE_CHARS for item in values):
        raise InvalidArgument(f"query.filter.{key} has a value over {MAX_VALUE_CHARS} characters")
    return tuple(dict.fromkeys(values))


def constrain(selection: Selection, key: str, values: tuple[str, ...], where: str) -> Selection:
    """`selection`, also requiring one of `values` of the filter key `key`. Raises InvalidArgument
    for a health or signature state that does not exist (Agentdex's own keys, so a misspelling)."""
    if not values:
        return dataclasses.replace(selection, nothing=True)
    if key == "type":
        # ARD media types compare by essence: case-insensitive, parameters dropped (RFC 6838).
        essences = {value.split(";", 1)[0].strip().lower() for value in values}
        return selection if A2A_CARD in essences else dataclasses.replace(selection, nothing=True)
    if key == "identifier":
        # A value that is no URN names no agent here (ard-sdk's `matches` reads it so too).
        identifiers = frozenset(urn for urn in (_identifier(value) for value in values) if urn)
        if selection.identifiers is not None:
            identifiers &= selection.identifiers
        hosts = tuple(dict.fromkeys(host for urn in identifiers for host in publisher_hosts(urn.split(":")[2])))
        narrowed = dataclasses.replace(selection, identifiers=identifiers, nothing=selection.nothing or not identifiers)
        return narrowed.narrowed("host", hosts) if hosts else narrowed
    return selection.narrowed(KINDS[key], _term_values(key, values, where))


def _identifier(value: str) -> str | None:
    """A URN as agents' identifiers are spelled: `urn:air:`, the publisher lower-cased (the legacy
    `urn:ai:` prefix read as `urn:air:`, as ard-sdk does); None for a value that is no URN."""
    if value.startswith("urn:ai:"):
        value = "urn:air:" + value[len("urn:ai:") :]
    if not URN.match(value):
        return None
    parts = value.split(":")
    return ":".join([*parts[:2], parts[2].lower(), *parts[3:]])


def _term_values(key: str, values: tuple[str, ...], where: str) -> tuple[str, ...]:
    if key == "health":
        return _states(values, HEALTH_STATES, where)
    if key == "signature":
        return _states(values, SIGNATURE_STATES, where)
    if key == "tags":
        return tuple(dict.fromkeys(normalize_tag(value) for value in values))
    if key == "publisher":
        return tuple(dict.fromkeys(host for value in values for host in publisher_hosts(value)))
    if key in ("inputModes", "outputModes"):
        return tuple(dict.fromkeys(value.strip().lower() for value in values))
    return tuple(dict.fromkeys(value.strip() for value in values))


def _states(values: tuple[str, ...], states: tuple[str, ...], where: str) -> tuple[str, ...]:
    for value in values:
        if value not in states:
            raise InvalidArgument(f"{where} has {value!r}; the states are {', '.join(states)}")
    return values


def publisher_hosts(publisher: str) -> tuple[str, ...]:
    """The card hosts a URN publisher stands for: the host itself, and for a publisher that reads
    as an IPv6 literal with dashes for colons (`entries.publisher_of`), that literal too."""
    publisher = publisher.lower()
    try:
        literal = ipaddress.IPv6Address(publisher.replace("-", ":"))
    except ValueError:
        return (publisher,)
    return (publisher, str(literal)) if "-" in publisher else (publisher,)


def host_publisher(host: str) -> str:
    """The URN publisher of a card host (a facet bucket of hosts shown as publishers)."""
    return publisher_of(f"http://[{host}]/" if ":" in host else f"http://{host}/")
