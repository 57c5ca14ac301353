"""``course_utils.reference``: while grading, a reference implementation refuses a call from outside the course
(a student's answer), and nothing else changes: outside grading it is the plain function, and the course's own
modules may call it in grading too."""

from __future__ import annotations

import inspect

import pytest
import torch

from course_utils.models.recurrent.rnn import ScratchRNN, elman_step
from course_utils.reference import GradedAnswerError, refusing_references


def elman_inputs():
    generator = torch.Generator().manual_seed(0)
    return tuple(torch.randn(shape, generator=generator) for shape in [(2, 3), (2, 4), (4, 3), (4, 4), (4,)])


def test_outside_grading_a_reference_is_the_plain_function():
    x_t, h_prev, W, U, b = elman_inputs()
    assert torch.equal(elman_step(x_t, h_prev, W, U, b), torch.tanh(h_prev @ U.T + x_t @ W.T + b))
    assert list(inspect.signature(elman_step).parameters) == ["x_t", "h_prev", "W", "U", "b"]
    assert "def elman_step" in inspect.getsource(elman_step)


def test_in_grading_a_call_from_outside_the_course_is_refused_and_says_why():
    def my_elman_step(*args):
        return elman_step(*args)

    with refusing_references(), pytest.raises(GradedAnswerError, match="calls the course's own elman_step"):
        my_elman_step(*elman_inputs())
    with refusing_references(), pytest.raises(GradedAnswerError):
        elman_step(*elman_inputs())  # handed over as the answer itself
    my_elman_step(*elman_inputs())  # and after grading, it works again


def test_in_grading_the_course_own_modules_still_call_it():
    model = ScratchRNN(3, 4)
    with refusing_references():
        output, _ = model(torch.zeros(1, 2, 3))
    assert output.shape == (1, 2, 4)
