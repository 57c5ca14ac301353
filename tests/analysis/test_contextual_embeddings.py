"""Contextual embeddings: words aligned with their pieces, the layer strategies, the probe, 1-NN, PCA, and errors.

A tiny randomly initialised CourseBERT (2 layers × 32) and the course's WordPiece tokenizer (trained once here).
"""

from __future__ import annotations

import random

import pytest
import torch

import course_utils  # noqa: F401  (first: it sets HF_HUB_OFFLINE)
from course_utils.language.corpus import load_eval, load_split
from course_utils.analysis import contextual_embeddings as ce
from course_utils.evaluation import linear_probe
from course_utils.models.bert.bert_mlm import CourseBERT, bert_config
from course_utils.models.bert.wordpiece import train_wordpiece
from course_utils.validation import CourseInputError

HIDDEN = 32


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(load_split("train"))


@pytest.fixture(scope="module")
def model(tokenizer):
    return CourseBERT(bert_config(tokenizer, layers=2, hidden=HIDDEN, heads=4), seed=0)


@pytest.fixture(scope="module")
def split_sentence(tokenizer):
    """A test sentence with a word of two or more pieces (not the last word), and that word's position."""
    for words in load_split("test"):
        for position, word in enumerate(words[:-1]):
            if len(tokenizer.tokenize(word)) >= 2:
                return words, position
    pytest.fail("no test sentence has a word that WordPiece splits")


def _sense_subset(words=("fine", "partner")) -> list[dict]:
    return [item for item in load_eval("senses") if item["word"] in words]


# ---------------------------------------------------------------- alignment


def test_spans_follow_the_pieces_of_each_word(tokenizer):
    for words in load_split("test")[:50]:
        spans = ce.word_piece_spans(tokenizer, words)
        assert [end - start for start, end in spans] == [len(tokenizer.tokenize(w)) for w in words]
        assert spans[0][0] == 1  # after [CLS]
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # contiguous, in order


def test_word_vectors_pick_the_right_pieces(model, tokenizer, split_sentence):
    words, position = split_sentence
    ids = torch.tensor([tokenizer(words, is_split_into_words=True)["input_ids"]])  # (1, T)
    hidden = torch.stack(model.hidden_states(ids))[:, 0]  # (L+1, T, C)
    start, end = ce.word_piece_spans(tokenizer, words)[position]
    assert end - start >= 2
    item = [{"words": words, "position": position}]
    first = ce.word_vectors(model, tokenizer, item, pooling="first")[:, 0]  # (L+1, C)
    mean = ce.word_vectors(model, tokenizer, item, pooling="mean")[:, 0]
    torch.testing.assert_close(first, hidden[:, start])
    torch.testing.assert_close(mean, hidden[:, start:end].mean(1))
    after = ce.word_vectors(model, tokenizer, [{"words": words, "position": position + 1}])[:, 0]
    torch.testing.assert_close(after, hidden[:, end])  # the next word starts right after the last piece


def test_batching_and_padding_do_not_change_the_vectors(model, tokenizer):
    items = _sense_subset()[:20]
    one_by_one = ce.word_vectors(model, tokenizer, items, batch_size=1)
    batched = ce.word_vectors(model, tokenizer, items, batch_size=64)
    assert batched.shape == (3, 20, HIDDEN)
    torch.testing.assert_close(one_by_one, batched, atol=1e-5, rtol=1e-5)


def test_plain_hugging_face_models_give_the_same_vectors(model, tokenizer):
    items = _sense_subset()[:8]
    expected = ce.word_vectors(model, tokenizer, items)
    torch.testing.assert_close(ce.word_vectors(model.hf, tokenizer, items), expected)  # BertForMaskedLM
    torch.testing.assert_close(ce.word_vectors(model.hf.bert, tokenizer, items), expected)  # BertModel


