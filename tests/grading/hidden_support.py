"""Answering a hidden test in this process with the course's own solution code: the notebook's imports, the
exercise cell (its check line left out) and the solution's Python block, run in one namespace."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import nbformat

from grading.key import EXERCISE, SOLUTION, check_call, solution_code

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def course_notebook(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)


def imports_of(notebook: nbformat.NotebookNode) -> str:
    """Every top-level import statement of the notebook's code cells."""
    statements = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            statements += [ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    return "\n".join(statements)


def solved_namespace(stem: str, number: int) -> dict:
    """The namespace after exercise ``number``'s cell and its solution ran (the check line left out)."""
    notebook = course_notebook(stem)
    cells = notebook.cells
    index = [i for i, cell in enumerate(cells) if EXERCISE in cell.metadata.get("tags", [])][number - 1]
    assert SOLUTION in cells[index + 1].metadata.get("tags", [])
    body = "\n".join(line for line in cells[index].source.splitlines() if check_call(line) is None)
    namespace: dict = {}
    exec(imports_of(notebook), namespace)  # noqa: S102 - the course's own code
    exec(body + "\n" + solution_code(cells[index + 1].source), namespace)  # noqa: S102
    return namespace
