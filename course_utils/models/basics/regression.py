"""Linear regression ŷ = Xβ: the analytic solution, gradient descent (plain, momentum, Adam) from
scratch in NumPy, and the lecture's PyTorch demo pair (native autograd, and torch.nn).

Everything runs in float64 on the CPU: the problem is tiny, and the numbers are then the same
on every machine. The loss is the mean squared error, as ``torch.nn.MSELoss`` computes it:
``L(β) = mean((y - Xβ)²)``, with gradient ``-2/N Xᵀ(y - Xβ)`` and Hessian ``2XᵀX/N``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from course_utils.reference import course_reference
from course_utils.validation import CourseInputError, check_choice, check_int, check_positive, check_same_length

METHODS = ("gd", "momentum", "adam")


@dataclass(frozen=True)
class RegressionData:
    """A synthetic regression problem; ``X``'s first column is all ones (the intercept)."""

    X: np.ndarray  # (N, D)
    y: np.ndarray  # (N,)
    beta_true: np.ndarray  # (D,)


@dataclass(frozen=True)
class DescentPath:
    """The iterates β_0 … β_T of one descent run and the loss at each of them."""

    betas: np.ndarray  # (T+1, D)
    losses: np.ndarray  # (T+1,)
    method: str
    lr: float
    blew_up: bool  # True when the run hit inf/NaN; the path stops at the last finite step

    @classmethod
    def from_run(cls, betas, losses, *, method: str, lr: float) -> "DescentPath":
        """Keep the run up to its first non-finite β or loss."""
        betas, losses = np.asarray(betas, dtype=float), np.asarray(losses, dtype=float)
        finite = np.isfinite(losses) & np.isfinite(betas).all(axis=1)  # (T+1,)
        keep = len(losses) if finite.all() else int(np.argmin(finite))
        return cls(betas[:keep], losses[:keep], method, lr, blew_up=keep < len(losses))

    @property
    def beta(self) -> np.ndarray:
        """The last finite β of the run."""
        return self.betas[-1]

    @property
    def steps(self) -> int:
        """Number of updates in the (finite part of the) path."""
        return len(self.losses) - 1

    @property
    def diverged(self) -> bool:
        """True when the run overflowed or ended with a larger loss than it started with."""
        return self.blew_up or bool(self.losses[-1] > self.losses[0])

    def steps_to(self, target, tol: float) -> int | None:
        """First step after which every β stays within ``tol`` of ``target`` (max-abs); None if never."""
        tol = check_positive("tol", tol)
        errors = np.abs(self.betas - np.asarray(target, dtype=float)).max(axis=1)  # (T+1,)
        above = np.flatnonzero(errors > tol)
        if self.blew_up or (above.size and above[-1] == len(errors) - 1):
            return None
        return int(above[-1]) + 1 if above.size else 0


# ----------------------------------------------------------------------------- inputs


def _as_array(name: str, value, ndim: int) -> np.ndarray:
    """``value`` as a finite float64 array with ``ndim`` dimensions."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise CourseInputError(f"{name} must be an array of numbers, got {type(value).__name__}") from None
    if array.ndim != ndim or array.size == 0:
        raise CourseInputError(f"{name} must be a non-empty {ndim}-D array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise CourseInputError(f"{name} contains inf or NaN")
    return array


def check_problem(X, y) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as an (N, D) and ``y`` as an (N,) float64 array, or a clear error."""
    X = _as_array("X", X, ndim=2)
    y = _as_array("y", y, ndim=1)
    check_same_length("X", X.shape[0], "y", y.shape[0])
    return X, y


def _check_beta(name: str, beta, n_params: int) -> np.ndarray:
    beta = _as_array(name, beta, ndim=1)
    if beta.shape[0] != n_params:
        raise CourseInputError(f"{name} has {beta.shape[0]} entries but X has {n_params} columns; they must match")
    return beta


def _check_full_rank(X: np.ndarray) -> None:
    """Raise when XᵀX is singular, i.e. β is not unique."""
    rank = np.linalg.matrix_rank(X)
    if rank < X.shape[1]:
        raise CourseInputError(
            f"XᵀX is singular: X has {X.shape[1]} columns but rank {rank} (fewer rows than columns, or a column "
            "that is a combination of others), so the best β is not unique"
        )


def _check_intercept(X: np.ndarray) -> None:
    if not np.all(X[:, 0] == 1.0):
        raise CourseInputError("X's first column must be all ones: it is the intercept, nn.Linear's bias")


# ----------------------------------------------------------------------------- data and loss


