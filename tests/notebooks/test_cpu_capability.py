"""Checked outputs hold on every CPU: the suite checks the notebooks under other kernels than they were built with.

torch picks its CPU kernels by vector unit (AVX-512, AVX2, or the plain "default" ones), and each rounds the last
bits differently. A ``# NBVAL_CHECK_OUTPUT`` cell that printed rounding noise (a float64 difference of 8.7e-19 on
AVX2, 6.5e-19 on AVX-512) passed on one machine and failed on the next. The stored outputs are built
(``scripts/build_notebooks.py``) with the kernels the machine picks by itself; ``bash course.sh test`` runs the whole
suite, nbval's run of every notebook included, with ``ATEN_CPU_CAPABILITY=avx2`` (what most students' laptops pick;
``default`` where the CPU picks AVX2 itself), and its floor stage runs notebooks 09-10 with ``default``. So each
checked cell is compared across kernels without running every notebook once more: these tests check that it is so.
"""

import os
import subprocess
import sys

import pytest
import torch

PREFERRED, FALLBACK = "avx2", "default"


def own_capability() -> str:
    """The kernels torch picks on this CPU by itself ("avx2", "avx512", …), in a fresh interpreter."""
    code = "import torch; print(torch.backends.cpu.get_cpu_capability().lower())"
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()


def capability_in_use(capability: str) -> str:
    """The kernels torch reports with ``ATEN_CPU_CAPABILITY=capability`` (a CPU without AVX2 falls back)."""
    code = "import torch; print(torch.backends.cpu.get_cpu_capability().lower())"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()


def test_forcing_a_capability_changes_what_torch_uses():
    assert capability_in_use("default") == "default"


def test_course_sh_picks_avx2_unless_the_cpu_picks_it_itself():
    script = open(os.path.join(os.path.dirname(__file__), "..", "..", "course.sh")).read()
    assert f"'{FALLBACK}' if c == '{PREFERRED}' else '{PREFERRED}'" in script


def test_this_run_uses_other_kernels_than_the_ones_the_stored_outputs_were_built_with():
    forced = os.environ.get("ATEN_CPU_CAPABILITY")
    if forced is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the suite through bash course.sh test, which forces other kernels")
        pytest.skip("run through bash course.sh test (or set ATEN_CPU_CAPABILITY) to check the notebooks this way")
    in_use = torch.backends.cpu.get_cpu_capability().lower()
    if in_use != forced.lower():
        pytest.skip(f"this CPU cannot run torch's {forced} kernels (it runs {in_use})")
    assert in_use != own_capability(), f"{in_use} is what this CPU picks by itself: the check compares nothing"
