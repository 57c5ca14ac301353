"""The self-checks of notebook 11: each passes right answers, fails wrong and unfinished ones, never raises."""

import math
import re
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from exercise_contract import contract_tests, solution_text

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws, scaling_runs
from course_utils.exercises.scaling import (
    COURSE_LAW,
    NEAR_FIT,
    check_huber_objective,
    check_isoflop_minimum,
    check_optimal_allocation,
)

CHECKS = (check_isoflop_minimum, check_optimal_allocation, check_huber_objective)
STEM = "11_scaling_laws"


# ----- the reference solutions (the notebook's <details> blocks show these) -----


def isoflop_minimum(n, loss):
    x = np.log(np.asarray(n, dtype=float))
    p2, p1, p0 = np.polyfit(x, np.asarray(loss, dtype=float), 2)  # loss ≈ p0 + p1 x + p2 x²
    x_opt = -p1 / (2 * p2)  # where the derivative is 0
    return math.exp(x_opt), p0 + p1 * x_opt + p2 * x_opt**2


def optimal_allocation(flops, E, A, alpha, B, beta):
    g = (alpha * A / (beta * B)) ** (1 / (alpha + beta))  # Hoffmann et al., eq. 4
    n_opt = g * (flops / 6) ** (beta / (alpha + beta))
    return n_opt, flops / (6 * n_opt)


def huber_objective(theta, n, d, loss, delta=1e-3):
    a, b, e, alpha, beta = theta
    terms = torch.stack([a - alpha * torch.log(n), b - beta * torch.log(d), e * torch.ones_like(n)])  # (3, runs)
    residual = torch.logsumexp(terms, dim=0) - torch.log(loss)  # (runs,): log of the law − log L
    return torch.nn.functional.huber_loss(residual, torch.zeros_like(residual), delta=delta, reduction="sum")


SOLUTIONS = [
    (check_isoflop_minimum, isoflop_minimum),
    (check_optimal_allocation, optimal_allocation),
    (check_huber_objective, huber_objective),
]


# ----- answers to the IsoFLOP exercise -----


def isoflop_as_tensors(n, loss):
    n_opt, loss_opt = isoflop_minimum(n, loss)
    return torch.tensor(float(n_opt), dtype=torch.float64), torch.tensor(float(loss_opt), dtype=torch.float64)


def isoflop_by_least_squares(n, loss):
    """A design matrix [1, x, x²] and lstsq; an array of two numbers."""
    x = np.log(n)
    c0, c1, c2 = np.linalg.lstsq(np.stack([np.ones_like(x), x, x * x], axis=1), loss, rcond=None)[0]
    x_opt = -c1 / (2 * c2)
    return np.array([math.exp(x_opt), c0 + c1 * x_opt + c2 * x_opt**2])


def isoflop_in_float32(n, loss):
    """The same least squares in float32 torch: the vertex moves by ~1e-4."""
    x = torch.tensor(np.log(n), dtype=torch.float32)
    design = torch.stack([torch.ones_like(x), x, x * x], dim=1)  # (k, 3)
    c = torch.linalg.lstsq(design, torch.tensor(loss, dtype=torch.float32)[:, None]).solution.flatten()
    x_opt = -c[1] / (2 * c[2])
    return [torch.exp(x_opt), c[0] + c[1] * x_opt + c[2] * x_opt**2]


def isoflop_in_log10(n, loss):
    x = np.log10(n)
    poly = np.poly1d(np.polyfit(x, loss, 2))
    x_opt = poly.deriv().roots[0]
    return 10**x_opt, poly(x_opt)


def isoflop_with(n, loss, *, against_n=False, keep_log=False, backwards=False, no_two=False, at_n=False,
                 lowest=False, best_run=False, log_loss=False, swap=False):  # fmt: skip
    """The minimum with one knob turned: the usual mistakes."""
    x = n if against_n else np.log(n)
    p2, p1, p0 = np.polyfit(x, np.log(loss) if log_loss else loss, 2)
    if backwards:
        p0, p2 = p2, p0
    x_opt = -p1 / (p2 if no_two else 2 * p2)
    n_opt = x_opt if keep_log or against_n else np.exp(x_opt)
    at = n_opt if at_n else x_opt
    loss_opt = loss.min() if lowest else p0 + p1 * at + p2 * at**2
    if best_run:
        n_opt = n[np.argmin(loss)]
    return (loss_opt, n_opt) if swap else (n_opt, loss_opt)


