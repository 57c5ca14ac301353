"""The measurements notebook 04 makes on the fixed-window masked-word models: slot similarity and mass at the mask."""

import pytest
import torch

from course_utils import CourseInputError
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.models.classic.window_mlm import WindowMaskedLM, allowed_mass_at_mask, predict_masked, slot_similarity

SENTENCES = [
    "he ate the cake with the fork .".split(),
    "she cut the bread with the knife .".split(),
    "he wrote the letter with the pen .".split(),
]
ITEMS = [
    {"prefix": "he ate the cake with the".split(), "allowed": ["fork"]},
    {"prefix": "she cut the bread with the".split(), "allowed": ["knife", "fork"]},
]


@pytest.fixture(scope="module")
def vocab():
    return Vocab.build(SENTENCES)


def concat_model(vocab_size, width=2, seed=0):
    return WindowMaskedLM(vocab_size, width, embed_dim=8, hidden_dim=16, seed=seed)


def test_slot_similarity_is_a_symmetric_matrix_with_ones_on_the_diagonal(vocab):
    similarity = slot_similarity(concat_model(len(vocab), width=3))
    assert similarity.shape == (6, 6)
    assert torch.allclose(similarity, similarity.T, atol=1e-6)
    assert torch.allclose(similarity.diagonal(), torch.ones(6), atol=1e-6)  # <pad>'s zero embedding is left out


def test_slot_similarity_is_one_when_every_slot_shares_the_same_weights(vocab):
    model = concat_model(len(vocab))
    d = model.embedding.embedding_dim
    with torch.no_grad():
        block = model.hidden.weight[:, :d].clone()  # (H, d): slot 0's weights
        model.hidden.weight.copy_(block.repeat(1, 4))  # every slot the same
    assert torch.allclose(slot_similarity(model), torch.ones(4, 4), atol=1e-5)


def test_slot_similarity_of_independent_random_slots_is_near_zero():
    similarity = slot_similarity(WindowMaskedLM(300, 2, embed_dim=32, hidden_dim=256, seed=1))
    off_diagonal = similarity[~torch.eye(4, dtype=torch.bool)]
    assert off_diagonal.abs().max() < 0.1


def test_slot_similarity_needs_per_slot_weights(vocab):
    with pytest.raises(CourseInputError, match="bag model"):
        slot_similarity(WindowMaskedLM(len(vocab), 2, combine="bag"))


def test_allowed_mass_at_mask_is_the_mean_of_predict_masked_over_the_allowed_words(vocab):
    model = concat_model(len(vocab))
    by_hand = []
    for item in ITEMS:
        probs = predict_masked(model, vocab, item["prefix"] + [MASK, "."])
        by_hand.append(sum(probs[vocab.stoi[w]].item() for w in item["allowed"]))
    assert allowed_mass_at_mask(model, vocab, ITEMS) == pytest.approx(sum(by_hand) / len(by_hand), rel=1e-12)


def test_allowed_mass_at_mask_follows_the_model(vocab):
    model = concat_model(len(vocab))
    with torch.no_grad():
        model.output.bias[vocab.stoi["fork"]] = 100.0  # the model now always says "fork"
    assert allowed_mass_at_mask(model, vocab, ITEMS) == pytest.approx(1.0)
    assert allowed_mass_at_mask(model, vocab, [{"prefix": ["he"], "allowed": ["pen"]}], suffix=()) < 1e-6


def test_allowed_mass_at_mask_rejects_no_items(vocab):
    with pytest.raises(CourseInputError, match="items is empty"):
        allowed_mass_at_mask(concat_model(len(vocab)), vocab, [])
