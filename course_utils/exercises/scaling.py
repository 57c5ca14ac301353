"""Self-checks for notebook 11's exercises (scaling laws: an IsoFLOP profile's minimum, the compute-optimal split of
a budget, approach 3's Huber objective).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong, unfinished (``None``)
or crashing answer. The exercises: the vertex of a parabola fitted to the losses against log N (approach 2), on an
exact parabola and on every FLOP budget of the stored runs; the split of a budget C = 6·N·D that minimises
L = E + A/N^α + B/D^β; and approach 3's objective, the Huber loss of the residuals LSE(a − α log N, b − β log D, e)
− log L, summed over the runs.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws, scaling_runs
from course_utils.analysis.scaling_fits import ChinchillaLaw, _parametric_objective
from course_utils.exercises import answer_of, never_raises, verdict
from course_utils.exercises.answers import ULPS, Number, one_number, read_numbers, shown

Tensor = torch.Tensor

N_OPT_TOLERANCE = 1e-3  # relative: a vertex read from a float32 fit lands within ~1e-4 of np.polyfit's
L_OPT_TOLERANCE = 1e-5  # relative: the parabola is flat at its vertex, so its value is far less sensitive
ALLOCATION_TOLERANCE = 1e-4  # relative, on N_opt and D_opt: a numerical minimiser of L on 6·N·D = C gets this close
NEAR = 0.02  # a split within 2 % of the optimum: a grid search or a minimiser, not a mistake in the algebra


def _pair(answer, what: str) -> tuple[tuple[float, float] | None, str | None]:
    """``answer`` as two floats (a tuple, a list, an array or a tensor of two numbers), or ``(None, why)``."""
    read, why = read_numbers(answer)
    if why:
        return None, why.replace("return numbers", f"return {what}", 1)
    if read.values.size != 2:
        return None, f"return two numbers, {what}; got {read.values.size} of shape {read.values.shape}"
    first, second = read.values.reshape(-1)
    return (float(first), float(second)), None


def _near(value: float, expected: float | None, rel_tol: float) -> bool:
    """``value`` equals ``expected`` up to ``rel_tol``; a None ``expected`` matches anything."""
    return expected is None or math.isclose(value, expected, rel_tol=rel_tol, abs_tol=1e-12)


def _first_hint(
    answer: tuple[float, float], expected: tuple[float, float], variants: dict, rel_tol: float
) -> str | None:
    """The hint of the first variant ``(first, second)`` the answer matches (None in a variant matches anything);
    a variant that the right answer matches too (say α = β, where swapping them changes nothing) is passed over."""

    def matches(values, variant) -> bool:
        return all(_near(value, part, rel_tol) for value, part in zip(values, variant))

    return next((hint for hint, variant in variants.items() if matches(answer, variant)
                 and not matches(expected, variant)), None)  # fmt: skip


# ---------------------------------------------------------------- exercise: the minimum of an IsoFLOP profile


def _isoflop_cases() -> list[tuple[float, np.ndarray, np.ndarray, str]]:
    """(budget C, N (k,), loss (k,), what the case is): an exact parabola, then each FLOP budget of the stored runs."""
    n = np.geomspace(1e3, 1e5, 5)  # (5,) sizes √10 apart; the vertex lies between two of them
    cases = [
        (0.0, n, 2.0 + 0.05 * np.log(n / 2e4) ** 2, "five sizes on the exact parabola 2 + 0.05·(log N − log 2·10⁴)²")
    ]
    for profile in scaling_laws.isoflop_profiles(scaling_runs.load_results()):
        cases.append((profile.flops, profile.n, profile.loss,
                      f"the {len(profile.n)} stored runs of {profile.flops:.3g} FLOPs"))  # fmt: skip
    return cases


def _exp(x: float) -> float:
    """exp(x), capped at exp(700) instead of overflowing (a wrong vertex may lie far out)."""
    return math.exp(min(x, 700.0))


def _isoflop_variants(n: np.ndarray, loss: np.ndarray) -> dict[str, tuple[float | None, float | None]]:
    """(N_opt, L_opt) as the usual mistakes compute them, each named by its hint (None: that part is not judged)."""
    x = np.log(n)
    p2, p1, p0 = np.polyfit(x, loss, 2)
    x_opt = -p1 / (2 * p2)
    l_opt = p0 + p1 * x_opt + p2 * x_opt**2
    q2, q1, q0 = np.polyfit(n, loss, 2)  # against N itself
    n_vertex = -q1 / (2 * q2)
    r2, r1, _ = np.polyfit(x, np.log(loss), 2)  # log L against log N
    x_half = -p1 / p2
    x_swap = -p1 / (2 * p0)  # p0, p1, p2 = np.polyfit(...): the coefficients read backwards
    best = int(np.argmin(loss))
    return {
        "fit the parabola against x = log N (np.log(n)), not against N: the sizes grow by factors, and the "
        "profile is a parabola in log N":
            (n_vertex, q0 + q1 * n_vertex + q2 * n_vertex**2),
        "the parabola's minimum is at x_opt = log N_opt: return N_opt = exp(x_opt), not x_opt": (x_opt, l_opt),
        "you fitted against log10 N: go back with N_opt = 10 ** x_opt (or use np.log and np.exp throughout)":
            (_exp(x_opt / math.log(10)), l_opt),
        "np.polyfit returns the highest power first: p2, p1, p0 = np.polyfit(x, loss, 2)":
            (_exp(x_swap), p2 + p1 * x_swap + p0 * x_swap**2),
        "the vertex of p2·x² + p1·x + p0 is at x = −p1 / (2·p2), not −p1 / p2":
            (_exp(x_half), p0 + p1 * x_half + p2 * x_half**2),
        "evaluate the parabola at x_opt = log N_opt, not at N_opt itself":
            (math.exp(x_opt), p0 + p1 * math.exp(x_opt) + p2 * math.exp(x_opt) ** 2),
        "L_opt is the parabola's value at its minimum, p0 + p1·x_opt + p2·x_opt², not the lowest loss measured":
            (math.exp(x_opt), float(loss[best])),
        "the minimum of the parabola lies between the runs: N_opt is exp(x_opt), not the size of the best run":
            (float(n[best]), None),
        "fit the loss itself against log N, not log L: approach 2's parabola is L against log N":
            (_exp(-r1 / (2 * r2)), None),
        "return (N_opt, L_opt) in this order": (l_opt, math.exp(x_opt)),
    }  # fmt: skip


def _isoflop_exponent(budgets: list[float], n_opts: list[float]) -> float:
    """a in N_opt ∝ C^a, by least squares in log–log space."""
    return fits.fit_power_law(budgets, n_opts)[1]


@never_raises
def check_isoflop_minimum(fn) -> bool:
    """Exercise: ``fn(n, loss) -> (N_opt, L_opt)``: the minimum of one FLOP budget's IsoFLOP profile (approach 2).

    n (k,) and loss (k,) are NumPy arrays (float64): the sizes trained with one budget and their test losses, in
    any order. Fit a parabola to the losses against log N and return its vertex, N_opt (a size, not its log) and
    the parabola's value there. Checked on an exact parabola and on each FLOP budget of the stored runs.
    """
    cases = _isoflop_cases()
    for budget, n, loss, about in cases:
        answer, why = answer_of(fn, (n.copy(), loss.copy()), "n and loss are NumPy arrays: np.log(n) is x, and "
                                "np.polyfit(x, loss, 2) the parabola's coefficients, highest power first")  # fmt: skip
        if why:
            return verdict(False, why)
        answer, why = _pair(answer, "(N_opt, L_opt)")
        if why:
            return verdict(False, why)
        profile = fits.isoflop_profile(budget, n, loss)
        if _near(answer[0], profile.n_opt, N_OPT_TOLERANCE) and _near(answer[1], profile.loss_opt, L_OPT_TOLERANCE):
            continue
        hint = _first_hint(answer, (profile.n_opt, profile.loss_opt), _isoflop_variants(n, loss), N_OPT_TOLERANCE) or (
            "fit loss ≈ p2·x² + p1·x + p0 with x = log N, then N_opt = exp(−p1 / (2·p2)) and L_opt is the "
            "parabola's value at x_opt"
        )
        (want_n, got_n), (want_l, got_l) = (
            shown(profile.n_opt, answer[0], 6, "g"),
            shown(profile.loss_opt, answer[1], 5),
        )
        return verdict(False, f"not the minimum yet ({about}: expected N_opt = {want_n}, L_opt = {want_l}; "
                              f"got {got_n}, {got_l}). Hint: {hint}")  # fmt: skip
    stored = [fits.isoflop_profile(budget, n, loss) for budget, n, loss, _ in cases[1:]]
    low, high = stored[0], stored[-1]
    exponent = _isoflop_exponent([p.flops for p in stored], [p.n_opt for p in stored])
    return verdict(True, f"your minima are the parabolas' vertices on an exact parabola and on the {len(stored)} FLOP "
                         f"budgets of the stored runs: from {low.flops:.2g} to {high.flops:.2g} FLOPs, N_opt grows "
                         f"from {low.n_opt:,.0f} to {high.n_opt:,.0f}, about N_opt ∝ C^{exponent:.2f}")  # fmt: skip


# ---------------------------------------------------------------- exercise: the compute-optimal split of a budget

HOFFMANN = ChinchillaLaw(E=1.69, A=406.4, alpha=0.34, B=410.7, beta=0.28)  # Hoffmann et al. (2022), approach 3
CHINCHILLA_FLOPS = 5.76e23  # Gopher's budget, which Chinchilla (70B parameters, 1.4T tokens) was trained with
# Approach 3 on the stored runs (scaling_laws.parametric with FAST_STARTS), rounded: β > α, so N takes most of C
COURSE_LAW = ChinchillaLaw(E=1.636, A=0.5609, alpha=0.2105, B=3.166e4, beta=0.9588)

# (budget C, law, what the case tests)
_ALLOCATION_CASES = [
    (6e20, ChinchillaLaw(E=1.69, A=400.0, alpha=0.3, B=400.0, beta=0.3), "α = β and A = B: N = D = √(C/6) = 10¹⁰"),
    (CHINCHILLA_FLOPS, HOFFMANN, "Hoffmann et al.'s law at Chinchilla's 5.76e23 FLOPs"),
    (1e11, COURSE_LAW, "the course's law (approach 3 on the stored runs) at 1e11 FLOPs"),
    (1e12, COURSE_LAW, "the course's law at 1e12 FLOPs"),
    (1e13, COURSE_LAW, "the course's law at 1e13 FLOPs"),
]


def _law_args(c: float, law: ChinchillaLaw) -> tuple[float, ...]:
    return c, law.E, law.A, law.alpha, law.B, law.beta


def _optimal_split(c: float, law: ChinchillaLaw) -> tuple[float, float]:
    n_opt = float(law.optimal_n(c))
    return n_opt, c / (6 * n_opt)


def _allocation_variants(c: float, law: ChinchillaLaw) -> dict[str, tuple[float | None, float | None]]:
    """(N_opt, D_opt) as the usual mistakes compute them, each named by its hint (None: that part is not judged)."""
    a, b, alpha, beta = law.A, law.B, law.alpha, law.beta
    root = 1 / (alpha + beta)
    g = (alpha * a / (beta * b)) ** root
    n_opt, d_opt = _optimal_split(c, law)
    no_six = g * c ** (beta * root)
    swapped = g * (c / 6) ** (alpha * root)
    inverted = (beta * b / (alpha * a)) ** root * (c / 6) ** (beta * root)
    no_root = alpha * a / (beta * b) * (c / 6) ** (beta * root)
    bare = (a / b) ** root * (c / 6) ** (beta * root)
    return {
        "C = 6·N·D, so N·D = C / 6: N_opt = G·(C/6)^(β/(α+β)), not G·C^(β/(α+β))": (no_six, None),
        "D_opt = C / (6·N_opt), not C / N_opt: training costs 6 FLOPs per parameter and token (2 forward, "
        "4 backward)": (n_opt, c / n_opt),
        "N_opt grows as (C/6)^(β/(α+β)): the data's exponent β is on top (the larger β, the faster the data term "
        "falls, the more of C goes to N)": (swapped, None),
        "G = (αA / (βB))^(1/(α+β)): the model's term αA on top, the data's βB below": (inverted, None),
        "raise αA / (βB) to the power 1/(α+β): G = (αA / (βB))^(1/(α+β))": (no_root, None),
        "G = (αA / (βB))^(1/(α+β)): the exponents α and β multiply A and B (they come from the derivatives)":
            (bare, None),
        "return (N_opt, D_opt) in this order": (d_opt, n_opt),
    }  # fmt: skip


def _allocation_hint(answer: tuple[float, float], c: float, law: ChinchillaLaw) -> str:
    """Name the mistake of a wrong split."""
    n_opt, d_opt = _optimal_split(c, law)
    hint = _first_hint(answer, (n_opt, d_opt), _allocation_variants(c, law), ALLOCATION_TOLERANCE)
    if hint:
        return hint
    if not math.isclose(6 * answer[0] * answer[1], c, rel_tol=1e-6):
        spent = shown(c, 6 * answer[0] * answer[1], 4, "g")[1]
        return f"the split must spend the whole budget: 6·N_opt·D_opt = C (yours gives {spent})"
    if math.isclose(answer[0], n_opt, rel_tol=NEAR):
        return ("close, but not the exact minimum: on the line 6·N·D = C, set dL/dN = 0; it gives "
                "N_opt = G·(C/6)^(β/(α+β)) with G = (αA / (βB))^(1/(α+β))")  # fmt: skip
    return ("substitute D = C / (6N) into L and set dL/dN = 0: N_opt = G·(C/6)^(β/(α+β)) with "
            "G = (αA / (βB))^(1/(α+β)), and D_opt = C / (6·N_opt)")  # fmt: skip


@never_raises
def check_optimal_allocation(fn) -> bool:
    """Exercise: ``fn(flops, E, A, alpha, B, beta) -> (N_opt, D_opt)``: the compute-optimal split of a budget.

    All six are Python floats. Of the pairs (N, D) with 6·N·D = C, return the one that minimises
    L(N, D) = E + A/N^α + B/D^β. Checked on a symmetric law, Hoffmann et al.'s law at Chinchilla's budget and the
    course's law at three budgets.
    """
    for c, law, about in _ALLOCATION_CASES:
        answer, why = answer_of(fn, _law_args(c, law), "all six arguments are floats: math or NumPy is enough")
        if why:
            return verdict(False, why)
        answer, why = _pair(answer, "(N_opt, D_opt)")
        if why:
            return verdict(False, why)
        n_opt, d_opt = _optimal_split(c, law)
        if _near(answer[0], n_opt, ALLOCATION_TOLERANCE) and _near(answer[1], d_opt, ALLOCATION_TOLERANCE):
            continue
        (want_n, got_n), (want_d, got_d) = shown(n_opt, answer[0], 4, "g"), shown(d_opt, answer[1], 4, "g")
        return verdict(False, f"not the optimal split yet ({about}: expected N_opt = {want_n}, D_opt = "
                              f"{want_d}; got {got_n}, {got_d}). "
                              f"Hint: {_allocation_hint(answer, c, law)}")  # fmt: skip
    n_chinchilla, d_chinchilla = _optimal_split(CHINCHILLA_FLOPS, HOFFMANN)
    share = COURSE_LAW.beta / (COURSE_LAW.alpha + COURSE_LAW.beta)
    return verdict(True, f"your split minimises L on 6·N·D = C for {len(_ALLOCATION_CASES)} budgets. At "
                         f"5.76e23 FLOPs Hoffmann et al.'s law gives N_opt = {n_chinchilla:.2g} parameters and "
                         f"D_opt = {d_chinchilla:.2g} tokens ({d_chinchilla / n_chinchilla:.0f} tokens a parameter; "
                         "Chinchilla itself: 70B parameters, 1.4T tokens, 20 a parameter); the course's law, with β > α, gives N_opt ∝ "
                         f"C^{share:.2f}: most of each extra FLOP goes to the model")  # fmt: skip


# ---------------------------------------------------------------- exercise: approach 3's Huber objective

# θ = (a, b, e, α, β) near approach 3's fit to the stored runs (rounded), and one start of its grid
NEAR_FIT = (-0.5782, 10.3629, 0.4921, 0.2105, 0.9588)
A_START = (0.0, 0.0, -1.0, 0.2, 0.2)
HAND_RESIDUALS = (0.0005, -0.002, 0.01)  # LSE − log L of the three hand-made runs: one below δ = 1e-3, two above


def _stored_runs() -> tuple[Tensor, Tensor, Tensor]:
    """N, D, test loss (runs,) of the stored training runs, float64 tensors."""
    n, d, loss = scaling_laws.columns(scaling_laws.rows(scaling_runs.load_results()))
    return torch.from_numpy(n), torch.from_numpy(d), torch.from_numpy(loss)


def _floats(theta) -> list[float]:
    """θ (a (5,) tensor, maybe requiring grad, or five floats) as five floats."""
    return [float(value) for value in (theta.detach() if isinstance(theta, Tensor) else theta)]


def _law_log(theta, n: Tensor, d: Tensor) -> Tensor:
    """LSE(a − α log N, b − β log D, e) (runs,): the log of E + A/N^α + B/D^β."""
    a, b, e, alpha, beta = _floats(theta)
    terms = torch.stack([a - alpha * n.log(), b - beta * d.log(), torch.full_like(n, e)])  # (3, runs)
    return torch.logsumexp(terms, dim=0)


def _hand_made_runs() -> tuple[Tensor, Tensor, Tensor]:
    """Three runs whose log-losses lie ``HAND_RESIDUALS`` below the law at NEAR_FIT."""
    n = torch.tensor([1e4, 1e5, 1e6], dtype=torch.float64)
    d = torch.tensor([1e6, 3e6, 1e7], dtype=torch.float64)
    return n, d, (_law_log(NEAR_FIT, n, d) - torch.tensor(HAND_RESIDUALS, dtype=torch.float64)).exp()


def _objective_cases() -> list[tuple[object, Tensor, Tensor, Tensor, float | None, str]]:
    """(θ, N, D, loss, δ or None for the default, what the case is); θ a (5,) tensor that requires grad, or floats."""
    theta = lambda values: torch.tensor(values, dtype=torch.float64, requires_grad=True)  # noqa: E731
    runs = _stored_runs()
    stored = f"the {len(runs[0])} stored runs"
    return [
        (theta(NEAR_FIT), *_hand_made_runs(), None, "three hand-made runs, residuals 0.0005, −0.002 and 0.01"),
        (theta(NEAR_FIT), *runs, None, f"{stored}, θ near approach 3's fit, the default δ"),
        (A_START, *runs, fits.HUBER_DELTA, f"{stored}, θ = {A_START} as five floats, δ = 1e-3"),
        (theta(NEAR_FIT), *runs, 0.01, f"{stored}, θ near approach 3's fit, δ = 0.01"),
    ]


def _objective_reference(theta, n: Tensor, d: Tensor, loss: Tensor, delta: float) -> float:
    objective = _parametric_objective(n.numpy(), d.numpy(), loss.numpy(), delta)
    return float(objective(torch.tensor(_floats(theta), dtype=torch.float64)))


def _objective_variants(theta, n: Tensor, d: Tensor, loss: Tensor, delta: float) -> dict[str, float]:
    """The objective as the usual mistakes compute it, each named by its hint (the first that fits is shown)."""
    a, b, e, alpha, beta = _floats(theta)
    law = _law_log(theta, n, d)  # (runs,)
    residual = law - loss.log()  # (runs,)

    def huber(r: Tensor, width: float = delta, reduction: str = "sum") -> float:
        return float(F.huber_loss(r, torch.zeros_like(r), delta=width, reduction=reduction))

    two_terms = torch.logaddexp(a - alpha * n.log(), b - beta * d.log())  # (runs,)
    return {
        "torch's huber_loss defaults to delta=1.0 and reduction='mean': pass delta=delta and reduction='sum'":
            huber(residual, 1.0, "mean"),
        "sum the Huber terms over the runs (Σ), not their mean: huber_loss(..., reduction='sum')":
            huber(residual, reduction="mean"),
        "torch's huber_loss has its own delta, 1.0: pass delta=delta, or residuals above δ still count "
        "quadratically (and keep delta=1e-3 as the default)": huber(residual, 1.0),
        "use the delta you are given, not a fixed 1e-3": huber(residual, fits.HUBER_DELTA)
            if delta != fits.HUBER_DELTA else math.nan,
        "smooth_l1_loss(beta=δ) is the Huber loss divided by δ: use huber_loss(..., delta=delta)":
            huber(residual) / delta,
        "the LSE models log L: the residual is LSE(...) − log L, not LSE(...) − L": huber(law - loss),
        "compare in log space: LSE(...) − log L, not exp(LSE(...)) − L": huber(law.exp() - loss),
        "e is log E: it enters the LSE as it is, beside a − α log N and b − β log D": huber(
            torch.logsumexp(torch.stack([a - alpha * n.log(), b - beta * d.log(), torch.full_like(n, math.exp(e))]),
                            dim=0) - loss.log()),
        "the LSE has three terms: a − α log N, b − β log D and e (the floor)": huber(two_terms - loss.log()),
        "use the Huber loss, not the squared error: r²/2 within δ, δ·(|r| − δ/2) beyond":
            float((residual**2).sum()),
        "use the Huber loss, not the absolute error: r²/2 within δ, δ·(|r| − δ/2) beyond":
            float(residual.abs().sum()),
    }  # fmt: skip


def _objective_tolerance(
    value: Number, expected: float, theta, n: Tensor, d: Tensor, loss: Tensor, delta: float
) -> float:
    """How far an answer computed in its own precision may lie from ``expected``.

    Each residual LSE(...) − log L is a small difference of numbers of size |a| + |α log N| + … : in float32 it
    carries an absolute error of a few ulps of those, and a Huber term moves by at most δ per unit of residual.
    """
    a, b, e, alpha, beta = _floats(theta)
    sizes = abs(a) + abs(alpha) * n.log().abs() + abs(b) + abs(beta) * d.log().abs() + abs(e) + loss.log().abs()
    residual_error = ULPS * value.eps * sizes  # (runs,)
    return value.rel_tolerance() * abs(expected) + delta * float(residual_error.sum()) + 1e-15


def _objective_answer(fn, case) -> tuple[float | None, str | None]:
    """The student's objective on one case: ``(value, None)`` or ``(None, why)``; NaN and inf are reported."""
    theta, n, d, loss, delta, _ = case
    args = (theta, n, d, loss) if delta is None else (theta, n, d, loss, delta)
    answer, why = answer_of(fn, args, "θ is a (5,) tensor or five floats, so e may be a float (e * torch.ones_like(n) "
                            "works for both); n, d and loss are (runs,) float64 tensors")  # fmt: skip
    if why:
        return None, why
    value, why = one_number(answer)
    if why and f"got {len(n)} of shape" in why:
        why = f"{why}: one Huber term per run; sum them into one number"
    return value, why