# ----- answers to the allocation exercise -----


def allocation_as_tensors(flops, E, A, alpha, B, beta):
    return tuple(torch.tensor(value, dtype=torch.float64) for value in optimal_allocation(flops, E, A, alpha, B, beta))


def allocation_by_search(flops, E, A, alpha, B, beta):
    """A golden-section search of L along 6·N·D = C, in log N: no algebra."""
    loss = lambda log_n: A / math.exp(log_n) ** alpha + B / (flops / (6 * math.exp(log_n))) ** beta  # noqa: E731
    low, high = 0.0, math.log(flops / 6)
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        low, high = (low, right) if loss(left) < loss(right) else (left, high)
    n_opt = math.exp((low + high) / 2)
    return [n_opt, flops / (6 * n_opt)]


def allocation_with(flops, E, A, alpha, B, beta, *, six=6, d_six=6, swap_exponent=False, invert=False,
                    no_root=False, bare=False, swap=False, scale=1.0):  # fmt: skip
    """The split with one knob turned: the usual mistakes."""
    root = 1 / (alpha + beta)
    ratio = alpha * A / (beta * B)
    if invert:
        ratio = 1 / ratio
    if bare:
        ratio = A / B
    g = ratio if no_root else ratio**root
    n_opt = scale * g * (flops / six) ** ((alpha if swap_exponent else beta) * root)
    d_opt = flops / (d_six * n_opt)
    return (d_opt, n_opt) if swap else (n_opt, d_opt)


# ----- answers to the objective exercise -----


def huber_by_hand(theta, n, d, loss, delta=1e-3):
    """Huber written out with torch.where, the LSE as log of a sum of exps, floats out."""
    a, b, e, alpha, beta = torch.as_tensor(theta).tolist()
    law = torch.log(torch.exp(a - alpha * n.log()) + torch.exp(b - beta * d.log()) + math.exp(e))  # (runs,)
    r = (law - loss.log()).abs()
    return float(torch.where(r <= delta, r**2 / 2, delta * (r - delta / 2)).sum())


def huber_in_numpy(theta, n, d, loss, delta=1e-3):
    a, b, e, alpha, beta = torch.as_tensor(theta).tolist()
    n, d, loss = n.numpy(), d.numpy(), loss.numpy()
    r = np.logaddexp(np.logaddexp(a - alpha * np.log(n), b - beta * np.log(d)), e) - np.log(loss)
    return np.where(np.abs(r) <= delta, r**2 / 2, delta * (np.abs(r) - delta / 2)).sum()


def huber_for_tensors_only(theta, n, d, loss, delta=1e-3):
    """Right while θ is a tensor; five floats have no expand_as."""
    a, b, e, alpha, beta = theta
    terms = torch.stack([a - alpha * n.log(), b - beta * d.log(), e.expand_as(n)])  # (3, runs)
    residual = torch.logsumexp(terms, dim=0) - loss.log()
    return torch.nn.functional.huber_loss(residual, torch.zeros_like(residual), delta=delta, reduction="sum")


def huber_with(theta, n, d, loss, delta=1e-3, *, width=None, reduction="sum", target="log", floor="e",
               two_terms=False, form="huber"):  # fmt: skip
    """The objective with one knob turned: the usual mistakes."""
    a, b, e, alpha, beta = theta
    e = torch.exp(torch.as_tensor(e)) if floor == "exp" else e
    terms = [a - alpha * torch.log(n), b - beta * torch.log(d)] + ([] if two_terms else [e * torch.ones_like(n)])
    law = torch.logsumexp(torch.stack(terms), dim=0)
    residual = {"log": law - loss.log(), "L": law - loss, "exp": law.exp() - loss}[target]
    zeros = torch.zeros_like(residual)
    if form == "smooth_l1":
        return torch.nn.functional.smooth_l1_loss(residual, zeros, beta=delta, reduction=reduction)
    if form == "squared":
        return (residual**2).sum()
    if form == "absolute":
        return residual.abs().sum()
    width = delta if width is None else width
    return torch.nn.functional.huber_loss(residual, zeros, delta=width, reduction=reduction)


