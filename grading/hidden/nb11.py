"""Hidden tests of notebook 11 (scaling laws): new profiles, laws, budgets, runs and δ."""

from __future__ import annotations

import math

import numpy as np
import torch

from course_utils.analysis.scaling_fits import (
    ChinchillaLaw,
    _parametric_objective,
    isoflop_profile,
    parametric_objective,
)
from grading.hidden.nb07 import parts_judge
from grading.spec import Case, HiddenExercise, Judged, compare_numbers

NOTEBOOK = "11_scaling_laws"


def _isoflop_cases() -> list[Case]:
    generator = torch.Generator().manual_seed(9171)
    exact = torch.logspace(4, 7, 7, dtype=torch.float64)  # (7,): the vertex 3·10⁵ lies between two sizes
    noisy = torch.logspace(5, 8, 5, dtype=torch.float64)[torch.tensor([3, 0, 4, 1, 2])]  # (5,): in another order
    three = torch.tensor([2e3, 2e4, 2e5], dtype=torch.float64)
    law = ChinchillaLaw(E=1.69, A=406.4, alpha=0.34, B=410.7, beta=0.28)
    sizes = torch.logspace(8, 10.5, 9, dtype=torch.float64)  # (9,): a profile of Hoffmann et al.'s law at 1e20 FLOPs
    cases = [
        (exact, 3.1 + 0.07 * (exact.log() - math.log(3e5)) ** 2, "seven sizes on an exact parabola"),
        (
            noisy,
            2.4
            + 0.05 * (noisy.log() - math.log(4e6)) ** 2
            + 0.002 * torch.randn(5, generator=generator, dtype=torch.float64),
            "five noisy sizes, not in order",
        ),  # fmt: skip
        (three, 4.0 + 0.2 * (three.log() - math.log(5e4)) ** 2, "three sizes, the fewest a parabola needs"),
        (sizes, torch.from_numpy(law.loss(sizes.numpy(), 1e20 / (6 * sizes.numpy()))), "Hoffmann et al.'s law"),
    ]
    return [Case((n.numpy(), np.asarray(loss, dtype=float)), label=f"{len(n)} sizes: {what}")  # NumPy, as in 11
            for n, loss, what in cases]  # fmt: skip


def _isoflop_minimum(n, loss) -> tuple[float, float]:
    profile = isoflop_profile(0.0, np.asarray(n, dtype=float), np.asarray(loss, dtype=float))
    return profile.n_opt, profile.loss_opt


def _allocation_cases() -> list[Case]:
    laws = [(1e22, 1.8, 500.0, 0.4, 300.0, 0.25), (3e15, 2.0, 50.0, 0.5, 80.0, 0.5),
            (1e9, 1.0, 10.0, 0.7, 2000.0, 1.1), (6e25, 1.69, 406.4, 0.34, 410.7, 0.28)]  # fmt: skip
    return [Case(law, label=f"C={law[0]:g}, α={law[3]}, β={law[5]}") for law in laws]


def _optimal_allocation(flops, E, A, alpha, B, beta) -> tuple[float, float]:
    n_opt = float(ChinchillaLaw(E=E, A=A, alpha=alpha, B=B, beta=beta).optimal_n(flops))
    return n_opt, flops / (6 * n_opt)


def _runs(seed: int, count: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """N, D, loss (count,) float64: a law's losses, each off by up to ±1 % (some runs beyond δ, some within)."""
    generator = torch.Generator().manual_seed(seed)
    n = 10 ** (4 + 3 * torch.rand(count, generator=generator, dtype=torch.float64))  # (runs,)
    d = 10 ** (6 + 2 * torch.rand(count, generator=generator, dtype=torch.float64))  # (runs,)
    noise = 0.01 * (2 * torch.rand(count, generator=generator, dtype=torch.float64) - 1)  # (runs,)
    law = 1.8 + 20.0 / n**0.5 + 900.0 / d**0.6  # (runs,)
    return n, d, law * noise.exp()


def _objective_cases() -> list[Case]:
    theta = torch.tensor([3.0, 6.8, 0.59, 0.5, 0.6], dtype=torch.float64, requires_grad=True)  # near the law
    runs = _runs(9181, 12)
    return [
        Case((theta, *runs), label="12 runs, θ a tensor that requires grad, the default δ"),
        Case(([2.5, 7.5, 0.5, 0.45, 0.65], *runs, 5e-3), label="12 runs, θ as five floats, δ = 5e-3"),
        Case((theta.detach().clone(), *_runs(9182, 40), 1e-4), label="40 runs, δ = 1e-4"),
        Case((theta.detach().clone(), *_runs(9183, 1), 0.05), label="one run, δ = 0.05"),
    ]


def _huber_objective(theta, n, d, loss, delta: float = 1e-3) -> float:
    values = (theta.detach() if isinstance(theta, torch.Tensor) else torch.tensor(theta)).double()  # (5,)
    return float(_parametric_objective(n.numpy(), d.numpy(), loss.numpy(), delta)(values))


def _judge_objective(answer, case: Case) -> Judged:
    return compare_numbers(answer, _huber_objective(*case.args))


EXERCISES = (
    # N_opt within 1e-3 (a vertex read from a float32 fit), L_opt within 1e-5, as the self-check
    HiddenExercise(
        1,
        ("isoflop_minimum",),
        parts_judge(_isoflop_minimum, ("N_opt", "L_opt"), (1e-3, 1e-5)),
        _isoflop_cases,
        references=(isoflop_profile,),
    ),
    HiddenExercise(
        2,
        ("optimal_allocation",),
        parts_judge(_optimal_allocation, ("N_opt", "D_opt"), (1e-4, 1e-4)),
        _allocation_cases,
        references=(ChinchillaLaw.optimal_n,),
    ),
    HiddenExercise(
        3,
        ("huber_objective",),
        _judge_objective,
        _objective_cases,
        references=(_parametric_objective, parametric_objective),
    ),
)