def test_dropout_is_off_and_the_training_mode_comes_back(tokenizer):
    noisy = CourseBERT(bert_config(tokenizer, layers=1, hidden=HIDDEN, heads=4, dropout=0.5)).train()
    items = _sense_subset()[:4]
    torch.testing.assert_close(ce.word_vectors(noisy, tokenizer, items), ce.word_vectors(noisy, tokenizer, items))
    assert noisy.hf.bert.training


def test_the_type_vector_is_the_embedding_table_row(model, tokenizer):
    items = [{"words": ["he", "paid", "the", "fine", "."], "position": 3}]
    (piece,) = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("fine"))
    torch.testing.assert_close(
        ce.type_vectors(model, tokenizer, items)[0], model.bert.embeddings.word_embeddings.weight[piece]
    )


def test_a_masked_position_is_one_piece(model, tokenizer):
    items = ce.agreement_token_items(load_eval("agreement")[:5])
    for item in items:
        assert item["words"][item["position"]] == "[MASK]"
        start, end = ce.word_piece_spans(tokenizer, item["words"])[item["position"]]
        ids = tokenizer(item["words"], is_split_into_words=True)["input_ids"]
        assert end - start == 1 and ids[start] == tokenizer.mask_token_id
    assert ce.word_vectors(model, tokenizer, items).shape == (3, 5, HIDDEN)


# ---------------------------------------------------------------- layer strategies


def test_strategies_on_a_shallow_and_a_deep_model():
    hidden = torch.randn(3, 7, 5)  # L = 2
    shapes = {name: tuple(strategy(hidden).shape) for name, strategy in ce.LAYER_STRATEGIES.items()}
    assert shapes["concat last four hidden"] == (7, 10) and shapes["last hidden layer"] == (7, 5)
    torch.testing.assert_close(ce.LAYER_STRATEGIES["sum of all hidden layers"](hidden), hidden[1] + hidden[2])
    torch.testing.assert_close(ce.LAYER_STRATEGIES["first layer (embeddings)"](hidden), hidden[0])
    depth_2 = {name: (s.layers(2), s.clamped(2)) for name, s in ce.LAYER_STRATEGIES.items()}
    assert depth_2 == {"first layer (embeddings)": ((0,), False), "last hidden layer": ((2,), False),
                       "sum of all hidden layers": ((1, 2), False), "second-to-last hidden": ((1,), False),
                       "sum of last four hidden": ((1, 2), True), "concat last four hidden": ((1, 2), True)}  # fmt: skip
    assert ce.LAYER_STRATEGIES["second-to-last hidden"].layers(1) == (1,)  # never the embedding layer
    assert ce.LAYER_STRATEGIES["concat last four hidden"].layers(12) == (9, 10, 11, 12)
    assert ce.LAYER_STRATEGIES["sum of all hidden layers"].layers(12) == tuple(range(1, 13))
    assert list(ce.DEVLIN_TABLE_7) == list(ce.LAYER_STRATEGIES)
    assert max(ce.DEVLIN_TABLE_7, key=ce.DEVLIN_TABLE_7.get) == "concat last four hidden"
    with pytest.raises(CourseInputError):
        ce.LAYER_STRATEGIES["last hidden layer"](torch.randn(7, 5))


# ---------------------------------------------------------------- the probe


def test_the_probe_finds_a_linear_rule_and_not_random_labels():
    generator = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 4, (480,), generator=generator)  # (N,)
    centres = torch.randn(4, 256, generator=generator)  # (K, C): the classes lie apart, along a few directions
    features = torch.randn(480, 256, generator=generator) + 2 * centres[labels]  # (N, C)
    assert linear_probe.probe_accuracy(features, [f"class {c}" for c in labels.tolist()]) > 0.98
    noise = torch.randint(0, 2, (480,), generator=generator)  # labels that nothing predicts
    assert abs(linear_probe.probe_accuracy(features[:, :32], noise) - 0.5) < 0.1
    assert linear_probe.probe_accuracy(features[:, :32], noise, seed=1) == linear_probe.probe_accuracy(
        features[:, :32], noise, seed=1
    )


