"""The README's CLI walk-through, run as a reader runs it: its first bash block (the registry)
and its second (the commands), in order, as real processes in a directory of their own.

What differs from a reader's machine, and only that:
- the line `AGENT_URL=http://127.0.0.1:9000` gets the base URL of a real A2A agent on loopback
  (the official `a2a-sdk` server of `tests/support/a2a_agents.py`) instead of port 9000;
- the registry listens on a free port instead of 8420: the first block runs with AGENTDEX_PORT
  set, the second with AGENTDEX_URL pointing there (the CLI's settings for this, as documented).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.a2a_agents import SdkAgent
from tests.support.agentdex_processes import answers, free_port, interruptible, user_env
from tests.support.waiting import wait_for

README = Path(__file__).resolve().parents[2] / "README.md"
READERS_AGENT = "AGENT_URL=http://127.0.0.1:9000"
AGENT_NAME = "Walkthrough Agent"


def walkthrough_blocks() -> list[str]:
    """The bash blocks of the README's "CLI walk-through" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## CLI walk-through\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```bash\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)


def test_the_walkthrough_has_a_registry_block_and_a_commands_block() -> None:
    server, commands = walkthrough_blocks()
    assert [line for line in server.splitlines() if not line.startswith("#")] == [
        "AGENTDEX_ALLOW_HTTP=true AGENTDEX_ALLOWED_NETWORKS=127.0.0.0/8 agentdex serve"
    ]
    assert commands.count(READERS_AGENT) == 1


@pytest.fixture
def agent() -> Iterator[SdkAgent]:
    running = SdkAgent(name=AGENT_NAME)
    yield running
    running.stop()


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    """The README's first block, running in `tmp_path`; the registry's URL."""
    server_block = walkthrough_blocks()[0]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (tmp_path / "terminal-1.log").open("w") as log:
        process = subprocess.Popen(
            ["bash", "-c", server_block],
            cwd=tmp_path,
            env=user_env(AGENTDEX_PORT=str(port)),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches bash and agentdex alike
            preexec_fn=interruptible,
        )
    try:
        assert wait_for(lambda: answers(url) or process.poll() is not None, 60) and answers(url), (
            tmp_path / "terminal-1.log"
        ).read_text()
        yield url
    finally:
        _interrupt(process)


def _interrupt(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C in terminal 1; killed if it has not stopped 20 s later."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_every_command_of_the_walkthrough_runs_as_written(tmp_path: Path, agent: SdkAgent, registry: str) -> None:
    assert shutil.which("curl"), "the walk-through fetches a card with curl"
    commands = walkthrough_blocks()[1].replace(READERS_AGENT, f"AGENT_URL={agent.base_url}")
    result = subprocess.run(
        ["bash", "-e", "-u", "-o", "pipefail", "-x", "-c", commands],  # stop at the first command that fails
        cwd=tmp_path,
        env=user_env(AGENTDEX_URL=registry),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{result.stderr}\n{result.stdout}"
    out = result.stdout
    assert f"{AGENT_NAME}  (" in out  # `show` of the registered agent
    assert "is now deprecated" in out and "deleted " in out
    assert "signed.json: verified (policy any)" in out
    assert "created 1, failed 0" in out
    assert f"{AGENT_NAME}  " in out.split("created 1, failed 0", 1)[1]  # the imported card, found as unverifiable
    assert "new active EdDSA key" in out and "EdDSA  active" in out


def quick_start() -> tuple[list[str], str]:
    """The bash blocks of the README's "Quick start" section, and the section's text."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```bash\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL), section


def test_the_quick_start_stops_the_server_before_the_tests_and_each_command_stands_alone() -> None:
    (run, test), section = quick_start()
    run_command, test_command = (
        [line for line in block.splitlines() if line and not line.startswith("#")] for block in (run, test)
    )
    assert len(run_command) == 1 and run_command[0].endswith("agentdex serve")  # a foreground server...
    between = section.split(run, 1)[1].split(test, 1)[0]
    assert "Ctrl-C" in between and "before step 2" in between  # ...that the reader is told to stop first
    # The second works on a fresh machine by itself: it makes and enters its virtualenv, as CI does.
    assert len(test_command) == 1
    steps = [step.strip() for step in test_command[0].split("&&")]
    assert steps[:2] == ["python3 -m venv .venv", ". .venv/bin/activate"] and steps[-1] == "pytest"
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv .venv" in ci and "-e '.[test]'" in ci and "bash tests/interop/install" in ci
    assert "bash tests/interop/install" in steps  # the real peers the interoperability tests run
    assert re.search(r"^pytest$", ci, flags=re.MULTILINE)
