"""Checked outputs hold on every CPU: each notebook runs under nbval again with torch forced onto other kernels.

torch picks its CPU kernels by vector unit (AVX-512, AVX2, or the plain "default" ones), and each rounds the last
bits differently. A ``# NBVAL_CHECK_OUTPUT`` cell that printed rounding noise (a float64 difference of 8.7e-19 on
AVX2, 6.5e-19 on AVX-512) passed on one machine and failed on the next. Here every notebook is executed by nbval in a
fresh interpreter with ``ATEN_CPU_CAPABILITY`` set, so a checked cell that depends on the kernels fails on any
machine, not only on the one that differs. The capability this CPU picks by itself is covered by the ordinary
notebook run; each notebook runs again here under one other: AVX2, what most students' laptops pick (the plain
"default" kernels where this CPU picks AVX2 itself). The floor stage (``course.sh floor``) runs notebooks 09-10 under
"default", so every kind of kernel is exercised without running every notebook three times.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# "default" is torch's unvectorised kernels: every CPU has them, and their rounding differs from AVX2's and AVX-512's.
PREFERRED, FALLBACK = "avx2", "default"


def own_capability() -> str:
    """The kernels torch picks on this CPU by itself ("avx2", "avx512", …), in a fresh interpreter."""
    code = "import torch; print(torch.backends.cpu.get_cpu_capability().lower())"
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.strip()


def capability_in_use(capability: str) -> str:
    """The kernels torch reports with ``ATEN_CPU_CAPABILITY=capability`` (a CPU without AVX2 falls back)."""
    code = "import torch; print(torch.backends.cpu.get_cpu_capability().lower())"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout.strip()


def run_nbval(notebook: Path, capability: str) -> subprocess.CompletedProcess:
    """nbval on ``notebook`` (the project's options from pyproject.toml) with torch's kernels forced."""
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", str(notebook)]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)


def other_capability() -> str:
    """The kernels to rerun the notebooks with: AVX2, unless this CPU picks AVX2 itself."""
    return FALLBACK if own_capability() == PREFERRED else PREFERRED


def check(notebook: Path, capability: str) -> None:
    if capability_in_use(capability) != capability:
        pytest.skip(f"this CPU cannot run torch's {capability} kernels")
    result = run_nbval(notebook, capability)
    tail = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, f"{notebook.name} under ATEN_CPU_CAPABILITY={capability}:\n{tail}"


def test_forcing_a_capability_changes_what_torch_uses():
    assert capability_in_use("default") == "default"


# One class per notebook, so that pytest-xdist's --dist loadscope spreads the notebooks over the workers.
for _path in NOTEBOOKS:
    _name = "TestUnderOtherCPUKernels_" + _path.stem[:2]

    def _test(self, notebook=_path):
        check(notebook, other_capability())

    globals()[_name] = type(_name, (), {
        "test_checked_outputs_match": pytest.mark.notebook(_test),
        "__doc__": f"{_path.name} under nbval with each forced CPU capability.",
    })  # fmt: skip
