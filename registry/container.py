"""Wiring: build every service once from the settings. The only place that knows all the parts."""

from __future__ import annotations

import dataclasses

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from registry.a2a import RegistryAgent, registry_agent
from registry.api.registry_card import RegistryCard
from registry.auth import TokenService
from registry.catalog import (
    CardFetcher,
    CatalogListing,
    CatalogSearch,
    CatalogService,
    CatalogStore,
    PostgresCatalogStore,
    RankedSearch,
    RankingSettings,
    SqliteCatalogStore,
    agent_gauges,
)
from registry.db import WalCheckpointer, make_engine, make_session_factory, queue_claims, single_statements, sqlite_path
from registry.discovery import (
    Federation,
    ListingWatch,
    ManifestCrawling,
    ManifestPublisher,
    NoListing,
    PageCache,
    SignedHost,
    UnsignedHost,
    manifest_crawling,
)
from registry.events import EventServices, build_events
from registry.health import CrawlPolicy, CrawlService, HealthPolicy, HealthProbe, HealthService
from registry.metrics import NULL_METRICS, Metrics, build_metrics
from registry.observability import NullTracing, Tracing, start_tracing
from registry.outbound import OutboundPolicy, SafeHttpClient
from registry.ownership import AgentPolicy, DomainServices, build_agent_policy, build_domains
from registry.relay import RelayServices, build_relay, card_key_sources, relay_gauges, relay_policy
from registry.retrieval.embedding import Embedder, NullEmbedder, WordLlamaEmbedder
from registry.settings import Settings
from registry.trust import (
    Endorser,
    KeyPolicy,
    KeySealer,
    OwnerKeys,
    RegistryKeys,
    SafeJwksFetcher,
    TrustReads,
    TrustService,
)
from registry.validation import CardLimits
from signing import JwksCache, UnsafeHttpAnyHost, parse_jwks


@dataclasses.dataclass
class Services:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    http: SafeHttpClient
    limits: CardLimits
    tokens: TokenService
    catalog: CatalogService
    search: CatalogSearch
    health: HealthService
    crawler: CrawlService
    registry_keys: RegistryKeys
    registry_card: RegistryCard
    trust: TrustService
    trust_reads: TrustReads
    relay: RelayServices
    a2a: RegistryAgent  # the registry's own A2A agent (registry.a2a)
    manifest: ManifestPublisher
    federation: Federation
    manifest_crawl: ManifestCrawling  # domains registered with their ARD manifests, re-crawled
    events: EventServices  # change events: subscriptions and the fan-out to the relay (registry.events)
    domains: DomainServices  # proven domains: covers/owner_of, /v1/domains, their re-checks (registry.ownership)
    agent_policy: AgentPolicy  # AGENTDEX_OWNERSHIP: the catalog's gate, review and claims (registry.ownership)
    checkpointer: WalCheckpointer | None = None
    metrics: Metrics = NULL_METRICS  # AGENTDEX_METRICS (registry.metrics)
    tracing: Tracing = dataclasses.field(default_factory=NullTracing)  # OTEL_EXPORTER_OTLP_ENDPOINT

    def close(self) -> None:
        self.relay.close()
        self.http.close()  # its pooled sockets and deadline watchdog
        if self.checkpointer is not None:
            self.checkpointer.stop()
        self.engine.dispose()


def catalog_store(engine: Engine, embedder: Embedder | None = None) -> CatalogStore:
    """The catalog's store for the engine's database (`embedder`: by default the bundled model)."""
    store = SqliteCatalogStore if engine.dialect.name == "sqlite" else PostgresCatalogStore
    return store(engine, single_statements(engine), embedder or WordLlamaEmbedder())


def outbound_policy(settings: Settings) -> OutboundPolicy:
    return OutboundPolicy(
        allow_http=settings.allow_http,
        allowed_networks=settings.allowed_networks,
        read_timeout=settings.fetch_timeout,
        total_timeout=settings.fetch_timeout * 1.5,
        max_response_bytes=settings.max_card_bytes,
        pool_maxsize=max(16, settings.worker.threads),  # one kept-alive connection per prober
    )


