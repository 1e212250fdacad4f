"""Links taken from Agent Cards. A card is untrusted: only an absolute http(s) URL becomes a link,
and one that tells the browser not to pass on the page's origin, its window or our reputation
(`noopener noreferrer nofollow`). Anything else (`javascript:`, `data:`, a relative path) is shown
as text, escaped like all card text."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from markupsafe import Markup, escape

WEB_SCHEMES = ("http", "https")
# Browsers drop or skip these inside a URL ("java\tscript:"); a URL holding one is shown as text.
_READ_DIFFERENTLY = re.compile(r"[\x00-\x20\x7f\s]")


def is_web_url(url: object) -> bool:
    """Whether `url` is an absolute http(s) URL with a host, and nothing a browser would read
    differently (white space or control characters anywhere)."""
    if not isinstance(url, str) or not url or _READ_DIFFERENTLY.search(url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in WEB_SCHEMES and bool(parts.netloc)


def card_link(url: object, text: object = None) -> Markup:
    """`url` from a card as a link showing `text` (by default the URL itself), or as plain text
    when it is not an http(s) URL. In templates: `{{ url|card_link }}`, `{{ url|card_link(name) }}`."""
    shown = url if text is None else text
    if is_web_url(url):
        return Markup('<a href="{}" rel="noopener noreferrer nofollow">{}</a>').format(url, shown)
    return escape("" if shown is None else shown)
