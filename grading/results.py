"""One row per student, notebook and exercise: what the grader found, and the statuses it can find."""

from __future__ import annotations

from dataclasses import dataclass

# passed: every case right. partial: some points. wrong: none right. not finished: still the shipped None.
# error: the answer's name was never bound. refused: the answer called the course's own reference implementation.
# timed out / crashed: the answer ran over its limit, or killed its process, in every case it stopped.
# not submitted: no file for this notebook, which other students submitted.
STATUSES = ("passed", "partial", "wrong", "not finished", "error", "refused", "timed out", "crashed", "not submitted")
COLUMNS = ("student", "notebook", "exercise", "status", "points", "out_of", "cases", "message", "notes")


@dataclass
class Row:
    student: str  # the student's key: the roster's id when the file's name matched the roster, else a name
    notebook: str  # the notebook's stem: 05_rnn_language_models
    exercise: int | str  # the exercise's number; "" on a row about a file that could not be graded
    status: str
    points: float
    out_of: float
    message: str
    cases: str = ""  # "3/4": hidden cases passed, of all
    notes: str = ""  # about the whole submission: cells that raised, shell commands refused, restarts
