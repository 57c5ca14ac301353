"""The course's reference implementations refuse to stand in for a graded answer.

A function the course uses as the answer to an exercise (``elman_step`` for 05's exercise 1, say) is marked
``@course_reference``. Outside grading nothing changes. While the grader calls a student's function on its hidden
inputs (inside ``refusing_references()``), a marked function called straight from the student's code raises
``GradedAnswerError``, so an answer that only delegates to it scores 0. The course's own modules still call it
(a model that runs ``elman_step`` inside its forward pass keeps working), and so does anyone outside grading.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from pathlib import Path

PACKAGE = str(Path(__file__).resolve().parent)
_refusing = False


class GradedAnswerError(RuntimeError):
    """A graded answer called the course's own reference implementation."""


@contextlib.contextmanager
def refusing_references():
    """While active, a ``@course_reference`` function called from outside ``course_utils`` raises."""
    global _refusing
    before, _refusing = _refusing, True
    try:
        yield
    finally:
        _refusing = before


def _called_by_the_course(frame) -> bool:
    """Whether ``frame`` (the caller) is code of ``course_utils`` itself."""
    return frame is not None and frame.f_code.co_filename.startswith(PACKAGE)


def course_reference(function):
    """Mark ``function`` as the course's reference answer to an exercise (see the module's docstring)."""

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        if _refusing and not _called_by_the_course(sys._getframe(1)):
            raise GradedAnswerError(
                f"the answer calls the course's own {function.__name__}, which a graded answer may not: compute it yourself"
            )
        return function(*args, **kwargs)

    # functools.wraps keeps __wrapped__, so source and signature read as the function's own; an answer that reaches
    # for it is flagged to the TA by the grader's notes.
    guarded.course_reference = True
    return guarded