def test_copies_of_one_item_stay_in_one_fold():
    generator = torch.Generator().manual_seed(1)
    contexts = torch.randn(40, 64, generator=generator)
    features = contexts.repeat_interleave(5, dim=0)  # (200, 64): every context five times
    labels = torch.randint(0, 2, (40,), generator=generator).repeat_interleave(5).tolist()  # no rule at all
    keys = torch.arange(40).repeat_interleave(5).tolist()
    assert linear_probe.probe_accuracy(features, labels, l2=1e-3) > 0.9  # copies in the training folds: memorised
    assert (
        linear_probe.probe_accuracy(features, labels, keys=keys, l2=1e-3) < 0.75
    )  # held-out contexts: no better than chance
    folds = linear_probe.stratified_folds(labels, 5, keys=keys)
    assert all(len(set(folds[k * 5 : k * 5 + 5].tolist())) == 1 for k in range(40))


def test_folds_spread_every_class_evenly():
    labels = ["a"] * 23 + ["b"] * 11 + ["c"] * 6
    folds = linear_probe.stratified_folds(labels, 5, seed=3)
    for name in "abc":
        counts = torch.bincount(folds[[i for i, l in enumerate(labels) if l == name]], minlength=5)
        assert counts.max() - counts.min() <= 1
    assert torch.equal(folds, linear_probe.stratified_folds(labels, 5, seed=3))


def test_a_probe_that_learns_nothing_scores_chance():
    labels = ["x", "y"] * 30
    assert linear_probe.probe_accuracy(torch.ones(60, 4), labels) == 0.5
    assert linear_probe.majority_accuracy(labels) == 0.5


def test_one_probe_per_group():
    generator = torch.Generator().manual_seed(2)
    features = torch.randn(120, 8, generator=generator)
    groups = ["fine"] * 60 + ["die"] * 60
    labels = ["good" if v > 0 else "money" for v in features[:60, 0]] + ["cube"] * 30 + ["death"] * 30
    mean, per_group = linear_probe.grouped_probe_accuracy(features, labels, groups)
    assert per_group["fine"] > 0.85 and per_group["die"] < 0.8
    assert mean == pytest.approx((per_group["fine"] + per_group["die"]) / 2)


# ---------------------------------------------------------------- nearest neighbours and the sense tables


def _cluster_items(n=40, seed=0):
    rng = random.Random(seed)
    return [{"words": ["w", str(i)], "position": 0, "word": "w", "sense": rng.choice("ab")} for i in range(n)]


def test_nearest_neighbour_on_clusters_and_on_noise():
    items = _cluster_items()
    generator = torch.Generator().manual_seed(0)
    centres = {"a": torch.randn(16, generator=generator) * 5, "b": torch.randn(16, generator=generator) * 5}
    clustered = torch.stack([centres[item["sense"]] + torch.randn(16, generator=generator) for item in items])
    assert ce.nearest_neighbour_sense_accuracy(clustered, items) == 1.0
    noise = torch.randn(len(items), 16, generator=generator)
    assert 0.2 < ce.nearest_neighbour_sense_accuracy(noise, items) < 0.8
    per_layer = ce.nearest_neighbour_sense_accuracy(torch.stack([noise, clustered]), items)
    assert len(per_layer) == 2 and per_layer[1] == 1.0


def test_identical_vectors_count_each_tied_neighbour_and_never_a_copy():
    items = [{"words": ["x", str(i)], "position": 0, "word": "x", "sense": s} for i, s in enumerate("aab")]
    items.append(dict(items[0]))  # a copy of the first sentence: never its neighbour
    vectors = torch.ones(4, 3)
    # items 0 and 3 ("a"): neighbours {1: a, 2: b} → 1/2 each; item 1 ("a"): {0, 2, 3} → 2/3; item 2 ("b"): 0
    expected = (0.5 + 2 / 3 + 0 + 0.5) / 4
    assert ce.nearest_neighbour_sense_accuracy(vectors, items) == pytest.approx(expected)


