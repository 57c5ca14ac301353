"""The rule tests/conftest.py adds to every nbval run fires: a notebook cell that prints a deprecation warning fails.

One pytest run (a subprocess, as CI runs it) executes three throwaway notebooks; each test reads its notebook's
cells from that run's JUnit report.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # real kernels: not in the quick subset

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "nbval_rules"  # under tests/, so tests/conftest.py applies

WARNINGS = {
    "warns_future": 'warnings.warn("old", FutureWarning)',
    "warns_logged": 'print("`past_key_values` are deprecated. Use `cache` instead.", file=sys.stderr)',
}
NOTEBOOKS = {
    **{name: ["import sys, warnings", warning, "print('after')"] for name, warning in WARNINGS.items()},
    "quiet": ["import sys", "print('fine', file=sys.stderr)"],
}


@lru_cache(maxsize=None)
def outcomes() -> dict[str, list[tuple[str, str]]]:
    """Notebook name -> each cell's (outcome, message) in one pytest run over all of ``NOTEBOOKS``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, cells in NOTEBOOKS.items():
        path = ARTIFACTS / f"{name}.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
        paths.append(str(path.relative_to(ROOT)))
    report = ARTIFACTS / "report.xml"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                             f"--junitxml={report}", *paths], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)  # fmt: skip
    assert report.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    cells: dict[str, list[tuple[str, str]]] = {name: [] for name in NOTEBOOKS}
    for case in ET.parse(report).iter("testcase"):
        notebook = Path(case.get("classname").replace(".", "/")).parent.name  # …nbval_rules.quiet.ipynb -> quiet
        failure = case.find("failure")
        cells[notebook].append(("failed", failure.get("message", "") + (failure.text or "")) if failure is not None
                               else ("passed", ""))  # fmt: skip
    return cells


@pytest.mark.parametrize("name", list(WARNINGS))
def test_a_deprecation_warning_in_an_unchecked_cell_fails(name):
    cells = outcomes()[name]
    assert [outcome for outcome, _ in cells] == ["passed", "failed", "passed"], cells
    assert "printed a deprecation warning" in cells[1][1]


def test_a_quiet_notebook_passes():
    cells = outcomes()["quiet"]
    assert [outcome for outcome, _ in cells] == ["passed", "passed"], cells
