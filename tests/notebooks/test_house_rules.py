"""The house rules for notebook code (issue 42), each one checked on every stored notebook.

- A code cell holds at most ``CELL_LINES`` lines: longer logic belongs in ``course_utils``, where it is tested.
- A code line is at most ``WIDTH`` characters: the columns that fit a code cell in lecture mode at 20 px on a
  1280-px-wide projector (``course_utils.lecture``; measured in BENCHMARKS.md's projector section).
- A cell that a lecture plan shows (``docs/teaching.md``, the "cells" column of each ``### Lecture plan``) prints no
  line wider than ``WIDTH`` either: a wider table wraps, or scrolls, on the projector.
- The sources are formatted by ruff at that width (``notebooks/src/ruff.toml``), and a notebook rebuilt from a source
  only laid out anew keeps its stored outputs (``build_notebooks.py --layout``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import same_program, unchanged_code  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDTH = 88
CELL_LINES = 30
PROMPTS = re.compile(r"\[(\d+)\](?:–\[(\d+)\])?")  # [n] or [a]–[b]
PLAN_ROW = re.compile(r"^\| *\d+–\d+ *\|(.*)$", flags=re.M)  # | 10–22 | heading | cells | how |


def code_cells(stem: str) -> list[nbformat.NotebookNode]:
    notebook = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def shown_prompts(stem: str, teaching: str | None = None) -> set[int]:
    """The prompts [n] that the notebook's lecture plan projects (its rows' "cells" column)."""
    teaching = teaching or (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    sections = re.split(r"^## (\d\d) · ", teaching, flags=re.M)
    body = dict(zip(sections[1::2], sections[2::2])).get(stem[:2], "")
    plan = body.partition("### Lecture plan")[2]
    shown = set()
    for row in PLAN_ROW.findall(plan):
        columns = [column.strip() for column in row.strip().strip("|").split("|")]
        for first, last in PROMPTS.findall(columns[1] if len(columns) > 1 else ""):
            shown.update(range(int(first), int(last or first) + 1))
    return shown


def printed_lines(cell: nbformat.NotebookNode) -> list[str]:
    """The lines a cell prints as text: streams and plain-text results, not widgets, HTML or pictures."""
    lines = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            lines += output.text.splitlines()
        elif output.output_type in ("execute_result", "display_data", "error"):
            data = output.get("data", {})
            if not ({"text/html", "image/png", "application/vnd.jupyter.widget-view+json"} & set(data)):
                lines += data.get("text/plain", "").splitlines()
    return lines


def test_shown_prompts_reads_a_plan():
    teaching = (
        "## 01 · One\n\n### Lecture plan\n\n| min | project | cells | how |\n|---|---|---|---|\n"
        "| 0–6 | 1. A | [4]–[6] | live |\n| 6–9 | 2. B [99] | [8] | stored |\n\n## 02 · Two\n| 0–5 | C | [2] | live |\n"
    )
    assert shown_prompts("01_x", teaching) == {4, 5, 6, 8}
    assert shown_prompts("02_x", teaching) == set()  # no plan heading: nothing shown


@pytest.mark.parametrize("stem", STEMS)
def test_every_code_cell_is_at_most_30_lines(stem):
    long = {n: len(cell.source.splitlines()) for n, cell in enumerate(code_cells(stem), 1)}
    long = {n: lines for n, lines in long.items() if lines > CELL_LINES}
    assert not long, f"{stem}: code cells over {CELL_LINES} lines (prompt: lines): {long}; move logic to course_utils"


@pytest.mark.parametrize("stem", STEMS)
def test_every_code_line_fits_the_projector(stem):
    wide = [(n, len(line)) for n, cell in enumerate(code_cells(stem), 1) for line in cell.source.splitlines()
            if len(line) > WIDTH]  # fmt: skip
    assert not wide, f"{stem}: {len(wide)} code lines over {WIDTH} characters (prompt, length): {wide[:12]}"


@pytest.mark.parametrize("stem", STEMS)
def test_every_shown_cell_prints_lines_that_fit_the_projector(stem):
    cells = code_cells(stem)
    shown = shown_prompts(stem)
    assert shown, f"{stem}: its lecture plan shows no cell"
    wide = [(n, len(line)) for n in sorted(shown) if n <= len(cells) for line in printed_lines(cells[n - 1])
            if len(line) > WIDTH]  # fmt: skip
    assert not wide, (
        f"{stem}: {len(wide)} printed lines over {WIDTH} characters in shown cells (prompt, length): {wide[:12]}"
    )


def test_the_sources_are_formatted_at_the_projectors_width():
    config = (ROOT / "notebooks" / "src" / "ruff.toml").read_text(encoding="utf-8")
    assert re.search(rf"^line-length = {WIDTH}$", config, flags=re.M)
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "notebooks/src"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, f"ruff format would change notebooks/src:\n{result.stdout}{result.stderr}"


def test_a_new_layout_keeps_outputs_and_a_new_program_does_not():
    assert same_program("x = f(1,\n  2)  # NBVAL_CHECK_OUTPUT", "x = f(1, 2)  # NBVAL_CHECK_OUTPUT")
    assert not same_program("x = f(1, 3)", "x = f(1, 2)")
    assert not same_program("# NBVAL_CHECK_OUTPUT\nx = 1", "x = 1")  # a checked cell stays checked
    stored = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in ("setup()", "a = [1,2]", "b = 2")])
    laid_out = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in ("setup(new=True)", "a = [\n    1,\n    2,\n]", "b = 2")]
    )
    assert unchanged_code(laid_out, stored, layout=True) == []  # the set-up cell (prompt 1) may differ
    assert unchanged_code(laid_out, stored, layout=False) == [2]
    laid_out.cells[2].source = "b = 3"
    assert unchanged_code(laid_out, stored, layout=True) == [3]
    laid_out.cells.pop()
    assert unchanged_code(laid_out, stored, layout=True) == [1, 2]
