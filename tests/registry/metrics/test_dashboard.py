"""The Grafana dashboard in the repository queries only metrics that /metrics really exposes, so
renaming a metric without the dashboard (or the reverse) fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

DASHBOARD = Path(__file__).resolve().parents[3] / "deploy" / "grafana" / "agentdex.json"
METRIC = re.compile(r"\bagentdex_[a-z0-9_]+")
SUFFIXES = re.compile(r"_(bucket|count|sum|total)$")


def queried_metrics(dashboard: dict) -> set[str]:
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert exprs, "the dashboard has no queries"
    return {SUFFIXES.sub("", name) for expr in exprs for name in METRIC.findall(expr)}


def test_every_metric_the_dashboard_queries_is_exposed(client):
    exposed = {family.name for family in text_string_to_metric_families(client.get("/metrics").get_data(as_text=True))}
    dashboard = json.loads(DASHBOARD.read_text())
    missing = queried_metrics(dashboard) - exposed
    assert not missing, f"the dashboard queries metrics /metrics does not expose: {sorted(missing)}"


def test_the_dashboard_covers_what_an_operator_watches():
    queried = queried_metrics(json.loads(DASHBOARD.read_text()))
    for name in (
        "agentdex_http_requests",
        "agentdex_http_request_duration_seconds",
        "agentdex_registrations",
        "agentdex_agents_by_health",
        "agentdex_agents_by_signature",
        "agentdex_probes",
        "agentdex_crawls",
        "agentdex_relay_queue_depth",
        "agentdex_relay_messages_dead_lettered",
        "agentdex_job_run_duration_seconds",
        "agentdex_db_pool_connections_in_use",
    ):
        assert name in queried
