"""The manifest's routes: `GET /.well-known/ard.json` (ARD v0.91 §5.1), the same document at the
v0.9 path `/.well-known/ai-catalog.json`, and its nested pages `GET /ard/catalog/<n>`. JSON with
an ETag (304 on If-None-Match) and a short public Cache-Control: ARD clients keep a manifest as
long as it says; a change reaches every web process within about a second, and clients within
`MAX_AGE`. Errors come in ARD's envelope (`registry.api.errors`)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, request

from registry.discovery.errors import CatalogPageNotFound
from registry.discovery.links import MANIFEST_PATHS, public_url
from registry.discovery.publish.manifest import CATALOG_PATH, ManifestDocument
from registry.settings import Settings

bp = Blueprint("ard_manifest", __name__)

MAX_AGE = 60
MAX_PAGE_DIGITS = 9
FORWARDED = ("Host", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port")


def _services() -> Any:
    return current_app.extensions["agentdex"]


@bp.get(MANIFEST_PATHS[0])
@bp.get(MANIFEST_PATHS[1])
def manifest() -> Response:
    services = _services()
    return _served(services.manifest.top(public_url(services.settings)), services.settings)


@bp.get(CATALOG_PATH + "/<number>")
def catalog_page(number: str) -> Response:
    """Any segment, refused here rather than by a converter: the request checks of
    `registry.request_input` see every path segment first (a NUL in it is a 400 that names it)."""
    services = _services()
    if not (number.isascii() and number.isdigit() and len(number) <= MAX_PAGE_DIGITS):
        raise CatalogPageNotFound(f"{number!r} is not a page of the manifest (pages are numbered from 1)")
    return _served(services.manifest.page(public_url(services.settings), int(number)), services.settings)


def _served(document: ManifestDocument, settings: Settings) -> Response:
    response = Response(document.body, mimetype="application/json")
    response.headers["Cache-Control"] = f"public, max-age={MAX_AGE}"
    if settings.public_url is None:  # its URLs are the request's host's (`public_url`)
        response.vary.update(FORWARDED if settings.forwarded_hops else ("Host",))
    response.set_etag(document.etag)
    response.make_conditional(request)  # 304 when If-None-Match names this version
    return response
