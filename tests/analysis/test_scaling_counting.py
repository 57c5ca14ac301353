"""The two countings of N and C, and the compute-optimal model read from a grid under each (issue 44).

On exact surfaces (a known law sampled on a grid like the stored one) the readings must find the law's own optimum;
on the stored runs, the countings must differ the way the notebook says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils.analysis import scaling_counting as counting
from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs
from course_utils.validation import CourseInputError

LAW = fits.ChinchillaLaw(E=1.7, A=40.0, alpha=0.5, B=400.0, beta=0.5)  # a = 0.5


def exact_rows(law=LAW, sizes=np.geomspace(1e3, 1e6, 11), steps=(250, 500, 1000, 2000, 4000, 8000, 16000, 32000)):
    """Rows like the stored ones, each shape's loss taken from ``law`` (N = parameters, both countings alike)."""
    rows = []
    for i, n in enumerate(sizes):
        for s in steps:
            tokens = 545.0 * s
            rows.append({"n_layer": 1, "n_embd": i + 1, "steps": s, "tokens": tokens, "parameters": float(n),
                         "non_embedding_parameters": float(n), "test_loss": float(law.loss(n, tokens)),
                         "curve": {"steps": [s // 4, s // 2, s], "loss": [float(law.loss(n, tokens * f))
                                                                          for f in (0.25, 0.5, 1.0)]}})  # fmt: skip
    return rows


def test_the_exponent_and_tokens_per_parameter_are_the_law_s_own():
    law = fits.ChinchillaLaw(E=1.0, A=10.0, alpha=0.3, B=50.0, beta=0.2)
    assert counting.exponent(law) == pytest.approx(0.2 / 0.5)
    c = np.array([1e12, 1e14])
    n_opt = law.optimal_n(c)
    assert counting.tokens_per_parameter(law, c) == pytest.approx(c / 6 / n_opt**2)
    # along one budget, the law's loss is lowest at that split (a brute-force search over N)
    grid_n = np.geomspace(n_opt[0] / 10, n_opt[0] * 10, 20001)
    best = grid_n[np.argmin(law.loss(grid_n, c[0] / (6 * grid_n)))]
    assert best == pytest.approx(n_opt[0], rel=1e-3)


def test_isoflop_profiles_of_an_exact_surface_find_its_optimum():
    rows = exact_rows()
    profiles = counting.isoflop_profiles(rows, "chinchilla")
    assert len(profiles) >= 10 and all(len(p.n) >= 3 for p in profiles)
    bracketed = [p for p in profiles if p.bracketed]
    assert len(bracketed) >= len(profiles) // 2
    for p in bracketed:  # the best size is within a grid step (10^0.3) of the exact optimum
        assert abs(math.log(p.best_n / float(LAW.optimal_n(p.flops)))) < 0.3 * math.log(10) + 1e-9
        if p.parabola is not None:  # the parabola through 5 sizes near the minimum: within 25 %
            assert p.parabola.n_opt / float(LAW.optimal_n(p.flops)) == pytest.approx(1, abs=0.25)
    exponents = counting.grid_exponents(rows, "chinchilla")
    assert exponents["parabolas"] == pytest.approx(0.5, abs=0.05)
    assert exponents["best size"] == pytest.approx(0.5, abs=0.1)


def test_a_profile_needs_three_sizes_and_knows_where_its_best_lies():
    curves = [(1e3, np.array([1e5, 1e6]), np.array([2.0, 1.9])), (1e4, np.array([1e5, 1e6]), np.array([1.8, 1.7]))]
    assert counting.profile_at(curves, 6 * 1e3 * 3e5) is None
    curves.append((1e5, np.array([1e4, 1e5]), np.array([1.9, 1.85])))
    profile = counting.profile_at(curves, 6e9)  # D = 1e6, 1e5 and 1e4 for the three sizes
    assert profile is not None and profile.best_n == 1e4 and profile.bracketed


def test_the_pareto_front_keeps_only_runs_no_cheaper_run_beats():
    c = np.array([3.0, 1.0, 2.0, 4.0, 5.0])
    loss = np.array([1.5, 2.0, 2.1, 1.6, 1.4])
    assert counting.pareto_front(c, loss).tolist() == [1, 0, 4]


def test_columns_count_n_two_ways_and_refuse_a_third():
    results = scaling_runs.load_results()
    chosen = laws.rows(results)
    kaplan, chinchilla = (counting.sizes(chosen, c) for c in ("kaplan", "chinchilla"))
    assert np.all(chinchilla > kaplan) and np.all(chinchilla - kaplan == [740 * r["n_embd"] for r in chosen])
    with pytest.raises(CourseInputError, match="counting"):
        laws.columns(chosen, "flops")


def test_the_tables_fit_in_88_characters():
    results = scaling_runs.load_results()
    chosen = laws.rows(results)
    law = laws.chinchilla_law(laws.load_profile()["fit"])
    tables = [counting.counting_table(chosen), counting.optimum_table(counting.isoflop_profiles(chosen), law)]
    assert all(len(line) <= 88 for table in tables for line in table.splitlines())
