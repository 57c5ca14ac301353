"""Checked outputs hold on every CPU: the suite checks the notebooks under other kernels than they were built with,
and under another BLAS code path.

torch picks its CPU kernels by vector unit (AVX-512, AVX2, or the plain "default" ones), and each rounds the last
bits differently. A ``# NBVAL_CHECK_OUTPUT`` cell that printed rounding noise (a float64 difference of 8.7e-19 on
AVX2, 6.5e-19 on AVX-512) passed on one machine and failed on the next. The stored outputs are built
(``scripts/build_notebooks.py``) with the kernels the machine picks by itself; ``bash course.sh test`` runs the whole
suite, nbval's run of every notebook included, with ``ATEN_CPU_CAPABILITY=avx2`` (what most students' laptops pick;
``default`` where the CPU picks AVX2 itself), and its floor stage runs notebooks 09-10 with ``default``. So each
checked cell is compared across kernels without running every notebook once more: these tests check that it is so.

Matrix products do not go through those kernels: torch's x86 wheels call MKL, which picks its own code path by CPU
vendor and vector unit (an AMD machine printed a probe accuracy of 0.70 where the Intel build stored 0.69, issue 31).
``bash course.sh test`` also sets ``MKL_CBWR=COMPATIBLE``, MKL's most basic path, and the last test here checks, on
the machine it runs on, that this changes a product, so the perturbation cannot silently do nothing. Its second stack
(``bash course.sh newest``: Python 3.13, the newest torch) runs every notebook again, under ``default`` kernels and
the same MKL path.
"""

import os
import subprocess
import sys

import pytest
import torch

PREFERRED, FALLBACK = "avx2", "default"
MKL_PATH = "COMPATIBLE"

# Float32 products of a few shapes, printed bit for bit (as hex): any path that sums in another order shows.
PRODUCTS = """
import torch
generator = torch.Generator().manual_seed(0)
for m, k, n in ((257, 513, 129), (64, 1000, 64), (1, 4096, 256)):
    a, b = torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)
    print((a @ b).numpy().tobytes().hex()[:100000])
"""


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


def products(env: dict) -> str:
    """``PRODUCTS`` printed by a fresh interpreter with ``env`` (one thread: the split across threads is fixed)."""
    env = {**env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", PRODUCTS], capture_output=True, text=True, env=env, check=True).stdout


def test_course_sh_sets_mkls_compatible_path_for_the_suite():
    script = open(os.path.join(os.path.dirname(__file__), "..", "..", "course.sh")).read()
    assert f"MKL_CBWR=${{MKL_CBWR:-{MKL_PATH}}}" in script


@pytest.mark.parity  # torch's release decides whether it calls MKL: the newest and floor stages run this too
def test_this_run_uses_another_blas_path_than_the_stored_outputs_were_built_with():
    if not torch.backends.mkl.is_available():
        pytest.skip("this torch does not call MKL (an ARM build): its BLAS has no other path to force")
    forced = os.environ.get("MKL_CBWR")
    if forced is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the suite through bash course.sh test, which sets MKL_CBWR")
        pytest.skip("run through bash course.sh test (or set MKL_CBWR) to check the notebooks this way")
    own = products({k: v for k, v in os.environ.items() if k != "MKL_CBWR"})
    assert products(dict(os.environ)) != own, f"MKL_CBWR={forced} changes no product on this CPU: it compares nothing"
