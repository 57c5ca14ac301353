"""The hidden tests of notebooks 01-04 and 06 against the course's value answers and against typical wrong
answers: a value answer from the solution scores full marks, a wrong one scores less and says what is off."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from grading.hidden import nb01, nb02, nb03, nb04, nb06
from grading.judging import answer_here, roundtrip
from tests.grading.hidden_support import solved_namespace

MODULES = (nb01, nb02, nb03, nb04, nb06)
# 01's my_lr is a np.float64, a subclass of float that grading.export.plain keeps as it is, and
# torch.load(weights_only=True) refuses to read it back: remove the mark once plain turns it into a tensor.
VALUES = [
    pytest.param(module, exercise) for module in MODULES for exercise in module.EXERCISES if exercise.cases is None
]


def exercise_of(module, number: int):
    return next(exercise for exercise in module.EXERCISES if exercise.number == number)


@pytest.mark.parametrize("module, exercise", VALUES, ids=lambda v: getattr(v, "NOTEBOOK", getattr(v, "number", "")))
def test_the_course_solution_of_a_value_exercise_scores_full_marks(module, exercise):
    namespace = solved_namespace(module.NOTEBOOK, exercise.number)
    (result,) = answer_here(exercise, tuple(namespace[name] for name in exercise.answer))
    assert (result.status, result.earned) == ("passed", exercise.points), result.message


WRONG_VALUES = [
    (nb01, 2, (2 / 30.0,), "not the limit"),
    (nb01, 3, ([0.0, 0.0, 0.0, 0.0],), "away from the analytic"),
    (nb02, 1, ({"x": 9, "y": 5, "z": 3},), "y"),
    (nb03, 2, ([[1, 1], [1, 1]], [0, 0], [[1, -1]], [0]), "not XOR"),
    (nb03, 3, (9,), "too few"),
]


@pytest.mark.parametrize("module, number, values, words", WRONG_VALUES)
def test_a_wrong_value_scores_nothing_and_says_why(module, number, values, words):
    (result,) = answer_here(exercise_of(module, number), values)
    assert (result.status, result.earned) == ("wrong", 0) and words in result.message, result.message


def _flipped_gradient(X, y, beta):
    return 2.0 / len(y) * X.T @ (y - X @ beta)


def _bigram_without_markers(sentences, previous, word):
    pairs = sum(a == previous and b == word for s in sentences for a, b in zip(s, s[1:]))
    singles = sum(a == previous for s in sentences for a in s)
    return pairs / singles if singles else 0.0


def _summed_embeddings(E, window):
    return E[window].sum(0)


WRONG_FUNCTIONS = [
    (nb01, 1, _flipped_gradient, "expected"),
    (nb01, 1, lambda X, y, beta: -1.0 / len(y) * X.T @ (y - X @ beta), "expected"),
    (nb02, 3, lambda h, a, y: ([(y - a) * v for v in h], y - a), "∂L/∂"),
    (nb02, 3, lambda h, a, y: ([a - y] * len(h), a - y), "∂L/∂W2"),
    (nb03, 1, lambda z: 1 - z**2, "expected"),
    (nb03, 1, lambda z: torch.tanh(z), "got"),
    (nb04, 1, _bigram_without_markers, "got"),
    (nb04, 2, lambda c_hw, c_h, k, v: (c_hw + k) / (c_h + k), "got"),
    (nb04, 3, lambda lps: 2 ** (-sum(lps) / len(lps)), "got"),
    (nb04, 4, _summed_embeddings, "expected shape"),
    (nb04, 4, lambda E, window: E[window[::-1]].flatten(), "expected"),
    (nb06, 1, lambda x, h, c, W, U, b: (h, c), "h_t"),
    (nb06, 2, lambda layers, w, gamma: gamma * torch.tensordot(w, layers, dims=1), "expected"),
    (nb06, 3, lambda forget, k, t: forget[k : t + 1].prod(0), "expected"),
    (nb06, 4, lambda d, h: h * d + h * h + 2 * h, "got"),
]


@pytest.mark.parametrize("module, number, answer, words", WRONG_FUNCTIONS)
def test_a_typical_wrong_answer_loses_points_and_says_what_is_off(module, number, answer, words):
    exercise = exercise_of(module, number)
    results = answer_here(exercise, answer)
    wrong = [result for result in results if result.status == "wrong"]
    assert wrong and sum(result.earned for result in results) < exercise.total
    assert all(words in result.message for result in wrong), [result.message for result in wrong]


def test_every_hidden_case_travels_as_plain_data():
    for module in MODULES:
        for exercise in module.EXERCISES:
            for case in exercise.cases() if exercise.cases else []:
                assert len(roundtrip(case.args)) == len(case.args), (module.NOTEBOOK, exercise.number, case.label)


def test_a_perplexity_of_inf_is_judged_not_compared():
    exercise = exercise_of(nb04, 3)
    results = answer_here(exercise, lambda lps: math.exp(-sum(lps) / len(lps)) if -math.inf not in lps else 1.0)
    assert [r.status for r in results].count("wrong") == 1 and "expected inf" in results[-1].message


@pytest.mark.parametrize(
    "answer",
    [
        lambda X, y, beta: -2 * np.mean(X * (y - X @ beta)[:, None], axis=0),
        lambda X, y, beta: -2 / len(y) * X.T.dot(y - X.dot(beta)),
    ],
)
def test_a_right_gradient_written_for_numpy_arrays_scores_full_marks(answer):
    results = answer_here(exercise_of(nb01, 1), answer)
    assert {r.status for r in results} == {"passed"}, results[0].message


def test_a_right_perplexity_computed_with_numpy_scores_full_marks():
    results = answer_here(exercise_of(nb04, 3), lambda lps: np.exp(-np.mean(lps)))
    assert {r.status for r in results} == {"passed"}
