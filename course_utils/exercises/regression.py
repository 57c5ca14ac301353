"""Self-checks for notebook 01's exercises: each prints ✓ or ✗ with a hint and returns a bool, never raises."""

from __future__ import annotations

import numpy as np

from course_utils.exercises.answers import Numbers, read_numbers
from course_utils.exercises import NOT_FINISHED, never_raises, verdict
from course_utils.models.basics.regression import (
    RegressionData,
    analytic_solution,
    make_regression_data,
    max_stable_lr,
    mse_gradient,
)


def _as_vector(answer, size: int) -> Numbers | str:
    """The answer as ``size`` numbers (a vector, with the precision it came in), or a message saying why not."""
    if answer is None:
        return f"{NOT_FINISHED}: your function or variable still gives None"
    parts = answer if isinstance(answer, list | tuple) else [answer]  # (model.bias, model.weight) reads as one β
    if not parts:
        return f"expected {size} numbers, got none"
    read = [read_numbers(part) for part in parts]
    why = next((why for _, why in read if why), None)
    if why:
        return why
    vector = np.concatenate([numbers.values.reshape(-1) for numbers, _ in read])
    if vector.size != size:
        return f"expected {size} numbers, got {vector.size}"
    return Numbers(vector, max(numbers.eps for numbers, _ in read))


def _first_match(answer: Numbers, hints, otherwise: str) -> bool:
    """Report the first ``(candidate, correct, message)`` that ``answer`` matches (up to its precision), else
    ``otherwise``."""
    for candidate, correct, message in hints:
        if np.allclose(answer.values, candidate, rtol=answer.rel_tolerance(), atol=1e-12):
            return verdict(correct, message)
    return verdict(False, otherwise)


def gradient_exercise_data() -> tuple[RegressionData, np.ndarray]:
    """The problem and the β at which exercise 1's gradient is checked."""
    return make_regression_data(n_samples=30, beta=(0.5, -1.0, 2.0), seed=7), np.array([0.3, 0.1, -0.2])


@never_raises
def check_gradient(gradient_fn) -> bool:
    """Exercise 1: ``gradient_fn(X, y, beta)`` must return ∇L(β) of the mean squared error."""
    data, beta = gradient_exercise_data()
    try:
        answer = gradient_fn(data.X, data.y, beta)
    except Exception as error:  # noqa: BLE001 - a self-check reports, it never raises
        return verdict(False, f"your function raised {type(error).__name__}: {error}")
    answer = _as_vector(answer, beta.size)
    if isinstance(answer, str):
        return verdict(False, answer)
    expected = mse_gradient(data.X, data.y, beta)
    hints = [
        (expected, True, "correct: that is −2/N · Xᵀ(y − Xβ)"),
        (-expected, False, "the sign is flipped: the gradient points uphill, −2/N · Xᵀ(y − Xβ)"),
        (expected / 2, False, "off by a factor 2: the derivative of (y − Xβ)² brings down a 2"),
        (expected * len(data.y), False, "N times too large: the loss is a mean, so divide by N"),
    ]
    otherwise = "not the gradient yet; compare with a finite difference (L(β + h·e_j) − L(β − h·e_j)) / 2h"
    return _first_match(answer, hints, otherwise)


def stable_lr_exercise_data() -> RegressionData:
    """Exercise 2's problem: an intercept and three features."""
    return make_regression_data(n_samples=50, beta=(1.0, 0.5, -0.5, 2.0), feature_mean=2.0, feature_std=1.5, seed=11)


@never_raises
def check_max_stable_lr(value) -> bool:
    """Exercise 2: the largest learning rate for which plain GD converges on exercise 2's problem."""
    answer = _as_vector(value, 1)
    if isinstance(answer, str):
        return verdict(False, answer)
    X = stable_lr_exercise_data().X
    expected = max_stable_lr(X)
    lam = float(np.linalg.eigvalsh(X.T @ X / len(X)).max())  # λ_max(XᵀX/N)
    hints = [
        (expected, True, "correct: 2/λ_max of the Hessian 2XᵀX/N"),
        (2 / lam, False, "that is 2/λ_max(XᵀX/N), right for the loss ½·mean(...)²; our MSE has Hessian 2XᵀX/N"),
        (1 / (2 * lam), False, "too small by 2: the limit is 2/λ_max of the Hessian, and the Hessian is 2XᵀX/N"),
    ]
    otherwise = "not the limit yet: find λ_max of the Hessian with np.linalg.eigvalsh and take 2/λ_max"
    return _first_match(answer, hints, otherwise)


def fit_exercise_data() -> RegressionData:
    """Exercise 3's problem: three features plus an intercept."""
    return make_regression_data(n_samples=200, beta=(1.0, 2.0, -3.0, 0.5), seed=3)


@never_raises
def check_fit(beta, tol: float = 1e-4) -> bool:
    """Exercise 3: β (intercept first) fitted to exercise 3's problem with torch.nn must match the analytic β."""
    data = fit_exercise_data()
    answer = _as_vector(beta, data.X.shape[1])
    if isinstance(answer, str):
        return verdict(False, answer)
    expected = analytic_solution(data.X, data.y)
    answer = answer.values
    error = float(np.abs(answer - expected).max())
    if error <= tol:
        return verdict(True, f"correct: your β is within {error:.1e} of the analytic solution")
    if np.abs(np.roll(answer, 1) - expected).max() <= tol:
        return verdict(False, "the right numbers in the wrong order: put the intercept (nn.Linear's bias) first")
    if error <= 100 * tol:
        return verdict(False, f"close ({error:.1e} away): train for more steps or use a larger learning rate")
    return verdict(False, f"{error:.2g} away from the analytic β: check the loss, the learning rate and the steps")