def make_regression_data(
    n_samples: int = 100,
    beta=(2.0, -1.0),
    *,
    feature_mean: float = 0.0,
    feature_std: float = 1.0,
    noise: float = 0.5,
    seed: int = 0,
) -> RegressionData:
    """Draw ``y = Xβ + noise`` with ``X = [1, x_1 … x_{D-1}]`` and every ``x_j ~ N(feature_mean, feature_std²)``."""
    n_samples = check_int("n_samples", n_samples, minimum=1)
    beta_true = _as_array("beta", beta, ndim=1)
    feature_mean = float(_as_array("feature_mean", [feature_mean], ndim=1)[0])
    feature_std = check_positive("feature_std", feature_std)
    noise = check_positive("noise", noise, allow_zero=True)
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    features = rng.normal(feature_mean, feature_std, size=(n_samples, beta_true.size - 1))  # (N, D-1)
    X = np.column_stack([np.ones(n_samples), features])  # (N, D)
    y = X @ beta_true + noise * rng.normal(size=n_samples)  # (N,)
    return RegressionData(X, y, beta_true)


def random_start(n_params: int, *, seed: int = 0, scale: float = 3.0) -> np.ndarray:
    """A random β_0 ~ N(0, scale²), the numerical method's starting point."""
    n_params = check_int("n_params", n_params, minimum=1)
    scale = check_positive("scale", scale)
    return scale * np.random.default_rng(check_int("seed", seed, minimum=0)).normal(size=n_params)  # (D,)


def predict(X, beta) -> np.ndarray:
    """ŷ = Xβ."""
    X = _as_array("X", X, ndim=2)
    return X @ _check_beta("beta", beta, X.shape[1])  # (N,)


def _loss_and_gradient(X: np.ndarray, y: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray]:
    """L(β) = mean((y − Xβ)²) and ∇L(β) = −2/N · Xᵀ(y − Xβ), sharing the residual."""
    residual = y - X @ beta  # (N,)
    return float(residual @ residual) / len(y), -2.0 / len(y) * (X.T @ residual)  # (), (D,)


def mse_loss(X, y, beta) -> float:
    """L(β) = mean over i of (y_i - X_i β)²."""
    X, y = check_problem(X, y)
    return _loss_and_gradient(X, y, _check_beta("beta", beta, X.shape[1]))[0]


@course_reference
def mse_gradient(X, y, beta) -> np.ndarray:
    """∇L(β) = -2/N · Xᵀ(y - Xβ)."""
    X, y = check_problem(X, y)
    return _loss_and_gradient(X, y, _check_beta("beta", beta, X.shape[1]))[1]


def hessian(X) -> np.ndarray:
    """∇²L = 2XᵀX/N: the same everywhere, because the loss is quadratic in β."""
    X = _as_array("X", X, ndim=2)
    return 2.0 * X.T @ X / X.shape[0]  # (D, D)


def max_stable_lr(X) -> float:
    """Plain GD on this loss converges from every start iff lr < 2/λ_max(∇²L) = 1/λ_max(XᵀX/N)."""
    return 2.0 / float(np.linalg.eigvalsh(hessian(X)).max())


def loss_grid(X, y, b0, b1) -> np.ndarray:
    """The loss on a grid of two-parameter β = (b0[j], b1[i]), for contour plots; shape (len(b1), len(b0))."""
    X, y = check_problem(X, y)
    if X.shape[1] != 2:
        raise CourseInputError(f"a loss grid needs exactly 2 parameters, X has {X.shape[1]} columns")
    B0, B1 = np.meshgrid(_as_array("b0", b0, ndim=1), _as_array("b1", b1, ndim=1))  # (M1, M0) each
    gram, cross = X.T @ X / len(y), X.T @ y / len(y)  # (2, 2), (2,)
    quadratic = gram[0, 0] * B0**2 + 2 * gram[0, 1] * B0 * B1 + gram[1, 1] * B1**2
    return quadratic - 2 * (cross[0] * B0 + cross[1] * B1) + (y @ y) / len(y)  # (M1, M0)


# ----------------------------------------------------------------------------- the analytic way


def analytic_solution(X, y) -> np.ndarray:
    """β = (XᵀX)⁻¹Xᵀy, computed by solving the normal equations XᵀXβ = Xᵀy (no explicit
    inverse)."""
    X, y = check_problem(X, y)
    _check_full_rank(X)
    return np.linalg.solve(X.T @ X, X.T @ y)  # (D,)


# ----------------------------------------------------------------------------- the numerical way, from scratch


