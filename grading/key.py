"""The answer key, read from the course's own notebooks: each exercise's check call (its last line) and the names
it passes (the answer), and the examples a grader is tried on (``complete``: every exercise answered with its
solution's code; ``empty``: the student edition as handed out).
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import EXERCISE, NOTEBOOKS, SOLUTION, student_edition  # noqa: E402


@dataclass(frozen=True)
class Exercise:
    number: int
    check: str  # the call, as the course's notebook writes it: check_gradient(my_gradient)

    @property
    def check_name(self) -> str:
        return self.check.split("(", 1)[0]

    @property
    def names(self) -> tuple[str, ...]:
        """The names the check call passes: what the student binds."""
        return tuple(arg.id for arg in ast.parse(self.check, mode="eval").body.args if isinstance(arg, ast.Name))


@dataclass(frozen=True)
class AnswerKey:
    notebook: str
    exercises: tuple[Exercise, ...]
    imports: str  # the statements that import the checks


def check_call(line: str) -> str | None:
    """``check_x(args)`` for a line that only calls a check (``_ = check_x(a)``, ``check_x(a);``), else None."""
    text = re.sub(r"^_\s*=\s*", "", line.strip()).rstrip(";").strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    called = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("check_")
    return ast.unparse(node) if called else None


def answer_key(notebook: nbformat.NotebookNode, name: str) -> AnswerKey:
    """Each exercise cell's check call (its last line) and the imports of the checks, from a course notebook."""
    cells = [cell for cell in notebook.cells if cell.cell_type == "code" and EXERCISE in cell.metadata.get("tags", [])]
    exercises, imports = [], []
    for number, cell in enumerate(cells, 1):
        call = check_call(cell.source.strip().splitlines()[-1])
        if call is None:
            raise ValueError(f"{name}, exercise {number}: the cell does not end by calling its check")
        exercises.append(Exercise(number, call))
        imports += [ast.unparse(node) for node in ast.walk(ast.parse(cell.source))
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils.exercises")]  # fmt: skip
    return AnswerKey(name, tuple(exercises), "\n".join(imports))


def answer_keys(folder: Path = NOTEBOOKS) -> dict[str, AnswerKey]:
    return {
        path.stem: answer_key(nbformat.read(path, as_version=4), path.stem) for path in sorted(folder.glob("*.ipynb"))
    }


# ---------------------------------------------------------------- example submissions


def solution_code(markdown: str) -> str:
    """The one Python block of a solution cell."""
    blocks = re.findall(r"```python\n(.*?)```", markdown, flags=re.S)
    if len(blocks) != 1:
        raise ValueError(f"a solution holds {len(blocks)} Python blocks, not one")
    return blocks[0].strip("\n")


def completed(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student edition of a course notebook, each exercise answered with its solution's code, put before the
    cell's last line (its check call), as a student would write it."""
    notebook = nbformat.reads(nbformat.writes(notebook), as_version=4)  # a copy
    cells = notebook.cells
    for index, cell in enumerate(cells):
        if EXERCISE in cell.metadata.get("tags", []):
            solution = cells[index + 1]
            assert SOLUTION in solution.metadata.get("tags", []), f"no solution after cell {index}"
            *body, check = cell.source.rstrip().splitlines()
            cell.source = "\n".join([*body, solution_code(solution.source), "", check])
    return student_edition(notebook)


def write_examples(folder: Path, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Two students for every course notebook: ``complete`` (every exercise solved) and ``empty`` (as handed out)."""
    written = []
    for path in sorted(notebooks.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for student, edition in (("complete", completed(notebook)), ("empty", student_edition(notebook))):
            target = folder / student / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(edition, target)
            written.append(target)
    return written
