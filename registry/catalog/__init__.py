"""The catalog: agents, their card history, search. Other packages use only what this face exports."""

from registry.catalog.card_urls import canonical_card_url
from registry.catalog.errors import CatalogError, InvalidCard
from registry.catalog.facets import Facet
from registry.catalog.fetcher import AgentTimeout, CardFetcher, CardFetchError, CardTooLarge, FetchedCard, NotModified
from registry.catalog.gate import (
    ACTIVE,
    DELETE,
    PENDING,
    REJECTED,
    STATUS,
    UNLISTED,
    VERSION,
    OpenGate,
    RegistrationGate,
    is_entry_owner,
)
from registry.catalog.gauges import agent_gauges
from registry.catalog.listing import CatalogListing, ListedBlock
from registry.catalog.models import Agent, AgentCard, AgentEmbedding, AgentTerm, TagCount, TagCountDelta
from registry.catalog.moderation import CatalogModeration
from registry.catalog.presenters import api_time, health_json
from registry.catalog.query_syntax import QuerySyntaxError, filtered_query, parse_query
from registry.catalog.ranking import RankedSearch, RankingSettings, Relevance
from registry.catalog.records import CardRecord, normalize_tag
from registry.catalog.search import AgentQuery, CatalogSearch
from registry.catalog.service import CatalogService
from registry.catalog.store import CatalogStore
from registry.catalog.store_postgres import PostgresCatalogStore
from registry.catalog.store_sqlite import SqliteCatalogStore

__all__ = [
    "ACTIVE",
    "DELETE",
    "PENDING",
    "REJECTED",
    "STATUS",
    "UNLISTED",
    "VERSION",
    "CatalogModeration",
    "OpenGate",
    "RegistrationGate",
    "is_entry_owner",
    "AgentTimeout",
    "CardTooLarge",
    "CatalogError",
    "CatalogListing",
    "InvalidCard",
    "ListedBlock",
    "TagCount",
    "TagCountDelta",
    "Agent",
    "AgentCard",
    "AgentEmbedding",
    "AgentQuery",
    "AgentTerm",
    "CardFetchError",
    "CardFetcher",
    "CardRecord",
    "CatalogSearch",
    "CatalogService",
    "CatalogStore",
    "Facet",
    "FetchedCard",
    "NotModified",
    "PostgresCatalogStore",
    "QuerySyntaxError",
    "RankedSearch",
    "RankingSettings",
    "Relevance",
    "SqliteCatalogStore",
    "agent_gauges",
    "api_time",
    "canonical_card_url",
    "filtered_query",
    "health_json",
    "normalize_tag",
    "parse_query",
]
