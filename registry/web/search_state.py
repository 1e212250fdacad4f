"""The state of the home page, all of it in the URL (`/?q=currency&tag=finance&health=up`), so a
search can be bookmarked and shared and the back button works: the text and its shorthands (`q`),
the order (`sort`), the facet values chosen (one parameter per kind, repeated for each value: values
of a kind are ORed, kinds ANDed), and the page (`cursor`; `back`, the cursors of the pages before
it; `page`, its number). Nothing here reads the database."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from urllib.parse import urlencode

from werkzeug.datastructures import MultiDict

from registry.catalog import AgentQuery, QuerySyntaxError, filtered_query, normalize_tag, parse_query

# Facet kinds of `AgentQuery.any_of` shown on the page, in order, with their headings. The
# provider facet is the host of the card URL (the `host` kind): the catalog indexes no provider
# organization as a term, and the host is who actually serves the card.
FACETS: tuple[tuple[str, str], ...] = (
    ("tag", "Tags"),
    ("host", "Provider (card host)"),
    ("input", "Input modes"),
    ("output", "Output modes"),
    ("cap", "Capabilities"),
    ("proto", "Protocol version"),
    ("health", "Health"),
    ("sig", "Signature"),
)
FACET_KINDS = tuple(kind for kind, _ in FACETS)
# `sort` (with text) → the ranking of `AgentQuery`; without text, agents come in registration order.
SORTS = {"best": "fused", "words": "lexical", "meaning": "semantic"}
PAGE_SIZE = 20
MAX_BACK = 24  # cursors kept for "previous": a query value holds 1,024 characters


@dataclasses.dataclass(frozen=True)
class SearchState:
    q: str = ""
    sort: str = "best"
    chosen: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (kind, values) in FACETS order
    cursor: str | None = None
    back: tuple[str, ...] = ()
    page: int = 1

    @classmethod
    def from_args(cls, args: MultiDict[str, str]) -> SearchState:
        """The state a URL's query string names; parameters it does not know are left out."""
        chosen = []
        for kind in FACET_KINDS:
            # Tags as the facet counts them (case-folded), so a chosen tag is its facet's checkbox.
            fold = normalize_tag if kind == "tag" else str.strip
            values = tuple(dict.fromkeys(fold(v) for v in args.getlist(kind) if v.strip()))
            if values:
                chosen.append((kind, values))
        page = args.get("page", "1")
        return cls(
            q=args.get("q", "").strip(),
            sort=args.get("sort", "best") if args.get("sort") in SORTS else "best",
            chosen=tuple(chosen),
            cursor=args.get("cursor") or None,
            back=tuple(c for c in args.get("back", "").split(".") if c)[-MAX_BACK:],
            page=int(page) if page.isascii() and page.isdigit() and 0 < len(page) < 7 else 1,
        )

    def query(self, semantic: bool) -> AgentQuery:
        """The catalog search of this state. Raises QuerySyntaxError for text it cannot read."""
        query = parse_query(self.q, AgentQuery(limit=PAGE_SIZE, cursor=self.cursor, any_of=self.chosen))
        if query.text is not None and self.sort != "best":
            if self.sort == "meaning" and not semantic:
                raise QuerySyntaxError("sorting by meaning needs semantic search, which is off on this registry")
            query = filtered_query([("rank", SORTS[self.sort])], query)
        return query

    @property
    def selected(self) -> Mapping[str, tuple[str, ...]]:
        return dict(self.chosen)

    def is_chosen(self, kind: str, value: str) -> bool:
        return value in self.selected.get(kind, ())

    # -- the URLs of other states ------------------------------------------------------------

    def url(self, base: str) -> str:
        """This state's URL under `base` (the home page's path)."""
        params = self._params()
        return f"{base}?{urlencode(params)}" if params else base

    def without(self, kind: str, value: str) -> SearchState:
        """This search less one chosen value, from its first page."""
        chosen = tuple((k, tuple(v for v in vs if not (k == kind and v == value))) for k, vs in self.chosen)
        return SearchState(self.q, self.sort, tuple((k, vs) for k, vs in chosen if vs))

    def adding_url(self, base: str, kind: str, value: str) -> str:
        """The URL of this search with one more chosen value, from its first page: the first page's
        query string, encoded once per state, with the value appended (a page shows a link like
        this for every tag of every result)."""
        value = normalize_tag(value) if kind == "tag" else value
        query = self._first_page_query
        if not self.is_chosen(kind, value):
            extra = urlencode([(kind, value)])
            query = f"{query}&{extra}" if query else extra
        return f"{base}?{query}" if query else base

    @functools.cached_property
    def _first_page_query(self) -> str:
        return urlencode(SearchState(self.q, self.sort, self.chosen)._params())

    def cleared(self) -> SearchState:
        """The same text and order, no facet chosen."""
        return SearchState(self.q, self.sort)

    def next(self, cursor: str) -> SearchState:
        back = (*self.back, self.cursor) if self.cursor else self.back
        return dataclasses.replace(self, cursor=cursor, back=back[-MAX_BACK:], page=self.page + 1)

    def previous(self) -> SearchState | None:
        """The page before, when it is known: the first page, or one whose cursor was kept."""
        if self.cursor is None:
            return None
        if self.back:
            return dataclasses.replace(self, cursor=self.back[-1], back=self.back[:-1], page=self.page - 1)
        return self.first() if self.page == 2 else None

    def first(self) -> SearchState:
        return dataclasses.replace(self, cursor=None, back=(), page=1)

    def _params(self) -> list[tuple[str, str]]:
        params = [("q", self.q)] if self.q else []
        if self.sort != "best":
            params.append(("sort", self.sort))
        params.extend((kind, value) for kind, values in self.chosen for value in values)
        if self.cursor:
            params.append(("cursor", self.cursor))
            if self.back:
                params.append(("back", ".".join(self.back)))
            params.append(("page", str(self.page)))
        return params
