"""Build the notebooks from their sources in ``notebooks/src/*.py`` and run them.

A source is a Python file in the "percent" format: ``# %%`` starts a code cell and
``# %% [markdown]`` a Markdown cell whose lines start with ``# ``. The first code cell of each
notebook is the Colab set-up cell from ``course_utils.colab``.

    python scripts/build_notebooks.py            # build and execute every notebook (full mode)
    python scripts/build_notebooks.py 02         # only notebooks whose name starts with 02
    python scripts/build_notebooks.py --no-run   # build without executing (outputs empty)

The stored outputs come from one clean top-to-bottom run in full mode. They never keep third-party
JavaScript: an offline bertviz view (``course_utils.widgets.bertviz_offline``, about 350 KB of inlined d3 and
jQuery) is replaced by a one-line note; the reader re-runs the cell to see it.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "notebooks" / "src"
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(ROOT))

from course_utils.colab import setup_cell_source  # noqa: E402

KERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# bertviz_offline.MARKER opens every offline view; the others are d3's, jQuery's and bertviz's own headers.
BERTVIZ_MARKER = "<!-- course bertviz offline -->"
THIRD_PARTY_JS = (BERTVIZ_MARKER, "https://d3js.org", "jQuery JavaScript Library", "jquery.org/license",
                  "Transformer Visualization D3 javascript code")  # fmt: skip
VIEW_NOTE = "(bertviz view: not stored in the file; run this cell to see it.)"


def parse_cells(text: str) -> list[nbformat.NotebookNode]:
    """Split a percent-format source into notebook cells."""
    cells, kind, lines = [], None, []

    def flush():
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(body))
        elif body:
            cells.append(nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        else:
            lines.append(line)
    flush()
    return cells


def build(source: Path) -> nbformat.NotebookNode:
    cells = parse_cells(source.read_text(encoding="utf-8"))
    first_code = next(i for i, cell in enumerate(cells) if cell.cell_type == "code")
    cells.insert(first_code, nbformat.v4.new_code_cell(setup_cell_source()))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = KERNEL
    notebook.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:03d}"
    return notebook


def execute(notebook: nbformat.NotebookNode, workdir: Path, timeout: int) -> None:
    from nbclient import NotebookClient

    os.environ.pop("COURSE_FAST", None)  # stored outputs are from full mode
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(workdir)}})
    client.execute()


def strip_inlined_js(notebook: nbformat.NotebookNode) -> int:
    """Replace each output that carries d3, jQuery or bertviz's JS with ``VIEW_NOTE``; return how many were replaced."""
    replaced = 0
    for cell in notebook.cells:
        for index, output in enumerate(cell.get("outputs", [])):
            values = [value for value in output.get("data", {}).values() if isinstance(value, (str, list))]
            text = "".join("".join(value) if isinstance(value, list) else value for value in values)
            if any(signature in text for signature in THIRD_PARTY_JS):
                cell.outputs[index] = nbformat.v4.new_output(
                    "display_data", data={"text/markdown": VIEW_NOTE, "text/plain": VIEW_NOTE}
                )
                replaced += 1
    return replaced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefixes", nargs="*", help="only notebooks whose names start with these")
    parser.add_argument("--no-run", action="store_true", help="do not execute; write empty outputs")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args()
    for source in sorted(SOURCES.glob("*.py")):
        if args.prefixes and not any(source.stem.startswith(p) for p in args.prefixes):
            continue
        notebook = build(source)
        if not args.no_run:
            execute(notebook, NOTEBOOKS, args.timeout)
            strip_inlined_js(notebook)
        target = NOTEBOOKS / f"{source.stem}.ipynb"
        nbformat.write(notebook, target)
        print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
