"""A revocation made through one web process is refused by the very next request to another: the
scaled-out shape (granian with two web processes on one database), each reached over a kept-alive
connection of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agentdex_processes import connection_per_process, granian, user_env


@pytest.fixture
def web(services: Any, database_url: str, tmp_path: Path) -> Iterator[str]:
    env = user_env(
        AGENTDEX_DATABASE_URL=database_url,
        AGENTDEX_SECRET_KEY=services.settings.secret_key,
        AGENTDEX_SEARCH_SEMANTIC="false",
    )
    with granian(tmp_path, env, blocking_threads=2) as url:
        yield url


def test_a_token_revoked_in_one_process_is_refused_by_the_next_request_in_the_other(web, services):
    first, second = connection_per_process(web).values()
    mine = services.tokens.create("ci", ["agents:write"]).token
    spare = {"Authorization": f"Bearer {services.tokens.create('ci-spare', ['relay'], principal='ci').token}"}
    bearer = {"Authorization": f"Bearer {mine}"}
    for process in (first, second):  # both have seen the token work (a cache would hold it now)
        assert process.get(web + "/v1/tokens", headers=bearer, timeout=10).status_code == 200
    token_id = next(i["id"] for i in first.get(web + "/v1/tokens", headers=spare).json()["items"] if i["name"] == "ci")

    assert first.delete(f"{web}/v1/tokens/{token_id}", headers=spare, timeout=10).json()["revokedNow"] is True
    refused = second.get(web + "/v1/tokens", headers=bearer, timeout=10)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "token_revoked"
    assert second.get(web + "/v1/tokens", headers=spare, timeout=10).status_code == 200  # only that token
