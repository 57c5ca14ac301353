"""On a busy machine torch's OpenMP threads sleep while they wait, instead of spinning.

``course_utils`` sets ``OMP_WAIT_POLICY=PASSIVE`` (unless the user chose a policy) before torch loads
OpenMP, which reads it once, at load. libgomp (torch's OpenMP on Linux) reports what it read with
``OMP_DISPLAY_ENV=VERBOSE``: ``GOMP_SPINCOUNT = '0'`` means a waiting thread sleeps at once; its default,
300000, is the spinning that made training 10-40x slower with one core of two busy
(``benchmarks/busy_bench.py`` measures it).
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from kernel_support import REPO, execute, kernel_environment, running_kernel

OPENMP_VARIABLES = ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "GOMP_SPINCOUNT", "COURSE_FAST")


def spin_count(display: str) -> int:
    """The spin count libgomp started with, from its ``OMP_DISPLAY_ENV=VERBOSE`` report."""
    found = re.search(r"GOMP_SPINCOUNT\s*=\s*'(\d+)'", display)
    if found is None:
        pytest.skip("this torch's OpenMP runtime is not libgomp: it does not report GOMP_SPINCOUNT")
    return int(found.group(1))


def spin_count_after(code: str, **variables: str) -> int:
    """Run ``code`` in a fresh interpreter with no OpenMP setting but ``variables``; return libgomp's spin count."""
    env = kernel_environment(drop=OPENMP_VARIABLES, OMP_DISPLAY_ENV="VERBOSE", **variables)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    return spin_count(done.stderr)


def test_importing_course_utils_before_torch_makes_waiting_threads_sleep():
    assert spin_count_after("import course_utils, torch; torch.ones(2).sum()") == 0


def test_a_wait_policy_the_user_chose_wins():
    code = "import os, course_utils, torch; assert os.environ['OMP_WAIT_POLICY'] == 'ACTIVE'"
    assert spin_count_after(code, OMP_WAIT_POLICY="ACTIVE") > 300_000


def test_torch_imported_first_keeps_libgomps_spinning_default():
    """Too late once torch is loaded: then only an exported OMP_WAIT_POLICY helps (README, Troubleshooting)."""
    assert spin_count_after("import torch, course_utils") == 300_000
    assert spin_count_after("import torch, course_utils", OMP_WAIT_POLICY="PASSIVE") == 0


def test_a_fresh_kernel_running_a_notebooks_first_cell_gets_sleeping_threads():
    pytest.importorskip("ipykernel")
    spin_count_after("import torch")  # skips where the OpenMP runtime is not libgomp
    # ipykernel forwards its file descriptor 2 (libgomp's report) only outside pytest
    env = kernel_environment(drop=(*OPENMP_VARIABLES, "PYTEST_CURRENT_TEST"), OMP_DISPLAY_ENV="VERBOSE")
    with running_kernel(env) as client:
        _, streams = execute(client, "import sys\nprint('torch' in sys.modules)")
        assert streams["stdout"].strip() == "False", "something loaded torch before the notebook's first cell"
        first_cell = "from course_utils import setup_notebook\nimport torch\n"
        # libgomp writes its report to file descriptor 2; give the kernel's reader of that pipe time to forward it
        wait_for_report = "import time\ntime.sleep(1)\nsys.stderr.flush()"
        _, streams = execute(client, first_cell + wait_for_report)
    report = streams["stderr"] + streams["stdout"]
    assert "GOMP_SPINCOUNT" in report, f"the kernel did not forward libgomp's report: {streams}"
    assert spin_count(report) == 0
