"""The web catalog: server-rendered pages on the domains' services (read-only, public).

Each page is a module that adds its routes to `bp`; importing it here registers them.
"""

from registry.web import (
    agent_page,  # noqa: F401  (routes on bp)
    search_page,  # noqa: F401  (routes on bp)
    security,  # noqa: F401  (headers and filters on bp)
    status_page,  # noqa: F401  (routes on bp)
    tags_page,  # noqa: F401  (routes on bp)
)
from registry.web.blueprint import bp
from registry.web.error_pages import html_error, is_page_request

__all__ = ["bp", "html_error", "is_page_request"]
