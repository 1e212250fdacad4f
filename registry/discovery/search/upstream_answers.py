"""What an upstream ARD registry's search answer is taken for: each result checked as an ARD
client checks it (ard-sdk's hard failures), kept as a projection with the registry that indexed it."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import urlsplit

from registry.discovery.entries import URN, publisher_of, url_digest, urn_segment
from registry.discovery.errors import ArdError

MAX_TOKEN_CHARS = 2_048  # an upstream's page token kept in ours
# The members of an entry passed on, with their types; the rest of an upstream's result is left out.
_KEPT = {"description": str, "version": str, "updatedAt": str, "tags": list, "capabilities": list, "metadata": dict}


class NotASearchAnswer(ArdError):
    """An upstream registry answered something that is not an ARD search response."""

    code = "not_a_search_answer"


@dataclasses.dataclass(frozen=True)
class UpstreamPage:
    results: list[dict[str, Any]]
    next_token: str | None
    dropped: int = 0  # results an ARD client would refuse, left out


def search_page(body: object, upstream: str) -> UpstreamPage:
    """An upstream's search response, each result checked as an ARD client checks it.
    Raises NotASearchAnswer when it is not a search response at all."""
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise NotASearchAnswer("the answer is not an ARD search response (no results array)")
    token = body.get("pageToken")
    if token is not None and not (isinstance(token, str) and len(token) <= MAX_TOKEN_CHARS):
        raise NotASearchAnswer(f"the answer's pageToken is not a string of at most {MAX_TOKEN_CHARS} characters")
    kept = [result for result in (upstream_result(item, upstream) for item in body["results"]) if result]
    return UpstreamPage(kept, token or None, len(body["results"]) - len(kept))


def upstream_result(item: object, upstream: str) -> dict[str, Any] | None:
    """The result as this registry passes it on (a projection, ARD v0.91 §5.3.2), or None when an
    ARD client would refuse it: a bad URN, no name or type, not exactly one of url and data, a
    score that is not a whole number 0–100. Its `source` stays the registry that indexed it."""
    if not isinstance(item, dict):
        return None
    identifier, name, kind, score = (item.get(key) for key in ("identifier", "displayName", "type", "score"))
    url, data = item.get("url"), item.get("data")
    if not (isinstance(identifier, str) and URN.match(identifier) and isinstance(name, str)):
        return None
    if not (isinstance(kind, str) and kind.strip()) or (url is None) == (data is None):
        return None
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 100:
        return None
    if not (isinstance(url, str) if data is None else isinstance(data, dict)):
        return None
    result: dict[str, Any] = {"identifier": identifier, "displayName": name, "type": kind}
    result.update({"url": url} if data is None else {"data": data})
    for key, kind_of in _KEPT.items():
        value = item.get(key)
        if isinstance(value, kind_of) and (kind_of is not list or all(isinstance(v, str) for v in value)):
            result[key] = value
    source = item.get("source")
    return {**result, "score": score, "source": source if isinstance(source, str) and source else upstream}


def registry_identifier(base: str) -> str:
    """A URN for an upstream registry named only by its URL: `urn:air:<host>:registry:<path>`,
    with a hash of the URL when the path or port would not tell two apart."""
    parts = urlsplit(base)
    name = urn_segment(parts.path.strip("/")) or "registry"
    if parts.port:
        name = f"{name}-{url_digest(base)}"
    return f"urn:air:{publisher_of(base)}:registry:{name[:200]}"
