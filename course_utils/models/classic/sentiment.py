"""Sentiment classification with a feed-forward net: hand-built features against learned embeddings.

The lecture's features of a document (``lexicon_features``):

    x1 = count(positive lexicon words in doc)      x4 = count(1st and 2nd person pronouns in doc)
    x2 = count(negative lexicon words in doc)      x5 = 1 if "!" in doc, else 0
    x3 = 1 if "no" in doc, else 0                  x6 = log(word count of doc)

``FeatureClassifier`` puts a hidden layer on top of them. ``EmbeddingClassifier`` learns its
features instead: the word embeddings of a document of any length are pooled into one "sentence
embedding" (their mean, or their element-wise max), then the same hidden layer and softmax.
Both follow ``forward(x, targets=None) -> (logits, loss)``, so ``course_utils.training.train`` trains them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.basics.activations import get_activation
from course_utils.models.classic.neural_lm import check_ids, seeded
from course_utils.validation import CourseInputError, check_choice, check_int, check_same_length

Tensor = torch.Tensor

FEATURE_NAMES = (
    "x1 positive words",
    "x2 negative words",
    "x3 'no' in doc",
    "x4 1st/2nd person pronouns",
    "x5 '!' in doc",
    "x6 log(word count)",
)
PRONOUNS = frozenset({"i", "me", "my", "we", "us", "our", "you", "your"})
POOLING_MODES = ("mean", "max")


def _word_set(name: str, words) -> frozenset[str]:
    """``words`` as a frozen set of lowercase strings."""
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise CourseInputError(
            f"{name} must be a collection of words (strings), e.g. {{'great', 'fine'}}; got {words!r}"
        )
    return frozenset(w.lower() for w in words)


@dataclass(frozen=True)
class SentimentLexicon:
    """The word lists behind the features: positive and negative words, and the pronouns x4 counts."""

    positive: frozenset[str]
    negative: frozenset[str]
    pronouns: frozenset[str] = field(default=PRONOUNS)

    def __post_init__(self):
        for name in ("positive", "negative", "pronouns"):
            object.__setattr__(self, name, _word_set(name, getattr(self, name)))
        both = sorted(self.positive & self.negative)
        if both:
            raise CourseInputError(f"a word cannot be both positive and negative: {both[:10]}")


def as_tokens(doc) -> list[str]:
    """A document as a non-empty list of lowercase tokens; a string is split on whitespace."""
    tokens = doc.split() if isinstance(doc, str) else doc
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise CourseInputError(f"a document must be a list of tokens (strings) or one string; got {doc!r}")
    if not tokens:
        raise CourseInputError("the document is empty: x6 = log(word count) needs at least one word")
    return [t.lower() for t in tokens]


def lexicon_features(tokens, lexicon: SentimentLexicon, *, dtype: torch.dtype = torch.float32) -> Tensor:
    """The lecture's x1..x6 of one document: (6,). Every token counts as a word for x6, punctuation included."""
    if not isinstance(lexicon, SentimentLexicon):
        raise CourseInputError(f"lexicon must be a SentimentLexicon, got {type(lexicon).__name__}")
    tokens = as_tokens(tokens)
    features = [
        sum(t in lexicon.positive for t in tokens),
        sum(t in lexicon.negative for t in tokens),
        float("no" in tokens),
        sum(t in lexicon.pronouns for t in tokens),
        float(any("!" in t for t in tokens)),
        math.log(len(tokens)),
    ]
    return torch.tensor(features, dtype=dtype)  # (6,)


def feature_matrix(docs: Sequence, lexicon: SentimentLexicon, *, dtype: torch.dtype = torch.float32) -> Tensor:
    """``lexicon_features`` of every document, one row each: (D, 6)."""
    if isinstance(docs, str) or len(docs) == 0:
        raise CourseInputError("docs must be a non-empty list of documents (each a list of tokens)")
    return torch.stack([lexicon_features(doc, lexicon, dtype=dtype) for doc in docs])  # (D, 6)


