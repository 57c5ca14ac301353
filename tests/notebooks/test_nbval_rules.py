"""The rules the root conftest.py adds to every nbval run fire, on notebooks outside tests/ as in notebooks/:

- a notebook cell that prints a deprecation warning fails;
- a checked cell (``# NBVAL_CHECK_OUTPUT``) whose number moved by one unit in its last printed digit passes, and one
  whose number moved by two units, or whose word, verdict or integer changed, fails.

One pytest run (a subprocess, as CI runs it) executes the throwaway notebooks; each test reads its notebook's
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
ARTIFACTS = ROOT / "build" / "nbval_rules"  # outside tests/: the rules must reach every notebook

WARNINGS = {
    "warns_future": 'warnings.warn("old", FutureWarning)',
    "warns_logged": 'print("`past_key_values` are deprecated. Use `cache` instead.", file=sys.stderr)',
}
# A checked cell prints what runs; its stored output is what an earlier build printed. Two cells each: the first
# also prints a line the stored output has exactly, the second prints the stored value itself (the control).
STORED = {
    "one_unit": "probe accuracy 0.69",
    "one_unit_at_a_width_boundary": "mean |  9.99 |",
    "two_units": "probe accuracy 0.68",
    "ten_units_of_three_decimals": "ratio 1.094",
    "changed_word": "probe precision 0.70",
    "changed_verdict": "verdict: behind (0.70)",
    "changed_count": "102 of 605 words split, accuracy 0.70",
}
PRINTED = {
    "one_unit": "probe accuracy 0.70",
    "one_unit_at_a_width_boundary": "mean | 10.00 |",
    "two_units": "probe accuracy 0.70",
    "ten_units_of_three_decimals": "ratio 1.084",
    "changed_word": "probe accuracy 0.70",
    "changed_verdict": "verdict: ahead (0.70)",
    "changed_count": "103 of 605 words split, accuracy 0.70",
}
FORGIVEN = ["one_unit", "one_unit_at_a_width_boundary"]


def checked_cells(printed: str, stored: str) -> list:
    """A checked cell printing ``printed`` with ``stored`` as its stored output, then a control that matches."""
    cells = []
    for text, reference in ((printed, stored), (stored, stored)):
        cell = nbformat.v4.new_code_cell(f"# NBVAL_CHECK_OUTPUT\nprint({text!r})", execution_count=len(cells) + 1)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=reference + "\n")]
        cells.append(cell)
    return cells


NOTEBOOKS = {
    **{name: ["import sys, warnings", warning, "print('after')"] for name, warning in WARNINGS.items()},
    "quiet": ["import sys", "print('fine', file=sys.stderr)"],
    **{f"checked_{name}": checked_cells(PRINTED[name], stored) for name, stored in STORED.items()},
}


@lru_cache(maxsize=None)
def outcomes() -> dict[str, list[tuple[str, str]]]:
    """Notebook name -> each cell's (outcome, message) in one pytest run over all of ``NOTEBOOKS``; a passed cell's
    message names the JUnit properties the run gave it ("last_digit_forgiven=1")."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, cells in NOTEBOOKS.items():
        path = ARTIFACTS / f"{name}.ipynb"
        cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
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
        properties = " ".join(f"{p.get('name')}={p.get('value')}" for p in case.iter("property"))
        cells[notebook].append(("failed", failure.get("message", "") + (failure.text or "")) if failure is not None
                               else ("passed", properties))  # fmt: skip
    return cells


@pytest.mark.parametrize("name", list(WARNINGS))
def test_a_deprecation_warning_in_an_unchecked_cell_fails(name):
    cells = outcomes()[name]
    assert [outcome for outcome, _ in cells] == ["passed", "failed", "passed"], cells
    assert "printed a deprecation warning" in cells[1][1]


def test_a_quiet_notebook_passes():
    cells = outcomes()["quiet"]
    assert [outcome for outcome, _ in cells] == ["passed", "passed"], cells


@pytest.mark.parametrize("name", FORGIVEN)
def test_a_checked_number_one_unit_off_in_its_last_digit_passes(name):
    cells = outcomes()[f"checked_{name}"]
    assert cells == [("passed", "last_digit_forgiven=1"), ("passed", "")], cells  # the report names the cell


@pytest.mark.parametrize("name", [name for name in STORED if name not in FORGIVEN])
def test_a_checked_cell_with_anything_else_changed_fails(name):
    cells = outcomes()[f"checked_{name}"]
    assert [outcome for outcome, _ in cells] == ["failed", "passed"], cells
    assert "Cell outputs differ" in cells[0][1]
