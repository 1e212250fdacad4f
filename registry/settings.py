"""Typed settings, read once from `AGENTDEX_*` environment variables and validated at start.

Services never read the environment themselves: the app factory and the CLI build one
`Settings` and hand the values they need to each service.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from registry.settings_env import (
    IPNetwork,
    SettingsError,
    env_bool,
    env_delays,
    env_float,
    env_fraction,
    env_int,
    env_networks,
)
from registry.settings_operations import OperationsSettings
from registry.settings_ownership import OwnershipSettings

log = logging.getLogger(__name__)

DEFAULT_DATABASE_URL = "sqlite:///./agentdex.db"
ENDORSEMENT_ALGS = ("EdDSA", "ES256", "ES384", "PS256", "RS256")


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    """The scheduled jobs (`agentdex worker`, and `agentdex serve` in-process): durations in seconds.

    Raises SettingsError when the values contradict each other.
    """

    threads: int = 32
    tick: float = 5.0
    lease_seconds: float = 300.0
    health_interval: float = 60.0
    health_timeout: float = 5.0
    health_slow_after: float = 2.0
    failures_before_down: int = 2
    successes_before_up: int = 1
    health_max_backoff: float = 3600.0
    hide_dead_after: float = 259_200.0
    health_retention: float = 86_400.0
    crawl_interval: float = 3600.0
    crawl_min_interval: float = 300.0
    crawl_max_interval: float = 86_400.0

    def __post_init__(self) -> None:
        if not self.crawl_min_interval <= self.crawl_interval <= self.crawl_max_interval:
            raise SettingsError(
                "AGENTDEX_CRAWL_MIN_INTERVAL <= AGENTDEX_CRAWL_INTERVAL <= AGENTDEX_CRAWL_MAX_INTERVAL must hold"
            )
        if not self.health_timeout < self.health_interval <= self.health_max_backoff:
            raise SettingsError(
                "AGENTDEX_HEALTH_TIMEOUT < AGENTDEX_HEALTH_INTERVAL <= AGENTDEX_HEALTH_MAX_BACKOFF must hold"
            )
        if self.lease_seconds < 4 * self.health_timeout:
            raise SettingsError("AGENTDEX_LEASE_SECONDS must be at least 4 x AGENTDEX_HEALTH_TIMEOUT")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WorkerSettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        return cls(
            threads=env_int(env, "AGENTDEX_WORKER_THREADS", cls.threads),
            tick=env_float(env, "AGENTDEX_WORKER_TICK", cls.tick),
            lease_seconds=env_float(env, "AGENTDEX_LEASE_SECONDS", cls.lease_seconds),
            health_interval=env_float(env, "AGENTDEX_HEALTH_INTERVAL", cls.health_interval),
            health_timeout=env_float(env, "AGENTDEX_HEALTH_TIMEOUT", cls.health_timeout),
            health_slow_after=env_float(env, "AGENTDEX_HEALTH_SLOW_AFTER", cls.health_slow_after),
            failures_before_down=env_int(env, "AGENTDEX_HEALTH_FAILURES_BEFORE_DOWN", cls.failures_before_down),
            successes_before_up=env_int(env, "AGENTDEX_HEALTH_SUCCESSES_BEFORE_UP", cls.successes_before_up),
            health_max_backoff=env_float(env, "AGENTDEX_HEALTH_MAX_BACKOFF", cls.health_max_backoff),
            hide_dead_after=env_float(env, "AGENTDEX_HEALTH_HIDE_DEAD_AFTER", cls.hide_dead_after),
            health_retention=env_float(env, "AGENTDEX_HEALTH_RETENTION", cls.health_retention),
            crawl_interval=env_float(env, "AGENTDEX_CRAWL_INTERVAL", cls.crawl_interval),
            crawl_min_interval=env_float(env, "AGENTDEX_CRAWL_MIN_INTERVAL", cls.crawl_min_interval),
            crawl_max_interval=env_float(env, "AGENTDEX_CRAWL_MAX_INTERVAL", cls.crawl_max_interval),
        )


@dataclasses.dataclass(frozen=True)
class TrustSettings:
    """Signature verification and the registry's own keys (issue 4). Durations in seconds.

    `trusted_jwks` is the operator's trust store as JWKS JSON text (from a file or inline);
    `jku_origins` are origins besides a card's own whose `jku` may be fetched; `key_dir` keeps
    the registry's private keys as PEM files instead of sealed in the database.
    """

    require_signatures: bool = False
    trusted_jwks: str | None = None
    jku_origins: tuple[str, ...] = ()
    endorsement_alg: str = "EdDSA"
    key_dir: Path | None = None
    key_grace: float = 14 * 86_400.0
    jwks_ttl: float = 300.0
    jwks_min_refresh: float = 60.0
    jwks_timeout: float = 5.0
    jwks_max_bytes: int = 262_144

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, allow_http: bool) -> TrustSettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        alg = env.get("AGENTDEX_ENDORSEMENT_ALG", cls.endorsement_alg).strip()
        if alg not in ENDORSEMENT_ALGS:
            raise SettingsError(f"AGENTDEX_ENDORSEMENT_ALG={alg!r} must be one of {', '.join(ENDORSEMENT_ALGS)}")
        key_dir = (env.get("AGENTDEX_KEY_DIR") or "").strip()
        return cls(
            require_signatures=env_bool(env, "AGENTDEX_REQUIRE_SIGNATURES", False),
            trusted_jwks=_trusted_jwks(env.get("AGENTDEX_TRUSTED_JWKS", "")),
            jku_origins=_origins(env.get("AGENTDEX_JKU_ALLOWED_ORIGINS", ""), allow_http),
            endorsement_alg=alg,
            key_dir=Path(key_dir) if key_dir else None,
            key_grace=env_float(env, "AGENTDEX_KEY_GRACE_PERIOD", cls.key_grace),
            jwks_ttl=env_float(env, "AGENTDEX_JWKS_TTL", cls.jwks_ttl),
            jwks_min_refresh=env_float(env, "AGENTDEX_JWKS_MIN_REFRESH", cls.jwks_min_refresh),
            jwks_timeout=env_float(env, "AGENTDEX_JWKS_TIMEOUT", cls.jwks_timeout),
            jwks_max_bytes=env_int(env, "AGENTDEX_JWKS_MAX_BYTES", cls.jwks_max_bytes),
        )


@dataclasses.dataclass(frozen=True)
class ArdSettings:
    """ARD, the discovery standard (issue 30): the manifest, the search API's federation.

    `upstreams` are the base URLs of other ARD registries' APIs (`{base}/search`); `list_agents`
    off publishes only the registry itself in `/.well-known/ard.json`.
    """

    list_agents: bool = True
    sign_manifest: bool = True
    manifest_page: int = 1_000
    upstreams: tuple[str, ...] = ()
    federation_timeout: float = 3.0
    max_hops: int = 3
    crawl_depth: int = 4
    crawl_max_entries: int = 10_000

    def __post_init__(self) -> None:
        if not 1 <= self.manifest_page <= 10_000:
            raise SettingsError("AGENTDEX_ARD_MANIFEST_PAGE must be between 1 and 10000")
        if self.federation_timeout <= 0 or self.max_hops < 0:
            raise SettingsError("AGENTDEX_ARD_FEDERATION_TIMEOUT must be > 0 and AGENTDEX_ARD_MAX_HOPS >= 0")
        if self.crawl_depth < 1 or self.crawl_max_entries < 1:
            raise SettingsError("AGENTDEX_ARD_CRAWL_DEPTH and AGENTDEX_ARD_CRAWL_MAX_ENTRIES must be at least 1")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ArdSettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        upstreams = tuple(u.strip().rstrip("/") for u in env.get("AGENTDEX_ARD_UPSTREAMS", "").split(",") if u.strip())
        for upstream in upstreams:
            if not upstream.startswith(("https://", "http://")):
                raise SettingsError(
                    f"AGENTDEX_ARD_UPSTREAMS contains {upstream!r}, which is not the http(s) base URL of an ARD API"
                )
        return cls(
            list_agents=env_bool(env, "AGENTDEX_ARD_LIST_AGENTS", cls.list_agents),
            sign_manifest=env_bool(env, "AGENTDEX_ARD_SIGN_MANIFEST", cls.sign_manifest),
            manifest_page=env_int(env, "AGENTDEX_ARD_MANIFEST_PAGE", cls.manifest_page),
            upstreams=upstreams,
            federation_timeout=env_float(env, "AGENTDEX_ARD_FEDERATION_TIMEOUT", cls.federation_timeout),
            max_hops=env_int(env, "AGENTDEX_ARD_MAX_HOPS", cls.max_hops),
            crawl_depth=env_int(env, "AGENTDEX_ARD_CRAWL_DEPTH", cls.crawl_depth),
            crawl_max_entries=env_int(env, "AGENTDEX_ARD_CRAWL_MAX_ENTRIES", cls.crawl_max_entries),
        )


@dataclasses.dataclass(frozen=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    secret_key: str = ""
    allowed_networks: tuple[IPNetwork, ...] = ()
    allow_http: bool = False
    public_url: str | None = None
    # Reverse proxies in front of the app whose X-Forwarded-Proto/-Host/-Port/-For are believed.
    forwarded_hops: int = 0
    max_body_bytes: int = 1_048_576
    max_card_bytes: int = 262_144
    max_skills: int = 200
    max_tags_per_skill: int = 50
    max_import_batch: int = 1_000
    max_import_bytes: int = 32 * 1_048_576
    page_limit_max: int = 200
    fetch_timeout: float = 10.0
    # Ranked search: the embedding model on (semantic and fused ranking) or off (lexical only),
    # and the cosine an agent found by meaning alone must reach.
    search_semantic: bool = True
    search_semantic_floor: float = 0.10
    secret_generated: bool = False
    worker: WorkerSettings = WorkerSettings()
    trust: TrustSettings = TrustSettings()
    relay: RelaySettings = dataclasses.field(default_factory=lambda: RelaySettings())
    ard: ArdSettings = ArdSettings()
    operations: OperationsSettings = OperationsSettings()
    ownership: OwnershipSettings = OwnershipSettings()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from `AGENTDEX_*` variables.

        Raises SettingsError naming the variable when a value cannot be parsed.
        """
        env = os.environ if env is None else env
        database_url = env.get("AGENTDEX_DATABASE_URL", DEFAULT_DATABASE_URL).strip()
        if "://" not in database_url:
            raise SettingsError(
                f"AGENTDEX_DATABASE_URL={database_url!r} is not a database URL; "
                "use e.g. sqlite:///./agentdex.db or postgresql+psycopg://user@host/db"
            )
        secret, generated = _secret_key(env.get("AGENTDEX_SECRET_KEY", ""), database_url)
        allow_http = env_bool(env, "AGENTDEX_ALLOW_HTTP", False)
        return cls(
            database_url=database_url,
            secret_key=secret,
            secret_generated=generated,
            allowed_networks=env_networks(env, "AGENTDEX_ALLOWED_NETWORKS"),
            allow_http=allow_http,
            public_url=(env.get("AGENTDEX_PUBLIC_URL") or "").rstrip("/") or None,
            forwarded_hops=env_int(env, "AGENTDEX_FORWARDED_HOPS", cls.forwarded_hops),
            max_body_bytes=env_int(env, "AGENTDEX_MAX_BODY_BYTES", cls.max_body_bytes),
            max_card_bytes=env_int(env, "AGENTDEX_MAX_CARD_BYTES", cls.max_card_bytes),
            max_skills=env_int(env, "AGENTDEX_MAX_SKILLS", cls.max_skills),
            max_tags_per_skill=env_int(env, "AGENTDEX_MAX_TAGS_PER_SKILL", cls.max_tags_per_skill),
            max_import_batch=env_int(env, "AGENTDEX_MAX_IMPORT_BATCH", cls.max_import_batch),
            max_import_bytes=env_int(env, "AGENTDEX_MAX_IMPORT_BYTES", cls.max_import_bytes),
            fetch_timeout=env_float(env, "AGENTDEX_FETCH_TIMEOUT", cls.fetch_timeout),
            search_semantic=env_bool(env, "AGENTDEX_SEARCH_SEMANTIC", cls.search_semantic),
            search_semantic_floor=env_float(env, "AGENTDEX_SEARCH_SEMANTIC_FLOOR", cls.search_semantic_floor),
            worker=WorkerSettings.from_env(env),
            trust=TrustSettings.from_env(env, allow_http=allow_http),
            relay=RelaySettings.from_env(env),
            ard=ArdSettings.from_env(env),
            operations=OperationsSettings.from_env(env),
            ownership=OwnershipSettings.from_env(env),
        )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def _trusted_jwks(raw: str) -> str | None:
    """The trust store as JSON text: inline JSON, or the path of a JWKS file."""
    from signing import KeyFormatError, parse_jwks

    raw = raw.strip()
    if not raw:
        return None
    if not raw.startswith("{"):
        try:
            raw = Path(raw).read_text(encoding="utf-8")
        except OSError as error:
            raise SettingsError(f"AGENTDEX_TRUSTED_JWKS: cannot read {raw}: {error.strerror or error}") from None
    try:
        parse_jwks(raw)
    except KeyFormatError as error:
        raise SettingsError(f"AGENTDEX_TRUSTED_JWKS is not a usable JWKS: {error}") from None
    return raw


