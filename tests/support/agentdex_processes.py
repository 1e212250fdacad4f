"""The `agentdex` command as a user runs it: real processes of the installed entry point, in a
directory of the test's own, with an environment free of the caller's AGENTDEX_* settings."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import requests

from cli.client import WORKER_HEADER
from tests.support.waiting import wait_for

BIN = Path(sys.executable).parent  # the virtualenv that has `agentdex` installed
START_DEADLINE = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def user_env(**settings: str) -> dict[str, str]:
    """The environment of a user's shell: no AGENTDEX_* from the test run, `agentdex` on PATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDEX_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **settings}


def agentdex(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `agentdex ARGS` to its end; stdout and stderr are kept apart."""
    return subprocess.run(
        [str(BIN / "agentdex"), *args], cwd=cwd, env=env or user_env(), capture_output=True, text=True, timeout=timeout
    )


def interruptible() -> None:
    """Run in the child before exec: Ctrl-C (SIGINT) stops it as in a terminal, even when the test
    run itself was started in the background, whose children inherit SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class AgentdexProcess:
    """A long-running `agentdex` command (serve, worker); its output goes to a file of its own."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str], name: str | None = None) -> None:
        self.log = cwd / f"{name or args[0]}.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [str(BIN / "agentdex"), *args],
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=interruptible,
            )

    @property
    def output(self) -> str:
        return self.log.read_text()

    def wait_for_output(self, text: str, seconds: float = START_DEADLINE) -> bool:
        """True once `text` is in the output; False when the process ended or time ran out first."""
        return wait_for(lambda: text in self.output or self.process.poll() is not None, seconds) and text in self.output

    def wait_until_answering(self, url: str, seconds: float = START_DEADLINE) -> bool:
        """True once GET url/healthz answers 200; False when the process ended or time ran out first."""
        return wait_for(lambda: answers(url) or self.process.poll() is not None, seconds) and answers(url)

    def stop(self) -> int:
        """Ctrl-C, as a user stops it; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()

    def __enter__(self) -> AgentdexProcess:
        return self

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()


def serve(cwd: Path, env: dict[str, str], *args: str, **popen: Any) -> tuple[AgentdexProcess, str]:
    """`agentdex serve ARGS` on a free loopback port; the process and its base URL (not yet waited for)."""
    port = free_port()
    process = AgentdexProcess("serve", "--port", str(port), *args, cwd=cwd, env=env, **popen)
    return process, f"http://127.0.0.1:{port}"


def answers(url: str) -> bool:
    """True when the registry at `url` answers GET /healthz with 200."""
    try:
        return requests.get(url + "/healthz", timeout=2).status_code == 200
    except requests.RequestException:
        return False


@contextmanager
def granian(cwd: Path, env: dict[str, str], *, blocking_threads: int) -> Iterator[str]:
    """The README's scaled-out shape: granian serving the registry with two web processes on a free
    loopback port; its base URL (not yet waited for: see `connection_per_process`)."""
    port = free_port()
    command = [str(BIN / "granian"), "--interface", "wsgi", "--workers", "2"]
    command += ["--blocking-threads", str(blocking_threads), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--no-access-log", "registry.wsgi:app"]
    with (cwd / "granian.log").open("w") as log:
        server = subprocess.Popen(command, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def connection_per_process(url: str, processes: int = 2) -> dict[str, requests.Session]:
    """A kept-alive connection to each web process, by its name (new connections until all answered)."""
    found: dict[str, requests.Session] = {}

    def reach_all() -> bool:
        session = requests.Session()
        try:
            name = session.get(url + "/healthz", timeout=2).headers[WORKER_HEADER]
        except requests.RequestException:
            return False
        found.setdefault(name, session)
        return len(found) == processes

    assert wait_for(reach_all, START_DEADLINE), f"{processes} web processes did not answer: {list(found)}"
    return found
