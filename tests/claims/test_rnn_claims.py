"""The lectures' claims about recurrent LMs (notebooks 05-06), asserted on the shipped checkpoints.

rnn_lm, gru_lm and lstm_lm share one recipe (hidden 128, the same steps and data), so they compare
cells, not budgets. rnn_wide_lm and lstm_wide_lm double the hidden state: the honest counterpoint.
"""

from __future__ import annotations

import math

import pytest
import torch

from course_utils.language import corpus
from course_utils.models import lm
from course_utils.zoo import lm_checkpoints as zoo
from course_utils.zoo import load
from course_utils.language.vocab import course_vocab
from course_utils.evaluation.agreement import accuracy_by_attractors, form_probs
from course_utils.checkpoints import verify_checkpoint
from course_utils.language.grammar import CourseLanguage
from course_utils.models.recurrent.recurrent_lm import ElmoClassifier, masked_batches
from course_utils.analysis import lm_seeds
from course_utils.analysis.seed_spread import WITHIN_NOISE, verdict

pytestmark = pytest.mark.slow  # claims measured on shipped models: CI runs them, the quick subset does not

COMPARED = ("rnn_lm", "gru_lm", "lstm_lm", "lstm2_lm", "rnn_wide_lm", "lstm_wide_lm")


@pytest.fixture(scope="module")
def models():
    return {name: load(name) for name in COMPARED}


@pytest.fixture(scope="module")
def ratios(models, held_out_sentences, oracle_perplexity):
    vocab = course_vocab()
    return {name: lm.evaluate(model, vocab, held_out_sentences).perplexity / oracle_perplexity
            for name, model in models.items()}  # fmt: skip


@pytest.fixture(scope="module")
def agreement(models):
    items = corpus.load_eval("agreement")
    vocab = course_vocab()
    return {name: accuracy_by_attractors(form_probs(model, vocab, items), items) for name, model in models.items()}


@pytest.mark.parametrize("name", list(zoo.RECURRENT_RECIPES))
def test_every_shipped_checkpoint_matches_its_manifest_and_recipe(name):
    verify_checkpoint(zoo.RECURRENT_DIR / name)
    kind, config, _ = zoo.RECURRENT_RECIPES[name]
    assert isinstance(load(name), type(zoo.build_model(kind, config)))


def test_the_compared_cells_share_one_recipe():
    recipes = [zoo.RECURRENT_RECIPES[name] for name in ("rnn_lm", "gru_lm", "lstm_lm")]
    assert {r[0] for r in recipes} == {"recurrent"}
    assert all({**r[1], "cell": None} == {**recipes[0][1], "cell": None} and r[2] == recipes[0][2] for r in recipes)


def test_every_recurrent_lm_is_close_to_the_oracle_and_none_beats_it(ratios):
    for name, ratio in ratios.items():
        assert 1.0 < ratio <= 1.10, name


def test_on_the_whole_test_split_the_lstm_and_the_rnn_tie(ratios):
    """The lecture's "LSTM is closer to the oracle" does not show in perplexity here: notebook 06 says so.

    Measured: RNN 1.0441, LSTM 1.0444 times the oracle's. Tokens that need a long dependency are rare.
    """
    assert abs(ratios["lstm_lm"] - ratios["rnn_lm"]) <= 0.005


def excess_nll_of_the_verb(model, items, lang) -> float:
    """Mean nats the model loses to the oracle on the correct verb form after each item's prefix."""
    vocab, total = course_vocab(), 0.0
    probs = form_probs(model, vocab, items)[:, 0]  # (N,): P(correct form)
    for p, item in zip(probs, items):
        total += math.log(lang.next_distribution(item["prefix"])[item["correct"]]) - math.log(p)
    return total / len(items)


def test_where_the_dependency_is_long_the_lstm_is_much_closer_to_the_oracle(models):
    lang = CourseLanguage(include_held_out=False)
    items = [item for item in corpus.load_eval("agreement") if item["attractors"] >= 1]
    rnn, lstm = (excess_nll_of_the_verb(models[name], items, lang) for name in ("rnn_lm", "lstm_lm"))
    assert lstm < 0.5 * rnn
    assert rnn > 0.5  # nats per verb: the RNN pays for the attractors


def test_every_recurrent_lm_beats_the_ffnn_with_a_five_word_window(ratios, held_out_sentences, oracle_perplexity):
    ffnn = lm.evaluate(load("ffnn_n5"), course_vocab(), held_out_sentences).perplexity / oracle_perplexity
    for name, ratio in ratios.items():
        assert ratio < ffnn, name


def test_without_attractors_every_model_agrees(agreement):
    for name, accuracy in agreement.items():
        assert accuracy[0] >= 0.9, name


def test_at_the_longest_distance_the_lstm_agrees_clearly_more_often_than_the_rnn(agreement):
    longest = max(agreement["lstm_lm"])
    assert agreement["lstm_lm"][longest] >= agreement["rnn_lm"][longest] + 0.3
    assert agreement["gru_lm"][longest] >= agreement["rnn_lm"][longest] + 0.3


def test_the_lstm_meets_the_issues_target_with_two_attractors(agreement):
    assert agreement["lstm_lm"][2] >= 0.95


def test_with_twice_the_hidden_state_the_rnn_catches_up(agreement):
    longest = max(agreement["rnn_wide_lm"])
    assert agreement["rnn_wide_lm"][longest] >= agreement["rnn_lm"][longest] + 0.3