def _origins(raw: str, allow_http: bool) -> tuple[str, ...]:
    from signing import PolicyError
    from signing.fetch import origin_of

    origins = []
    for part in (p.strip().rstrip("/") for p in raw.split(",")):
        if not part:
            continue
        try:
            origin = origin_of(part)
        except PolicyError:
            origin = None
        if origin is None or origin != part.lower() or (origin.startswith("http:") and not allow_http):
            raise SettingsError(
                f"AGENTDEX_JKU_ALLOWED_ORIGINS contains {part!r}, which is not an https origin such as https://keys.example.com"
            )
        origins.append(origin)
    return tuple(origins)


def _secret_key(raw: str, database_url: str) -> tuple[str, bool]:
    """The configured secret, or one generated once and kept beside a SQLite database.

    The embedded default must start with no configuration, yet encrypted data must survive
    restarts, so the generated secret is persisted next to the database file.
    """
    if raw.strip():
        if len(raw.strip()) < 16:
            raise SettingsError("AGENTDEX_SECRET_KEY must be at least 16 characters long")
        return raw.strip(), False
    path = _secret_path(database_url)
    if path is None:
        raise SettingsError("AGENTDEX_SECRET_KEY is required when the database is not a local SQLite file")
    if path.exists():
        return path.read_text(encoding="utf-8").strip(), True
    secret = secrets.token_urlsafe(48)
    try:
        _publish_secret(path, secret)
    except FileExistsError:  # another process made it first (a `worker` started with `serve`)
        return path.read_text(encoding="utf-8").strip(), True
    log.warning(
        "AGENTDEX_SECRET_KEY is not set: generated one and kept it in %s. "
        "A production deployment should set AGENTDEX_SECRET_KEY.",
        path,
    )
    return secret, True


