"""Wiring: build every service once from the settings. The only place that knows all the parts."""

from __future__ import annotations

import dataclasses

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from registry.db import make_engine, make_session_factory
from registry.outbound import OutboundPolicy, SafeHttpClient
from registry.services.card_fetcher import CardFetcher
from registry.services.catalog import CatalogService
from registry.services.discovery import DiscoveryService
from registry.services.tokens import TokenService
from registry.settings import Settings
from registry.validation import CardLimits


@dataclasses.dataclass
class Services:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    http: SafeHttpClient
    limits: CardLimits
    tokens: TokenService
    catalog: CatalogService
    discovery: DiscoveryService

    def close(self) -> None:
        self.engine.dispose()


def outbound_policy(settings: Settings) -> OutboundPolicy:
    return OutboundPolicy(
        allow_http=settings.allow_http,
        allowed_networks=settings.allowed_networks,
        read_timeout=settings.fetch_timeout,
        total_timeout=settings.fetch_timeout * 1.5,
        max_response_bytes=settings.max_card_bytes,
    )


def card_limits(settings: Settings) -> CardLimits:
    return CardLimits(
        max_card_bytes=settings.max_card_bytes,
        max_skills=settings.max_skills,
        max_tags_per_skill=settings.max_tags_per_skill,
    )


def build_services(settings: Settings) -> Services:
    engine = make_engine(settings.database_url)
    sessions = make_session_factory(engine)
    http = SafeHttpClient(outbound_policy(settings))
    limits = card_limits(settings)
    fetcher = CardFetcher(http, max_card_bytes=settings.max_card_bytes)
    return Services(
        settings=settings,
        engine=engine,
        sessions=sessions,
        http=http,
        limits=limits,
        tokens=TokenService(sessions),
        catalog=CatalogService(sessions, fetcher, limits),
        discovery=DiscoveryService(sessions),
    )
