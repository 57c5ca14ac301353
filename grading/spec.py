"""What a hidden test is: the inputs a student's function is called with, its points, and how its answer is judged
in the grader's own process (never in the student's).

An exercise whose answer is a function gets ``cases``: each ``Case`` holds the arguments, drawn from seeds that
are not in the student release. An exercise whose answer is a value (a number, a vector, four weight tensors) has no
cases: its value is read once and judged, worth ``points``.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from course_utils.exercises.answers import read_numbers


@dataclass(frozen=True)
class Case:
    """One call of the student's function: ``fn(*args)``."""

    args: tuple = ()
    points: float = 1.0
    label: str = ""  # said in the feedback: "B=3, float64"


@dataclass(frozen=True)
class Judged:
    passed: bool
    message: str


@dataclass(frozen=True)
class HiddenExercise:
    """The hidden test of one exercise. ``judge(answer, case)`` sees the answer as exported (``grading.export``):
    tensors, numbers, strings, lists, tuples and dicts of them; for a value answer ``case`` is ``Case()``."""

    number: int  # the exercise's number in its notebook, 1-based
    answer: tuple[str, ...]  # the names the student binds, as the notebook's check call passes them
    judge: Callable[[object, Case], Judged]
    cases: Callable[[], list[Case]] | None = None  # None: a value answer
    points: float = 1.0  # a value answer's points (a function's are its cases')
    references: tuple[Callable, ...] = field(default=())  # the course's functions that answer it (@course_reference)
    probe: str | None = None  # "course_utils.m.f": the answer is f(the student's function, *case.args), plain data

    @property
    def total(self) -> float:
        return sum(case.points for case in self.cases()) if self.cases else self.points


# ---------------------------------------------------------------- judges


def _digits(a: float, b: float) -> str:
    """``a`` and ``b`` with the fewest significant digits that tell them apart (at most 12)."""
    for digits in range(4, 13):
        left, right = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if left != right:
            return f"{left}, expected {right}"
    return f"{a:.12g}, expected {b:.12g}"


def compare_numbers(answer, expected, *, rel: float | None = None, abs_tol: float = 1e-9) -> Judged:
    """Whether ``answer`` holds ``expected``'s numbers (same shape; a one-element answer may be any shape) up to
    the answer's own precision (a float32 answer is judged at float32's tolerance), or ``rel`` if given."""
    read, why = read_numbers(answer)
    if why:
        return Judged(False, why)
    reference = np.asarray(
        expected.detach().cpu().double() if isinstance(expected, torch.Tensor) else expected, np.float64
    )
    values = read.values.reshape(reference.shape) if read.values.size == reference.size == 1 else read.values
    if values.shape != reference.shape:
        return Judged(False, f"expected shape {reference.shape}, got {values.shape}")
    scale = max(1.0, float(np.abs(reference).max(initial=0.0)))
    tolerance = (rel if rel is not None else read.rel_tolerance()) * scale + abs_tol
    gap = np.abs(values - reference)
    if np.all(gap <= tolerance):
        return Judged(True, "right")
    if reference.size == 1:
        return Judged(False, f"got {_digits(float(values.reshape(())), float(reference.reshape(())))}")
    worst = np.unravel_index(int(np.argmax(gap)), gap.shape)
    wrong = int((gap > tolerance).sum())
    return Judged(
        False,
        f"{wrong} of {gap.size} numbers are off, the worst by {gap[worst]:.3g} at index {tuple(int(i) for i in worst)}"
        f" (got {_digits(float(values[worst]), float(reference[worst]))})",
    )


def numbers_judge(reference: Callable, *, rel: float | None = None) -> Callable[[object, Case], Judged]:
    """A judge comparing the answer with ``reference(*case.args)``, computed in the grader's process."""

    def judge(answer, case: Case) -> Judged:
        return compare_numbers(answer, reference(*case.args), rel=rel)

    return judge


def equal_judge(reference: Callable, describe: Callable[[object], str] = repr) -> Callable[[object, Case], Judged]:
    """A judge for exact answers (strings, lists of tokens, whole numbers): ``answer == reference(*case.args)``."""

    def judge(answer, case: Case) -> Judged:
        expected = reference(*case.args)
        if _plain(answer) == _plain(expected):
            return Judged(True, "right")
        return Judged(False, f"got {describe(answer)}, expected {describe(expected)}")

    return judge


def _plain(value):
    """Tuples as lists and whole-number tensors as ints, so that equal answers compare equal."""
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, list | tuple):
        return [_plain(part) for part in value]
    return value


def check_judge(check: Callable[..., bool]) -> Callable[[object, Case], Judged]:
    """A judge that runs the notebook's self-check on a value answer, here in the grader's process, and keeps its
    ✓/✗ line as the message. A value answer arrives as the tuple of its names' values, one argument each."""

    def judge(answer: tuple, case: Case) -> Judged:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            passed = bool(check(*answer))
        lines = [line[2:] for line in printed.getvalue().splitlines() if line.startswith(("✓ ", "✗ "))]
        return Judged(passed, lines[-1] if lines else "the check printed no verdict")

    return judge
