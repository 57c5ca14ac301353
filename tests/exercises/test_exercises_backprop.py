"""The self-checks of notebook 02: each passes the right answer, fails wrong and unfinished ones, never raises."""

import math

import numpy as np
import torch

import pytest

from course_utils.models.basics.autograd import Value
from course_utils.exercises.backprop import (
    chain_rule_reference,
    check_chain_rule,
    check_output_layer_grads,
    check_softplus,
)


def test_chain_rule_reference_is_the_hand_derivation():
    assert chain_rule_reference() == {"x": 9.0, "y": 11.0, "z": 3.0}  # y² , xy + (xy + z), y at (2, 3, -1)


@pytest.mark.parametrize(
    "answer",
    [
        {"x": torch.tensor(9.0), "y": torch.tensor(11.0), "z": torch.tensor(3.0)},  # 0-d tensors
        {"x": np.float64(9), "y": np.float32(11), "z": np.int64(3)},  # NumPy scalars
        {"x": torch.tensor([9.0]), "y": 11, "z": 3.0},
    ],
)
def test_chain_rule_check_takes_numbers_of_any_type(capsys, answer):
    assert check_chain_rule(answer) is True, capsys.readouterr().out


def test_output_layer_check_takes_tensors_and_states_no_answer(capsys):
    assert check_output_layer_grads(lambda h, a, y: (torch.tensor(h) * (a - y), torch.tensor(a - y))) is True
    assert check_output_layer_grads(lambda h, a, y: ([0.0] * len(h), y - a)) is False
    out = capsys.readouterr().out
    assert "a − y" not in out and "a - y" not in out


def test_chain_rule_check(capsys):
    assert check_chain_rule({"x": 9, "y": 11.0, "z": 3})
    assert "✓" in capsys.readouterr().out
    assert not check_chain_rule({"x": 9, "y": 5, "z": 3})
    assert "used twice" in capsys.readouterr().out
    assert not check_chain_rule({"x": 9, "y": 11, "z": 2})
    assert not check_chain_rule({"x": None, "y": None, "z": None})
    assert "not finished" in capsys.readouterr().out
    assert not check_chain_rule([9, 11, 3])
    assert not check_chain_rule({"x": "9", "y": 11, "z": 3})


def softplus_right(x):
    return Value(math.log1p(math.exp(x.data)), parents=(x,), local_grads=(1 / (1 + math.exp(-x.data)),), op="softplus")


def softplus_wrong_derivative(x):
    return Value(math.log1p(math.exp(x.data)), parents=(x,), local_grads=(math.exp(x.data),), op="softplus")


def softplus_disconnected(x):
    return Value(math.log1p(math.exp(x.data)))


def softplus_composed(x):
    return (1 + x.exp()).log()


def softplus_raises(x):
    raise RuntimeError("oops")


@pytest.mark.parametrize(
    "wrong",
    [
        softplus_wrong_derivative,
        softplus_disconnected,
        softplus_composed,
        softplus_raises,
        lambda x: None,
        lambda x: 1.0,
        lambda x: x.exp(),
    ],
)
def test_softplus_check_fails_wrong_answers(wrong, capsys):
    assert check_softplus(wrong) is False
    assert "✗" in capsys.readouterr().out


def test_softplus_check_passes_the_right_answer(capsys):
    assert check_softplus(softplus_right) is True
    assert "✓" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong",
    [
        lambda h, a, y: None,
        lambda h, a, y: ([a - y] * len(h), a - y),  # forgot the activation
        lambda h, a, y: ([(y - a) * v for v in h], y - a),  # sign flipped
        lambda h, a, y: ([(a - y) * v for v in h[:-1]], a - y),  # one short
        lambda h, a, y: 3.0,  # not a pair
        lambda h, a, y: 1 / 0,  # raises
    ],
)
def test_output_layer_check_fails_wrong_answers(wrong, capsys):
    assert check_output_layer_grads(wrong) is False
    assert "✗" in capsys.readouterr().out


def test_output_layer_check_passes_the_right_answer(capsys):
    assert check_output_layer_grads(lambda h, a, y: ([(a - y) * v for v in h], a - y)) is True
    assert "✓" in capsys.readouterr().out
