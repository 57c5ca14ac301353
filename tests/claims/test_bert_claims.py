"""Notebook 09's BERT choices, asserted on the stored runs (``data/checkpoints/09/bert_choices.json``) and on the
shipped checkpoints.

Measured (2026-11-27, this 2-core Xeon, one thread per run, two runs at a time), masked NLL ÷ the oracle's on notebook
09's 500 test items, told the piece count: the same recipe (4,000 steps on the split) with 600 / 800 / 1,000 entries /
every word whole (1,122): 1.309 / 1.160 / 1.124 / 1.121; at 1,000 entries, masking 40 %: 1.120; the stream at 4,000
steps 1.134, at 8,000 steps 1.067 (40 %: 1.075). Issue 24's goal for the shipped BERT is ≤ 1.10 and no worse than the BiLSTM.
"""

from __future__ import annotations

import pytest

from course_utils.analysis import bert_choices
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


def test_more_steps_reach_the_goal(ratio):
    assert ratio[SHIPPED_RUN] <= 1.10 < ratio["vocabulary 1000"]


def test_the_masking_rate_barely_matters_at_this_size(ratio):
    """Wettig et al. (2023): 40 % beats 15 % for BERT-large; larger models favour higher rates. Ours is tiny."""
    assert abs(ratio["masking 40 %"] - ratio["vocabulary 1000"]) < 0.02
    assert abs(ratio["the stream, 8,000 steps, 40 %"] - ratio["the stream, 8,000 steps"]) < 0.02
