"""`/agents/<id>`: one agent's page.

The id resolves as the API's does (`registry.catalog.api.resolve_agent_id`, registered for the
whole app): a unique prefix of at least 8 characters names the agent, and the page then redirects
to its whole id, so the address that is shared and bookmarked is the stable one. An unknown id, and
an entry in review (pending, rejected: not listed), is a 404 page (`registry.web.error_pages`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from flask import Response, current_app, redirect, render_template, request, url_for

from registry.web.agent_view import agent_view
from registry.web.blueprint import bp


def _services() -> Any:
    return current_app.extensions["agentdex"]


@bp.get("/agents/<agent_id>")
def agent_page(agent_id: str) -> Response | str:
    if request.path.rsplit("/", 1)[-1] != agent_id:  # a prefix, resolved to the whole id
        return redirect(url_for("web.agent_page", agent_id=agent_id), 302)  # type: ignore[return-value]
    view = agent_view(_services(), agent_id)
    return render_template("agent.html", view=view, agent=view.agent, section="agent")


def page_time(value: object) -> str:
    """An RFC 3339 time (or a datetime) as people read it: "2026-11-22 10:11 UTC"."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    if not isinstance(value, dt.datetime):
        return ""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


bp.add_app_template_filter(page_time, "page_time")
