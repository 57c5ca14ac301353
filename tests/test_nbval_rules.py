"""The rule tests/conftest.py adds to every nbval run fires: a notebook cell that prints a deprecation warning fails."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # a venv / real kernels: not in the quick subset

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "nbval_rules"  # under tests/, so tests/conftest.py applies


def _run_notebook(name: str, cells: list[str]) -> subprocess.CompletedProcess:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                           str(path.relative_to(ROOT))], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


@pytest.mark.parametrize("warning", ['warnings.warn("old", FutureWarning)',
                                     'print("`past_key_values` are deprecated. Use `cache` instead.", file=sys.stderr)'])  # fmt: skip
def test_a_deprecation_warning_in_an_unchecked_cell_fails(warning):
    result = _run_notebook("warns", ["import sys, warnings", warning, "print('after')"])
    assert result.returncode == 1, result.stdout[-3000:]
    assert "printed a deprecation warning" in result.stdout
    assert "1 failed, 2 passed" in result.stdout


def test_a_quiet_notebook_passes():
    result = _run_notebook("quiet", ["import sys", "print('fine', file=sys.stderr)"])
    assert result.returncode == 0, result.stdout[-3000:]
