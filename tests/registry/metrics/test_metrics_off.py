"""AGENTDEX_METRICS=off: no /metrics route, and nothing is recorded (the null recorder)."""

from __future__ import annotations

import dataclasses

import pytest

from registry.metrics import NULL_METRICS
from registry.settings import Settings
from registry.settings_operations import OperationsSettings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, operations=OperationsSettings(metrics="off"))


def test_metrics_off_answers_404_and_records_nothing(client, services, auth):
    assert services.metrics is NULL_METRICS
    assert client.get("/v1/agents").status_code == 200
    response = client.get("/metrics")
    assert response.status_code == 404
    assert response.json["error"]["code"] == "not_found"
