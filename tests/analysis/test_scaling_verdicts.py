"""scaling_verdicts' own pieces: the resamples shared with approach 3's bootstrap, intervals over fits that failed,
the rule of thumb, and approach 2's floor on a surface whose floor is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs as grid
from course_utils.analysis import scaling_verdicts as verdicts
from course_utils.validation import CourseInputError


@pytest.fixture(scope="module")
def results():
    return grid.load_results()


def test_the_floors_are_bootstrapped_on_approach_3_s_resamples(results):
    """The same seed draws the same runs, so the three approaches' intervals come from the same resamples."""
    draws = laws.resample_draws(results, 3, laws.BOOTSTRAP_SEED)
    generator = np.random.default_rng(laws.BOOTSTRAP_SEED)
    count = len(laws.rows(results))
    assert all((picks == generator.integers(0, count, count)).all() for picks in draws)


def test_the_seed_ranges_are_three_seeds_of_one_flop_budget(results):
    ranges = verdicts.seed_ranges(results)
    assert len(ranges) == 6 and all(len(losses) == 3 for losses in ranges.values())
    assert {laws.budget_of(row) for row in laws.rows(results, ("seeds",), seed=1)} == {grid.SPREAD_DIAGONAL}
    assert verdicts.seed_noise(results) == pytest.approx(
        max(max(v) - min(v) for v in list(ranges.values())[:3])
    )  # the three within 0.05 of the floor


def test_a_resample_keeps_its_repeats_and_the_rest_of_the_results(results):
    picks = np.array([0, 0, 5])
    sample = verdicts._resampled(results, picks)
    assert len(laws.rows(sample)) == 3 and sample["test_entropy"] == results["test_entropy"]


def test_an_interval_leaves_out_the_resamples_that_could_not_be_fitted():
    low, high, kept = verdicts.finite_interval([1.0, math.nan, 2.0, 3.0])
    assert kept == 3 and 1.0 <= low < high <= 3.0
    with pytest.raises(CourseInputError, match="no resample"):
        verdicts.finite_interval([math.nan, math.nan])


def test_the_rule_of_thumb_spends_20_tokens_per_parameter():
    n = verdicts.rule_of_thumb_n(6 * 1e6 * 2e7)
    assert float(n) == pytest.approx(1e6) and 6 * n * 20 * n == pytest.approx(6 * 1e6 * 2e7)


def test_approach_2_s_floor_needs_three_budgets(results):
    few = {**results, "runs": {name: row for name, row in results["runs"].items() if row["steps"] <= 500}}
    with pytest.raises(CourseInputError, match="three budgets"):
        verdicts.isoflop_floor(few)


def test_on_an_exact_parabola_the_vertex_is_found():
    """parabola_bias's yardstick: a loss that is exactly a parabola in log N has its minimum found exactly."""
    n = np.array([1e4, 2e4, 4e4, 8e4])
    profile = fits.isoflop_profile(1e12, n, 2.0 + 0.01 * (np.log(n) - math.log(3e4)) ** 2)
    assert profile.n_opt == pytest.approx(3e4, rel=1e-9) and profile.loss_opt == pytest.approx(2.0)


def test_the_verdict_table_fits_the_projector_and_holds_every_row():
    rows = [("1: envelope", 1.75, [1.7, 1.8, math.nan], 1.7), ("3: parametric", 1.6, [1.5, 1.7], 1.7)]
    floors = verdicts.floor_table(rows, truth=1.7, best_loss=1.71).splitlines()
    assert len(floors) == 5 and max(map(len, floors)) <= 88
    assert floors[1].split()[-1] == "+0.0500" and floors[2].split()[-1] == "-0.1000"  # E minus the true E
    assert "(no floor)" in floors[3] and floors[4].split()[-1] == "+0.0100"
