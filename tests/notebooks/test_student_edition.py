"""The student edition, ``notebooks/student/``: every notebook without its solutions and without outputs, made from the
stored notebook by ``scripts/build_notebooks.py`` (nbconvert's ``TagRemovePreprocessor``). What the exercises ship
with, in both editions: each exercise cell prints "not finished yet" (nbval checks it: the cell is tagged
``nbval-check-output``), and each has one solution, a Markdown cell tagged ``solution`` right after it.

``bash course.sh newest`` runs the student edition under nbval, with the stored outputs kept (``--student --outputs``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import EXERCISE, SOLUTION, STUDENT, student_edition, write_student_edition  # noqa: E402

from course_utils.exercises import NOT_FINISHED  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))


def full(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)


def student(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(STUDENT / f"{stem}.ipynb", as_version=4)


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def test_there_is_a_student_edition_of_every_notebook_and_of_nothing_else():
    assert sorted(path.stem for path in STUDENT.glob("*.ipynb")) == STEMS


@pytest.mark.parametrize("stem", STEMS)
def test_the_student_edition_is_the_stored_notebook_s(stem, tmp_path):
    made = write_student_edition(ROOT / "notebooks" / f"{stem}.ipynb", tmp_path)
    assert json.loads(made.read_text(encoding="utf-8")) == json.loads((STUDENT / f"{stem}.ipynb").read_text()), (
        f"notebooks/student/{stem}.ipynb is out of date: run python scripts/build_notebooks.py {stem[:2]} --student"
    )


@pytest.mark.parametrize("stem", STEMS)
def test_no_solution_and_no_output_reaches_the_student(stem):
    edition = student(stem)
    assert edition.metadata["course"] == {"notebook": stem, "edition": "student"}
    assert not any(SOLUTION in tags(cell) for cell in edition.cells)
    assert not any(
        re.search(r"<details>|Solution", cell.source) for cell in edition.cells if cell.cell_type == "markdown"
    )
    assert not any(cell.outputs or cell.execution_count for cell in edition.cells if cell.cell_type == "code")
    assert "widgets" not in edition.metadata


@pytest.mark.parametrize("stem", STEMS)
def test_the_student_runs_the_same_code_and_reads_the_same_prose_less_the_solutions(stem):
    whole, edition = full(stem), student(stem)
    assert [(c.cell_type, c.source, tags(c)) for c in whole.cells if SOLUTION not in tags(c)] == [
        (c.cell_type, c.source, tags(c)) for c in edition.cells
    ]


@pytest.mark.parametrize("stem", STEMS)
def test_every_exercise_ships_unfinished_with_one_solution_after_it(stem):
    cells = full(stem).cells
    exercises = [index for index, cell in enumerate(cells) if EXERCISE in tags(cell)]
    assert len(exercises) >= 3
    for number, index in enumerate(exercises, 1):
        cell, solution = cells[index], cells[index + 1]
        assert "nbval-check-output" in tags(cell)
        # nbval runs cells outside IPython's history, where a trailing ";" no longer hides a check's True or False
        assert re.fullmatch(r"_ = check_\w+\(.*\)", cell.source.splitlines()[-1]), "end with _ = check_x(...)"
        printed = "".join(output.get("text", "") for output in cell.outputs)
        assert printed.startswith("✗") and NOT_FINISHED in printed and printed.count("\n") == 1, printed
        assert SOLUTION in tags(solution) and solution.source.startswith("<details><summary>Solution</summary>")
        assert solution.source.count("```python") == 1, f"exercise {number}: one Python block, the grader's answer"
        told = next(c.source for c in reversed(cells[:index]) if c.cell_type == "markdown" and SOLUTION not in tags(c))
        assert re.search(rf"Exercise {number}\b", told), f"the exercise before cell {index} is not number {number}"
    assert sum(SOLUTION in tags(cell) for cell in cells) == len(exercises)


def test_kept_outputs_are_the_stored_ones_for_nbval():
    whole = full("02_computation_graphs")
    edition = student_edition(whole, outputs=True)
    kept = [c.outputs for c in edition.cells if c.cell_type == "code"]
    assert kept == [c.outputs for c in whole.cells if c.cell_type == "code"]
    assert "widgets" in edition.metadata or "widgets" not in whole.metadata
