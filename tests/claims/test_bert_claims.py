"""Notebook 09's BERT choices, asserted on the stored runs (``data/checkpoints/09/bert_choices.json``) and on the
shipped checkpoints.

Measured (2026-11-27, this 2-core Xeon, one thread per run, two runs at a time), masked NLL ÷ the oracle's on notebook
09's 500 test items, told the piece count: the same recipe (4,000 steps on the split) with 600 / 800 / 1,000 entries /
every word whole (1,122): 1.309 / 1.160 / 1.124 / 1.121; at 1,000 entries, masking 40 %: 1.120; the stream at 4,000
steps 1.134, at 8,000 steps 1.067 (40 %: 1.075). Issue 24's goal for the shipped BERT is ≤ 1.10 and no worse than the BiLSTM.

Seeds (issue 32, the same machine, one thread, beside three other jobs): the shipped recipes drawn again with seeds 1
and 2 (``bert_choices --write --only "bert_mlm, seed 1" …``): bert_mlm 1.0839 (shipped) / 1.0631 / 1.0866, 635 s and
470 s to train; masked_bilstm 1.0960 (shipped) / 1.1042 / 1.0984, 69 s and 66 s. The gap between the means (0.0217)
is within the BERT's range (0.0235): within noise. Each BERT seed also fine-tuned as section 5 does.
"""

from __future__ import annotations

import pytest

from course_utils.analysis import bert_choices
from course_utils.analysis.seed_spread import WITHIN_NOISE, spread, verdict
from course_utils.models.bert.wordpiece import COURSE_VOCAB_SIZE
from course_utils.zoo import bert_checkpoints

SHIPPED_RUN = "the stream, 8,000 steps"  # bert_mlm's recipe: 15 %, since 40 % did no better (1.075 against 1.067)
pytestmark = (
    pytest.mark.slow
)  # claims on the stored runs and the shipped models: CI runs them, the quick subset does not


@pytest.fixture(scope="module")
def ratio() -> dict[str, float]:
    return {name: run["test"]["all"] for name, run in bert_choices.load_results()["runs"].items()}


def test_a_bigger_vocabulary_helps_until_only_rare_words_split(ratio):
    runs = bert_choices.load_results()["runs"]
    shares = [runs[name]["split"]["running"] for name in ("vocabulary 600", "vocabulary 800", "vocabulary 1000")]
    assert shares == sorted(shares, reverse=True) and runs["every word whole"]["split"]["running"] == 0
    assert ratio["vocabulary 600"] - ratio["vocabulary 1000"] > 0.1
    assert abs(ratio["vocabulary 1000"] - ratio["every word whole"]) < 0.02
    assert runs["vocabulary 1000"]["entries"] == COURSE_VOCAB_SIZE  # the size the curve chose is the shipped one


def test_the_shipped_bert_is_the_stored_stream_run():
    recipe, run = bert_checkpoints.RECIPES["bert_mlm"], bert_choices.RUNS[SHIPPED_RUN]
    assert recipe["data"] == run["data"] == "stream"
    assert {key: recipe[key] for key in ("steps", "batch_size", "lr", "seed", "clip_grad_norm", "probability")} == {
        key: run[key] for key in ("steps", "batch_size", "lr", "seed", "clip_grad_norm", "probability")
    }
    assert run["vocab_size"] == COURSE_VOCAB_SIZE


@pytest.fixture(scope="module")
def noise() -> float:
    """The shipped recipe's range over its three seeds: what notebook 09 reads its single stored runs against."""
    return bert_choices.seed_spreads()["bert_mlm"].range


def test_more_steps_reach_the_goal(ratio, noise):
    assert ratio[SHIPPED_RUN] <= 1.10 < ratio["vocabulary 1000"]
    assert ratio["vocabulary 1000"] - ratio["the split, 8,000 steps"] > noise  # twice the steps: beyond the seeds
    assert ratio["the stream"] - ratio[SHIPPED_RUN] > noise


def test_fresh_sentences_change_the_ratio_within_noise(ratio, noise):
    """Notebook 09 §4.1, "More data": the stream against the split, at 4,000 and at 8,000 steps."""
    assert abs(ratio["the stream"] - ratio["vocabulary 1000"]) < noise
    assert abs(ratio[SHIPPED_RUN] - ratio["the split, 8,000 steps"]) < noise


def test_the_masking_rate_barely_matters_at_this_size(ratio, noise):
    """Wettig et al. (2023): 40 % beats 15 % for BERT-large; larger models favour higher rates. Ours is tiny."""
    assert abs(ratio["masking 40 %"] - ratio["vocabulary 1000"]) < noise
    assert abs(ratio["the stream, 8,000 steps, 40 %"] - ratio["the stream, 8,000 steps"]) < noise


def test_the_bert_and_the_bilstm_are_within_noise():
    """Notebook 09 §4.1's headline, over seeds 0 (shipped), 1, 2: 1.084 against 1.096 in one run each."""
    bert, bilstm = (bert_choices.seed_spreads()[name] for name in ("bert_mlm", "masked_bilstm"))
    assert bert.format() == "1.078 (1.063–1.087, 3 seeds)" and bilstm.format() == "1.100 (1.096–1.104, 3 seeds)"
    assert verdict(bert, bilstm, ("BERT", "BiLSTM")) == WITHIN_NOISE
    assert bert.high <= 1.10  # issue 24's goal holds at every seed


def _fine_tuning(*keys):
    return spread(bert_choices.seed_values("bert_mlm", "fine-tuning", *keys))


@pytest.mark.parametrize(
    "column, before, after",
    [("reviews", "1.102 (1.100–1.103, 3 seeds)", "1.101 (1.098–1.102, 3 seeds)"),
     ("general", "1.109 (1.093–1.129, 3 seeds)", "1.111 (1.093–1.135, 3 seeds)")],
)  # fmt: skip
def test_lm_fine_tuning_on_the_reviews_changes_nothing_beyond_noise(column, before, after):
    """Notebook 09 §5.1: 1.104 → 1.101 on the reviews, 1.130 → 1.135 on general sentences in the shipped run."""
    pretrained, tuned = _fine_tuning("pretrained", column), _fine_tuning("lm fine-tuned", column)
    assert (pretrained.format(), tuned.format()) == (before, after)
    assert verdict(tuned, pretrained) == WITHIN_NOISE


@pytest.mark.parametrize(
    "labels, column, tuned_text, scratch_text",
    [("sentiment", 0, "1.000 (1.000–1.000, 3 seeds)", "1.000 (1.000–1.000, 3 seeds)"),
     ("sentiment", 2, "1.000 (1.000–1.000, 3 seeds)", "1.000 (1.000–1.000, 3 seeds)"),
     ("100 labels", 0, "0.693 (0.653–0.757, 3 seeds)", "0.715 (0.663–0.754, 3 seeds)"),
     ("100 labels", 2, "0.588 (0.566–0.631, 3 seeds)", "0.612 (0.583–0.641, 3 seeds)")],
)  # fmt: skip
def test_pretraining_buys_the_classifier_nothing_beyond_noise(labels, column, tuned_text, scratch_text):
    """Notebook 09 §5.2: fine-tuned from bert_reviews against the same classifier from random weights (accuracy on
    all test reviews, column 0, and on those with but/not, column 2), with 3,000 and with 100 labels."""
    tuned, scratch = _fine_tuning(labels, "fine-tuned", column), _fine_tuning(labels, "no pretraining", column)
    assert (tuned.format(), scratch.format()) == (tuned_text, scratch_text)
    assert verdict(tuned, scratch, higher_is_better=True) == WITHIN_NOISE
