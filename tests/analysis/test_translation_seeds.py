"""Notebook 07's seed runs: the run names, the spreads and verdicts read from a stored file, storing as it goes.

The stored results (``data/checkpoints/07/translation_seeds.json``) are checked against the shipped checkpoints here;
the claims they support are asserted in ``tests/claims/test_translation_claims.py``.
"""

from __future__ import annotations

import json

import pytest

from course_utils import CourseInputError
from course_utils.analysis import translation_seeds as ts
from course_utils.analysis.seed_spread import WITHIN_NOISE


def fake_results(values: dict[str, list[float]]) -> dict:
    """A stored-runs dict with one metric, "bleu", per model and seed."""
    return {"command": "made by hand", "runs": {ts.run_name(model, seed): {"scores": {"bleu": value}}
                                                 for model, row in values.items() for seed, value in enumerate(row)}}  # fmt: skip


def test_run_names_and_their_order():
    assert ts.run_name("dot_128", 1) == "dot_128 seed 1"
    assert ts.ORDER[:3] == ("none_128 seed 0", "none_128 seed 1", "none_128 seed 2")
    assert set(ts.MODELS) == set(ts.zoo.RECIPES) and ts.SEEDS == (0, 1, 2)


def test_a_stored_comparison_follows_the_noise_rule():
    results = fake_results({"a": [60.0, 61.0, 62.0], "b": [50.0, 50.5, 51.0], "c": [61.5, 58.0, 63.0]})
    spread_a, spread_b, verdict = ts.stored_comparison(results, "a", "b", "bleu")
    assert (spread_a.mean, spread_a.range, spread_b.mean) == (61.0, 2.0, 50.5) and verdict == "a better"
    assert ts.stored_comparison(results, "a", "b", "bleu", higher_is_better=False)[2] == "b better"
    assert ts.stored_comparison(results, "a", "c", "bleu")[2] == WITHIN_NOISE  # gap 0.17 < range 5


def test_a_comparison_line_prints_both_spreads_and_the_verdict():
    results = fake_results({"a": [1.0, 2.0, 3.0], "b": [5.0, 6.0, 7.0]})
    line = ts.comparison_line(results, "a", "b", "bleu", higher_is_better=False, labels=("A", "B"), digits=2)
    assert line == "A 2.00 (1.00–3.00, 3 seeds) | B 6.00 (5.00–7.00, 3 seeds) → A better"


def test_measure_all_stores_each_run_as_it_goes(tmp_path):
    path = tmp_path / "runs.json"
    order = [ts.run_name(name, seed) for name in ("x", "y") for seed in (0, 1)]
    measured = lambda name, seed: {"train_seconds": None, "scores": {"bleu": 10 * seed}}  # noqa: E731
    ts.measure_all(["y", "x"], [1, 0], measured, results_file=path, command="cmd", order=order, write=True)
    stored = json.loads(path.read_text())
    assert stored["command"] == "cmd" and list(stored["runs"]) == order
    assert stored["runs"]["x seed 1"]["scores"]["bleu"] == 10


def test_an_unknown_model_is_refused():
    with pytest.raises(CourseInputError, match="unknown model"):
        ts.measure("transformer_128", 1)


def test_the_stored_seed_0_row_is_the_shipped_model_and_every_model_has_its_seeds():
    results = ts.load_results()
    row = results["runs"][ts.run_name("dot_128", 0)]
    assert row["source"] == "shipped checkpoint"
    again = ts.zoo.scores(ts.zoo.LOADERS["dot_128"](), ts.parallel.load("test"))
    assert row["scores"]["test exact_match"] == round(again["exact_match"], 4)
    for name in ts.MAIN:
        assert {results["runs"][ts.run_name(name, seed)]["seed"] for seed in ts.SEEDS} == set(ts.SEEDS)