def test_sense_probe_by_layer_rows(model, tokenizer):
    items = _sense_subset()
    rows = ce.sense_probe_by_layer(model, tokenizer, items, all_words=True)
    assert [row["representation"] for row in rows] == [
        "word type",
        "position only",
        "layer 0 (embeddings)",
        "layer 1",
        "layer 2",
    ]
    assert rows[0]["per_word"] == 0.5  # one vector per word cannot tell its senses apart
    assert all(0 <= row["per_word"] <= 1 and 0 <= row["all_words"] <= 1 for row in rows)
    assert rows[1]["nearest_neighbour"] is None and 0 <= rows[4]["nearest_neighbour"] <= 1


def test_strategy_table_rows(model, tokenizer):
    items = _sense_subset()
    rows = ce.strategy_table(model, tokenizer, items)
    assert [row["strategy"] for row in rows] == list(ce.LAYER_STRATEGIES)
    assert [row["dim"] for row in rows] == [HIDDEN] * 5 + [2 * HIDDEN]
    assert rows[0]["layers"] == (0,) and rows[-1]["layers"] == (1, 2) and rows[-1]["clamped"]
    hidden = ce.word_vectors(model, tokenizer, items)
    same, _ = linear_probe.grouped_probe_accuracy(hidden[2], [i["sense"] for i in items], [i["word"] for i in items],
                                        keys=ce.context_keys(items))  # fmt: skip
    assert rows[1]["accuracy"] == same  # the same features give the same answer, whatever is probed beside them


# ---------------------------------------------------------------- sentences and the 2-D picture


def test_sentence_vectors_and_nearest_sentences(model, tokenizer):
    sentences = load_split("test")[:12]
    mean = ce.sentence_vectors(model, tokenizer, sentences, layer=-1)
    cls = ce.sentence_vectors(model, tokenizer, sentences, layer=2, pooling="cls")
    assert mean.shape == cls.shape == (12, HIDDEN) and not torch.allclose(mean, cls)
    ids = torch.tensor([tokenizer(sentences[0], is_split_into_words=True)["input_ids"]])
    torch.testing.assert_close(mean[0], model.hidden_states(ids)[-1][0, 1:-1].mean(0))  # [CLS] and [SEP] left out
    indices, similarities = ce.nearest_sentences(mean[3], mean, k=3)
    assert indices[0] == 3 and similarities[0] == pytest.approx(1.0)
    indices, _ = ce.nearest_sentences(mean[3], mean, k=50, exclude=3)
    assert len(indices) == 11 and 3 not in indices.tolist()


def test_projection_is_pca_with_a_fixed_sign():
    generator = torch.Generator().manual_seed(0)
    vectors = torch.randn(50, 6, generator=generator) * torch.tensor([5.0, 3, 1, 1, 1, 1])
    points = ce.projection_2d(vectors)
    assert points.shape == (50, 2)
    torch.testing.assert_close(points, ce.projection_2d(vectors))
    torch.testing.assert_close(ce.projection_2d(-vectors), -points)  # same axes, so the points flip
    torch.testing.assert_close(ce.projection_2d(vectors[torch.arange(49, -1, -1)]), points.flip(0))
    variance = points.var(0)
    assert variance[0] > variance[1] > 1.0
    assert ce.projection_2d(torch.randn(3, 1)).shape == (3, 2)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("items, message", [
    ([], "non-empty"),
    ([{"words": ["he", "is", "fine"], "position": 3}], "position"),
    ([{"words": [], "position": 0}], "non-empty"),
    ([{"words": ["fine"]}], "position"),
])  # fmt: skip
def test_bad_items(model, tokenizer, items, message):
    with pytest.raises(CourseInputError, match=message):
        ce.word_vectors(model, tokenizer, items)


