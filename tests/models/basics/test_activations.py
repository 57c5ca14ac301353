"""The scratch activations and derivatives agree with PyTorch, stay finite, and reject bad input."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import CourseInputError
from course_utils.models.basics.activations import (
    ACTIVATIONS,
    get_activation,
    gelu,
    relu_derivative,
    sigmoid,
    sigmoid_derivative,
    standard_normal_cdf,
    tanh,
)

GRID = torch.cat(
    [
        torch.linspace(-8, 8, 801, dtype=torch.float64),
        torch.tensor([0.0, -50.0, 50.0, -800.0, 800.0], dtype=torch.float64),
    ]
)
NAMES = list(ACTIVATIONS)


def test_the_registry_has_the_four_activations_of_the_slides():
    assert NAMES == ["sigmoid", "tanh", "relu", "gelu"]
    assert all(get_activation(name).name == name for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_function_matches_torch(name):
    act = get_activation(name)
    assert torch.allclose(act.function(GRID), act.library(GRID), atol=1e-14, rtol=0)


@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_autograd_of_torch(name):
    act = get_activation(name)
    z = GRID.clone().requires_grad_(True)
    (expected,) = torch.autograd.grad(act.library(z).sum(), z)
    assert torch.allclose(act.derivative(GRID), expected, atol=1e-14, rtol=0)


@pytest.mark.parametrize("name", NAMES)
def test_autograd_through_the_scratch_function_gives_the_written_derivative(name):
    """Networks train through our functions, so their autograd slope must be right everywhere, z = 0 included."""
    act = get_activation(name)
    z = GRID.clone().requires_grad_(True)
    (slope,) = torch.autograd.grad(act.function(z).sum(), z)
    assert torch.allclose(slope, act.derivative(GRID), atol=1e-14, rtol=0)
    assert torch.isfinite(slope).all()


@pytest.mark.parametrize("name", NAMES)
def test_float32_stays_finite_for_huge_inputs(name):
    z = torch.tensor([-1e4, -100.0, 0.0, 100.0, 1e4])
    act = get_activation(name)
    assert torch.isfinite(act.function(z)).all() and torch.isfinite(act.derivative(z)).all()


def test_tanh_identity_with_sigmoid():
    assert torch.allclose(tanh(GRID), 2 * sigmoid(2 * GRID) - 1, atol=1e-14, rtol=0)


def test_sigmoid_slope_is_at_most_a_quarter_at_zero():
    assert sigmoid_derivative(torch.tensor([0.0], dtype=torch.float64)).item() == 0.25
    assert sigmoid_derivative(GRID).max().item() == 0.25


def test_gelu_is_the_exact_erf_form_not_the_tanh_approximation():
    z = torch.linspace(-4, 4, 81, dtype=torch.float64)
    assert torch.allclose(gelu(z), F.gelu(z, approximate="none"), atol=1e-15, rtol=0)
    assert (gelu(z) - F.gelu(z, approximate="tanh")).abs().max() > 1e-5
    assert standard_normal_cdf(torch.tensor([0.0])).item() == 0.5
    assert math.isclose(
        standard_normal_cdf(torch.tensor([1.0], dtype=torch.float64)).item(), 0.8413447460685429, rel_tol=1e-12
    )


def test_relu_derivative_is_zero_at_zero_like_pytorch():
    assert relu_derivative(torch.tensor([-1.0, 0.0, 2.0])).tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("bad", ["softplus", "Sigmoid", "", None, ["relu"]])
def test_unknown_names_raise_a_clear_error(bad):
    with pytest.raises(CourseInputError, match="activation must be one of"):
        get_activation(bad)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [0.5, [0.1, 0.2], torch.tensor([1, 2])])
def test_non_float_tensors_raise_a_clear_error(name, bad):
    act = get_activation(name)
    for fn in (act.function, act.derivative):
        with pytest.raises(CourseInputError, match="floating-point torch tensor"):
            fn(bad)