@never_raises
def check_huber_objective(fn) -> bool:
    """Exercise: ``fn(theta, n, d, loss, delta=1e-3) -> number``: approach 3's objective at θ = (a, b, e, α, β).

    θ comes as a (5,) float64 tensor that requires grad (as L-BFGS hands it over) or as five floats; n, d and
    loss are (runs,) float64 tensors. The objective is the Huber loss with width δ of the residuals
    LSE(a − α log N, b − β log D, e) − log L, summed over the runs. Checked on three hand-made runs and on the
    stored runs at two θ, with the default δ and δ = 0.01.
    """
    for case in _objective_cases():
        theta, n, d, loss, delta, about = case
        value, why = _objective_answer(fn, case)
        if why:
            return verdict(False, why)
        width = fits.HUBER_DELTA if delta is None else delta
        expected = _objective_reference(theta, n, d, loss, width)
        tolerance = _objective_tolerance(value, expected, theta, n, d, loss, width)
        if abs(value - expected) <= tolerance:
            continue
        hint = next((name for name, variant in _objective_variants(theta, n, d, loss, width).items()
                     if abs(value - variant) <= tolerance),
                    "Σ over the runs of Huber_δ(r), r = LSE(a − α log N, b − β log D, e) − log L; "
                    "Huber_δ(r) = r²/2 for |r| ≤ δ, δ·(|r| − δ/2) beyond")  # fmt: skip
        want, got = shown(expected, value, 6, "g")
        return verdict(False, f"not the objective yet ({about}: expected {want}, got {got}). "
                              f"Hint: {hint}")  # fmt: skip
    n, d, loss = _stored_runs()
    residual = _law_log(NEAR_FIT, n, d) - loss.log()  # (runs,)
    beyond = int((residual.abs() > fits.HUBER_DELTA).sum())
    at_fit = _objective_reference(NEAR_FIT, n, d, loss, fits.HUBER_DELTA)
    return verdict(True, f"your objective matches approach 3's on 3 hand-made runs and the {len(n)} stored runs "
                         f"(δ = 1e-3 and 0.01). Near the fit it is {at_fit:.4g}, and {beyond} of the {len(n)} runs "
                         "lie more than δ from the law: their terms grow as δ·|r|, not r²/2, so each pulls on the "
                         "fit with a force of at most δ, however far off it is")  # fmt: skip
