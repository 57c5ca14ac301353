"""The self-checks of notebook 03: each passes the right answer, fails wrong and unfinished ones, never raises."""

import numpy as np
import pytest
import torch

from course_utils.models.basics.activations import tanh
from course_utils.exercises.activations import check_sigmoid_depth, check_tanh_derivative, check_xor_network

XOR_SOLUTION = ([[1, 1], [1, 1]], [0, -1], [[1, -2]], [0])


def test_tanh_derivative_check(capsys):
    assert check_tanh_derivative(lambda z: 1 - tanh(z) ** 2)
    assert check_tanh_derivative(lambda z: 1 - torch.tanh(z) ** 2)
    assert "✓" in capsys.readouterr().out
    assert not check_tanh_derivative(lambda z: 1 - z**2)  # right at z = 0 only
    assert "furthest" in capsys.readouterr().out
    assert not check_tanh_derivative(lambda z: tanh(z))


@pytest.mark.parametrize(
    "unfinished, words",
    [
        (lambda z: None, "not finished"),
        (lambda z: 1 / 0, "ZeroDivisionError"),
        (lambda z: 1.0, "same shape"),
        (lambda z: (1 - tanh(z) ** 2)[:10], "same shape"),
    ],
)
def test_tanh_derivative_check_explains_unfinished_answers(capsys, unfinished, words):
    assert check_tanh_derivative(unfinished) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out


def test_xor_check_accepts_the_solution_in_several_forms(capsys):
    W1, b1, W2, b2 = XOR_SOLUTION
    assert check_xor_network(W1, b1, W2, b2)
    assert "✓" in capsys.readouterr().out
    assert check_xor_network(np.array(W1), torch.tensor(b1), [1, -2], 0)  # 1-D W2 and a scalar bias are fine
    assert check_xor_network([[1, 1], [1, 1]], [0, -1], [[2, -4]], [0])  # any scaling that keeps ŷ > 0.5 right


@pytest.mark.parametrize(
    "answer, words",
    [
        ((None, None, None, None), "fill in"),
        (([[1, 1]], [0], [[1]], [0]), "not XOR"),  # one hidden unit: (1, 1) → 2
        (([[1, 1], [1, 1]], [0, -1], [[1, 2]], [0]), "not XOR"),
        (([[1, 1, 1]], [0], [[1]], [0]), "do not make a network"),
        (([[1, 1], [1, 1]], [0, -1], [[1, -2], [1, -2]], [0, 0]), "one unit"),
        ((["a"], [0], [[1]], [0]), "do not make a network"),
    ],
)
def test_xor_check_fails_wrong_answers(capsys, answer, words):
    assert check_xor_network(*answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out


@pytest.mark.parametrize(
    "right",
    [
        lambda z: (1 - torch.tanh(z) ** 2).tolist(),  # a list
        lambda z: 1 - np.tanh(z.numpy()) ** 2,  # NumPy
        lambda z: 1 - torch.tanh(z.float()) ** 2,  # float32: judged at float32's precision
        lambda z: 1 - torch.tanh(z.requires_grad_()) ** 2,  # still requires grad
        lambda z: 4 / (torch.exp(z) + torch.exp(-z)) ** 2,  # another formula, the same function
    ],
)
def test_tanh_derivative_check_takes_the_right_answer_in_any_form(capsys, right):
    assert check_tanh_derivative(right) is True, capsys.readouterr().out


def test_tanh_derivative_check_gives_no_formula_away(capsys):
    check_tanh_derivative(lambda z: None)
    check_tanh_derivative(lambda z: 1 - z**2)
    out = capsys.readouterr().out
    assert "tanh(z)²" not in out and "tanh(z)**2" not in out and "0.0707" not in out


def test_sigmoid_depth_check(capsys):
    assert check_sigmoid_depth(10)
    assert check_sigmoid_depth(np.int64(10))
    assert check_sigmoid_depth(10.0) and check_sigmoid_depth(torch.tensor(10.0))  # a whole number written as a float
    assert "✓" in capsys.readouterr().out
    assert not check_sigmoid_depth(9)
    assert "too few" in capsys.readouterr().out
    assert not check_sigmoid_depth(11)
    assert "smallest" in capsys.readouterr().out
    for unfinished in (None, 10.5, "10", True):
        assert check_sigmoid_depth(unfinished) is False
    assert "whole number" in capsys.readouterr().out