def card_limits(settings: Settings) -> CardLimits:
    return CardLimits(
        max_card_bytes=settings.max_card_bytes,
        max_skills=settings.max_skills,
        max_tags_per_skill=settings.max_tags_per_skill,
    )


def health_service(settings: Settings, engine: Engine, http: SafeHttpClient, metrics: Metrics) -> HealthService:
    worker = settings.worker
    probe = HealthProbe(http, timeout=worker.health_timeout, slow_after=worker.health_slow_after, metrics=metrics)
    policy = HealthPolicy(
        interval=worker.health_interval,
        failures_before_down=worker.failures_before_down,
        successes_before_up=worker.successes_before_up,
        max_backoff=worker.health_max_backoff,
    )
    return HealthService(engine, probe, policy, lease_seconds=worker.lease_seconds, retention=worker.health_retention)


def crawl_service(
    settings: Settings, engine: Engine, fetcher: CardFetcher, catalog: CatalogService, metrics: Metrics
) -> CrawlService:
    worker = settings.worker
    policy = CrawlPolicy(worker.crawl_interval, worker.crawl_min_interval, worker.crawl_max_interval)
    return CrawlService(engine, fetcher, catalog, policy, lease_seconds=worker.lease_seconds, metrics=metrics)


def relay_services(
    settings: Settings,
    engine: Engine,
    sessions: sessionmaker[Session],
    http: SafeHttpClient,
    keys: RegistryKeys,
    trust: TrustService,
    metrics: Metrics,
) -> RelayServices:
    # Webhooks are signed with the registry's Ed25519 key (whatever the endorsement algorithm) and
    # verify with /.well-known/jwks.json; agents' JWTs verify with keys the trust policy binds to their card.
    unsafe = UnsafeHttpAnyHost() if settings.allow_http else None
    key_sources = card_key_sources(
        key_policy(settings, http, trust.owner_keys, metrics), jwks_fetcher(settings, http, metrics), unsafe=unsafe
    )
    # The relay's HTTP client and claim pool are closed with it, by Services.close.
    return build_relay(
        settings,
        engine,
        sessions,
        http=SafeHttpClient(relay_policy(settings)),
        claims=queue_claims(engine),
        key_sources=key_sources,
        webhook_key=lambda: keys.active("EdDSA"),
        metrics=metrics,
    )


def jwks_fetcher(settings: Settings, http: SafeHttpClient, metrics: Metrics = NULL_METRICS) -> SafeJwksFetcher:
    trust = settings.trust
    return SafeJwksFetcher(http, max_bytes=trust.jwks_max_bytes, timeout=trust.jwks_timeout, metrics=metrics)


def key_policy(
    settings: Settings, http: SafeHttpClient, owner_keys: OwnerKeys, metrics: Metrics = NULL_METRICS
) -> KeyPolicy:
    trust = settings.trust
    return KeyPolicy(
        owner_keys,
        JwksCache(jwks_fetcher(settings, http, metrics), ttl=trust.jwks_ttl, min_refresh=trust.jwks_min_refresh),
        trust_store=parse_jwks(trust.trusted_jwks) if trust.trusted_jwks else None,
        jku_origins=trust.jku_origins,
        # Plain-http key URLs only where the operator allowed plain http at all; the outbound
        # client still refuses private addresses unless their network is allowlisted.
        unsafe=UnsafeHttpAnyHost() if settings.allow_http else None,
    )


def trust_service(
    settings: Settings,
    engine: Engine,
    sessions: sessionmaker[Session],
    http: SafeHttpClient,
    keys: RegistryKeys,
    metrics: Metrics = NULL_METRICS,
) -> TrustService:
    owner_keys = OwnerKeys(sessions)
    policy = key_policy(settings, http, owner_keys, metrics)
    endorser = Endorser(keys, alg=settings.trust.endorsement_alg, public_url=settings.public_url)
    return TrustService(engine, policy, owner_keys, endorser, require_signatures=settings.trust.require_signatures)


