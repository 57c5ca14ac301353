"""Scaling laws fitted from scratch: Chinchilla's three approaches, Kaplan's form, and bootstrap intervals.

Hoffmann et al. (2022) model the loss of a model of N parameters trained on D tokens as

    L(N, D) = E + A / N^α + B / D^β                      (E: the irreducible loss, the entropy of the text)

and estimate the compute-optimal N and D for a budget of C ≈ 6·N·D floating-point operations three ways:

1. ``envelope``: the lowest loss any training curve reaches at each C, and the N that reaches it;
2. ``isoflop``: for each of a few budgets, a parabola through loss against log N, and its minimum;
3. ``parametric``: the five numbers above, fitted to every run with a Huber loss on log L, from many starts.

Approaches 1 and 2 give E through the lowest loss per budget, L*(C) = E + k·C^(−γ) (``fit_floor_law``). Kaplan et
al. (2020) write L(N, D) = ((N_c / N)^(α_N / α_D) + D_c / D)^α_D, with no floor: its E is 0 (``fit_kaplan``).

Everything here takes plain arrays (N: non-embedding parameters, D: tokens, loss: nats per token); the runs and the
course language's true entropy rate come from ``course_utils.analysis.scaling_runs``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch

from course_utils.validation import CourseInputError
from course_utils.reference import course_reference

HUBER_DELTA = 1e-3  # Chinchilla's δ, on log L


def flops(n, d) -> np.ndarray:
    """The training compute of N parameters on D tokens, C ≈ 6·N·D."""
    return 6.0 * np.asarray(n, dtype=float) * np.asarray(d, dtype=float)


def _arrays(*columns) -> list[np.ndarray]:
    arrays = [np.asarray(column, dtype=float).ravel() for column in columns]
    if len({len(a) for a in arrays}) != 1:
        raise CourseInputError(f"the columns differ in length: {[len(a) for a in arrays]}")
    if not all(np.all(np.isfinite(a)) and np.all(a > 0) for a in arrays):
        raise CourseInputError("every N, D and loss must be a positive, finite number")
    return arrays


def fit_power_law(x, y) -> tuple[float, float]:
    """y ≈ k·x^a by least squares in log–log space; return (k, a)."""
    x, y = _arrays(x, y)
    if len(x) < 2:
        raise CourseInputError("a power law needs at least two points")
    a, log_k = np.polyfit(np.log(x), np.log(y), 1)
    return float(math.exp(log_k)), float(a)


def _huber(residual: torch.Tensor, delta: float = HUBER_DELTA) -> torch.Tensor:
    return torch.nn.functional.huber_loss(residual, torch.zeros_like(residual), delta=delta, reduction="sum")


def _minimise(objective, start: list[float], steps: int = 200) -> tuple[float, np.ndarray]:
    """L-BFGS from ``start`` (float64); return (the objective's value, the parameters)."""
    theta = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    optimiser = torch.optim.LBFGS([theta], lr=1.0, max_iter=steps, tolerance_grad=1e-12, tolerance_change=1e-15,
                                  line_search_fn="strong_wolfe")  # fmt: skip

    def closure():
        optimiser.zero_grad()
        value = objective(theta)
        value.backward()
        return value

    optimiser.step(closure)
    with torch.no_grad():
        value = float(objective(theta))
    return (value if math.isfinite(value) else math.inf), theta.detach().numpy().copy()


# ---------------------------------------------------------------- approach 3: the parametric fit


@dataclass(frozen=True)
class ChinchillaLaw:
    """L(N, D) = E + A / N^α + B / D^β."""

    E: float
    A: float
    alpha: float
    B: float
    beta: float

    def loss(self, n, d) -> np.ndarray:
        n, d = np.asarray(n, dtype=float), np.asarray(d, dtype=float)
        return self.E + self.A / n**self.alpha + self.B / d**self.beta

    @course_reference
    def optimal_n(self, c) -> np.ndarray:
        """The N that minimises L under C = 6·N·D: G·(C/6)^(β/(α+β)), G = (αA / βB)^(1/(α+β))."""
        g = (self.alpha * self.A / (self.beta * self.B)) ** (1 / (self.alpha + self.beta))
        return g * (np.asarray(c, dtype=float) / 6) ** (self.beta / (self.alpha + self.beta))


# a grid of starts as in Hoffmann et al. (their α, β in 0..2, e in −1..1.5, a, b in 0..25; here a coarser one)
PARAMETRIC_STARTS = list(itertools.product((0.0, 5.0, 10.0), (0.0, 5.0, 10.0), (-1.0, -0.25, 0.5, 1.0),
                                           (0.2, 0.5, 1.0), (0.2, 0.5, 1.0)))  # fmt: skip


@course_reference
def _parametric_objective(n, d, loss, delta: float, fixed_e: float | None = None):
    """θ -> Σ Huber_δ(LSE(a − α log N, b − β log D, e) − log L); θ = (a, b, e, α, β), or (a, b, α, β) with e fixed."""
    n, d, loss = (torch.tensor(a, dtype=torch.float64) for a in _arrays(n, d, loss))
    log_n, log_d, log_l = n.log(), d.log(), loss.log()

    def objective(theta):
        if fixed_e is None:
            a, b, e, alpha, beta = theta
        else:
            (a, b, alpha, beta), e = theta, torch.tensor(fixed_e, dtype=torch.float64)
        terms = torch.stack([a - alpha * log_n, b - beta * log_d, e.expand_as(log_n)])  # (3, runs)
        return _huber(torch.logsumexp(terms, dim=0) - log_l, delta)

    return objective


def fit_parametric(n, d, loss, starts=None, *, delta: float = HUBER_DELTA) -> ChinchillaLaw:
    """Approach 3: minimise Σ Huber_δ(LSE(a − α log N, b − β log D, e) − log L) over (a, b, e, α, β), the best of
    many L-BFGS starts (A = eᵃ, B = eᵇ, E = eᵉ)."""
    objective = _parametric_objective(n, d, loss, delta)
    best = min((_minimise(objective, list(start)) for start in (starts or PARAMETRIC_STARTS)), key=lambda fit: fit[0])
    a, b, e, alpha, beta = best[1]
    return ChinchillaLaw(E=math.exp(e), A=math.exp(a), alpha=float(alpha), B=math.exp(b), beta=float(beta))


@course_reference
def parametric_objective(law: ChinchillaLaw, n, d, loss, *, delta: float = HUBER_DELTA) -> float:
    """Approach 3's objective for ``law`` on the runs, Σ Huber_δ(log L(N, D) − log L): what its fits minimise
    (LSE(a − α log N, b − β log D, e) is log L(N, D)), so fits compare by it."""
    n, d, loss = _arrays(n, d, loss)
    residual = torch.tensor(np.log(law.loss(n, d)) - np.log(loss), dtype=torch.float64)  # (runs,)
    return float(_huber(residual, delta))


def fit_parametric_at_floor(n, d, loss, floor: float, starts=None, *,
                            delta: float = HUBER_DELTA) -> tuple[ChinchillaLaw, float]:  # fmt: skip
    """Approach 3 with the floor held at E = ``floor``: the other four parameters fitted (the best of the starts'
    (a, b, α, β), each once); returns (the law, its objective)."""
    if not floor > 0:
        raise CourseInputError(f"a floor must be positive, got {floor}")
    starts = [(a, b, alpha, beta) for a, b, _, alpha, beta in (starts or PARAMETRIC_STARTS)]
    starts = list(dict.fromkeys(starts))  # the starts differ in e alone: keep each (a, b, α, β) once
    objective = _parametric_objective(n, d, loss, delta, fixed_e=math.log(floor))
    value, (a, b, alpha, beta) = min((_minimise(objective, list(start)) for start in starts), key=lambda fit: fit[0])
    return ChinchillaLaw(E=float(floor), A=math.exp(a), alpha=float(alpha), B=math.exp(b), beta=float(beta)), value


def profile_over_floor(n, d, loss, floors, starts=None, *, delta: float = HUBER_DELTA) -> np.ndarray:
    """Approach 3's objective at each fixed floor E of ``floors``, the other four parameters refitted (the best of the
    starts' (a, b, α, β)): how sharply the runs pin E. A flat stretch is a range of E the runs cannot tell apart."""
    return np.array([fit_parametric_at_floor(n, d, loss, floor, starts, delta=delta)[1]
                     for floor in np.asarray(floors, dtype=float)])  # fmt: skip


# ---------------------------------------------------------------- Kaplan's form


@dataclass(frozen=True)
class KaplanLaw:
    """L(N, D) = ((N_c / N)^(α_N / α_D) + D_c / D)^α_D: no floor (L → 0 as N, D → ∞)."""

    n_c: float
    alpha_n: float
    d_c: float
    alpha_d: float
    E: float = 0.0

    def loss(self, n, d) -> np.ndarray:
        n, d = np.asarray(n, dtype=float), np.asarray(d, dtype=float)
        return ((self.n_c / n) ** (self.alpha_n / self.alpha_d) + self.d_c / d) ** self.alpha_d


KAPLAN_STARTS = list(itertools.product((5.0, 15.0, 25.0), (0.05, 0.1, 0.3), (5.0, 15.0, 25.0), (0.05, 0.1, 0.3)))


def fit_kaplan(n, d, loss, starts=None, *, delta: float = HUBER_DELTA) -> KaplanLaw:
    """Kaplan's form fitted like approach 3 (Huber on log L, many starts), parametrised by log N_c, α_N, log D_c,
    α_D."""
    n, d, loss = (torch.tensor(a, dtype=torch.float64) for a in _arrays(n, d, loss))
    log_n, log_d, log_l = n.log(), d.log(), loss.log()

    def objective(theta):
        log_nc, alpha_n, log_dc, alpha_d = theta
        inner = torch.logaddexp(alpha_n / alpha_d * (log_nc - log_n), log_dc - log_d)  # log of the bracket
        return _huber(alpha_d * inner - log_l, delta)

    best = min((_minimise(objective, list(start)) for start in (starts or KAPLAN_STARTS)), key=lambda fit: fit[0])
    log_nc, alpha_n, log_dc, alpha_d = best[1]
    return KaplanLaw(n_c=math.exp(log_nc), alpha_n=float(alpha_n), d_c=math.exp(log_dc), alpha_d=float(alpha_d))


# ---------------------------------------------------------------- the floor from the best loss per budget


@dataclass(frozen=True)
class FloorLaw:
    """L*(C) = E + k·C^(−γ): the lowest loss reachable with C, falling to E."""

    E: float
    k: float
    gamma: float

    def loss(self, c) -> np.ndarray:
        return self.E + self.k * np.asarray(c, dtype=float) ** -self.gamma


FLOOR_STARTS = list(itertools.product((0.0, 0.5, 0.9), (0.05, 0.2, 0.5)))  # (E as a share of the lowest loss, γ)


def fit_floor_law(c, loss, *, delta: float = HUBER_DELTA) -> FloorLaw:
    """E, k, γ by a Huber fit on log L*, with 0 < E < min L* (E = min L* · sigmoid(s))."""
    c, loss = _arrays(c, loss)
    if len(c) < 3:
        raise CourseInputError(f"the floor law has three parameters; it needs at least three budgets, got {len(c)}")
    lowest = float(loss.min())
    log_c, log_l = torch.tensor(np.log(c)), torch.tensor(np.log(loss))

    def objective(theta):
        s, log_k, gamma = theta
        e = lowest * torch.sigmoid(s)
        return _huber(torch.log(e + torch.exp(log_k - gamma * log_c)) - log_l, delta)

    fits = []
    for share, gamma in FLOOR_STARTS:
        s = math.log(max(share, 1e-3) / max(1 - share, 1e-3))
        excess = max(lowest * (1 - share), 1e-9)
        log_k = math.log(excess) + gamma * float(log_c.min())
        fits.append(_minimise(objective, [s, log_k, gamma]))
    s, log_k, gamma = min(fits, key=lambda fit: fit[0])[1]
    return FloorLaw(E=lowest / (1 + math.exp(-s)), k=math.exp(log_k), gamma=float(gamma))


# ---------------------------------------------------------------- approach 2: IsoFLOP parabolas


@dataclass(frozen=True)
class IsoFlopProfile:
    """One budget's runs and the parabola L ≈ p₀ + p₁·x + p₂·x² in x = log N, with its minimum."""

    flops: float
    n: np.ndarray
    loss: np.ndarray
    coefficients: tuple[float, float, float]
    n_opt: float
    loss_opt: float


@course_reference
def isoflop_profile(budget: float, n, loss) -> IsoFlopProfile:
    """Approach 2 for one budget: a parabola through loss against log N (at least three model sizes), and its minimum."""
    n, loss = _arrays(n, loss)
    if len(np.unique(n)) < 3:
        raise CourseInputError(f"an IsoFLOP parabola needs at least three model sizes, got {len(np.unique(n))}")
    p2, p1, p0 = np.polyfit(np.log(n), loss, 2)
    if p2 <= 0:
        raise CourseInputError(f"the runs at {budget:.3g} FLOPs do not bend upwards: no minimum")
    x_opt = -p1 / (2 * p2)
    return IsoFlopProfile(float(budget), n, loss, (float(p0), float(p1), float(p2)), float(math.exp(x_opt)),
                          float(p0 + p1 * x_opt + p2 * x_opt**2))  # fmt: skip


# ---------------------------------------------------------------- approach 1: the envelope of the training curves


def envelope(curves, budgets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Approach 1: at each budget C, the lowest loss any run's training curve reaches (interpolated linearly in
    log tokens), and that run's N. ``curves``: [(N, tokens (T,), loss (T,))]. Returns (C, N*, L*) for the budgets
    some curve reaches."""
    kept_c, kept_n, kept_l = [], [], []
    for c in np.asarray(budgets, dtype=float):
        best = None
        for n, tokens, loss in curves:
            tokens, loss = np.asarray(tokens, dtype=float), np.asarray(loss, dtype=float)
            d = c / (6 * n)
            if tokens[0] <= d <= tokens[-1]:
                value = float(np.interp(math.log(d), np.log(tokens), loss))
                if best is None or value < best[1]:
                    best = (n, value)
        if best is not None:
            kept_c.append(c)
            kept_n.append(best[0])
            kept_l.append(best[1])
    return np.array(kept_c), np.array(kept_n), np.array(kept_l)


# ---------------------------------------------------------------- intervals


def bootstrap(fit, rows: int, *, resamples: int = 200, seed: int = 0):
    """``fit(indices)`` on ``resamples`` resamples of the rows 0..rows−1 with replacement; the fits that succeed."""
    generator = np.random.default_rng(seed)
    results = []
    for _ in range(resamples):
        try:
            results.append(fit(generator.integers(0, rows, rows)))
        except CourseInputError:
            continue  # a resample with too few distinct points for this fit
    return results


def interval(values, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval of ``values``."""
    values = np.asarray(values, dtype=float)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def finite_interval(values, level: float = 0.95) -> tuple[float, float, int]:
    """(low, high, how many) of the finite ``values``: the interval of the resamples that gave a value."""
    values = np.asarray(values, dtype=float)
    kept = values[np.isfinite(values)]
    if len(kept) == 0:
        raise CourseInputError("no resample could be fitted: no interval")
    return (*interval(kept, level), len(kept))
