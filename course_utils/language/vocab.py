"""The course vocabulary: the grammar's words in a fixed order, and the training split encoded with it."""

from __future__ import annotations

from functools import lru_cache

from course_utils.language import corpus
from course_utils.language.grammar import CourseLanguage
from course_utils.language.text_pipeline import Vocab


@lru_cache(maxsize=1)
def course_vocab() -> Vocab:
    """The vocabulary every course-language model uses: the grammar's words, sorted (fixed ids)."""
    return Vocab(sorted(CourseLanguage().vocabulary))


@lru_cache(maxsize=1)
def train_ids() -> tuple[tuple[int, ...], ...]:
    """The training split, encoded with ``course_vocab()`` (each sentence without ``<s>`` and ``</s>``)."""
    vocab = course_vocab()
    return tuple(tuple(vocab.encode(sentence)) for sentence in corpus.load_split("train"))
