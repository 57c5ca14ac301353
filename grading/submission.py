"""One submitted notebook, graded: its cells run in a sandboxed process of its own (``grading.session``), its
functions called on the hidden cases there, and every answer judged here, in the grader's process.

Only the cells the answers need run (the set-up, each cell that binds an answer's name, and what those read:
``course_utils.cell_slices``), each with its time limit, the submission's own check calls left out. A cell that
kills the process is left out when the process starts again, so a crash or a loop costs only the exercises it
stops. Nothing the submission prints, and nothing it rebinds (a check, ``report``, ``verdict``), reaches a verdict:
only the answers come back, as plain data.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course_utils.cell_slices import needed_cells
from grading.export import load_answer
from grading.judging import CaseResult, judge_exported
from grading.key import AnswerKey, check_call
from grading.results import Row
from grading.session import Session, scratch_folder
from grading.spec import Case, HiddenExercise

# Names a submission has no business touching: a note asks a TA to look (the verdicts do not depend on them).
GRADER_NAMES = re.compile(
    r"(course_utils\.reference|refusing_references|_refusing|__wrapped__|__closure__|\bgrading\.|report\s*=|verdict\s*=)"
)
SETUP_CALL = "setup_notebook("


@dataclass
class Graded:
    rows: list[Row]
    seconds: float
    notes: list[str] = field(default_factory=list)


def code_cells(notebook: nbformat.NotebookNode, key: AnswerKey) -> list[str]:
    """The submission's code cells, each without the lines that only call the exercises' own checks."""
    checks = {exercise.check for exercise in key.exercises}
    cells = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    return ["\n".join(line for line in source.splitlines() if check_call(line) not in checks) for source in cells]


def cells_to_run(sources: list[str], key: AnswerKey) -> list[int]:
    """The indexes of the cells the answers need, in order: the set-up and every cell an answer's name needs."""
    names = sorted({name for exercise in key.exercises for name in exercise.names})
    answers = "\n".join(f"_ = {name}" for name in names)
    set_up = {index for index, source in enumerate(sources) if SETUP_CALL in source}
    return sorted(needed_cells([*sources, answers], {len(sources)} | set_up) - {len(sources)})


def exercise_row(student: str, notebook: str, hidden: HiddenExercise, results: list[CaseResult]) -> Row:
    """The row of one exercise from its cases' results."""
    earned, total = sum(r.earned for r in results), sum(r.points for r in results)
    passed = sum(r.status == "passed" for r in results)
    failed = [r for r in results if r.status != "passed"]
    statuses = {r.status for r in failed}
    status = "passed" if not failed else "partial" if earned > 0 else _zero_status(statuses)
    message = "all cases right" if not failed else _case_message(failed[0], len(results))
    return Row(student, notebook, hidden.number, status, round(float(earned), 4), round(float(total), 4), message,
               f"{passed}/{len(results)}")  # fmt: skip


def _zero_status(statuses: set[str]) -> str:
    """An exercise's status when none of its cases earned a point (``statuses``: the failed cases')."""
    if "unbound" in statuses:
        return "error"
    if statuses == {"not finished"}:
        return "not finished"
    return next((status for status in ("refused", "crashed", "timed out") if status in statuses), "wrong")


def _case_message(result: CaseResult, count: int) -> str:
    where = f"case {result.label}: " if count > 1 and result.label else ""
    return where + result.message


def _answer(session: Session, hidden: HiddenExercise, case: Case, tag: str) -> CaseResult:
    if hidden.cases is None:
        reply, path = session.values(hidden.answer, tag)
    else:
        reply, path = session.call(hidden.answer[0], case.args, tag, hidden.probe)
    if reply.status in ("timed out", "crashed"):
        what = "ran over its time limit" if reply.status == "timed out" else "killed the process"
        return CaseResult(case.label, case.points, 0.0, reply.status, f"the answer {what} ({reply.error})")
    if reply.status == "raised" or not path.exists():
        return CaseResult(case.label, case.points, 0.0, "crashed", f"the answer could not be read ({reply.error})")
    return judge_exported(hidden, case, load_answer(path))


def grade_exercises(session: Session, student: str, notebook: str, hidden: tuple[HiddenExercise, ...]) -> list[Row]:
    rows = []
    for exercise in hidden:
        cases = exercise.cases() if exercise.cases else [Case(points=exercise.points)]
        results = [_answer(session, exercise, case, f"e{exercise.number}c{index}") for index, case in enumerate(cases)]
        rows.append(exercise_row(student, notebook, exercise, results))
    return rows


def _cell_note(number: int, reply) -> str | None:
    if reply.status == "ok":
        return None
    what = {"timed out": "ran over the time limit", "crashed": "killed the process (left out after that)"}
    return f"code cell {number} {what.get(reply.status, 'raised ' + reply.error)}"


def grade_submission(path: Path, student: str, key: AnswerKey, hidden: tuple[HiddenExercise, ...], *,
                     timeout: float = 60, memory_bytes: int | None = None) -> Graded:  # fmt: skip
    """Every exercise of one submission graded: a row each, with the submission's notes."""
    started = time.monotonic()
    sources = code_cells(nbformat.read(path, as_version=4), key)
    notes = []
    if any(GRADER_NAMES.search(source) for source in sources):
        notes.append("the code names the grader's internals: worth a look (the points do not depend on them)")
    with scratch_folder() as scratch:
        session = Session(Path(scratch), timeout, **({"memory_bytes": memory_bytes} if memory_bytes else {}))
        try:
            session.cell("from course_utils.exercises.grading import block_network\nblock_network()")
            for index in cells_to_run(sources, key):
                note = _cell_note(index + 1, session.cell(sources[index]))
                notes += [note] if note else []
            rows = grade_exercises(session, student, key.notebook, hidden)
        finally:
            session.stop()
    if session.restarts:
        notes.append(f"the process was started again {session.restarts} time(s)")
    for row in rows:
        row.notes = "; ".join(notes)[:800]
    return Graded(rows, time.monotonic() - started, notes)