def test_both_sides_predict_a_word_better_than_the_left_side_alone(models):
    vocab = course_vocab()
    ids = lm.encode_sentences(vocab, corpus.load_split("test")[:500])
    idx, targets = masked_batches(ids, vocab, batch_size=len(ids), seed=0)(0)
    with torch.no_grad():
        _, masked_nll = load("masked_bilstm")(idx, targets)
        left_idx, left_targets = lm.make_batch(ids, vocab)
        words_only = left_targets.masked_fill(left_targets == vocab.eos_id, lm.IGNORE_INDEX)  # the same words
        _, left_nll = models["lstm_lm"](left_idx, words_only)
    assert float(masked_nll) < float(left_nll) - 0.2


def test_elmo_mixes_its_layers_with_weights_that_sum_to_one_and_beats_chance():
    classifier = load("elmo_sentiment")
    assert isinstance(classifier, ElmoClassifier)
    weights = classifier.mix.weights()
    assert torch.isclose(weights.sum(), torch.tensor(1.0))
    x, labels = zoo.review_tensors("test", "elmo_classifier")
    with torch.no_grad():
        accuracy = float((classifier(x)[0].argmax(-1) == labels).double().mean())
    assert accuracy >= 0.8


# ---------------------------------------------------------------- notebooks 05-06's comparisons over seeds (issue 32)
# Each verdict is read from the stored runs (data/checkpoints/05_06/lm_seeds.json, three seeds each) by the course's
# one rule, and asserted together with the spread it rests on.

CELLS = {"RNN": "rnn_lm", "GRU": "gru_lm", "LSTM": "lstm_lm"}


def perplexity_over_seeds(name: str):
    return lm_seeds.seed_spread(name, "perplexity")


def agreement_at_five(name: str):
    return lm_seeds.seed_spread(name, "agreement", 5)


def test_the_rnn_beats_the_ffnn_in_perplexity_beyond_the_seed_spread():
    rnn, ffnn = perplexity_over_seeds("rnn_lm"), perplexity_over_seeds("ffnn_n5")
    assert max(rnn.range, ffnn.range) < 0.03 and ffnn.mean - rnn.mean > 0.05
    assert verdict(rnn, ffnn, ("RNN", "FFNN")) == "RNN better"


@pytest.mark.parametrize(
    "a, b, expected", [("LSTM", "RNN", WITHIN_NOISE), ("GRU", "RNN", "GRU better"), ("GRU", "LSTM", "GRU better")]
)
def test_perplexity_over_seeds_ties_the_lstm_and_the_rnn_and_puts_the_gru_a_little_ahead(a, b, expected):
    """Notebook 06, section 5: the single runs' "LSTM − RNN" (+0.004) is inside the seed spread."""
    spreads = {label: perplexity_over_seeds(CELLS[label]) for label in (a, b)}
    assert max(s.range for s in spreads.values()) < 0.02
    assert abs(spreads[a].mean - spreads[b].mean) < 0.08  # about 1 % at most
    assert verdict(spreads[a], spreads[b], (a, b)) == expected


@pytest.mark.parametrize(
    "a, b, expected", [("LSTM", "RNN", "LSTM better"), ("GRU", "RNN", "GRU better"), ("GRU", "LSTM", WITHIN_NOISE)]
)
def test_at_five_attractors_the_gated_cells_agree_and_the_rnn_does_not_over_seeds(a, b, expected):
    spreads = {label: agreement_at_five(CELLS[label]) for label in (a, b)}
    for label, accuracy in spreads.items():
        if label == "RNN":
            assert accuracy.high <= 0.35 and accuracy.range <= 0.1
        else:
            assert accuracy.low >= 0.99  # every seed of a gated cell keeps the subject's number
    assert verdict(spreads[a], spreads[b], (a, b), higher_is_better=True) == expected


def test_the_wide_rnn_gets_most_of_the_way_but_stays_below_the_128_unit_lstm():
    """Notebook 06, section 4: width, clipping and half the steps together lift the RNN, not to the LSTM's level."""
    wide, narrow, lstm = (agreement_at_five(name) for name in ("rnn_wide_lm", "rnn_lm", "lstm_lm"))
    assert verdict(wide, narrow, ("wide", "narrow"), higher_is_better=True) == "wide better" and wide.low >= 0.7
    assert wide.range >= 0.1  # its seeds scatter
    assert verdict(wide, lstm, ("wide RNN", "LSTM"), higher_is_better=True) == "LSTM better"
    assert sum(p.numel() for p in load("rnn_wide_lm").recurrent.parameters()) < sum(
        p.numel() for p in load("lstm_lm").recurrent.parameters()
    )  # fewer recurrent weights than the 128-unit LSTM: not "more capacity" in weights


def test_with_one_recipe_at_256_units_the_lstm_still_agrees_more_often_than_the_rnn():
    rnn, lstm = (agreement_at_five(name) for name in ("rnn_wide_lm", "lstm_wide_lm"))
    assert lstm.low >= 0.99 and rnn.high <= 0.9
    assert verdict(lstm, rnn, ("LSTM", "RNN"), higher_is_better=True) == "LSTM better"


@pytest.mark.parametrize("column", ["all", "but/not"])
def test_elmo_s_mix_is_within_noise_of_notebook_04_s_bag_of_embeddings(column):
    """Notebook 06, section 6.3: contextual layers could see the turn; on this task they do not measurably help."""
    bag, elmo = (lm_seeds.seed_spread(name, column) for name in ("sentiment_embeddings", "elmo_sentiment"))
    assert len(elmo.values) >= 3 and max(bag.range, elmo.range) < 0.04 and abs(elmo.mean - bag.mean) < 0.01
    assert verdict(elmo, bag, ("ELMo", "bag"), higher_is_better=True) == WITHIN_NOISE
