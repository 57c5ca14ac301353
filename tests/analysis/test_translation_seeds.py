"""Notebook 07's seed runs: the run names and order, and the stored file against the shipped checkpoints.

The stored results (``data/checkpoints/07/translation_seeds.json``) are checked against the shipped checkpoints here;
the claims they support are asserted in ``tests/claims/test_translation_claims.py``.
"""

from __future__ import annotations

import pytest

from course_utils import CourseInputError
from course_utils.analysis import translation_seeds as ts


def test_run_names_and_their_order():
    assert ts.run_name("dot_128", 1) == "dot_128 seed 1"
    assert ts.ORDER[:3] == ("none_128 seed 0", "none_128 seed 1", "none_128 seed 2")
    assert set(ts.MODELS) == set(ts.zoo.RECIPES) and ts.SEEDS == (0, 1, 2)


def test_an_unknown_model_is_refused():
    with pytest.raises(CourseInputError, match="unknown model"):
        ts.measure("transformer_128", 1)


def test_bleu_not_beaten_lists_the_buckets_where_the_gap_is_within_noise():
    runs = {f"{name} seed {seed}": {"scores": {"bleu 3–6": value, "bleu 7–10": value + offset}}
            for name, offset, values in (("none_128", 0, (10, 11, 12)), ("dot_128", 30, (11, 12, 13)))
            for seed, value in enumerate(values)}  # fmt: skip
    results = {"runs": runs}
    assert ts.bleu_not_beaten(results, {"dot": "dot_128"}, ["3–6", "7–10"]) == [("dot", "3–6")]
    assert ts.bleu_not_beaten(results, {"dot": "dot_128"}, ["7–10"]) == []


def test_the_stored_seed_0_row_is_the_shipped_model_and_every_model_has_its_seeds():
    results = ts.load_results()
    row = results["runs"][ts.run_name("dot_128", 0)]
    assert row["source"] == "shipped checkpoint"
    again = ts.zoo.scores(ts.zoo.LOADERS["dot_128"](), ts.parallel.load("test"))
    assert row["scores"]["test exact_match"] == round(again["exact_match"], 4)
    for name in ts.MAIN:
        assert {results["runs"][ts.run_name(name, seed)]["seed"] for seed in ts.SEEDS} == set(ts.SEEDS)
