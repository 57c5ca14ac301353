"""More data or a bigger model? The streamed models (fresh sentences, none seen twice) against the same models trained
on the 60,000-sentence split, on the test split, asserted on the shipped checkpoints.

Measured on them (2026-11-26, this 2-core Xeon, one thread), test perplexity ÷ the oracle's:
gpt_lm 1.0242 (4,500 steps on the split) against gpt_stream 1.0145 (9,000 steps of 64 fresh sentences, 496 s);
lstm_lm 1.0447 (3,000 steps on the split) against lstm_stream 1.0172 (9,000 steps of the same stream, 225 s).
A 4,500-step stream run of gpt_stream's recipe gave 1.0200. Issue 24's goal for the streamed GPT is ≤ 1.015.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_utils.checkpoints import CONFIG_FILE, verify_checkpoint
from course_utils.language.vocab import course_vocab
from course_utils.models import lm
from course_utils.zoo import lm_checkpoints, load, transformer_checkpoints

pytestmark = pytest.mark.slow  # claims measured on shipped models: CI runs them, the quick subset does not

MODELS = ("gpt_lm", "gpt_stream", "lstm_lm", "lstm_stream")
MAX_STREAMED_GPT_RATIO = 1.015  # the goal; measured 1.0145


@pytest.fixture(scope="module")
def test_ratios(held_out_sentences, oracle_perplexity) -> dict[str, float]:
    """Each model's perplexity on the test split ÷ the oracle's (conftest's session fixtures)."""
    return {name: lm.evaluate(load(name), course_vocab(), held_out_sentences).perplexity / oracle_perplexity
            for name in MODELS}  # fmt: skip


def _shipped_config(directory: Path) -> dict:
    verify_checkpoint(directory)
    return json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))


def test_the_streamed_models_were_trained_by_their_recipes():
    gpt = _shipped_config(transformer_checkpoints.checkpoint_dir("gpt_stream"))
    lstm = _shipped_config(lm_checkpoints.checkpoint_dir("lstm_stream"))
    assert gpt["recipe"] == transformer_checkpoints.LM_RECIPES["gpt_stream"][1] and gpt["recipe"]["data"] == "stream"
    assert lstm["recipe"] == lm_checkpoints.RECURRENT_RECIPES["lstm_stream"][2] and lstm["recipe"]["data"] == "stream"
    assert (
        gpt["recipe"]["steps"] * gpt["recipe"]["batch_size"] == lstm["recipe"]["steps"] * lstm["recipe"]["batch_size"]
    )


def test_the_streamed_gpt_reaches_the_goal(test_ratios):
    assert 1 < test_ratios["gpt_stream"] <= MAX_STREAMED_GPT_RATIO, test_ratios


def test_fresh_data_helps_both_models(test_ratios):
    assert test_ratios["gpt_stream"] < test_ratios["gpt_lm"] and test_ratios["lstm_stream"] < test_ratios["lstm_lm"]


def test_the_transformer_still_wins_when_neither_is_data_bound_but_by_less(test_ratios):
    on_split = test_ratios["lstm_lm"] - test_ratios["gpt_lm"]
    on_stream = test_ratios["lstm_stream"] - test_ratios["gpt_stream"]
    assert 0 < on_stream < on_split, test_ratios


# ---------------------------------------------------------------- notebook 08's four runs (analysis.data_or_model)


@pytest.fixture(scope="module")
def stored_runs() -> dict[str, dict]:
    from course_utils.analysis import data_or_model

    return data_or_model.load_results()["runs"]


def test_the_stored_shipped_runs_are_the_shipped_models(stored_runs, test_ratios):
    """The stored ratios (4 decimals) are the shipped checkpoints', to well above another CPU's rounding."""
    assert abs(stored_runs["2x64 split 4500"]["test_ratio"] - test_ratios["gpt_lm"]) < 5e-4
    assert abs(stored_runs["2x64 stream 9000"]["test_ratio"] - test_ratios["gpt_stream"]) < 5e-4


def test_fresh_data_beats_a_bigger_model(stored_runs):
    ratio = {name: run["test_ratio"] for name, run in stored_runs.items()}
    assert ratio["2x64 stream 4500"] < ratio["2x64 split 4500"]  # the same budget, fresh sentences
    assert ratio["2x64 stream 4500"] < ratio["4x256 split 4500"]  # 23 times the parameters, the split
    assert ratio["2x64 stream 9000"] < ratio["2x64 stream 4500"]  # more fresh sentences


def test_the_stored_runs_can_be_trained_again(stored_runs):
    from course_utils.analysis import data_or_model

    again = data_or_model.short_run("4x256 split 4500", steps=5)
    assert max(abs(a - b) for a, b in zip(again["shipped"], again["again"])) < 0.01
