"""scripts/gpu_probe.py, which a GPU machine runs (scripts/gpu_check.sh), works with today's code: run it on the CPU."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_the_probe_passes_every_check_with_the_cpu_as_its_device():
    env = {**os.environ, "DEV": "cpu", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "scripts/gpu_probe.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("probe on cpu:") and last.endswith(" ok"), last
    ok, total = last.split(": ")[1].removesuffix(" ok").split("/")
    assert ok == total and int(total) >= 14, last
