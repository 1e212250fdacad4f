"""The worker's settings: defaults as documented, every variable read, contradictions refused."""

from __future__ import annotations

import pytest

from registry.settings import Settings, SettingsError, WorkerSettings

BASE = {"AGENTDEX_DATABASE_URL": "postgresql+psycopg://db/agentdex", "AGENTDEX_SECRET_KEY": "s" * 32}


def test_defaults_match_issue_5():
    worker = Settings.from_env(BASE).worker
    assert (worker.health_interval, worker.health_timeout, worker.failures_before_down, worker.successes_before_up) == (
        60,
        5,
        2,
        1,
    )
    assert worker.crawl_interval == 3600 and worker.crawl_min_interval <= 3600 <= worker.crawl_max_interval


def test_every_variable_is_read():
    env = {
        **BASE,
        "AGENTDEX_WORKER_THREADS": "8",
        "AGENTDEX_WORKER_TICK": "1",
        "AGENTDEX_LEASE_SECONDS": "90",
        "AGENTDEX_HEALTH_INTERVAL": "30",
        "AGENTDEX_HEALTH_TIMEOUT": "2.5",
        "AGENTDEX_HEALTH_SLOW_AFTER": "1",
        "AGENTDEX_HEALTH_FAILURES_BEFORE_DOWN": "3",
        "AGENTDEX_HEALTH_SUCCESSES_BEFORE_UP": "2",
        "AGENTDEX_HEALTH_MAX_BACKOFF": "900",
        "AGENTDEX_HEALTH_HIDE_DEAD_AFTER": "86400",
        "AGENTDEX_HEALTH_RETENTION": "7200",
        "AGENTDEX_CRAWL_INTERVAL": "600",
        "AGENTDEX_CRAWL_MIN_INTERVAL": "60",
        "AGENTDEX_CRAWL_MAX_INTERVAL": "6000",
    }
    assert Settings.from_env(env).worker == WorkerSettings(
        threads=8,
        tick=1,
        lease_seconds=90,
        health_interval=30,
        health_timeout=2.5,
        health_slow_after=1,
        failures_before_down=3,
        successes_before_up=2,
        health_max_backoff=900,
        hide_dead_after=86400,
        health_retention=7200,
        crawl_interval=600,
        crawl_min_interval=60,
        crawl_max_interval=6000,
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("AGENTDEX_HEALTH_FAILURES_BEFORE_DOWN", "0", "greater than zero"),
        ("AGENTDEX_HEALTH_TIMEOUT", "soon", "not a number"),
        ("AGENTDEX_HEALTH_TIMEOUT", "90", "AGENTDEX_HEALTH_TIMEOUT < AGENTDEX_HEALTH_INTERVAL"),
        ("AGENTDEX_CRAWL_INTERVAL", "10", "AGENTDEX_CRAWL_MIN_INTERVAL <= AGENTDEX_CRAWL_INTERVAL"),
        ("AGENTDEX_LEASE_SECONDS", "10", "AGENTDEX_LEASE_SECONDS"),
    ],
)
def test_bad_values_name_the_variable(name, value, message):
    with pytest.raises(SettingsError, match=message):
        Settings.from_env({**BASE, name: value})
