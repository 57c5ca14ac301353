"""The scaling-law fits recover a law they are given (issue 35's groundwork): on a synthetic loss surface with a known
floor, each fit must find its parameters, and the compute-optimal N must follow from them."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.analysis import scaling_fits as sf
from course_utils.validation import CourseInputError

TRUE = sf.ChinchillaLaw(E=2.0, A=30.0, alpha=0.4, B=60.0, beta=0.35)
N = 3000 * 2.0 ** np.arange(7)  # 3k .. 192k, like the course's grid
D = 136_000 * 2.0 ** np.arange(6)  # 250 .. 8,000 steps of 544 tokens
STARTS = [start for start in sf.PARAMETRIC_STARTS if start[2] in (-0.25, 1.0)][::3]


@pytest.fixture(scope="module")
def grid():
    n, d = (a.ravel() for a in np.meshgrid(N, D))
    noise = np.exp(np.random.default_rng(0).normal(0, 0.002, len(n)))
    return n, d, TRUE.loss(n, d) * noise


def test_the_parametric_fit_recovers_the_floor_and_the_exponents(grid):
    fit = sf.fit_parametric(*grid, starts=STARTS)
    assert fit.E == pytest.approx(TRUE.E, rel=0.05)
    assert fit.alpha == pytest.approx(TRUE.alpha, abs=0.05) and fit.beta == pytest.approx(TRUE.beta, abs=0.05)


def test_the_compute_optimal_n_minimises_the_law_along_each_budget():
    for c in (1e10, 1e12, 1e14):
        candidates = np.geomspace(1e2, 1e8, 4001)
        best = candidates[np.argmin(TRUE.loss(candidates, c / (6 * candidates)))]
        assert TRUE.optimal_n(c) == pytest.approx(best, rel=0.01)


def test_isoflop_parabolas_find_the_minimum_of_a_parabola():
    n = np.geomspace(1e3, 1e6, 7)
    loss = 3.0 + 0.1 * (np.log(n) - np.log(3e4)) ** 2
    profile = sf.isoflop_profile(1e12, n, loss)
    assert profile.n_opt == pytest.approx(3e4, rel=1e-6) and profile.loss_opt == pytest.approx(3.0)
    with pytest.raises(CourseInputError, match="bend upwards"):
        sf.isoflop_profile(1e12, n, 3.0 - 0.1 * (np.log(n) - 10) ** 2)


def test_the_floor_law_recovers_its_floor():
    c = np.geomspace(1e9, 1e14, 8)
    law = sf.FloorLaw(E=1.5, k=40.0, gamma=0.15)
    assert sf.fit_floor_law(c, law.loss(c)).E == pytest.approx(1.5, rel=1e-3)


def test_the_envelope_takes_the_lowest_curve_at_each_budget():
    curves = [(1e3, [1e5, 1e7], [3.0, 2.0]), (1e4, [1e5, 1e7], [3.5, 1.5])]
    c, n, loss = sf.envelope(curves, [6e8, 6e10, 6e11, 6e13])  # 6e13 is beyond every curve
    assert list(c) == [6e8, 6e10, 6e11] and list(n) == [1e3, 1e3, 1e4] and loss == pytest.approx([3.0, 2.0, 1.5])


def test_kaplan_s_form_has_no_floor_and_fits_a_surface_without_one():
    law = sf.KaplanLaw(n_c=1e7, alpha_n=0.08, d_c=1e7, alpha_d=0.1)
    n, d = (a.ravel() for a in np.meshgrid(N, D))
    fit = sf.fit_kaplan(n, d, law.loss(n, d), starts=[(16.0, 0.1, 16.0, 0.1)])
    assert fit.E == 0 and fit.loss(n, d) == pytest.approx(law.loss(n, d), rel=1e-3)


def test_bad_columns_get_a_clear_error():
    with pytest.raises(CourseInputError, match="differ in length"):
        sf.fit_power_law([1, 2, 3], [1, 2])
    with pytest.raises(CourseInputError, match="positive"):
        sf.fit_parametric([1, 2, 3], [1, 2, 3], [1, np.nan, 3])


def test_bootstrap_intervals_cover_the_spread():
    values = sf.bootstrap(lambda rows: float(np.mean(np.arange(100)[rows])), 100, resamples=300)
    low, high = sf.interval(values)
    assert low < 49.5 < high and high - low < 15


def test_the_profile_over_the_floor_is_lowest_at_the_true_floor(grid):
    floors = [1.0, 1.6, 2.0, 2.4]
    profile = sf.profile_over_floor(*grid, floors, starts=STARTS)
    assert int(np.argmin(profile)) == floors.index(2.0) and profile[-1] > profile[2]
    with pytest.raises(CourseInputError, match="positive"):
        sf.profile_over_floor(*grid, [0.0], starts=STARTS)


def test_a_fit_at_a_fixed_floor_keeps_the_floor_and_reports_its_objective(grid):
    law, objective = sf.fit_parametric_at_floor(*grid, TRUE.E, starts=STARTS)
    assert law.E == TRUE.E and objective == pytest.approx(sf.parametric_objective(law, *grid), rel=1e-9)
    assert law.alpha == pytest.approx(TRUE.alpha, abs=0.05) and law.beta == pytest.approx(TRUE.beta, abs=0.05)
    wrong, worse = sf.fit_parametric_at_floor(*grid, 1.0, starts=STARTS)
    assert wrong.E == 1.0 and worse > objective
    with pytest.raises(CourseInputError, match="positive"):
        sf.fit_parametric_at_floor(*grid, -1.0, starts=STARTS)


def test_the_objective_of_the_true_law_is_its_huber_sum():
    n, d = N[:3], D[:3]
    exact = TRUE.loss(n, d)
    assert sf.parametric_objective(TRUE, n, d, exact) == 0.0
    off = exact * np.exp([0.0, 0.0005, 0.01])  # one residual inside δ = 1e-3, one beyond it
    expected = 0.5 * 0.0005**2 + 1e-3 * (0.01 - 0.5e-3)
    assert sf.parametric_objective(TRUE, n, d, off) == pytest.approx(expected, rel=1e-6)
