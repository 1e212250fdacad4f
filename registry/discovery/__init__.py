"""ARD, the discovery standard: the registry's manifest, its ARD search API with federation, and
the crawling of other domains' manifests. Uses the catalog and trust through their faces."""

from registry.discovery.entries import A2A_CARD, CATALOG, REGISTRY, agent_entry, agent_identifier, publisher_of
from registry.discovery.errors import ArdError, ManifestError
from registry.discovery.links import ARD_PATH, ard_base, public_url

__all__ = [
    "A2A_CARD",
    "ARD_PATH",
    "CATALOG",
    "REGISTRY",
    "ArdError",
    "ManifestError",
    "agent_entry",
    "agent_identifier",
    "ard_base",
    "public_url",
    "publisher_of",
]
