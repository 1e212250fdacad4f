"""ARD, the discovery standard: the registry's manifest, its ARD search API with federation, and
the crawling of other domains' manifests. Uses the catalog and trust through their faces."""

from registry.discovery.crawl.models import ManifestListing, ManifestSource
from registry.discovery.crawl.wiring import ManifestCrawling, manifest_crawling
from registry.discovery.entries import agent_identifier
from registry.discovery.errors import ArdError, ManifestError
from registry.discovery.links import ARD_PATH, MANIFEST_PATHS
from registry.discovery.publish.cache import ListingWatch, NoListing, PageCache
from registry.discovery.publish.manifest import ManifestPublisher
from registry.discovery.publish.signing import SignedHost, UnsignedHost
from registry.discovery.search.federation import Federation

__all__ = [
    "ARD_PATH",
    "MANIFEST_PATHS",
    "ArdError",
    "Federation",
    "ManifestError",
    "ListingWatch",
    "ManifestPublisher",
    "NoListing",
    "PageCache",
    "SignedHost",
    "UnsignedHost",
    "ManifestCrawling",
    "ManifestListing",
    "ManifestSource",
    "agent_identifier",
    "manifest_crawling",
]
