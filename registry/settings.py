"""Typed settings, read once from `AGENTDEX_*` environment variables and validated at start.

Services never read the environment themselves: the app factory and the CLI build one
`Settings` and hand the values they need to each service.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT_DATABASE_URL = "sqlite:///./agentdex.db"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class SettingsError(ValueError):
    """A configuration value is missing or malformed; the message names the variable and the fix."""


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
            threads=_int(env, "AGENTDEX_WORKER_THREADS", cls.threads),
            tick=_float(env, "AGENTDEX_WORKER_TICK", cls.tick),
            lease_seconds=_float(env, "AGENTDEX_LEASE_SECONDS", cls.lease_seconds),
            health_interval=_float(env, "AGENTDEX_HEALTH_INTERVAL", cls.health_interval),
            health_timeout=_float(env, "AGENTDEX_HEALTH_TIMEOUT", cls.health_timeout),
            health_slow_after=_float(env, "AGENTDEX_HEALTH_SLOW_AFTER", cls.health_slow_after),
            failures_before_down=_int(env, "AGENTDEX_HEALTH_FAILURES_BEFORE_DOWN", cls.failures_before_down),
            successes_before_up=_int(env, "AGENTDEX_HEALTH_SUCCESSES_BEFORE_UP", cls.successes_before_up),
            health_max_backoff=_float(env, "AGENTDEX_HEALTH_MAX_BACKOFF", cls.health_max_backoff),
            hide_dead_after=_float(env, "AGENTDEX_HEALTH_HIDE_DEAD_AFTER", cls.hide_dead_after),
            health_retention=_float(env, "AGENTDEX_HEALTH_RETENTION", cls.health_retention),
            crawl_interval=_float(env, "AGENTDEX_CRAWL_INTERVAL", cls.crawl_interval),
            crawl_min_interval=_float(env, "AGENTDEX_CRAWL_MIN_INTERVAL", cls.crawl_min_interval),
            crawl_max_interval=_float(env, "AGENTDEX_CRAWL_MAX_INTERVAL", cls.crawl_max_interval),
        )


@dataclasses.dataclass(frozen=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    secret_key: str = ""
    allowed_networks: tuple[IPNetwork, ...] = ()
    allow_http: bool = False
    public_url: str | None = None
    max_body_bytes: int = 1_048_576
    max_card_bytes: int = 262_144
    max_skills: int = 200
    max_tags_per_skill: int = 50
    max_import_batch: int = 1_000
    max_import_bytes: int = 32 * 1_048_576
    page_limit_max: int = 200
    fetch_timeout: float = 10.0
    secret_generated: bool = False
    worker: WorkerSettings = WorkerSettings()

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
        return cls(
            database_url=database_url,
            secret_key=secret,
            secret_generated=generated,
            allowed_networks=_networks(env.get("AGENTDEX_ALLOWED_NETWORKS", "")),
            allow_http=_bool(env, "AGENTDEX_ALLOW_HTTP", False),
            public_url=(env.get("AGENTDEX_PUBLIC_URL") or "").rstrip("/") or None,
            max_body_bytes=_int(env, "AGENTDEX_MAX_BODY_BYTES", cls.max_body_bytes),
            max_card_bytes=_int(env, "AGENTDEX_MAX_CARD_BYTES", cls.max_card_bytes),
            max_skills=_int(env, "AGENTDEX_MAX_SKILLS", cls.max_skills),
            max_tags_per_skill=_int(env, "AGENTDEX_MAX_TAGS_PER_SKILL", cls.max_tags_per_skill),
            max_import_batch=_int(env, "AGENTDEX_MAX_IMPORT_BATCH", cls.max_import_batch),
            max_import_bytes=_int(env, "AGENTDEX_MAX_IMPORT_BYTES", cls.max_import_bytes),
            fetch_timeout=_float(env, "AGENTDEX_FETCH_TIMEOUT", cls.fetch_timeout),
            worker=WorkerSettings.from_env(env),
        )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name}={raw!r} is not a boolean; use true or false")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise SettingsError(f"{name}={raw!r} must be greater than zero")
    return value


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise SettingsError(f"{name}={raw!r} must be greater than zero")
    return value


def _networks(raw: str) -> tuple[IPNetwork, ...]:
    networks = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise SettingsError(
                f"AGENTDEX_ALLOWED_NETWORKS contains {part!r}, which is not a CIDR such as 127.0.0.0/8"
            ) from None
    return tuple(networks)


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
        raise SettingsError(
            "AGENTDEX_SECRET_KEY is required when the database is not a local SQLite file"
        )
    if path.exists():
        return path.read_text(encoding="utf-8").strip(), True
    secret = secrets.token_urlsafe(48)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    log.warning(
        "AGENTDEX_SECRET_KEY is not set: generated one and kept it in %s. "
        "A production deployment should set AGENTDEX_SECRET_KEY.",
        path,
    )
    return secret, True


def _secret_path(database_url: str) -> Path | None:
    prefix = "sqlite:///"
    if not database_url.startswith(prefix) or ":memory:" in database_url:
        return None
    db_path = Path(database_url[len(prefix) :].split("?", 1)[0])
    return db_path.with_name(db_path.name + ".secret")
