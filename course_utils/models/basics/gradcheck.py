"""Check backpropagation against finite differences.

The central difference ``(f(x + h·e_i) − f(x − h·e_i)) / 2h`` approximates ∂f/∂x_i with an
error of order h² (plus rounding noise of order ε_machine·|f| / h), so with float64 and
h ≈ 1e-6 it agrees with a correct backward pass to about 1e-9. It needs two forward passes
per input, which is why training uses backprop and only tests use this.

    result = gradcheck(lambda a, b, c: c * (a + 2 * b), [3, 1, -2])            # our engine
    result = gradcheck(lambda a, b, c: c * (a + 2 * b), [3, 1, -2], backend="torch")
    result.max_abs_error, result.max_rel_error, result.passed()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from course_utils.models.basics.autograd import Value
from course_utils.validation import check_number
from course_utils.validation import CourseInputError, check_choice, check_positive

BACKENDS = ("engine", "torch")


@dataclass(frozen=True)
class GradCheck:
    """Finite-difference and backprop gradients side by side, and their largest disagreement."""

    numerical: list[float]
    backprop: list[float]
    max_abs_error: float
    max_rel_error: float  # |numerical − backprop| / max(|numerical|, |backprop|); 0 where both are 0

    def passed(self, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
        """True if every |numerical − backprop| ≤ atol + rtol·|backprop| (like ``numpy.allclose``)."""
        return all(abs(n - b) <= atol + rtol * abs(b) for n, b in zip(self.numerical, self.backprop))


def _check_point(point) -> list[float]:
    try:
        coordinates = list(point)
    except TypeError:
        raise CourseInputError(f"point must be a sequence of numbers, got {point!r}") from None
    if not coordinates:
        raise CourseInputError("point must have at least one coordinate")
    return [check_number(f"point[{i}]", x) for i, x in enumerate(coordinates)]


def engine_value_and_grad(f: Callable, point: Sequence[float]) -> tuple[float, list[float]]:
    """f(*inputs) and its gradient, with each input a ``Value`` of our engine."""
    inputs = [Value(x, f"x{i}") for i, x in enumerate(_check_point(point))]
    out = f(*inputs)
    if not isinstance(out, Value):
        raise CourseInputError(f"f must return a Value built from its inputs, got {type(out).__name__}")
    out.backward()
    return out.data, [x.grad for x in inputs]


def torch_value_and_grad(f: Callable, point: Sequence[float]) -> tuple[float, list[float]]:
    """f(*inputs) and its gradient, with each input a 0-d float64 torch tensor."""
    import torch

    inputs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in _check_point(point)]
    out = f(*inputs)
    if not isinstance(out, torch.Tensor) or out.numel() != 1 or not out.requires_grad:
        raise CourseInputError("f must return a one-element tensor computed from its inputs")
    out.backward()
    return out.item(), [0.0 if x.grad is None else x.grad.item() for x in inputs]


def numerical_gradient(value: Callable[[list[float]], float], point, eps: float = 1e-6) -> list[float]:
    """Central differences of ``value`` (a function of a list of floats) at ``point``."""
    point, eps = _check_point(point), check_positive("eps", eps)
    gradient = []
    for i in range(len(point)):
        up, down = list(point), list(point)
        up[i] += eps
        down[i] -= eps
        gradient.append((value(up) - value(down)) / (2 * eps))
    return gradient


def compare(numerical: Sequence[float], backprop: Sequence[float]) -> GradCheck:
    """The largest absolute and relative differences between two gradients."""
    if len(numerical) != len(backprop):
        raise CourseInputError(f"gradients of different lengths: {len(numerical)} and {len(backprop)}")
    abs_errors = [abs(n - b) for n, b in zip(numerical, backprop)]
    rel_errors = [e / max(abs(n), abs(b)) if e else 0.0 for e, n, b in zip(abs_errors, numerical, backprop)]
    return GradCheck(list(numerical), list(backprop), max(abs_errors), max(rel_errors))


def gradcheck(f: Callable, point, *, backend: str = "engine", eps: float = 1e-6) -> GradCheck:
    """Compare backprop's gradient of ``f(*inputs)`` at ``point`` with central differences.

    ``backend="engine"`` calls f with ``Value`` inputs, ``"torch"`` with 0-d float64 tensors.
    """
    check_choice("backend", backend, BACKENDS)
    value_and_grad = engine_value_and_grad if backend == "engine" else torch_value_and_grad
    _, backprop = value_and_grad(f, point)
    numerical = numerical_gradient(lambda p: value_and_grad(f, p)[0], point, eps)
    return compare(numerical, backprop)


def random_two_layer_network(rng) -> tuple[list[float], tuple, float]:
    """A random test case for notebook 02's two-layer network, from ``rng`` (a ``random.Random``): an input of 1 to 4
    features, weights ``(W1, b1, W2, b2)`` with 1 to 5 hidden units, all N(0, 1), and a label 0.0 or 1.0."""
    n_in, n_hidden = rng.randint(1, 4), rng.randint(1, 5)
    W1 = [[rng.gauss(0, 1) for _ in range(n_in)] for _ in range(n_hidden)]
    b1 = [rng.gauss(0, 1) for _ in range(n_hidden)]
    W2 = [rng.gauss(0, 1) for _ in range(n_hidden)]
    return [rng.gauss(0, 1) for _ in range(n_in)], (W1, b1, W2, rng.gauss(0, 1)), float(rng.randint(0, 1))
