"""Hidden tests of notebook 03 (activation functions): tanh' on new tensors; the XOR weights and the depth by their
checks."""

from __future__ import annotations

import torch

from course_utils.exercises.activations import check_sigmoid_depth, check_xor_network
from course_utils.models.basics.activations import tanh_derivative
from grading.spec import Case, HiddenExercise, check_judge, numbers_judge

NOTEBOOK = "03_activation_functions"


def _tanh_cases() -> list[Case]:
    generator = torch.Generator().manual_seed(9031)
    return [
        Case((3 * torch.randn(3, 4, generator=generator, dtype=torch.float64),), label="(3, 4), float64"),
        Case((4 * torch.randn(50, generator=generator),), label="(50,), float32"),
        Case((torch.tensor(0.7, dtype=torch.float64),), label="one number, a 0-d tensor"),
        Case((torch.linspace(-12, 12, 97, dtype=torch.float64),), label="[−12, 12], where tanh saturates"),
        Case(
            (torch.tensor([[[-0.5, 0.0, 2.0]], [[1e-3, -3.0, 0.25]]], dtype=torch.float64),),
            label="(2, 1, 3), 0 among them",
        ),
    ]


def _tanh_derivative(z: torch.Tensor) -> torch.Tensor:
    return tanh_derivative(z.double())  # the float64 value, whatever z's precision


EXERCISES = (
    HiddenExercise(
        1, ("my_tanh_derivative",), numbers_judge(_tanh_derivative), _tanh_cases, references=(tanh_derivative,)
    ),
    HiddenExercise(2, ("W1", "b1", "W2", "b2"), check_judge(check_xor_network), points=2),
    HiddenExercise(3, ("my_depth",), check_judge(check_sigmoid_depth), points=1),
)
