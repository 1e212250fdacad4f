"""The answer to an outbound request, fully read and detached from the connection."""

from __future__ import annotations

import json as jsonlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from registry.outbound.errors import OutboundInvalidJson


class ResponseHeaders(Mapping[str, str]):
    """Read-only, case-insensitive header fields.

    A field that occurs several times reads as its values joined with ", " (RFC 9110 §5.3);
    ``get_all`` returns them one by one.
    """

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self._items = tuple(items)
        joined: dict[str, str] = {}
        names: dict[str, str] = {}
        for name, value in self._items:
            key = name.lower()
            joined[key] = f"{joined[key]}, {value}" if key in joined else value
            names.setdefault(key, name)
        self._joined = joined
        self._names = names

    def __getitem__(self, name: str) -> str:
        return self._joined[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.values())

    def __len__(self) -> int:
        return len(self._joined)

    def get_all(self, name: str) -> list[str]:
        key = name.lower()
        return [value for field, value in self._items if field.lower() == key]

    def __repr__(self) -> str:
        return f"ResponseHeaders({list(self._items)!r})"


@dataclass(frozen=True)
class OutboundResponse:
    """``url`` is the final URL after redirects; ``elapsed`` covers the whole exchange."""

    url: str
    status: int
    headers: ResponseHeaders
    body: bytes
    elapsed: float

    def json(self) -> object:
        """The body parsed as JSON. Raises OutboundInvalidJson."""
        return parse_json(self.body, url=self.url)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(body: bytes, *, url: str | None = None) -> object:
    """Parse strict JSON (RFC 8259: no NaN or Infinity). Raises OutboundInvalidJson."""
    try:
        return jsonlib.loads(body, parse_constant=_reject_constant)
    except RecursionError:
        raise OutboundInvalidJson("the body nests JSON too deeply to parse", url=url) from None
    except ValueError as error:  # includes JSONDecodeError and UnicodeDecodeError
        raise OutboundInvalidJson(f"the body is not valid JSON: {error}", url=url) from None
