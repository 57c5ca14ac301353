"""Finite-difference gradient checks: accuracy, agreement with backprop (engine and torch), bad input."""

import math
import random

import pytest
import torch

from course_utils.models.basics.autograd import Value
from course_utils.models.basics.gradcheck import compare, gradcheck, numerical_gradient, random_two_layer_network
from course_utils.validation import CourseInputError


def lecture(a, b, c):
    return c * (a + 2 * b)


def test_central_difference_error_is_h_squared():
    """For x³ the central difference is exactly 3x² + h², so the error falls 100× when h falls 10×."""
    cube = lambda p: p[0] ** 3  # noqa: E731
    for h in (1e-1, 1e-2):
        (estimate,) = numerical_gradient(cube, [1.5], eps=h)
        assert estimate - 3 * 1.5**2 == pytest.approx(h**2, rel=1e-6)


@pytest.mark.parametrize("backend", ["engine", "torch"])
def test_lecture_example_passes_in_both_backends(backend):
    result = gradcheck(lecture, [3, 1, -2], backend=backend)
    assert result.backprop == [-2, -4, 5]
    assert result.numerical == pytest.approx([-2, -4, 5], abs=1e-8)
    assert result.passed() and result.max_abs_error < 1e-8 and result.max_rel_error < 1e-8


@pytest.mark.parametrize("backend", ["engine", "torch"])
def test_smooth_network_like_function_passes(backend):
    def f(w1, w2, b):
        z = (w1 * 0.7 - w2 * 1.3 + b).tanh()
        return (z * z + 1).log() + (w1 * w2).sigmoid()

    result = gradcheck(f, [0.3, -0.8, 0.1], backend=backend)
    assert result.passed(rtol=1e-7)


def test_a_wrong_local_derivative_is_caught():
    def wrong_square(x):
        return Value(x.data**2, parents=(x,), local_grads=(x.data,), op="bad**2")  # should be 2x

    result = gradcheck(lambda x: wrong_square(x) + x, [1.5])
    assert not result.passed()
    assert result.max_abs_error == pytest.approx(1.5, abs=1e-6)
    assert result.max_rel_error == pytest.approx(1.5 / 4.0, abs=1e-6)


def test_an_unused_input_has_zero_gradient_in_both_backends():
    for backend in ("engine", "torch"):
        result = gradcheck(lambda x, y: x * 3.0, [1.0, 2.0], backend=backend)
        assert result.backprop[1] == 0.0 and result.numerical[1] == 0.0 and result.passed()


def test_compare_reports_zero_relative_error_where_both_are_zero():
    result = compare([0.0, 1.0], [0.0, 1.1])
    assert result.max_abs_error == pytest.approx(0.1)
    assert result.max_rel_error == pytest.approx(0.1 / 1.1)
    assert compare([0.0], [0.0]).max_rel_error == 0.0


BAD = {
    "zero eps": lambda: numerical_gradient(lambda p: p[0], [1.0], eps=0),
    "text eps": lambda: gradcheck(lecture, [3, 1, -2], eps="small"),
    "empty point": lambda: gradcheck(lecture, []),
    "text in point": lambda: gradcheck(lecture, [3, "1", -2]),
    "nan in point": lambda: gradcheck(lecture, [3, math.nan, -2]),
    "point not a sequence": lambda: gradcheck(lecture, 3.0),
    "unknown backend": lambda: gradcheck(lecture, [3, 1, -2], backend="jax"),
    "engine f returns a number": lambda: gradcheck(lambda x: 2.0, [1.0]),
    "torch f returns a vector": lambda: gradcheck(lambda x: torch.stack([x, x]), [1.0], backend="torch"),
    "torch f ignores its input": lambda: gradcheck(lambda x: torch.tensor(1.0), [1.0], backend="torch"),
    "gradients of different lengths": lambda: compare([1.0], [1.0, 2.0]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_raises_a_clear_error(case):
    with pytest.raises(CourseInputError):
        BAD[case]()


def test_random_two_layer_network_is_seeded_and_shaped():
    cases = [random_two_layer_network(random.Random(seed)) for seed in range(30)]
    assert random_two_layer_network(random.Random(3)) == cases[3]
    for x, (W1, b1, W2, b2), label in cases:
        assert 1 <= len(x) <= 4 and 1 <= len(W1) <= 5 and label in (0.0, 1.0) and isinstance(b2, float)
        assert all(len(row) == len(x) for row in W1) and len(b1) == len(W2) == len(W1)
    assert {len(x) for x, _, _ in cases} == {1, 2, 3, 4} and {label for *_, label in cases} == {0.0, 1.0}
