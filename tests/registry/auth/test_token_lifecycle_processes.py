"""A revocation made through one web process is refused by the very next request to another: the
scaled-out shape (granian with two web processes on one database), each reached over a kept-alive
connection of its own."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.agentdex_processes import BIN, free_port, user_env
from tests.support.waiting import wait_for

WORKER_HEADER = "Agentdex-Worker"  # names the web process that answered (registry.api.service)


@pytest.fixture
def web(services: Any, database_url: str, tmp_path: Path) -> Iterator[str]:
    env = user_env(
        AGENTDEX_DATABASE_URL=database_url,
        AGENTDEX_SECRET_KEY=services.settings.secret_key,
        AGENTDEX_SEARCH_SEMANTIC="false",
    )
    port = free_port()
    command = [str(BIN / "granian"), "--interface", "wsgi", "--workers", "2", "--blocking-threads", "2"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log", "registry.wsgi:app"]
    with (tmp_path / "granian.log").open("w") as log:
        server = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def one_connection_per_process(url: str) -> list[requests.Session]:
    """A kept-alive connection to each of the two web processes (new connections until both answered)."""
    found: dict[str, requests.Session] = {}

    def reach_both() -> bool:
        session = requests.Session()
        try:
            name = session.get(url + "/healthz", timeout=2).headers[WORKER_HEADER]
        except requests.RequestException:
            return False
        found.setdefault(name, session)
        return len(found) == 2

    assert wait_for(reach_both, 60), f"two web processes did not answer: {list(found)}"
    return list(found.values())


def test_a_token_revoked_in_one_process_is_refused_by_the_next_request_in_the_other(web, services):
    first, second = one_connection_per_process(web)
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
