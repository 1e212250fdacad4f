"""`/tags`: every tag of the active agents with how many carry it, most carried first, a prefix
filter (a GET form, so a filtered list is a URL), each tag a link to its search.

The counts come from the catalog's kept tag counts (`CatalogSearch.tags`, as `GET /v1/tags`):
one statement whatever the catalog's size. That read takes a number of tags, not a position, so
"more" asks for a longer list (up to MAX_TAGS); a longer tail is reached by its prefix."""

from __future__ import annotations

from typing import Any

from flask import current_app, render_template, request, url_for

from registry.web.blueprint import bp

PAGE = 200
MAX_TAGS = 5_000
MAX_PREFIX = 100


@bp.get("/tags")
def tags_page() -> str:
    prefix = request.args.get("prefix", "").strip()[:MAX_PREFIX]
    limit = _limit(request.args.get("limit"))
    rows = current_app.extensions["agentdex"].search.tags(limit + 1, prefix or None)
    more = len(rows) > limit and limit < MAX_TAGS
    args: dict[str, Any] = {"prefix": prefix} if prefix else {}
    return render_template(
        "tags.html",
        section="tags",
        prefix=prefix,
        tags=rows[:limit],
        more_url=url_for("web.tags_page", **args, limit=min(limit + PAGE, MAX_TAGS)) if more else None,
        capped=len(rows) > limit and not more,
    )


def _limit(value: str | None) -> int:
    """How many tags to show: PAGE more per "more", within 1…MAX_TAGS (anything else: PAGE)."""
    try:
        asked = int(value or PAGE)
    except ValueError:
        return PAGE
    return min(max(asked, 1), MAX_TAGS)