RIGHT = [
    (check_isoflop_minimum, isoflop_minimum),
    (check_isoflop_minimum, isoflop_as_tensors),
    (check_isoflop_minimum, isoflop_by_least_squares),
    (check_isoflop_minimum, isoflop_in_float32),
    (check_isoflop_minimum, isoflop_in_log10),
    (check_isoflop_minimum, lambda n, loss: (lambda p: (p.n_opt, p.loss_opt))(fits.isoflop_profile(1.0, n, loss))),
    (check_optimal_allocation, optimal_allocation),
    (check_optimal_allocation, allocation_as_tensors),
    (check_optimal_allocation, allocation_by_search),
    (check_optimal_allocation, lambda c, *law: np.array(allocation_with(c, *law))),
    (check_huber_objective, huber_objective),
    (check_huber_objective, huber_by_hand),
    (check_huber_objective, huber_in_numpy),
    (check_huber_objective, lambda theta, n, d, loss, delta=1e-3: huber_objective(theta, n, d, loss, delta).float()),
]

WRONG = [
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, against_n=True), "not against N"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, keep_log=True), "not x_opt"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, backwards=True), "highest power first"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, no_two=True), "−p1 / (2·p2)"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, at_n=True), "not at N_opt itself"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, lowest=True), "not the lowest loss measured"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, best_run=True), "not the size of the best run"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, log_loss=True), "not log L"),
    (check_isoflop_minimum, lambda n, loss: isoflop_with(n, loss, swap=True), "in this order"),
    (check_isoflop_minimum, lambda n, loss: (1e4, 2.5), "not the minimum yet"),
    (check_isoflop_minimum, lambda n, loss: np.polyfit(np.log(n), loss, 2), "return two numbers"),
    (check_isoflop_minimum, lambda n, loss: (math.nan, 1.0), "NaN"),
    (check_isoflop_minimum, lambda n, loss: torch.log(n), "NumPy arrays"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, six=1, d_six=1), "not G·C^(β/(α+β))"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, six=1), "not G·C^(β/(α+β))"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, d_six=1), "not C / N_opt"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, swap_exponent=True), "the data's exponent β"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, invert=True), "the model's term αA on top"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, no_root=True), "raise αA / (βB)"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, bare=True), "multiply A and B"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, swap=True), "in this order"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, scale=1.01), "close, but not the exact"),
    (check_optimal_allocation, lambda *args: allocation_with(*args, scale=3), "set dL/dN = 0"),
    (check_optimal_allocation, lambda c, *law: (optimal_allocation(c, *law)[0], 1.0), "spend the whole budget"),
    (check_optimal_allocation, lambda c, *law: optimal_allocation(c, *law)[0], "return two numbers"),
    (check_huber_objective, lambda *args: huber_with(*args, width=1.0, reduction="mean"), "reduction='mean'"),
    (check_huber_objective, lambda *args: huber_with(*args, reduction="mean"), "not their mean"),
    (check_huber_objective, lambda *args: huber_with(*args, width=1.0), "its own delta, 1.0"),
    (check_huber_objective, lambda theta, n, d, loss, delta=1e-3: huber_objective(theta, n, d, loss), "not a fixed"),
    (check_huber_objective, lambda *args: huber_with(*args, form="smooth_l1"), "divided by δ"),
    (check_huber_objective, lambda *args: huber_with(*args, target="L"), "not LSE(...) − L"),
    (check_huber_objective, lambda *args: huber_with(*args, target="exp"), "not exp(LSE(...)) − L"),
    (check_huber_objective, lambda *args: huber_with(*args, floor="exp"), "e is log E"),
    (check_huber_objective, lambda *args: huber_with(*args, two_terms=True), "three terms"),
    (check_huber_objective, lambda *args: huber_with(*args, form="squared"), "not the squared error"),
    (check_huber_objective, lambda *args: huber_with(*args, form="absolute"), "not the absolute error"),
    (check_huber_objective, lambda *args: huber_with(*args, reduction="none"), "sum them into one number"),
    (check_huber_objective, lambda *args: 2 * huber_with(*args), "not the objective yet"),
    (check_huber_objective, huber_for_tensors_only, "five floats"),
]


test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


