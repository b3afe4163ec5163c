"""Watching the background servers Strata starts (kg.shared.processes)."""

from __future__ import annotations

import subprocess
import sys
import time

from kg.shared.processes import await_quiet


def test_settling_waits_out_a_busy_process_and_not_an_idle_one() -> None:
    """What keeps `bench scale` from timing queries while the server still merges index segments, and tells
    `strata neo4j stop` the server is busy: a process spinning a core is not quiet, a sleeping one is after one
    window."""
    spinning = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeping = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.5)  # past the interpreters' start
        waited, quiet = await_quiet(spinning.pid, window_s=0.5, timeout_s=1.5)
        assert not quiet and waited >= 1.5
        waited, quiet = await_quiet(sleeping.pid, window_s=0.5, timeout_s=10)
        assert quiet and 0.5 <= waited < 1.5
        spinning.kill()
        spinning.wait()
        assert await_quiet(spinning.pid, window_s=0.5, timeout_s=1.5)[1]  # an ended process is quiet
    finally:
        for process in (spinning, sleeping):
            process.kill()
            process.wait()
