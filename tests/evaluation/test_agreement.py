"""Agreement measured on any LM: P(correct form), P(wrong form) after each prefix, accuracy by attractors."""

import numpy as np
import pytest

from course_utils.evaluation.agreement import accuracy_by_attractors, check_items, form_probs
from course_utils.language.corpus import load_eval
from course_utils.models import lm
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.validation import CourseInputError


@pytest.fixture(scope="module")
def items():
    return load_eval("agreement")


@pytest.fixture(scope="module")
def models(vocab):
    """Two small untrained recurrent LMs."""
    return {cell: RecurrentLM(len(vocab), cell=cell, embed_dim=16, hidden_dim=24, seed=i).eval()
            for i, cell in enumerate(("gru", "lstm"))}  # fmt: skip


def test_form_probs_equal_next_token_probs(models, vocab, items):
    some = items[::37]  # prefixes of several lengths
    for model in models.values():
        probs = form_probs(model, vocab, some)  # (N, 2)
        for (right, wrong), item in zip(probs, some):
            expected = lm.next_token_probs(model, vocab, item["prefix"])  # (V,)
            assert right == pytest.approx(float(expected[vocab.stoi[item["correct"]]]), rel=1e-5)
            assert wrong == pytest.approx(float(expected[vocab.stoi[item["wrong"]]]), rel=1e-5)


def test_accuracy_by_attractors_on_a_hand_made_table():
    items = [{"attractors": 0}, {"attractors": 0}, {"attractors": 2}, {"attractors": 2}, {"attractors": 2}]
    probs = np.array([[0.3, 0.1], [0.1, 0.3], [0.2, 0.1], [0.5, 0.4], [0.1, 0.1]])  # a tie is not a hit
    assert accuracy_by_attractors(probs, items) == {0: 0.5, 2: pytest.approx(2 / 3)}


def test_check_items_accepts_the_shipped_items_and_names_a_bad_one(vocab, items):
    assert check_items(items, vocab) is items
    bad = {**items[0], "number": "dual"}
    with pytest.raises(CourseInputError, match="number"):
        check_items([bad], vocab)