class PlainGD:
    """β ← β − lr·g."""

    def __init__(self, lr: float):
        self.lr = lr

    def step(self, grad: np.ndarray) -> np.ndarray:
        return self.lr * grad


class Momentum:
    """Heavy ball, as torch.optim.SGD(momentum=μ): v ← μv + g, β ← β − lr·v."""

    def __init__(self, lr: float, momentum: float = 0.9):
        self.lr, self.momentum, self.velocity = lr, momentum, 0.0

    def step(self, grad: np.ndarray) -> np.ndarray:
        self.velocity = self.momentum * self.velocity + grad
        return self.lr * self.velocity


class Adam:
    """Adam (Kingma & Ba, 2015), as torch.optim.Adam: bias-corrected running means of g
    and g²."""

    def __init__(self, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.mean, self.square, self.t = 0.0, 0.0, 0

    def step(self, grad: np.ndarray) -> np.ndarray:
        self.t += 1
        self.mean = self.beta1 * self.mean + (1 - self.beta1) * grad
        self.square = self.beta2 * self.square + (1 - self.beta2) * grad**2
        mean_hat = self.mean / (1 - self.beta1**self.t)
        square_hat = self.square / (1 - self.beta2**self.t)
        return self.lr * mean_hat / (np.sqrt(square_hat) + self.eps)


def _check_fraction(name: str, value) -> float:
    value = check_positive(name, value, allow_zero=True)
    if value >= 1:
        raise CourseInputError(f"{name} must be in [0, 1), got {value}")
    return value


def make_optimizer(method: str, lr: float, *, momentum: float = 0.9, betas=(0.9, 0.999)):
    """A from-scratch update rule: ``"gd"``, ``"momentum"`` or ``"adam"``."""
    method = check_choice("method", method, METHODS)
    lr = check_positive("lr", lr)
    if method == "momentum":
        return Momentum(lr, _check_fraction("momentum", momentum))
    if method == "adam":
        return Adam(lr, (_check_fraction("betas[0]", betas[0]), _check_fraction("betas[1]", betas[1])))
    return PlainGD(lr)


def gradient_descent(
    X,
    y,
    beta0,
    *,
    lr: float,
    steps: int,
    method: str = "gd",
    momentum: float = 0.9,
) -> DescentPath:
    """Start at ``beta0`` and take ``steps`` updates of ``method``; return the path and
    the losses."""
    X, y = check_problem(X, y)
    beta = _check_beta("beta0", beta0, X.shape[1])
    steps = check_int("steps", steps, minimum=0)
    optimizer = make_optimizer(method, lr, momentum=momentum)
    betas, losses = [], []
    # a diverging run overflows: from_run cuts it there
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(steps + 1):
            loss, grad = _loss_and_gradient(X, y, beta)
            betas.append(beta)
            losses.append(loss)
            if step == steps or not math.isfinite(loss):
                break  # the last β is evaluated, not updated
            beta = beta - optimizer.step(grad)
    return DescentPath.from_run(betas, losses, method=method, lr=lr)


def fastest_learning_rate(X, y, beta0, *, method: str, lrs, steps: int, tol: float) -> tuple[float | None, int | None]:
    """Try every lr in ``lrs``; return the one that gets within ``tol`` of β* in the fewest steps, and that count."""
    target = analytic_solution(X, y)
    best_lr, best_steps = None, None
    for lr in lrs:
        reached = gradient_descent(X, y, beta0, lr=lr, steps=steps, method=method).steps_to(target, tol)
        if reached is not None and (best_steps is None or reached < best_steps):
            best_lr, best_steps = float(lr), reached
    return best_lr, best_steps


def mean_contraction(X, y, beta0, *, lr: float, steps: int, method: str = "gd") -> float:
    """The mean factor per step by which max |β − β*| shrank over ``steps`` steps from ``beta0``."""
    path = gradient_descent(X, y, beta0, lr=lr, steps=steps, method=method)
    errors = np.abs(path.betas - analytic_solution(X, y)).max(axis=1)  # (steps + 1,)
    return float((errors[-1] / errors[0]) ** (1 / path.steps))


def learning_rate_grid(method: str, X, n: int) -> np.ndarray:
    """The learning rates a race tries: GD below its edge; momentum and Adam over a wide log range."""
    method = check_choice("method", method, METHODS)
    if method == "gd":
        return max_stable_lr(X) * np.linspace(0.1, 0.99, n)
    if method == "momentum":
        return max_stable_lr(X) * np.geomspace(0.01, 2.0, n)
    return np.geomspace(1e-3, 3.0, n)


def rescaled_curvature(effective_lr, H) -> float:
    """S = λ_max(P H) with P = diag(effective_lr): the curvature Adam meets while v̂ stays put."""
    root = np.sqrt(effective_lr)  # P H has the eigenvalues of the symmetric P^½ H P^½
    return float(np.linalg.eigvalsh(root[:, None] * H * root[None, :]).max())


def edge_crossings(errors, curvature, crossings, tol: float) -> str:
    """One row per step where S rises past the edge: that step, the first step after it with an error above
    ``tol``, the largest error before the next crossing, and the lowest S after the jump."""
    rows = [f"{'S > 38 at step':>15} {'error > 1e-6 at step':>21} {'largest error':>14} {'S after the jump':>17}"]
    for start, end in zip(crossings, [*crossings[1:], len(curvature)]):
        leaves = start + np.argmax(errors[start:end] > tol)
        rows.append(f"{start:15d} {leaves:21d} {errors[start:end].max():14.1e} {curvature[leaves:end].min():17.1f}")
    return "\n".join(rows)


# ----------------------------------------------------------------------------- the lecture's PyTorch demo pair


def _check_torch_inputs(X, y, beta0, lr, steps):
    X, y = check_problem(X, y)
    return X, y, _check_beta("beta0", beta0, X.shape[1]), check_positive("lr", lr), check_int("steps", steps, minimum=0)


def fit_native_torch(X, y, beta0, *, lr: float, steps: int) -> DescentPath:
    """The lecture's native demo: a β tensor with ``requires_grad``, autograd, a manual
    update."""
    import torch

    X, y, beta0, lr, steps = _check_torch_inputs(X, y, beta0, lr, steps)
    X_t = torch.tensor(X, dtype=torch.float64)  # (N, D)
    y_t = torch.tensor(y, dtype=torch.float64).unsqueeze(1)  # (N, 1)
    # (D, 1)
    beta = torch.tensor(beta0, dtype=torch.float64).unsqueeze(1).requires_grad_()
    betas, losses = [], []
    for step in range(steps + 1):
        y_hat = X_t @ beta  # (N, 1)
        # a 0-d tensor that remembers how it was computed
        loss = ((y_t - y_hat) ** 2).mean()
        betas.append(beta.detach().flatten().numpy().copy())  # (D,)
        losses.append(loss.item())
        if step == steps:
            break  # the last β is evaluated, not updated
        loss.backward()  # fills beta.grad with dL/dβ
        with torch.no_grad():  # the update itself must not be recorded in the graph
            beta -= lr * beta.grad
        beta.grad.zero_()
    return DescentPath.from_run(betas, losses, method="gd", lr=lr)


def _torch_optimizer(method: str, parameters, lr: float):
    """torch.optim's version of each from-scratch rule (same defaults: μ = 0.9, Adam's betas and eps)."""
    import torch

    if method == "adam":
        return torch.optim.Adam(parameters, lr=lr)
    return torch.optim.SGD(parameters, lr=lr, momentum=0.9 if method == "momentum" else 0.0)


def fit_torch_nn(X, y, beta0, *, lr: float, steps: int, method="gd") -> DescentPath:
    """The lecture's torch.nn demo: ``nn.Linear`` (its bias is the intercept),
    ``nn.MSELoss``, ``torch.optim``."""
    import torch
    from torch import nn

    X, y, beta0, lr, steps = _check_torch_inputs(X, y, beta0, lr, steps)
    method = check_choice("method", method, METHODS)
    _check_intercept(X)
    # (N, D-1): the bias replaces the column of ones
    features = torch.tensor(X[:, 1:], dtype=torch.float64)
    targets = torch.tensor(y, dtype=torch.float64).unsqueeze(1)  # (N, 1)
    model = nn.Linear(X.shape[1] - 1, 1, dtype=torch.float64)
    with torch.no_grad():
        model.bias.copy_(torch.tensor(beta0[:1]))  # (1,)
        model.weight.copy_(torch.tensor(beta0[1:]).unsqueeze(0))  # (1, D-1)
    loss_fn = nn.MSELoss()
    optimizer = _torch_optimizer(method, model.parameters(), lr)
    betas, losses = [], []
    for step in range(steps + 1):
        loss = loss_fn(model(features), targets)  # model(features): (N, 1)
        beta = torch.cat([model.bias, model.weight.flatten()])  # (D,)
        betas.append(beta.detach().numpy().copy())
        losses.append(loss.item())
        if step == steps:
            break  # the last β is evaluated, not updated
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return DescentPath.from_run(betas, losses, method=method, lr=lr)
