"""AGENTDEX_METRICS_DIR housekeeping: a process joining a directory whose writers are all gone
clears it (a new deployment starts from zero); one joining beside a live writer keeps its values
(a restarted web worker does not make totals go down); a scrape forgets dead processes' live gauges."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from registry.metrics.multiprocess import sweep_dead_processes


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()  # reaped: nothing has this id now
    return process.pid


def join_in_a_new_process(directory: Path) -> int:
    """The id of a fresh Python process that joined `directory` (before importing prometheus_client)."""
    code = "import os, sys, pathlib; from registry.metrics.multiprocess import join; join(pathlib.Path(sys.argv[1])); print(os.getpid())"
    done = subprocess.run([sys.executable, "-c", code, str(directory)], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_process_joining_a_directory_of_dead_writers_clears_it(tmp_path):
    gone = dead_pid()
    for name in (f"counter_{gone}.db", f"histogram_{gone}.db", f"gauge_livesum_{gone}.db", f"process_{gone}.alive"):
        (tmp_path / name).write_bytes(b"old")
    (tmp_path / "agentdex.db").write_bytes(b"an operator's database, not ours to clear")
    joined = join_in_a_new_process(tmp_path)
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert left == ["agentdex.db", f"process_{joined}.alive"]


def test_a_process_joining_beside_a_live_writer_keeps_every_value(tmp_path):
    gone = dead_pid()
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live:
        try:
            kept = {f"counter_{live.pid}.db", f"counter_{gone}.db", f"gauge_livesum_{gone}.db"}
            for name in kept:
                (tmp_path / name).write_bytes(b"values")
            joined = join_in_a_new_process(tmp_path)
            assert {p.name for p in tmp_path.iterdir() if not p.name.startswith(".")} == kept | {
                f"process_{joined}.alive"
            }
            (tmp_path / f"gauge_livesum_{live.pid}.db").write_bytes(b"values")
            (tmp_path / f"gauge_livesum_{os.getpid()}.db").write_bytes(b"values")  # the scraping process's
            sweep_dead_processes(tmp_path)  # as a scrape does: the dead one's pool gauge goes
            assert not (tmp_path / f"gauge_livesum_{gone}.db").exists()
            assert (tmp_path / f"gauge_livesum_{live.pid}.db").exists()
            assert (tmp_path / f"gauge_livesum_{os.getpid()}.db").exists()
            assert (tmp_path / f"counter_{gone}.db").exists()
        finally:
            live.kill()