def pad_batch(id_lists: Sequence[Sequence[int]], pad_id: int = 0) -> Tensor:
    """Documents of token ids, right-padded with ``pad_id`` to the longest: (B, T_max)."""
    pad_id = check_int("pad_id", pad_id, minimum=0)
    rows = [ids.tolist() if isinstance(ids, torch.Tensor) else list(ids) for ids in id_lists]
    if not rows or any(len(ids) == 0 for ids in rows):
        raise CourseInputError("pad_batch needs a non-empty list of non-empty documents of token ids")
    if not all(isinstance(i, int) and not isinstance(i, bool) for ids in rows for i in ids):
        raise CourseInputError("id_lists must hold lists of integer token ids (vocab.encode(words) makes them)")
    longest = max(map(len, rows))
    return torch.tensor([ids + [pad_id] * (longest - len(ids)) for ids in rows], dtype=torch.long)  # (B, T_max)


class _Classifier(nn.Module):
    """The shared top: input features (B, n_in) → hidden layer → class logits (B, C); cross-entropy loss."""

    def _build_top(self, n_inputs: int, hidden_dim: int, n_classes: int, activation: str) -> None:
        self.activation = get_activation(activation).name
        self.n_classes = check_int("n_classes", n_classes, minimum=2)
        self.hidden = nn.Linear(n_inputs, check_int("hidden_dim", hidden_dim, minimum=1))  # (H, n_in)
        self.output = nn.Linear(hidden_dim, self.n_classes)  # (C, H)

    def classify(self, features: Tensor, targets: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """Logits (B, C) for input features (B, n_in), and the mean cross-entropy against ``targets`` (B,)."""
        h = get_activation(self.activation).library(self.hidden(features))  # (B, H)
        logits = self.output(h)  # (B, C)
        if targets is None:
            return logits, None
        check_ids("targets", targets, self.n_classes, ndim=1)
        check_same_length("x", len(features), "targets", len(targets))
        return logits, F.cross_entropy(logits, targets)


class FeatureClassifier(_Classifier):
    """A feed-forward classifier on hand-built features: x (B, n_features) → hidden → C classes."""

    def __init__(
        self, n_features: int = 6, hidden_dim: int = 16, *, n_classes: int = 2, activation: str = "tanh", seed: int = 0
    ):
        super().__init__()
        self.n_features = check_int("n_features", n_features, minimum=1)
        with seeded(seed):
            self._build_top(self.n_features, hidden_dim, n_classes, activation)

    def forward(self, x: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim != 2 or x.shape[1] != self.n_features:
            shape = list(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise CourseInputError(f"x must be a float tensor (B, {self.n_features}) of features; got {shape}")
        return self.classify(x, targets)


class EmbeddingClassifier(_Classifier):
    """A feed-forward classifier on learned embeddings, pooled over each document's non-pad words.

    x (B, T) ids → embeddings (B, T, d) → mean or element-wise max over the words (B, d) → hidden → C classes.
    """

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int = 16,
        hidden_dim: int = 16,
        *,
        pooling: str = "mean",
        pad_id: int = 0,
        n_classes: int = 2,
        activation: str = "tanh",
        seed: int = 0,
    ):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.pooling = check_choice("pooling", pooling, POOLING_MODES)
        self.pad_id = check_int("pad_id", pad_id, minimum=0, maximum=self.vocab_size - 1)
        with seeded(seed):
            self.embedding = nn.Embedding(self.vocab_size, check_int("embed_dim", embed_dim, minimum=1))  # (V, d)
            self._build_top(embed_dim, hidden_dim, n_classes, activation)

    def pool(self, x: Tensor) -> Tensor:
        """One "sentence embedding" per document: (B, T) ids → (B, d), pads left out."""
        check_ids("x", x, self.vocab_size, ndim=2)
        words = (x != self.pad_id).unsqueeze(-1)  # (B, T, 1)
        if not bool(words.any(dim=1).all()):
            raise CourseInputError("every document needs at least one word that is not padding")
        e = self.embedding(x)  # (B, T, d)
        if self.pooling == "mean":
            return (e * words).sum(dim=1) / words.sum(dim=1)  # (B, d)
        return e.masked_fill(~words, float("-inf")).amax(dim=1)  # (B, d)

    def forward(self, x: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        return self.classify(self.pool(x), targets)


@torch.no_grad()
def accuracy(model: nn.Module, x: Tensor, labels: Tensor) -> float:
    """The fraction of documents whose highest-scoring class is the label (the model is left in eval mode)."""
    check_same_length("x", len(x), "labels", len(labels))
    logits, _ = model.eval()(x)  # (B, C)
    return (logits.argmax(dim=-1) == labels.to(logits.device)).double().mean().item()
