"""Turning one exported answer into points: the judge runs here, in the grader's process, on plain data.

``answer_here`` does the student's side too, in this process, for tests and for checking a hidden test against the
course's solutions: the same copy of the inputs, the same guard on the references, the same export and read-back.
"""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass

import torch

from course_utils.exercises import NOT_FINISHED as COURSE_NOT_FINISHED
from course_utils.reference import GradedAnswerError, refusing_references
from grading.export import RAISED, UNBOUND, UNREADABLE, marker, pack_arguments, plain, unpack_arguments
from grading.spec import Case, HiddenExercise

# What a case can come to. "refused": the answer called the course's own reference implementation.
CASE_STATUSES = (
    "passed",
    "wrong",
    "not finished",
    "unbound",
    "raised",
    "refused",
    "unreadable",
    "timed out",
    "crashed",
)
NOT_FINISHED = "not finished yet: it still gives None"


@dataclass(frozen=True)
class CaseResult:
    label: str
    points: float
    earned: float
    status: str
    message: str


def judge_exported(exercise: HiddenExercise, case: Case, answer) -> CaseResult:
    """Judge ``answer`` (as read back from the student's process) on ``case``."""

    def result(status: str, message: str, earned: float = 0.0) -> CaseResult:
        return CaseResult(case.label, case.points, earned, status, message)

    unbound = marker(answer, UNBOUND)
    if unbound is not None:
        return result("unbound", f"{unbound} is not defined: its cell raised, was not run, or the name was changed")
    raised = marker(answer, RAISED)
    if raised is not None:
        if raised.startswith(GradedAnswerError.__name__):
            return result("refused", raised.split(": ", 1)[-1])
        return result("raised", f"your function raised {raised}")
    unreadable = marker(answer, UNREADABLE)
    if unreadable is not None:
        return result("unreadable", f"the answer is not numbers or text the grader reads: {unreadable}")
    if answer is None or (isinstance(answer, tuple) and exercise.cases is None and all(a is None for a in answer)):
        return result("not finished", NOT_FINISHED)
    try:
        verdict = exercise.judge(answer, case)
    except Exception as error:  # noqa: BLE001 - a strange answer is wrong, never a crash of the grader
        return result("wrong", f"the answer could not be judged ({type(error).__name__}: {error})")
    if not verdict.passed and COURSE_NOT_FINISHED in verdict.message:  # a self-check's word for a shipped None
        return result("not finished", verdict.message)
    return result("passed" if verdict.passed else "wrong", verdict.message, case.points if verdict.passed else 0.0)


def roundtrip(value, *, answer: bool = True):
    """``value`` as it arrives on the other side (an answer: as plain data)."""
    buffer = io.BytesIO()
    torch.save(plain(value) if answer else value, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def call_guarded(fn, args: tuple, probe: str | None = None):
    """``fn(*copies of args)`` (or through ``probe``) with the course's references refusing, as the runner calls
    it, the arguments having made the same trip; an exception is returned as the RAISED marker."""
    from grading.runner import course_function

    args = unpack_arguments(roundtrip(pack_arguments(copy.deepcopy(args)), answer=False))
    try:
        with refusing_references():
            return course_function(probe)(fn, *args) if probe else fn(*args)
    except Exception as error:  # noqa: BLE001 - the answer's own error is its result
        return {RAISED: f"{type(error).__name__}: {error}"}


def answer_here(exercise: HiddenExercise, answer) -> list[CaseResult]:
    """Every case of ``exercise`` judged with ``answer`` (a function, or the tuple of a value answer's values)
    answered in this process."""
    if exercise.cases is None:
        return [judge_exported(exercise, Case(points=exercise.points), roundtrip(tuple(answer)))]
    return [judge_exported(exercise, case, roundtrip(call_guarded(answer, case.args, exercise.probe)))
            for case in exercise.cases()]  # fmt: skip