def manifest_publisher(
    settings: Settings, engine: Engine, search: CatalogSearch, keys: RegistryKeys
) -> ManifestPublisher:
    """The ARD manifest: its pages watched through the database (so a change made by any process
    shows), its host signed with the key that signs the registry's card."""
    ard = settings.ard
    listing = CatalogListing(single_statements(engine), hide_dead_after=settings.worker.hide_dead_after)
    watch = ListingWatch(listing, ard.manifest_page) if ard.list_agents else NoListing()
    host = SignedHost(keys, alg=settings.trust.endorsement_alg) if ard.sign_manifest else UnsignedHost()
    return ManifestPublisher(search, watch, host, PageCache(), page_size=ard.manifest_page)


def build_services(settings: Settings, *, long_running: bool = False) -> Services:
    """Wire every service. `long_running` (web and worker processes): SQLite WAL checkpoints
    run in a background thread instead of inside whichever commit crosses the threshold."""
    metrics = build_metrics(settings.operations)  # first: it may have to set up prometheus_client
    engine = make_engine(settings.database_url, background_checkpoints=long_running)
    database_file = sqlite_path(engine) if long_running else None
    sessions = make_session_factory(engine)
    http = SafeHttpClient(outbound_policy(settings))
    limits = card_limits(settings)
    fetcher = CardFetcher(http, max_card_bytes=settings.max_card_bytes)
    keys = RegistryKeys(
        sessions, KeySealer(settings.secret_key), grace=settings.trust.key_grace, key_dir=settings.trust.key_dir
    )
    trust = trust_service(settings, engine, sessions, http, keys, metrics)
    embedder = WordLlamaEmbedder() if settings.search_semantic else NullEmbedder()
    store = catalog_store(engine, embedder)
    agent_policy = build_agent_policy(settings.ownership.policy, sessions, store)
    catalog = CatalogService(store, fetcher, limits, trust, gate=agent_policy.gate)
    ranked = RankedSearch(store, embedder, RankingSettings(semantic_floor=settings.search_semantic_floor))
    search = CatalogSearch(store, ranked, hide_dead_after=settings.worker.hide_dead_after)
    relay = relay_services(settings, engine, sessions, http, keys, trust, metrics)
    watch_metrics(metrics, engine, relay)
    tracing = start_tracing(settings.operations)
    tracing.instrument_engines([engine, *([relay.claims] if relay.claims is not None else [])])
    return Services(
        settings=settings,
        engine=engine,
        sessions=sessions,
        http=http,
        limits=limits,
        tokens=TokenService(sessions),
        catalog=catalog,
        search=search,
        health=health_service(settings, engine, http, metrics),
        crawler=crawl_service(settings, engine, fetcher, catalog, metrics),
        registry_keys=keys,
        registry_card=RegistryCard(keys, alg=settings.trust.endorsement_alg),
        trust=trust,
        trust_reads=TrustReads(
            single_statements(engine), trust.endorser, require_signatures=settings.trust.require_signatures
        ),
        relay=relay,
        a2a=registry_agent(engine, search, catalog, fetcher, trust, limits, max_limit=settings.page_limit_max),
        manifest=manifest_publisher(settings, engine, search, keys),
        federation=Federation(
            http, settings.ard.upstreams, timeout=settings.ard.federation_timeout, max_hops=settings.ard.max_hops
        ),
        manifest_crawl=manifest_crawling(settings, engine, http, catalog),
        events=build_events(settings, engine, sessions, relay),
        domains=build_domains(settings, engine, sessions, http),
        agent_policy=agent_policy,
        checkpointer=WalCheckpointer(database_file).start() if database_file else None,
        metrics=metrics,
        tracing=tracing,
    )


def watch_metrics(metrics: Metrics, engine: Engine, relay: RelayServices) -> None:
    """The pools' gauges, and the domains' gauges computed at each scrape."""
    metrics.watch_pool(engine, "main")
    if relay.claims is not None:
        metrics.watch_pool(relay.claims, "relay_claims")
    metrics.add_gauges(agent_gauges(single_statements(engine)))
    metrics.add_gauges(relay_gauges(single_statements(engine)))
