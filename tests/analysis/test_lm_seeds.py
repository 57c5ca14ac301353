"""Notebooks 04-06's seed spreads: where the runs are stored, that they follow their recipes, that a run repeats.

The claims the stored runs support are asserted in ``tests/claims/test_lm_claims.py`` (04) and
``tests/claims/test_rnn_claims.py`` (05-06).
"""

from __future__ import annotations

import json

import pytest

from course_utils import CourseInputError
from course_utils.analysis import lm_seeds
from course_utils.zoo import lm_checkpoints as zoo


def test_each_notebook_keeps_its_runs_beside_its_checkpoints():
    assert lm_seeds.results_file("few_reviews_random") == zoo.CHECKPOINT_DIR / "lm_seeds.json"
    assert lm_seeds.results_file("masked_concat_w4") == zoo.CHECKPOINT_DIR / "lm_seeds.json"
    assert lm_seeds.results_file("lstm_lm") == zoo.RECURRENT_DIR / "lm_seeds.json"
    assert lm_seeds.run_name("lstm_lm", 1) == "lstm_lm seed 1"


@pytest.mark.parametrize("model", list(lm_seeds.SEEDS))
def test_every_model_has_a_stored_run_for_each_of_its_seeds(model):
    stored = json.loads(lm_seeds.results_file(model).read_text(encoding="utf-8"))
    assert stored["command"] == lm_seeds.COMMAND
    rows = lm_seeds.load_results(model)
    assert sorted(rows) == sorted(lm_seeds.SEEDS[model]) and len(rows) >= 3
    for seed, row in rows.items():
        assert row["model"] == model and row["seed"] == seed and row["torch_threads"] == 1


@pytest.mark.parametrize("model", [m for m in lm_seeds.SEEDS if not m.startswith("few_reviews")])
def test_seed_0_is_the_shipped_checkpoint(model):
    shipped = json.loads((zoo.checkpoint_dir(model) / "config.json").read_text(encoding="utf-8"))
    assert shipped["recipe"]["seed"] == 0
    assert lm_seeds.load_results(model)[0]["train_seconds"] == round(shipped["train_seconds"], 1)


def test_a_stored_run_repeats_when_it_is_trained_again():
    """The 100-review classifier trains in a second: seed 2 again gives the stored accuracies."""
    again = lm_seeds.measure("few_reviews_pretrained", 2)["test"]
    stored = lm_seeds.load_results("few_reviews_pretrained")[2]["test"]
    assert again == pytest.approx(stored, abs=1e-9)


def test_a_list_score_is_read_at_an_index():
    five = lm_seeds.seed_spread("lstm_lm", "agreement", 5)
    assert five.values == tuple(row["test"]["agreement"][5] for row in lm_seeds.load_results("lstm_lm").values())


def test_unknown_models_are_clear_errors():
    with pytest.raises(CourseInputError, match="unknown model"):
        lm_seeds.main(["--only", "lstm_xl"])
