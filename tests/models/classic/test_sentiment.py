"""Sentiment: the lecture's x1..x6 by hand, pooling, both classifiers learn, bad input."""

import math

import pytest
import torch

from course_utils import CourseInputError
from course_utils.models.classic.sentiment import (
    PRONOUNS,
    EmbeddingClassifier,
    FeatureClassifier,
    SentimentLexicon,
    accuracy,
    feature_matrix,
    lexicon_features,
    pad_batch,
)
from course_utils.language.text_pipeline import Vocab
from course_utils.training import train

LEXICON = SentimentLexicon(
    positive={"great", "nice", "loved", "fun"}, negative={"dull", "hokey", "second-rate", "boring"}
)

# A review in the style of the lecture's example, its features counted by hand.
REVIEW = "i loved it ! the cast is great and the music is nice . no surprises , but you will not find it dull .".split()
REVIEW_FEATURES = [
    3,  # x1: loved, great, nice
    1,  # x2: dull
    1,  # x3: "no" is there
    2,  # x4: i, you
    1,  # x5: "!" is there
    math.log(25),  # x6: 25 tokens
]

POSITIVE = [
    "the film was great fun .",
    "i loved it",
    "nice and fun !",
    "great music",
    "we loved the cast",
    "fun , fun , fun",
]
NEGATIVE = [
    "the film was dull .",
    "boring and hokey",
    "a second-rate film",
    "dull music",
    "we found it boring",
    "hokey , hokey",
]


def test_the_lecture_features_of_a_review_counted_by_hand():
    assert len(REVIEW) == 25
    features = lexicon_features(REVIEW, LEXICON, dtype=torch.float64)
    assert features.shape == (6,) and features.dtype == torch.float64
    assert torch.allclose(features, torch.tensor(REVIEW_FEATURES, dtype=torch.float64), atol=1e-15)


def test_features_of_a_negative_review_given_as_a_string():
    features = lexicon_features("The film was HOKEY and second-rate .", LEXICON)
    assert features.dtype == torch.float32
    assert torch.allclose(features, torch.tensor([0, 2, 0, 0, 0, math.log(7)]))


def test_the_default_pronouns_are_the_first_and_second_person_ones():
    assert LEXICON.pronouns == PRONOUNS == {"i", "me", "my", "we", "us", "our", "you", "your"}
    custom = SentimentLexicon(positive=["Good"], negative=[], pronouns=["y'all"])
    assert custom.positive == {"good"}
    assert lexicon_features("y'all good good", custom)[[0, 3]].tolist() == [2, 1]


def test_feature_matrix_stacks_one_row_per_document():
    matrix = feature_matrix([REVIEW, "dull"], LEXICON)
    assert matrix.shape == (2, 6)
    assert torch.equal(matrix[0], lexicon_features(REVIEW, LEXICON))
    assert matrix[1].tolist() == [0, 1, 0, 0, 0, 0]


@pytest.mark.parametrize("doc", [[], "", "   ", ["fine", 3], 42])
def test_bad_documents_are_refused(doc):
    with pytest.raises(CourseInputError):
        lexicon_features(doc, LEXICON)


def test_bad_lexicons_and_document_lists_are_refused():
    with pytest.raises(CourseInputError, match="both"):
        SentimentLexicon(positive={"fine"}, negative={"Fine"})
    with pytest.raises(CourseInputError):
        SentimentLexicon(positive="great", negative=set())
    with pytest.raises(CourseInputError):
        lexicon_features(REVIEW, {"positive": {"great"}})
    with pytest.raises(CourseInputError):
        feature_matrix([], LEXICON)
    with pytest.raises(CourseInputError):
        feature_matrix("great fun", LEXICON)


# --- padding and pooling ---------------------------------------------------------------------


def test_pad_batch_pads_on_the_right():
    assert pad_batch([[5, 6, 7], [8], torch.tensor([9, 10])], pad_id=0).tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]]


@pytest.mark.parametrize("id_lists, pad_id", [([], 0), ([[1], []], 0), ([[1, 2.5]], 0), ([[1]], -1)])
def test_pad_batch_refuses_bad_input(id_lists, pad_id):
    with pytest.raises(CourseInputError):
        pad_batch(id_lists, pad_id)