@pytest.mark.parametrize("check, solution", SOLUTIONS)
def test_the_reference_solutions_pass_within_a_second(capsys, check, solution):
    check(solution)  # a first call loads the stored runs
    capsys.readouterr()
    started = time.perf_counter()
    assert check(solution) is True
    assert time.perf_counter() - started < 1.0
    assert capsys.readouterr().out.startswith("✓")


def test_the_reference_solutions_agree_with_the_course_code():
    results = scaling_runs.load_results()
    for profile in scaling_laws.isoflop_profiles(results):
        assert np.allclose(isoflop_minimum(profile.n, profile.loss), (profile.n_opt, profile.loss_opt), rtol=1e-9)
    n_opt, d_opt = optimal_allocation(1e12, COURSE_LAW.E, COURSE_LAW.A, COURSE_LAW.alpha, COURSE_LAW.B, COURSE_LAW.beta)
    assert n_opt == pytest.approx(float(COURSE_LAW.optimal_n(1e12))) and 6 * n_opt * d_opt == pytest.approx(1e12)
    n, d, loss = scaling_laws.columns(scaling_laws.rows(results))
    theta = torch.tensor(NEAR_FIT, dtype=torch.float64, requires_grad=True)
    value = huber_objective(theta, *(torch.from_numpy(column) for column in (n, d, loss)))
    value.backward()  # the solution stays differentiable: L-BFGS can minimise it
    assert float(value.detach()) == pytest.approx(float(fits._parametric_objective(n, d, loss, 1e-3)(theta.detach())))
    assert theta.grad is not None and torch.isfinite(theta.grad).all()


def test_the_messages_teach_something(capsys):
    assert check_isoflop_minimum(isoflop_minimum) and check_optimal_allocation(optimal_allocation)
    assert check_huber_objective(huber_objective)
    isoflop, allocation, objective = capsys.readouterr().out.splitlines()
    assert "7 FLOP budgets" in isoflop and "N_opt ∝ C^" in isoflop
    assert "Chinchilla itself" in allocation and "C^0.82" in allocation
    assert "more than δ from the law" in objective


@pytest.mark.slow  # approach 3 from 32 starts: about 4 s
def test_the_course_law_is_approach_3_on_the_stored_runs_rounded():
    law = scaling_laws.parametric(scaling_runs.load_results(), starts=scaling_laws.FAST_STARTS)
    for name in ("E", "A", "alpha", "B", "beta"):
        assert getattr(COURSE_LAW, name) == pytest.approx(getattr(law, name), rel=0.01), name
    assert NEAR_FIT == pytest.approx((math.log(law.A), math.log(law.B), math.log(law.E), law.alpha, law.beta), abs=1e-3)


def test_the_checks_docstrings_do_not_hold_the_answers():
    """Shift-Tab on a check must not show the solution."""
    for answer, check in ANSWER_LINES:
        assert answer not in (check.__doc__ or ""), check.__name__


ANSWER_LINES = [
    ("x_opt = -p1 / (2 * p2)", check_isoflop_minimum),
    ("n_opt = g * (flops / 6) ** (beta / (alpha + beta))", check_optimal_allocation),
    ("residual = torch.logsumexp(terms, dim=0) - torch.log(loss)", check_huber_objective),
]
NOTEBOOK_SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / "src" / f"{STEM}.py"


@pytest.mark.skipif(not NOTEBOOK_SOURCE.is_file(), reason="notebook 11 is still being written")
def test_the_notebooks_solutions_hold_the_reference_answers_and_pass_their_checks(capsys):
    solutions = solution_text(STEM)
    for answer, _ in ANSWER_LINES:
        assert answer in solutions, f"notebook 11's <details> solutions lack {answer!r}"
    namespace = {}  # the notebook's own plain imports (math, numpy as np…), then each solution as the grader runs it
    exec(
        "\n".join(re.findall(r"^import [\w.]+(?: as \w+)?$", NOTEBOOK_SOURCE.read_text(encoding="utf-8"), re.M)),
        namespace,
    )
    for block in re.findall(r"```python\n(.*?)```", solutions, flags=re.S):
        exec(block, namespace)
    for check, name in zip(CHECKS, ("isoflop_minimum", "optimal_allocation", "huber_objective")):
        assert check(namespace[name]) is True, capsys.readouterr().out
