"""Metrics shared by the processes of one host: prometheus_client's multiprocess mode.

Every process (web workers of granian or gunicorn, `agentdex worker`, `agentdex serve`) given the
same AGENTDEX_METRICS_DIR writes its values into files of its own there (`<kind>_<pid>.db`), and a
scrape of any web process merges them: counters and histograms are summed over every process that
ever wrote since the directory was cleared, pool gauges over the live ones.

Housekeeping needs no hook of the web server: a process joining the directory clears it when no
process that wrote there is alive any more (a new deployment: old totals would otherwise be added
to the new ones), under a file lock so that processes starting together clear it once; and every
scrape drops the live gauges of processes that have died (`mark_process_dead`). Counters of a dead
process are kept while others live, so a restarted web worker does not make totals go down.
Process ids identify the writers: the directory belongs to one host (one pid namespace).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
LOCK_FILE = ".agentdex-metrics.lock"
ALIVE_SUFFIX = ".alive"  # a marker per process that joined, so an idle process still counts as alive
# prometheus_client's files (`<kind>_<pid>.db`) and our markers: nothing else in the directory is
# ever removed (an operator may point AGENTDEX_METRICS_DIR at a directory that holds other files).
_WRITER = re.compile(r"^(?:(?:counter|histogram|summary|gauge_[a-z]+)_(\d+)\.db|process_(\d+)\.alive)$")
_LIVE_GAUGE = re.compile(r"^gauge_live\w+_(\d+)\.db$")


class MetricsDirError(RuntimeError):
    """The metrics directory cannot be used (not creatable, or prometheus_client loaded too early)."""


def join(directory: Path) -> None:
    """Make this process write its metrics into `directory` (created if missing), clearing what
    processes that are all gone left there. Must run before `prometheus_client` is imported.

    Raises MetricsDirError when the directory cannot be created or prometheus_client was already
    imported without it (its values would stay in this process's memory, unseen by the others).
    """
    if "prometheus_client.values" in sys.modules and os.environ.get(MULTIPROC_ENV) != str(directory):
        raise MetricsDirError("prometheus_client was imported before AGENTDEX_METRICS_DIR was applied")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with _locked(directory):
            # Files under our own id are a previous process's (a restarted container): stale.
            if not any(_alive(pid) for pid in _writers(directory) - {os.getpid()}):
                _clear(directory)
            (directory / f"process_{os.getpid()}{ALIVE_SUFFIX}").touch()
    except OSError as error:
        raise MetricsDirError(f"AGENTDEX_METRICS_DIR={directory}: {error.strerror or error}") from error
    os.environ[MULTIPROC_ENV] = str(directory)


def sweep_dead_processes(directory: Path) -> None:
    """Forget the live gauges (pool in use) of processes that have ended."""
    from prometheus_client.multiprocess import mark_process_dead

    for name in os.listdir(directory):
        found = _LIVE_GAUGE.match(name)
        if found and not _alive(int(found.group(1))):
            with contextlib.suppress(FileNotFoundError):  # another scrape swept it meanwhile
                mark_process_dead(int(found.group(1)), str(directory))


def _writers(directory: Path) -> set[int]:
    return {int(found.group(1) or found.group(2)) for name in os.listdir(directory) if (found := _WRITER.match(name))}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _clear(directory: Path) -> None:
    for name in os.listdir(directory):
        if _WRITER.match(name):
            (directory / name).unlink(missing_ok=True)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    with open(directory / LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
