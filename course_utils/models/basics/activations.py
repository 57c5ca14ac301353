"""Activation functions g(z) and their derivatives g'(z), written out from scratch.

Each function takes a floating-point torch tensor and works elementwise, so autograd can
differentiate through it. ``ACTIVATIONS`` holds them by name, next to torch's own version
(for parity checks); ``get_activation(name)`` looks one up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from course_utils.reference import course_reference
from course_utils.validation import CourseInputError, check_choice

Tensor = torch.Tensor


def _check_tensor(z) -> Tensor:
    """Return ``z`` if it is a floating-point tensor; otherwise raise a clear error."""
    if not isinstance(z, torch.Tensor) or not z.is_floating_point():
        kind = f"a {z.dtype} tensor" if isinstance(z, torch.Tensor) else type(z).__name__
        raise CourseInputError(f"z must be a floating-point torch tensor, e.g. torch.tensor([0.5]); got {kind}")
    return z


def _exp_minus_abs(z: Tensor) -> Tensor:
    """e^(−|z|), in (0, 1] so it never overflows.

    Written as two clamped exponentials rather than ``exp(-z.abs())``: autograd gives |z| the
    slope 0 at z = 0, which would make the slope of sigmoid and tanh wrong there.
    """
    return torch.where(z >= 0, torch.exp(-z.clamp(min=0)), torch.exp(z.clamp(max=0)))


def sigmoid(z: Tensor) -> Tensor:
    """σ(z) = 1 / (1 + e^(−z)); for z < 0 the equal form e^z / (1 + e^z) avoids
    overflow."""
    e = _exp_minus_abs(_check_tensor(z))
    return torch.where(z >= 0, 1 / (1 + e), e / (1 + e))


def sigmoid_derivative(z: Tensor) -> Tensor:
    """σ'(z) = σ(z)(1 − σ(z)); its largest value is 1/4, at z = 0."""
    s = sigmoid(z)
    return s * (1 - s)


def tanh(z: Tensor) -> Tensor:
    """tanh(z) = (e^(2z) − 1) / (e^(2z) + 1), written with e^(−2|z|) so that nothing overflows."""
    e = _exp_minus_abs(2 * _check_tensor(z))
    return torch.where(z >= 0, (1 - e) / (1 + e), (e - 1) / (e + 1))


@course_reference
def tanh_derivative(z: Tensor) -> Tensor:
    """tanh'(z) = 1 − tanh(z)²; its largest value is 1, at z = 0."""
    return 1 - tanh(z) ** 2


def relu(z: Tensor) -> Tensor:
    """ReLU(z) = max(0, z)."""
    return torch.where(_check_tensor(z) > 0, z, torch.zeros_like(z))


def relu_derivative(z: Tensor) -> Tensor:
    """ReLU'(z) = 1 for z > 0, else 0 (at z = 0 we take 0, as PyTorch does)."""
    return (_check_tensor(z) > 0).to(z.dtype)


def standard_normal_cdf(z: Tensor) -> Tensor:
    """Φ(z) = P(X ≤ z) for X ~ N(0, 1), = ½[1 + erf(z/√2)]."""
    return 0.5 * (1 + torch.erf(_check_tensor(z) / math.sqrt(2)))


def gelu(z: Tensor) -> Tensor:
    """GELU(z) = z·Φ(z) = z·½[1 + erf(z/√2)] (the exact form, not the tanh approximation)."""
    return z * standard_normal_cdf(z)


def gelu_derivative(z: Tensor) -> Tensor:
    """GELU'(z) = Φ(z) + z·φ(z), with φ(z) = e^(−z²/2) / √(2π) the standard normal
    density."""
    density = torch.exp(-0.5 * _check_tensor(z) ** 2) / math.sqrt(2 * math.pi)
    return standard_normal_cdf(z) + z * density


@dataclass(frozen=True)
class Activation:
    """One activation: g, g', torch's own g (for parity checks), a formula to show, an init gain.

    ``init_gain``: weights start as N(0, gain²/fan_in); 1 is Glorot's choice for sigmoid and tanh,
    √2 He's for ReLU-like units.
    """

    name: str
    function: Callable[[Tensor], Tensor]
    derivative: Callable[[Tensor], Tensor]
    library: Callable[[Tensor], Tensor]
    formula: str
    init_gain: float


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("sigmoid", sigmoid, sigmoid_derivative, torch.sigmoid, r"$\sigma(z) = 1/(1+e^{-z})$", 1.0),
        Activation("tanh", tanh, tanh_derivative, torch.tanh, r"$\tanh(z) = 2\sigma(2z) - 1$", 1.0),
        Activation("relu", relu, relu_derivative, F.relu, r"$\mathrm{ReLU}(z) = \max(0, z)$", math.sqrt(2)),
        Activation("gelu", gelu, gelu_derivative, F.gelu, r"$\mathrm{GELU}(z) = z\,\Phi(z)$", math.sqrt(2)),
    )
}


def get_activation(name: str) -> Activation:
    """The activation called ``name`` (one of ``ACTIVATIONS``)."""
    return ACTIVATIONS[check_choice("activation", name, tuple(ACTIVATIONS))]