@pytest.mark.parametrize("pooling, reduce", [("mean", lambda e: e.mean(dim=0)), ("max", lambda e: e.amax(dim=0))])
def test_pooling_uses_only_the_words_not_the_padding(pooling, reduce):
    model = EmbeddingClassifier(12, 5, 4, pooling=pooling, pad_id=0).double()
    x = pad_batch([[3, 4, 5], [6]], pad_id=0)  # (2, 3)
    pooled = model.pool(x)  # (2, 5)
    E = model.embedding.weight
    assert torch.allclose(pooled[0], reduce(E[[3, 4, 5]]), atol=1e-15)
    assert torch.allclose(pooled[1], E[6], atol=1e-15)
    more_padding = torch.cat([x, torch.zeros(2, 4, dtype=torch.long)], dim=1)  # (2, 7)
    assert torch.allclose(model(more_padding)[0], model(x)[0], atol=1e-15)


def test_a_document_of_padding_only_is_refused():
    with pytest.raises(CourseInputError, match="padding"):
        EmbeddingClassifier(12, 5, 4)(torch.tensor([[3, 4], [0, 0]]))


# --- both classifiers learn ------------------------------------------------------------------


def labels():
    return torch.tensor([1] * len(POSITIVE) + [0] * len(NEGATIVE))


def fit(model, x, y):
    history = train(model, lambda step: (x, y), steps=150, lr=3e-2, progress=False)
    return history.losses[0], history.final_loss


def test_the_feature_classifier_learns_a_separable_task():
    x, y = feature_matrix(POSITIVE + NEGATIVE, LEXICON), labels()
    model = FeatureClassifier(6, 8)
    first, last = fit(model, x, y)
    assert last < 0.2 * first
    assert accuracy(model, x, y) == 1.0


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_the_embedding_classifier_learns_a_separable_task(pooling):
    docs = [doc.split() for doc in POSITIVE + NEGATIVE]
    vocab = Vocab.build(docs)
    x, y = pad_batch([vocab.encode(doc) for doc in docs], vocab.pad_id), labels()
    model = EmbeddingClassifier(len(vocab), 8, 8, pooling=pooling, pad_id=vocab.pad_id)
    first, last = fit(model, x, y)
    assert last < 0.2 * first
    assert accuracy(model, x, y) == 1.0


def test_accuracy_counts_the_argmax_class():
    model = FeatureClassifier(2, 3, n_classes=3)
    x = torch.randn(10, 2, generator=torch.Generator().manual_seed(0))
    predicted = model(x)[0].argmax(dim=1)
    assert accuracy(model, x, predicted) == 1.0
    assert accuracy(model, x, (predicted + 1) % 3) == 0.0
    with pytest.raises(CourseInputError):
        accuracy(model, x, predicted[:5])


# --- bad input to the models -----------------------------------------------------------------


@pytest.mark.parametrize(
    "x, targets",
    [
        (torch.zeros(4, 5), None),  # 5 features, 6 expected
        (torch.zeros(4, 6, dtype=torch.long), None),  # not floats
        (torch.zeros(6), None),  # one row without the batch dimension
        (torch.zeros(4, 6), torch.tensor([0, 1, 2, 0])),  # class 2 of 2
        (torch.zeros(4, 6), torch.tensor([0, 1, 1])),  # one label too few
        (torch.zeros(4, 6), torch.tensor([0.0, 1.0, 1.0, 0.0])),  # labels as floats
    ],
)
def test_the_feature_classifier_refuses_bad_input(x, targets):
    with pytest.raises(CourseInputError):
        FeatureClassifier()(x, targets)


@pytest.mark.parametrize("x", [torch.tensor([[1, 12]]), torch.tensor([1, 2]), torch.ones(2, 3)])
def test_the_embedding_classifier_refuses_bad_ids(x):
    with pytest.raises(CourseInputError):
        EmbeddingClassifier(12, 5, 4)(x)


@pytest.mark.parametrize(
    "make",
    [
        lambda: FeatureClassifier(0),
        lambda: FeatureClassifier(6, 0),
        lambda: FeatureClassifier(6, 4, n_classes=1),
        lambda: EmbeddingClassifier(12, 5, 4, pooling="sum"),
        lambda: EmbeddingClassifier(12, 5, 4, pad_id=12),
        lambda: EmbeddingClassifier(12, 0, 4),
        lambda: EmbeddingClassifier(1, 5, 4),
    ],
)
def test_bad_constructor_arguments_are_refused(make):
    with pytest.raises(CourseInputError):
        make()
