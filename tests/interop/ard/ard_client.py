"""ard-sdk (Python 3.13, this folder's .venv) as an ARD client of a running Agentdex: discover the
registry's manifest, resolve its nested pages, search and page, explore, list and page. Prints one
JSON report on stdout; tests/interop/ard/test_ard_sdk.py runs it and judges the report.

    .venv/bin/python ard_client.py HOST PORT QUERY...

ard-sdk accepts only https domains and registries, so every request for https://HOST/… goes to
the registry on 127.0.0.1:PORT over plain http, with its Host header kept and
`X-Forwarded-Proto: https` added (the registry runs with AGENTDEX_FORWARDED_HOPS=1); a request for
any other host is refused, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx
from ard.exceptions import ArdError
from ard.http import ArdClient
from ard.validation import Profile, validate

FACETS = ["tags", "publisher", "inputModes", "outputModes", "capabilities", "protocolVersion", "health", "signature"]


class Loopback(httpx.AsyncBaseTransport):
    """https://HOST/… → http://127.0.0.1:PORT/…, as a TLS-terminating proxy would forward it."""

    def __init__(self, host: str, port: int) -> None:
        self._host, self._port = host, port
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host != self._host or request.url.scheme != "https":
            raise httpx.ConnectError(f"the test reaches only https://{self._host}, not {request.url}", request=request)
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self._port)
        request.headers["X-Forwarded-Proto"] = "https"  # Host still names HOST
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def identifiers(entries: Any) -> list[str]:
    return [str(entry.identifier) for entry in entries]


async def searched(registry: Any, query: str) -> dict[str, Any]:
    pages = [page async for page in registry.pages(query, page_size=2, federation="none")]
    return {
        "pages": [identifiers(page.results) for page in pages],
        "scores": [hit.score for page in pages for hit in page.results],
        "sources": sorted({hit.source for page in pages for hit in page.results}),
    }


async def listed(registry: Any) -> dict[str, Any]:
    pages, token = [], None
    while True:
        page = await registry.list(page_size=2, page_token=token)
        pages.append(identifiers(page.items))
        token = page.page_token
        if not token or len(pages) > 50:
            return {"pages": pages, "total": page.total}


async def explored(registry: Any) -> dict[str, Any]:
    answer = await registry.explore(FACETS)
    return {field: [(bucket.value, bucket.count) for bucket in facet.buckets] for field, facet in answer.facets.items()}


async def run(host: str, port: int, queries: list[str]) -> dict[str, Any]:
    async with httpx.AsyncClient(transport=Loopback(host, port), timeout=30) as http, ArdClient(http=http) as sdk:
        found = await sdk.discover(host)
        report: dict[str, Any] = {
            "manifests": [
                {
                    "url": item.url,
                    "mechanism": str(item.mechanism),
                    "skipped": [error.error for error in item.skipped],
                    "entries": identifiers(item.manifest.entries),
                    "errors": [str(issue) for issue in validate(item.manifest, Profile.PUBLISH).errors],
                }
                for item in found.manifests
            ],
        }
        registries = sdk.registries_in(found)
        report["registries"] = [registry.base for registry in registries]
        resolved = await sdk.resolve_catalog(found.manifests[0].url, recursive=True)
        report["resolved"] = {
            "entries": [(str(entry.identifier), str(entry.type)) for entry in resolved.entries],
            "errors": [str(error) for error in resolved.errors],
            "complete": resolved.complete,
        }
        registry = registries[0]
        report["search"] = {query: await searched(registry, query) for query in queries}
        report["supports"] = {"explore": await registry.supports_explore(), "list": await registry.supports_list()}
        report["explore"] = await explored(registry)
        report["list"] = await listed(registry)
        return report


def main() -> int:
    host, port, queries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    try:
        report = asyncio.run(run(host, port, queries))
    except ArdError as error:  # the SDK's every failure, validation of a response included
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 1
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
