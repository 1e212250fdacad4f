"""The web catalog's blueprint: the pages, their templates and their static files."""

from __future__ import annotations

from flask import Blueprint

bp = Blueprint("web", __name__, template_folder="templates", static_folder="static", static_url_path="/static")
