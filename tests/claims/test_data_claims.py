"""More data or a bigger model? The streamed models (fresh sentences, none seen twice) against the same models trained
on the 60,000-sentence split, on the test split, asserted on the shipped checkpoints. And notebook 08's comparisons
over three seeds (``analysis.transformer_seeds``): positions, the block ablation, dropout, the GPT against 06's RNNs,
the transformer translator against 07's GRUs.

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


# ---------------------------------------------------------------- notebook 08 over three seeds (analysis.transformer_seeds)
# Each verdict is seed_spread's rule on the stored runs; the spreads are asserted with it, to the stored 4 decimals.


@pytest.fixture(scope="module")
def seed_runs() -> dict:
    from course_utils.analysis import transformer_seeds

    return transformer_seeds.load_results()


def _said(runs, a, b, metric, higher_is_better=False):
    from course_utils.analysis.seed_runs import stored_comparison

    return stored_comparison(runs, a, b, metric, higher_is_better=higher_is_better, labels=(a, b))


def test_no_positions_extrapolate_best_and_sinusoids_worst(seed_runs):
    names = {kind: f"positions_{kind}" for kind in ("learned", "sinusoidal", "none")}
    for better, worse in (("learned", "sinusoidal"), ("none", "sinusoidal"), ("none", "learned")):
        assert _said(seed_runs, names[better], names[worse], "unseen")[2] == f"{names[better]} better"
    sinusoidal, learned, _ = _said(seed_runs, names["sinusoidal"], names["learned"], "unseen")
    assert (sinusoidal.low, learned.high) == pytest.approx((1.9543, 1.1424))
    from course_utils.analysis.seed_runs import stored_spread

    assert all(stored_spread(seed_runs, name, "seen").high < 0.25 for name in names.values())


def test_the_block_ablation_over_three_seeds(seed_runs):
    gpt2 = "ablation: pre-LN + residuals (GPT-2)"
    no_residuals, base, said = _said(seed_runs, "ablation: no residuals", gpt2, "valid_ratio")
    assert said == f"{gpt2} better" and no_residuals.low > 5 * base.high
    no_norm, _, said = _said(seed_runs, "ablation: no LayerNorm", gpt2, "valid_ratio")
    assert said == "ablation: no LayerNorm better" and no_norm.range == pytest.approx(0.0909)
    post, _, said = _said(seed_runs, "ablation: post-LN (the paper)", gpt2, "valid_ratio")
    assert said == "ablation: post-LN (the paper) better" and (post.mean, post.range) == pytest.approx((3.2874, 0.1082))
    warm, post, said = _said(seed_runs, "ablation: post-LN + warm-up", "ablation: post-LN (the paper)", "valid_ratio")
    assert said == "ablation: post-LN (the paper) better" and warm.range == pytest.approx(0.2873)


def test_without_residuals_the_first_block_gets_more_gradient_and_a_smaller_signal(seed_runs):
    gpt2 = "ablation: pre-LN + residuals (GPT-2)"
    gradient, base_gradient, said = _said(seed_runs, "ablation: no residuals", gpt2, "first_layer_gradient", True)
    assert said == "ablation: no residuals better" and gradient.low > 5 * base_gradient.high  # larger, not vanishing
    signal, base_signal, _ = _said(seed_runs, "ablation: no residuals", gpt2, "block_input_std")
    assert signal.high < 0.25 < 1.3 < base_signal.low


def test_each_step_up_in_dropout_narrows_the_gap(seed_runs):
    assert _said(seed_runs, "dropout 0.1", "dropout 0.0", "gap")[2] == "dropout 0.1 better"
    narrower, wider, said = _said(seed_runs, "dropout 0.3", "dropout 0.1", "gap")
    assert said == "dropout 0.3 better" and (narrower.high, wider.low) == pytest.approx((1.4568, 2.046))
    assert _said(seed_runs, "dropout 0.3", "dropout 0.1", "valid_ratio")[2] == "within noise"


def test_the_gpt_beats_the_gru_and_the_lstm_on_the_split_in_three_seeds(seed_runs):
    from course_utils.analysis import lm_seeds
    from course_utils.analysis.seed_spread import verdict
    from course_utils.analysis.seed_runs import stored_spread

    gpt = stored_spread(seed_runs, "gpt_lm", "test_perplexity")
    for name in ("gru_lm", "lstm_lm"):
        assert verdict(gpt, lm_seeds.seed_spread(name, "perplexity"), ("GPT", name)) == "GPT better"
    ratio = stored_spread(seed_runs, "gpt_lm", "test_ratio")
    assert ratio.range == pytest.approx(0.0011)


def test_the_bigger_model_gains_less_than_the_gpts_own_spread(stored_runs, seed_runs):
    from course_utils.analysis.seed_runs import stored_spread

    ratio = stored_spread(seed_runs, "gpt_lm", "test_ratio")
    gain = {name: stored_runs["2x64 split 4500"]["test_ratio"] - stored_runs[name]["test_ratio"]
            for name in ("4x256 split 4500", "2x64 stream 4500")}  # fmt: skip
    assert gain["4x256 split 4500"] < ratio.range < 3 * ratio.range < gain["2x64 stream 4500"]


def test_the_transformer_translator_against_07s_grus_over_three_seeds(seed_runs):
    from course_utils.analysis import translation_seeds
    from course_utils.analysis.seed_spread import verdict
    from course_utils.analysis.seed_runs import stored_spread

    both = {"runs": {**translation_seeds.load_results()["runs"], **seed_runs["runs"]}}
    for gru in ("additive_128", "dot_128"):  # fewer passages entirely right at 15–21 words than either GRU
        assert _said(both, gru, "transformer_2x128", "exact_match 15–21", True)[2] == f"{gru} better"
    assert _said(both, "transformer_2x128", "dot_128", "test exact_match", True)[2] == "within noise"
    assert _said(both, "transformer_2x128", "additive_128", "bleu 22–28", True)[2] == "transformer_2x128 better"
    assert _said(both, "transformer_2x128", "additive_128", "bleu 15–21", True)[2] == "within noise"
    best, worst = (stored_spread(both, "transformer_2x128", m) for m in ("best head aer", "worst head aer"))
    for gru in ("additive_128", "dot_128"):
        assert verdict(best, stored_spread(both, gru, "aer")) == "within noise"
    assert best.high < 0.12 < 0.23 < worst.low
