"""`agentdex serve` as a user starts it: the address from options or AGENTDEX_HOST/AGENTDEX_PORT,
and a busy port refused before anything starts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support.agentdex_processes import AgentdexProcess, agentdex, free_port, serve, user_env


def test_a_second_serve_on_a_busy_port_says_so_in_one_line_and_starts_nothing(tmp_path: Path) -> None:
    (first_dir := tmp_path / "first").mkdir()
    (second_dir := tmp_path / "second").mkdir()
    first, url = serve(first_dir, user_env(), "--no-jobs")
    with first:
        assert first.wait_until_answering(url), first.output
        port = url.rsplit(":", 1)[1]
        second = agentdex("serve", "--port", port, cwd=second_dir)
        assert second.returncode == 1
        assert second.stderr.splitlines() == [
            f"error: cannot listen on 127.0.0.1:{port}: the address is already in use (another `agentdex serve`?); "
            "choose another port with --port or AGENTDEX_PORT"
        ]
        assert second.stdout == ""  # no "listening", no admin token, no worker
        assert list(second_dir.iterdir()) == []  # no database, no secret: nothing was started
        assert first.wait_until_answering(url)


def test_the_address_comes_from_agentdex_host_and_agentdex_port(tmp_path: Path) -> None:
    port = free_port()
    env = user_env(AGENTDEX_HOST="127.0.0.2", AGENTDEX_PORT=str(port))
    with AgentdexProcess("serve", "--no-jobs", cwd=tmp_path, env=env) as server:
        assert server.wait_until_answering(f"http://127.0.0.2:{port}"), server.output
        assert f"Agentdex listening on http://127.0.0.2:{port}" in server.output
        with socket.socket() as other:  # the default host was not used
            assert other.connect_ex(("127.0.0.1", port)) != 0


def test_options_win_over_the_environment(tmp_path: Path) -> None:
    port = free_port()
    env = user_env(AGENTDEX_PORT=str(free_port()))
    with AgentdexProcess("serve", "--no-jobs", "--port", str(port), cwd=tmp_path, env=env) as server:
        assert server.wait_until_answering(f"http://127.0.0.1:{port}"), server.output


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--host", "a" * 70], "not a host name"),  # a label the resolver cannot encode
        (["--host", "a..b"], "not a host name"),
        (["--threads", "0"], "--threads"),  # a server that would accept and never answer
    ],
)
def test_an_address_or_thread_count_that_cannot_serve_is_one_line_and_starts_nothing(
    tmp_path: Path, options: list[str], says: str
) -> None:
    result = agentdex("serve", "--no-jobs", "--port", "0", *options, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # no database, no secret
