"""Notebook 11's claims, asserted on the stored runs with the notebook's own calls.

The fits themselves are tested on synthetic laws (tests/analysis/test_scaling_fits.py) and approach 3's findings in
tests/analysis/test_scaling_laws.py; here are the notebook's verdicts: each E against the truth with its interval,
the held-out model, the compute-optimal model and approach 2's bias.
"""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs as grid
from course_utils.analysis import scaling_verdicts as verdicts


@pytest.fixture(scope="module")
def results():
    return grid.load_results()


@pytest.fixture(scope="module")
def law(results):
    return laws.parametric(results, starts=laws.FAST_STARTS)


@pytest.fixture(scope="module")
def noise(results):
    return verdicts.seed_noise(results)


def test_approaches_1_and_2_return_the_lowest_loss_they_were_given(results):
    """Neither extrapolates: the floor law's E sits on its bound, the lowest point it fits."""
    envelope_law, validation_truth = laws.envelope_floor(results)
    curves = laws.validation_curves(results)
    budgets = np.geomspace(min(6 * n * t[0] for n, t, _ in curves), max(6 * n * t[-1] for n, t, _ in curves), 30)
    assert envelope_law.E == pytest.approx(fits.envelope(curves, budgets)[2].min(), abs=1e-4)
    assert 0.01 < envelope_law.E - validation_truth < 0.02
    profiles = laws.isoflop_profiles(results)
    assert verdicts.isoflop_floor(results).E == pytest.approx(min(p.loss_opt for p in profiles), abs=1e-4)


def test_approach_2_is_closest_and_ties_with_approach_3_within_noise(results, law, noise):
    truth = results["test_entropy"]
    isoflop_error = verdicts.isoflop_floor(results).E - truth
    assert 0 < isoflop_error < truth - law.E < 0.01
    assert (truth - law.E) - isoflop_error < noise < 0.004


def test_the_intervals_fail_in_opposite_ways(results):
    """Approach 1's interval is narrow and misses its truth; approaches 2 and 3's hold theirs and reach near zero."""
    stored = verdicts.load_floor_bootstrap()
    low, high, kept = verdicts.finite_interval(stored["envelope"])
    assert kept == 100 and low > results["validation"]["oracle_entropy"] and high - low < 0.01
    for sample in (stored["isoflop"], [row["E"] for row in laws.load_bootstrap()["fits"]]):
        low, high, _ = verdicts.finite_interval(sample)
        assert low < 0.1 and low <= results["test_entropy"] <= high < 1.72


def test_the_stored_floor_bootstrap_is_what_the_code_gives(results):
    stored = verdicts.load_floor_bootstrap()
    again = verdicts.bootstrap_floors(results, first=2)
    assert stored["command"] == verdicts.FLOOR_BOOTSTRAP_COMMAND and stored["resamples"] == laws.RESAMPLES
    for key, values in again.items():
        assert values == pytest.approx(stored[key][:2], abs=1e-3)


def test_every_approach_puts_the_compute_optimal_model_above_the_best_run(results, law):
    """The rule of thumb, the parabolas and approach 3 all ask for a bigger model than the best run of the budget."""
    optimal = verdicts.compute_optimal(results, law)
    assert len(optimal) == 7
    for m in optimal:
        best_n = m.best_run["non_embedding_parameters"]
        assert best_n < m.parabola_n < m.law_n < m.rule_n
        assert m.best_run["tokens"] / best_n > 4 * verdicts.CHINCHILLA_TOKENS_PER_PARAMETER
    assert sum(m.best_run["non_embedding_parameters"] == m.smallest for m in optimal) == 6
    assert all(m.best_run["tokens"] / m.best_run["parameters"] > 50 for m in optimal)  # embeddings counted too
    envelope = [m.envelope_n / m.best_run["non_embedding_parameters"] for m in optimal]
    assert sum(ratio == 1 for ratio in envelope) == 4 and all(ratio == 1 or ratio > 2 for ratio in envelope)


def test_the_parabola_misplaces_the_optimum_of_an_exact_surface(results, law):
    ratios = [ratio for _, ratio in verdicts.parabola_bias(results, law)]
    assert min(ratios[:3]) < 0.8 and max(ratios[:3]) < 0.9
    assert all(abs(ratio - 1) < 0.06 for ratio in ratios[3:])


def test_on_the_runs_the_parabolas_dip_below_the_best_run_at_the_smaller_budgets(results):
    dips = [p.loss.min() - p.loss_opt for p in laws.isoflop_profiles(results)]
    assert all(dip > 0 for dip in dips[:5]) and 0.015 < max(dips) < 0.02


def test_approach_3_s_profile_is_flat_below_the_truth_and_steep_above(results, law):
    n, d, loss = laws.columns(laws.rows(results))
    profile = fits.profile_over_floor(n, d, loss, [0.5, 1.69, 1.72], starts=laws.FAST_STARTS)
    relative = profile / fits.parametric_objective(law, n, d, loss) - 1
    assert relative[0] < 0.02 and relative[1] < 0.005 and relative[2] > 0.05


def test_the_held_out_model_is_predicted_too_low_by_about_what_it_has_left_to_learn(results, law):
    errors = laws.held_out_errors(law, results)
    final = max(laws.rows(results, ("held-out",)), key=lambda row: row["steps"])
    excess = final["test_loss"] - results["test_entropy"]
    assert errors[8000] < 0 and abs(errors[8000]) == pytest.approx(excess, rel=0.1)
