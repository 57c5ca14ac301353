"""A folder of submissions graded: who handed in what, each submission in its own sandboxed process, several at
once (one per core by default), one row per student, notebook and exercise.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grading.key import AnswerKey
from grading.results import Row
from grading.spec import HiddenExercise
from grading.submission import grade_submission


@dataclass(frozen=True)
class Submission:
    student: str
    notebook: str | None  # None: not a course notebook, or not readable
    path: Path
    problem: str = ""
    attempt: int = 0  # a resubmission's number (Canvas's -1, -2): the highest counts
    late: bool = False


def notebook_of(path: Path, keys: dict[str, AnswerKey], hint: str) -> tuple[str | None, str]:
    """(the course notebook's stem, or None, and why not): from the file's metadata, else from ``hint`` (its name)."""
    try:
        stem = nbformat.read(path, as_version=4).metadata.get("course", {}).get("notebook")
    except Exception as error:  # noqa: BLE001 - an unreadable file gets its row
        return None, f"not a readable notebook ({type(error).__name__})"
    if stem in keys:
        return stem, ""
    named = next((key for key in keys if key in hint), None)
    numbered = next((key for key in keys if re.search(rf"(^|\D){key[:2]}(\D|$)", hint)), None)
    if named or numbered:
        return named or numbered, ""
    return None, "neither its metadata nor its name says which course notebook it is"


def find_submissions(folder: Path, keys: dict[str, AnswerKey], roster: list | None = None) -> list[Submission]:
    """Every notebook under ``folder``: its student (from the LMS's file name, matched to ``roster`` when given;
    ``grading.roster``) and its course notebook."""
    from grading.roster import parse_name, student_key, submitted_files

    found = []
    for path in submitted_files(folder):
        parts = parse_name(path, folder)
        stem, problem = notebook_of(path, keys, parts.notebook_hint or path.stem)
        found.append(Submission(student_key(parts, roster), stem, path, problem, parts.attempt, parts.late))
    return found


def latest(submissions: list[Submission]) -> list[Submission]:
    """One submission per student and notebook: the highest attempt, then the newest file."""
    chosen: dict[tuple[str, str], Submission] = {}
    for submission in sorted(submissions, key=lambda s: (s.attempt, s.path.stat().st_mtime)):
        chosen[(submission.student, submission.notebook)] = submission
    return sorted(chosen.values(), key=lambda s: (s.student, s.notebook))


def grade_all(submissions: list[Submission], keys: dict[str, AnswerKey], hidden: dict[str, tuple[HiddenExercise, ...]],
              *, timeout: float, jobs: int = 0, log: Callable[[str], None] = print) -> list[Row]:  # fmt: skip
    """Every readable submission graded (``jobs`` at once, one per core by default), then a row for each file that
    could not be graded and "not submitted" rows for each notebook a student did not hand in."""
    rows = [Row(s.student, s.path.name, "", "error", 0.0, 0.0, s.problem) for s in submissions if s.notebook is None]
    graded = latest([s for s in submissions if s.notebook is not None])

    def one(submission: Submission) -> list[Row]:
        done = grade_submission(submission.path, submission.student, keys[submission.notebook],
                                hidden[submission.notebook], timeout=timeout)  # fmt: skip
        late = "; handed in late" if submission.late else ""
        for row in done.rows:
            row.notes = (row.notes + late).lstrip("; ")
        log(f"{submission.student}: {submission.notebook} graded in {done.seconds:.0f} s")
        return done.rows

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        for result in pool.map(one, graded):
            rows += result
    log(f"{len(graded)} submissions graded in {time.monotonic() - started:.0f} s")
    rows += missing_rows(submissions, graded, keys, hidden)
    return sorted(rows, key=lambda row: (row.student, row.notebook, str(row.exercise)))


def missing_rows(submissions: list[Submission], graded: list[Submission], keys: dict[str, AnswerKey],
                 hidden: dict[str, tuple[HiddenExercise, ...]], students: list[str] = ()) -> list[Row]:  # fmt: skip
    """The "not submitted" rows: each student (those who handed anything in, and ``students``) and each notebook that
    someone handed in."""
    handed_in = {(s.student, s.notebook) for s in graded}
    notebooks = sorted({s.notebook for s in graded})
    everyone = sorted({s.student for s in submissions} | set(students))
    return [Row(student, notebook, e.number, "not submitted", 0.0, e.total, "")
            for student in everyone for notebook in notebooks if (student, notebook) not in handed_in
            for e in hidden[notebook]]  # fmt: skip
