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

import html
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from build_notebooks import same_program, unchanged_code  # noqa: E402
from plan_support import shown_prompts  # noqa: E402

from course_utils.lecture import HOUSE_WIDTH as WIDTH  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CELL_LINES = 30
PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", flags=re.S)  # a listing shown as HTML (a function's source, say)


def code_cells(stem: str) -> list[nbformat.NotebookNode]:
    notebook = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def printed_lines(cell: nbformat.NotebookNode) -> list[str]:
    """The lines a cell prints as text: streams, plain-text results and HTML listings (``<pre>``), not widgets or
    pictures."""
    lines = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            lines += output.text.splitlines()
        elif output.output_type in ("execute_result", "display_data", "error"):
            data = output.get("data", {})
            if "text/html" in data:
                listings = PRE.findall(data["text/html"])
                lines += [
                    html.unescape(re.sub(r"<[^>]+>", "", line)) for text in listings for line in text.splitlines()
                ]
            elif not ({"image/png", "application/vnd.jupyter.widget-view+json"} & set(data)):
                lines += data.get("text/plain", "").splitlines()
    return lines


def test_printed_lines_reads_streams_results_and_listings_not_widgets():
    cell = nbformat.v4.new_code_cell("show()")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a table\nrow 1\n"),
        nbformat.v4.new_output("display_data", data={"text/html": "<pre><b>def</b> f(x):\n  x &lt; 1</pre>"}),
        nbformat.v4.new_output(
            "display_data", data={"text/plain": "Widget", "application/vnd.jupyter.widget-view+json": {}}
        ),
        nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=1),
    ]
    assert printed_lines(cell) == ["a table", "row 1", "def f(x):", "  x < 1", "42"]


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
