"""Where the registry is, as ARD clients must be told: absolute URLs only (ARD clients accept only
https registries, so behind a proxy the public scheme and host matter)."""

from __future__ import annotations

from flask import request

from registry.settings import Settings

ARD_PATH = "/ard"
# ARD v0.91 §5.1: the manifest, and the v0.9 path consumers still read.
MANIFEST_PATHS = ("/.well-known/ard.json", "/.well-known/ai-catalog.json")


def public_url(settings: Settings) -> str:
    """AGENTDEX_PUBLIC_URL, or this request's scheme and host (forwarded ones when the operator
    set AGENTDEX_FORWARDED_HOPS), without a trailing slash."""
    return settings.public_url or request.host_url.rstrip("/")


def ard_base(settings: Settings) -> str:
    """The base URL of the ARD API (`{base}/search`, `{base}/explore`, `{base}/agents`)."""
    return public_url(settings) + ARD_PATH
