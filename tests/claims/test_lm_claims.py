"""The lectures' claims about n-gram and feed-forward LMs, asserted on the shipped checkpoints."""

from __future__ import annotations


import pytest
import torch

from course_utils.language import corpus
from course_utils.models import lm
from course_utils.evaluation import lm_probes
from course_utils.zoo import lm_checkpoints as zoo
from course_utils.zoo import load
from course_utils.language.vocab import course_vocab
from course_utils.checkpoints import verify_checkpoint
from course_utils.validation import CourseInputError
from course_utils.analysis import lm_seeds
from course_utils.analysis.seed_spread import WITHIN_NOISE, spread, verdict

pytestmark = pytest.mark.slow  # claims measured on shipped models: CI runs them, the quick subset does not


@pytest.fixture(scope="module")
def ngrams():
    return zoo.ngram_models()


@pytest.fixture(scope="module")
def ffnn():
    return {n: load(f"ffnn_n{n}") for n in (2, 3, 5)}


@pytest.fixture(scope="module")
def perplexities(ngrams, ffnn, held_out_sentences):
    models = {**ngrams, **{f"ffnn_n{n}": m for n, m in ffnn.items()}}
    vocab = course_vocab()
    return {name: lm.evaluate(model, vocab, held_out_sentences).perplexity for name, model in models.items()}


@pytest.mark.parametrize("name", list(zoo.RECIPES))
def test_every_shipped_checkpoint_matches_its_manifest_and_recipe(name):
    verify_checkpoint(zoo.CHECKPOINT_DIR / name)
    model = load(name)
    kind, config, _ = zoo.RECIPES[name]
    assert isinstance(model, type(zoo.build_model(kind, config)))


def test_the_perplexity_ordering_holds(perplexities):
    p = perplexities
    assert p["unigram"] > p["bigram"] > p["trigram"] > p["ffnn_n5"]
    assert p["ffnn_n2"] > p["ffnn_n3"] > p["ffnn_n5"]


def test_no_model_beats_the_oracle_on_average(perplexities, oracle_perplexity):
    for name, ppl in perplexities.items():
        assert ppl > oracle_perplexity, name


def test_the_language_has_structure_beyond_bigrams(perplexities, oracle_perplexity):
    assert perplexities["bigram"] >= 1.3 * oracle_perplexity


def test_the_ffnn_beats_the_best_ngram_on_held_out_compositions(ngrams, ffnn):
    items = [item for item in corpus.load_eval("compositions") if item["held_out"]]
    vocab = course_vocab()
    best_ngram = max(lm_probes.allowed_mass(model, vocab, items) for model in ngrams.values())
    assert lm_probes.allowed_mass(ffnn[5], vocab, items) > best_ngram + 0.1
    assert lm_probes.allowed_mass(ffnn[3], vocab, items) > best_ngram


def test_the_bag_masked_model_ignores_order_and_the_concat_model_does_not():
    from course_utils.models.classic.window_mlm import predict_masked

    vocab = course_vocab()
    question, backwards = "he ate the cake <mask> the fork .", ". fork the <mask> cake the ate he"
    bag, concat = load("masked_bag_w2"), load("masked_concat_w2")
    assert torch.allclose(predict_masked(bag, vocab, question), predict_masked(bag, vocab, backwards), atol=1e-6)
    assert (predict_masked(concat, vocab, question) - predict_masked(concat, vocab, backwards)).abs().max() > 0.1


def test_unknown_checkpoint_names_are_clear_errors(tmp_path):
    with pytest.raises(CourseInputError, match="unknown checkpoint .ffnn_n7.; did you mean ffnn_n5"):
        load("ffnn_n7")
    with pytest.raises(CourseInputError, match="python -m course_utils.zoo ffnn_n2"):
        load("ffnn_n2", directory=tmp_path)


# ---------------------------------------------------------------- notebook 04's comparisons over seeds (issue 32)
# Each verdict is read from the stored runs (data/checkpoints/04/lm_seeds.json) by the course's one rule, and asserted
# together with the spread it rests on.


def over_seeds(model: str, score: str):
    return lm_seeds.seed_spread(model, score)


def test_a_longer_window_helps_the_ffnn_beyond_the_seed_spread(ngrams):
    trigram = lm.evaluate(ngrams["trigram"], course_vocab(), corpus.load_split("test")).perplexity
    ffnn = {n: over_seeds(f"ffnn_n{n}", "perplexity") for n in (2, 3, 5)}
    assert all(s.range < 0.05 for s in ffnn.values())
    assert verdict(ffnn[2], spread([trigram] * 3), ("FFNN N=2", "trigram")) == "FFNN N=2 better"
    assert verdict(ffnn[3], ffnn[2], ("N=3", "N=2")) == "N=3 better"
    assert verdict(ffnn[5], ffnn[3], ("N=5", "N=3")) == "N=5 better"


def test_the_wider_masked_window_puts_more_on_the_right_instruments_beyond_the_spread():
    w2, w4 = (over_seeds(name, "instrument_mass") for name in ("masked_concat_w2", "masked_concat_w4"))
    assert w2.range < 0.02 and w4.range < 0.02 and w4.mean - w2.mean > 0.1
    assert verdict(w4, w2, ("w4", "w2"), higher_is_better=True) == "w4 better"


@pytest.mark.parametrize(
    "random_name, pretrained_name, column, expected",
    [
        ("sentiment_embeddings", "sentiment_pretrained", "all", WITHIN_NOISE),
        ("sentiment_embeddings", "sentiment_pretrained", "but/not", WITHIN_NOISE),
        ("few_reviews_random", "few_reviews_pretrained", "all", WITHIN_NOISE),
        ("few_reviews_random", "few_reviews_pretrained", "but/not", "FFNN start better"),
    ],
)
def test_benefit_2_the_ffnn_embeddings_as_a_start_over_five_seeds(random_name, pretrained_name, column, expected):
    """Notebook 04, section 11: pretrained embeddings do not measurably help on all reviews, with 3,000 labelled
    reviews or with 100; only the turning reviews with 100 labels pass the rule, narrowly."""
    random_start, ffnn_start = over_seeds(random_name, column), over_seeds(pretrained_name, column)
    assert len(random_start.values) == len(ffnn_start.values) == 5
    assert max(random_start.range, ffnn_start.range) < 0.06
    assert verdict(ffnn_start, random_start, ("FFNN start", "random start"), higher_is_better=True) == expected


def test_learned_embeddings_read_the_turning_reviews_better_than_the_hand_features():
    features, embeddings = (over_seeds(name, "but/not") for name in ("sentiment_features", "sentiment_embeddings"))
    assert max(features.range, embeddings.range) < 0.1 and embeddings.mean - features.mean > 0.15
    assert verdict(embeddings, features, ("embeddings", "features"), higher_is_better=True) == "embeddings better"
