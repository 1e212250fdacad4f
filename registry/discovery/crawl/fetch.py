"""Fetching the documents a manifest crawl reads: manifests and nested catalogs (JSON objects),
robots.txt and home pages (text). Everything goes through the registry's safe outbound client
(scheme allowlist, address policy, size caps, deadlines); a catalog is fetched like a card (the
catalog's `CardFetcher`, with a larger size cap), conditionally when validators are known.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from registry.catalog import AgentTimeout, CardFetcher, CardFetchError, CardTooLarge, FetchedCard, NotModified
from registry.discovery.errors import ManifestError
from registry.outbound import OutboundError, OutboundRefused, OutboundResponse, SafeHttpClient

# A manifest of 10,000 entries by `url` is ~5 MB; inline cards make it larger. The client's own
# cap (the card size) would refuse most real manifests.
MANIFEST_MAX_BYTES = 16 * 1_048_576
PAGE_MAX_BYTES = 1_048_576  # robots.txt and the home page
PAGE_ACCEPT = "text/html, text/plain;q=0.9, */*;q=0.1"


class ManifestUnavailable(ManifestError):
    """A catalog document could not be read now: no answer, an error status, too large. A crawl
    that meets one keeps what the document listed before (it may answer again)."""

    code = "manifest_unavailable"


class ManifestUnreachable(ManifestUnavailable):
    """No answer at all: the connection failed or timed out. The domain's other locations would
    most likely fail alike, so a search stops here."""


class ManifestAbsent(ManifestError):
    """There is no catalog document at the URL: 404/410, or an answer that is not a JSON object
    with an `entries` array (a catch-all HTML page, some other JSON)."""

    code = "manifest_absent"


class ManifestRefused(ManifestError):
    """The registry's outbound policy refuses the URL (scheme, or a private address the operator
    did not allowlist): nothing was sent to it."""

    code = "manifest_refused"


@dataclasses.dataclass(frozen=True)
class CatalogDocument:
    """A catalog (manifest) as served: `url` after redirects, the parsed object, its validators."""

    url: str
    document: dict[str, Any]
    etag: str | None = None
    last_modified: str | None = None
    max_age: int | None = None


class DocumentFetcher:
    """Fetches catalog documents and pages through the safe outbound client."""

    def __init__(self, client: SafeHttpClient, *, max_bytes: int = MANIFEST_MAX_BYTES) -> None:
        self._client = client
        self._json = CardFetcher(client, max_card_bytes=max_bytes)

    def catalog(self, url: str) -> CatalogDocument:
        """The catalog at `url`. Raises ManifestAbsent, ManifestUnavailable, ManifestRefused."""
        answer = self.changed_catalog(url, None, None)
        assert answer is not None  # only a conditional request is answered 304
        return answer

    def changed_catalog(self, url: str, etag: str | None, last_modified: str | None) -> CatalogDocument | None:
        """The catalog at `url`, None when it answered 304 to the validators of the last fetch.
        Raises what `catalog` raises."""
        try:
            answer = self._json.fetch(url, etag=etag, last_modified=last_modified)
        except OutboundRefused as error:
            raise ManifestRefused(f"{url} is refused: {error}", {"url": url}) from error
        except CardFetchError as error:
            raise _unavailable_or_absent(url, error) from error
        if isinstance(answer, NotModified):
            return None
        return _catalog_document(answer)

    def page(self, url: str) -> OutboundResponse | None:
        """A text page (robots.txt, a home page) when it answers 2xx; None otherwise (absent,
        unreachable or refused: where to look next is the caller's choice, not an error)."""
        try:
            response = self._client.get(url, headers={"Accept": PAGE_ACCEPT}, max_bytes=PAGE_MAX_BYTES)
        except OutboundError:
            return None
        return response if 200 <= response.status < 300 else None


def _catalog_document(answer: FetchedCard) -> CatalogDocument:
    document = answer.card
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise ManifestAbsent(
            f"{answer.card_url} is JSON but not a catalog (no `entries` array)", {"url": answer.card_url}
        )
    return CatalogDocument(answer.card_url, document, answer.etag, answer.last_modified, answer.max_age)


def _unavailable_or_absent(url: str, error: CardFetchError) -> ManifestError:
    reason = (error.details or {}).get("reason")
    if reason == "CardNotFound":
        return ManifestAbsent(f"no catalog at {url} (it answered 404/410)", {"url": url})
    if reason == "CardNotJson":
        return ManifestAbsent(f"{url} did not return a JSON object", {"url": url})
    if isinstance(error, CardTooLarge):
        return ManifestUnavailable(f"the catalog at {url} is larger than {error.limit} bytes", {"url": url})
    if isinstance(error, AgentTimeout):
        return ManifestUnreachable(f"{url} did not answer in time", {"url": url})
    status = getattr(error, "status", None)
    if status is None:
        return ManifestUnreachable(f"cannot read the catalog at {url}: {error}", {"url": url})
    return ManifestUnavailable(f"cannot read the catalog at {url}: it answered HTTP {status}", {"url": url})
