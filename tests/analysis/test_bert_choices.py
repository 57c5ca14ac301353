"""Notebook 09's BERT choices: the scoring helpers by hand, the independence cost on the oracle, the stored results.

The stored results (``data/checkpoints/09/bert_choices.json``) are checked against the runs' recipes here; the claims
they support are asserted in ``tests/claims/test_bert_claims.py``.
"""

from __future__ import annotations

import math

import pytest

from course_utils import CourseInputError
from course_utils.analysis import bert_choices as bc
from course_utils.models.bert.wordpiece import split_share
from course_utils.zoo import load


class Spelling:
    """A stand-in tokenizer: each word's pieces from a table."""

    def __init__(self, pieces: dict[str, list[str]]):
        self.pieces = pieces

    def tokenize(self, word: str) -> list[str]:
        return self.pieces[word]


def test_ratios_by_pieces_split_the_items_by_piece_count():
    ratios = bc.ratios_by_pieces([1.0, 2.0, 4.0], [1.0, 1.0, 1.0], [1, 2, 3])
    assert ratios["one piece"] == 1.0 and ratios["multi-piece items"] == 2
    assert math.isclose(ratios["multi-piece"], math.exp(2.0)) and math.isclose(ratios["all"], math.exp(4 / 3))
    assert bc.ratios_by_pieces([1.0], [0.5], [1])["multi-piece"] is None


def test_piece_marginal_scoring_by_hand():
    spelling = Spelling({"ab": ["a", "##b"], "cd": ["c", "##d"], "ad": ["a", "##d"], "e": ["e"]})
    distribution = {"ab": 0.4, "cd": 0.2, "ad": 0.2, "e": 0.2}
    # told "two pieces": ab 0.5, cd 0.25, ad 0.25; marginals: mask 1 {a: 0.75, c: 0.25}, mask 2 {##b: 0.5, ##d: 0.5}
    # products: ab 0.375, cd 0.125, ad 0.375, renormalised over the three: ab 0.375 / 0.875
    assert math.isclose(bc._piece_marginal_scores(distribution, spelling, "ab"), -math.log(0.375 / 0.875))
    assert math.isclose(bc._piece_marginal_scores(distribution, spelling, "e"), 0.0)  # the only one-piece word
    independent = {"ab": 0.25, "ad": 0.25, "cb": 0.25, "cd": 0.25}  # the pieces are independent: nothing is lost
    spelling.pieces["cb"] = ["c", "##b"]
    assert math.isclose(bc._piece_marginal_scores(independent, spelling, "cd"), math.log(4))


def test_independence_cost_on_the_shipped_tokenizer_and_on_whole_words():
    items = bc.test_items()[:200]
    cost = bc.independence_cost(load("tokenizer"), items)
    assert cost["one piece"] == pytest.approx(1.0) and cost["multi-piece items"] > 0 and cost["multi-piece"] > 1.05
    whole = bc.tokenizer_of(bc.WHOLE_WORDS)
    assert split_share(whole, [["the", "cat", "sleeps", "."]]) == (0.0, 0.0)
    assert bc.independence_cost(whole, items)["multi-piece"] is None


def test_the_stored_runs_follow_their_recipes():
    results = bc.load_results()
    assert results["command"] == bc.COMMAND and list(results["runs"]) == [*bc.RUNS, *bc.SEED_RUNS]
    for name in bc.SEED_RUNS:
        row = results["runs"].pop(name)
        assert (row["model"], row["seed"]) == bc.SEED_RUNS[name] and row["shipped"] == (row["seed"] == 0)
    for name, row in results["runs"].items():
        assert {key: row[key] for key in bc.RUNS[name]} == bc.RUNS[name]
        assert row["entries"] == len(bc.tokenizer_of(row["vocab_size"]))
        assert 0 <= row["split"]["running"] <= row["split"]["distinct"] <= 1


def test_unknown_runs_are_named():
    with pytest.raises(CourseInputError, match="the runs are"):
        bc.pretrain("vocabulary 7")
    with pytest.raises(CourseInputError, match="they are"):
        bc.measure_seed("bert_mlm, seed 7")


def test_the_shipped_seed_rows_score_as_notebook_09_does():
    """Seed 0 is the shipped model, scored again: the stored row is the notebook's table."""
    tokenizer = load("tokenizer")
    assert bc.seed_values("bert_mlm", "test", "all")[0] == round(bc.score(load("bert_mlm"), tokenizer)["all"], 4)
    bilstm = bc.score_word_model(load("masked_bilstm"), tokenizer)["all"]
    assert bc.seed_values("masked_bilstm", "test", "all")[0] == round(bilstm, 4)


def test_seed_values_follow_the_keys():
    results = {"runs": {"bert_mlm, seed 0": {"a": [1, 2], "test": {"all": 1.1}},
                        "bert_mlm, seed 2": {"a": [3, 4], "test": {"all": 1.2}}}}  # fmt: skip
    assert bc.seed_values("bert_mlm", "a", 1, results=results) == [2, 4]
    with pytest.raises(CourseInputError, match="at least 3"):
        bc.seed_spreads(results)


def test_the_choice_tables_print_the_stored_runs():
    choices = bc.load_results()
    rows = bc.choice_rows(choices, ["vocabulary 600", "every word whole"]).splitlines()
    assert len(rows) == 2 and rows[0].startswith("vocabulary 600") and rows[1].endswith("—")  # no split word at all
    assert len(rows[0]) == len(bc.CHOICE_HEAD)
    gap = choices["runs"]["vocabulary 1000"]["test"]["all"] - choices["runs"]["vocabulary 600"]["test"]["all"]
    assert bc.change(choices, "vocabulary 600", "vocabulary 1000", abs(gap) / 2) == (
        f"{gap:+.3f}, beyond the seeds' range ({abs(gap) / 2:.4f})"
    )
    assert "within" in bc.change(choices, "vocabulary 600", "vocabulary 1000", 2 * abs(gap))


def test_the_accuracy_spreads_fit_the_projector():
    lines = bc.accuracy_spreads("100 labels").splitlines()
    assert len(lines) == 4 and max(map(len, lines)) <= 88
    assert lines[1].endswith(bc.verdict(*(bc.fine_tuning_spread("100 labels", start, 0)
                                          for start in ("fine-tuned", "no pretraining")),
                                        ("fine-tuned", "no pretraining"), higher_is_better=True))  # fmt: skip
