"""The hidden tests (``grading/hidden``): one for every exercise of the course, passed by the course's own solution
in every case, failed by an unfinished answer, and scoring 0 for an answer that only calls the course's reference.

Answered here, in this process (``grading.judging.answer_here``): the export and read-back and the guard are the
grader's own; the runner's process is tested in test_grader.py.
"""

from __future__ import annotations

import pytest

from grading.hidden import hidden_tests
from grading.judging import answer_here
from grading.key import answer_keys
from tests.grading.hidden_support import solved_namespace

KEYS = answer_keys()
TESTS = hidden_tests()
FUNCTIONS = [(stem, e.number) for stem, tests in sorted(TESTS.items()) for e in tests if e.cases is not None]
REFERENCED = [(stem, e.number) for stem, tests in sorted(TESTS.items()) for e in tests if e.references]


def hidden(stem: str, number: int):
    return next(e for e in TESTS[stem] if e.number == number)


def test_every_exercise_of_the_course_has_a_hidden_test_for_the_names_its_check_reads():
    assert sorted(TESTS) == sorted(KEYS)
    for stem, key in KEYS.items():
        assert [e.number for e in TESTS[stem]] == [e.number for e in key.exercises], stem
        for exercise in key.exercises:
            assert hidden(stem, exercise.number).answer == exercise.names, (stem, exercise.number)


@pytest.mark.parametrize("stem, number", FUNCTIONS)
def test_the_course_solution_passes_every_hidden_case(stem, number):
    exercise = hidden(stem, number)
    solution = solved_namespace(stem, number)[exercise.answer[0]]
    results = answer_here(exercise, solution)
    assert len(results) >= 3, "a hidden test has several cases, for partial credit"
    assert [(r.status, r.message) for r in results if r.status != "passed"] == []
    assert sum(r.earned for r in results) == exercise.total > 0


@pytest.mark.parametrize("stem, number", FUNCTIONS)
def test_an_unfinished_or_crashing_answer_scores_nothing(stem, number):
    exercise = hidden(stem, number)
    assert {r.status for r in answer_here(exercise, lambda *args: None)} == {"not finished"}
    raising = answer_here(exercise, lambda *args: 1 / 0)
    assert {r.status for r in raising} == {"raised"} and "ZeroDivisionError" in raising[0].message


@pytest.mark.parametrize("stem, number", REFERENCED)
def test_an_answer_that_calls_the_course_reference_scores_0(stem, number):
    exercise = hidden(stem, number)
    for reference in exercise.references:
        assert getattr(reference, "course_reference", False), f"{reference.__name__} is not @course_reference"
        for answer in (reference, lambda *args, reference=reference: reference(*args)):
            results = answer_here(exercise, answer)
            assert {r.status for r in results} == {"refused"}, [r.message for r in results]
            assert sum(r.earned for r in results) == 0