def _publish_secret(path: Path, secret: str) -> None:
    """Write `secret` to `path`, linked into place whole; FileExistsError if `path` exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    try:
        os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)


def _secret_path(database_url: str) -> Path | None:
    prefix = "sqlite:///"
    if not database_url.startswith(prefix) or ":memory:" in database_url:
        return None
    db_path = Path(database_url[len(prefix) :].split("?", 1)[0])
    return db_path.with_name(db_path.name + ".secret")


DEFAULT_RETRY_SCHEDULE = (0.0, 5.0, 300.0, 1800.0, 7200.0, 18_000.0, 36_000.0, 36_000.0)


@dataclasses.dataclass(frozen=True)
class RelaySettings:
    """The push relay (issue 6): ingress limits, delivery timing and retries. Durations in seconds.

    `retry_schedule[i]` is the delay before attempt i + 1 (the first is normally 0); after the
    last attempt a message is dead-lettered. Raises SettingsError when values contradict.
    """

    max_body_bytes: int = 262_144
    rate: float = 50.0
    burst: int = 100
    retry_schedule: tuple[float, ...] = DEFAULT_RETRY_SCHEDULE
    jitter: float = 0.2
    max_retry_after: float = 3600.0
    timeout: float = 15.0
    connect_timeout: float = 5.0
    lease_seconds: float = 60.0
    tick: float = 1.0
    poll: float = 0.005
    batch: int = 64
    token_grace: float = 86_400.0
    jwt_max_age: float = 300.0
    retention: float = 7 * 86_400.0

    def __post_init__(self) -> None:
        if not self.retry_schedule or any(delay < 0 for delay in self.retry_schedule):
            raise SettingsError("AGENTDEX_RELAY_RETRY_SCHEDULE must list one or more delays >= 0 (seconds)")
        if not 0 <= self.jitter < 1:
            raise SettingsError("AGENTDEX_RELAY_JITTER must be at least 0 and below 1 (0.2 = +/-20 %)")
        if self.connect_timeout > self.timeout:
            raise SettingsError("AGENTDEX_RELAY_CONNECT_TIMEOUT must not exceed AGENTDEX_RELAY_TIMEOUT")
        if self.lease_seconds <= self.timeout:
            raise SettingsError("AGENTDEX_RELAY_LEASE_SECONDS must exceed AGENTDEX_RELAY_TIMEOUT")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RelaySettings:
        """Raises SettingsError naming the variable when a value cannot be parsed."""
        return cls(
            max_body_bytes=env_int(env, "AGENTDEX_RELAY_MAX_BODY_BYTES", cls.max_body_bytes),
            rate=env_float(env, "AGENTDEX_RELAY_RATE", cls.rate),
            burst=env_int(env, "AGENTDEX_RELAY_BURST", cls.burst),
            retry_schedule=env_delays(env, "AGENTDEX_RELAY_RETRY_SCHEDULE", cls.retry_schedule),
            jitter=env_fraction(env, "AGENTDEX_RELAY_JITTER", cls.jitter),
            max_retry_after=env_float(env, "AGENTDEX_RELAY_MAX_RETRY_AFTER", cls.max_retry_after),
            timeout=env_float(env, "AGENTDEX_RELAY_TIMEOUT", cls.timeout),
            connect_timeout=env_float(env, "AGENTDEX_RELAY_CONNECT_TIMEOUT", cls.connect_timeout),
            lease_seconds=env_float(env, "AGENTDEX_RELAY_LEASE_SECONDS", cls.lease_seconds),
            tick=env_float(env, "AGENTDEX_RELAY_TICK", cls.tick),
            poll=env_float(env, "AGENTDEX_RELAY_POLL", cls.poll),
            batch=env_int(env, "AGENTDEX_RELAY_BATCH", cls.batch),
            token_grace=env_float(env, "AGENTDEX_RELAY_TOKEN_GRACE", cls.token_grace),
            jwt_max_age=env_float(env, "AGENTDEX_RELAY_JWT_MAX_AGE", cls.jwt_max_age),
            retention=env_float(env, "AGENTDEX_RELAY_RETENTION", cls.retention),
        )