def test_bad_arguments(model, tokenizer):
    item = [{"words": ["he", "is", "fine"], "position": 2}]
    with pytest.raises(CourseInputError, match="pooling"):
        ce.word_vectors(model, tokenizer, item, pooling="max")
    with pytest.raises(CourseInputError, match="pooling"):
        ce.sentence_vectors(model, tokenizer, [["he", "is", "fine"]], pooling="max")
    with pytest.raises(CourseInputError, match="layer"):
        ce.sentence_vectors(model, tokenizer, [["he", "is", "fine"]], layer=3)
    with pytest.raises(CourseInputError, match="CourseBERT"):
        ce.word_vectors(object(), tokenizer, item)
    with pytest.raises(CourseInputError, match="2 classes"):
        linear_probe.probe_accuracy(torch.randn(10, 3), ["a"] * 10)
    with pytest.raises(CourseInputError, match="must match"):
        linear_probe.probe_accuracy(torch.randn(10, 3), ["a", "b"] * 4)
    with pytest.raises(CourseInputError, match="NaN"):
        linear_probe.probe_accuracy(torch.full((10, 3), float("nan")), ["a", "b"] * 5)
    with pytest.raises(CourseInputError, match="k must be"):
        ce.nearest_sentences(torch.randn(3), torch.randn(5, 3), k=0)
    with pytest.raises(CourseInputError, match="query"):
        ce.nearest_sentences(torch.randn(4), torch.randn(5, 3))
    with pytest.raises(CourseInputError, match="N >= 2"):
        ce.projection_2d(torch.randn(1, 3))


def test_use_pairs_give_two_senses_and_a_same_sense_baseline(model, tokenizer):
    senses = load_eval("senses")
    two_senses, one_sense = ce.use_pairs(senses, ["fine", "rest"])
    for (first, second), (same_a, same_b) in zip(two_senses, one_sense):
        assert first["word"] == second["word"] == same_a["word"] == same_b["word"]
        assert first["sense"] != second["sense"] and same_a["sense"] == same_b["sense"] == first["sense"]
        assert same_a["words"] != same_b["words"]  # two sentences, not one sentence twice
    cosines = ce.pair_cosines(model, tokenizer, two_senses)  # (L+1, 2)
    vectors = ce.word_vectors(model, tokenizer, two_senses[1])  # (L+1, 2, C)
    expected = torch.nn.functional.cosine_similarity(vectors[:, 0], vectors[:, 1], dim=-1)
    assert cosines.shape == (3, 2) and torch.allclose(cosines[:, 1], expected)
    with pytest.raises(CourseInputError, match="two senses"):
        ce.use_pairs(senses, ["zebra"])


def test_the_slides_pairs_point_at_each_word_in_both_texts():
    pairs = ce.slide_pairs(["fine", "rest"])
    assert [[item["words"][item["position"]] for item in pair] for pair in pairs] == [["fine"] * 2, ["rest"] * 2]
    assert pairs[0][0]["words"] is ce.PERSON_A and pairs[0][1]["words"] is ce.PERSON_B


def test_the_other_word_control_pairs_each_first_use_with_the_next_pairs_second(model, tokenizer):
    two_senses, _ = ce.use_pairs(load_eval("senses"), ["fine", "rest", "die"])
    control = ce.other_word_cosines(model, tokenizer, two_senses)  # (P,)
    vectors = ce.word_vectors(model, tokenizer, [two_senses[2][0], two_senses[0][1]])[-1]  # (2, C)
    assert control.shape == (3,)
    assert torch.allclose(control[2], torch.nn.functional.cosine_similarity(vectors[0], vectors[1], dim=0))
    first, second = two_senses[0][0], two_senses[1][1]
    assert first["words"][first["position"]] != second["words"][second["position"]]  # two different words


def test_shown_uses_cut_each_sentence_around_its_word():
    pair = [{"words": "the cat sat on the mat .".split(), "position": 2}, {"words": ["rest", "now"], "position": 0}]
    assert ce.shown_uses(pair, width=2) == "the cat sat on | rest now"
