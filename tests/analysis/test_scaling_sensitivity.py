"""The sensitivity of approach 3 to analysis choices, and the learning-rate sweep (issue 44)."""

from __future__ import annotations

import pytest

from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs
from course_utils.analysis import scaling_sensitivity as sensitivity
from course_utils.validation import CourseInputError


@pytest.fixture(scope="module")
def results():
    return scaling_runs.load_results()


def _choice(label_start: str) -> sensitivity.Choice:
    return next(choice for choice in sensitivity.CHOICES if choice.label.startswith(label_start))


def test_each_choice_fits_the_runs_it_names(results):
    every = laws.rows(results)
    assert sensitivity.chosen_runs(results, sensitivity.CHOICES[0]) == every
    assert all(row["steps"] >= 2000 for row in sensitivity.chosen_runs(results, _choice("runs of ≥ 2,000")))
    without = sensitivity.chosen_runs(results, _choice("without"))
    assert len(without) == len(every) - sum(row["n_layer"] == 1 for row in every)


def test_a_seed_swap_replaces_exactly_the_runs_trained_again(results):
    every = laws.rows(results)
    swapped = sensitivity.chosen_runs(results, _choice("seed 1"))
    changed = [(a, b) for a, b in zip(every, swapped) if a is not b]
    twins = laws.rows(results, ("seeds",), seed=1)
    assert len(changed) == len(twins) > 0 and len(swapped) == len(every)
    assert all(b["seed"] == 1 and (a["n_layer"], a["n_embd"], a["steps"]) == (b["n_layer"], b["n_embd"], b["steps"])
               for a, b in changed)  # fmt: skip


def test_a_choice_that_leaves_nothing_is_refused(results):
    with pytest.raises(CourseInputError, match="no run"):
        sensitivity.chosen_runs(results, sensitivity.Choice("none", min_steps=10**7))


def test_the_spread_compares_like_with_like():
    rows = [{"choice": sensitivity.CHOICES[0].label, "kind": "analysis", "counting": "kaplan", "error": 0.0},
            {"choice": "b", "kind": "analysis", "counting": "kaplan", "error": -0.1},
            {"choice": "s", "kind": "seed", "counting": "kaplan", "error": 0.001},
            {"choice": "b", "kind": "analysis", "counting": "chinchilla", "error": 0.5}]  # fmt: skip
    assert sensitivity.spread(rows, "kaplan") == pytest.approx(0.1)
    assert sensitivity.spread(rows, "kaplan", kind="seed") == pytest.approx(0.001)


def test_the_stored_table_is_what_the_code_gives(results):
    stored = sensitivity.load_sensitivity()
    assert stored["command"] == sensitivity.SENSITIVITY_COMMAND and stored["runs"] == laws.runs_fingerprint(results)
    assert [row["choice"] for row in stored["rows"][::2]] == [choice.label for choice in sensitivity.CHOICES]
    again = sensitivity.fit_row(results, _choice("without"), "chinchilla")
    row = next(r for r in stored["rows"] if r["choice"] == again["choice"] and r["counting"] == "chinchilla")
    assert again["E"] == pytest.approx(row["E"], abs=1e-3) and again["a"] == pytest.approx(row["a"], abs=1e-3)
    assert all(len(line) <= 88 for line in sensitivity.sensitivity_table(stored["rows"]).splitlines())


def test_the_learning_rate_sweep_is_stored_whole(results):
    sweep = sensitivity.lr_sweep(results)
    assert set(sweep) == {(*shape, steps) for shape in scaling_runs.LR_SHAPES for steps in scaling_runs.LR_BUDGETS}
    assert all(list(losses) == list(sensitivity.LR_ORDER) for losses in sweep.values())
    for (layers, width, steps), losses in sweep.items():
        rule = results["runs"][scaling_runs.Run(layers, width, steps).name]
        assert losses["1"] == rule["test_loss"]
        swept = results["runs"][scaling_runs.Run(layers, width, steps, lr_factor="3").name]
        assert swept["lr"] == pytest.approx(3 * rule["lr"], rel=1e-4) and swept["part"] == "lr"
