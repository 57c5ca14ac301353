"""Fresh sentences, batch after batch: the stream a data-bound model learns from instead of the fixed training split.

The splits (``corpus.SPLITS``) were drawn once: 60,000 training sentences that a model sees again every epoch. The
stream draws new sentences from the same distribution as the training split (the language without its held-out
compositions), as many as a recipe asks for. Batch ``step`` of stream ``seed`` has its own generator, seeded with the
text ``"course stream {seed}, batch {step}"``:

- any batch can be drawn alone, in any order (a training run that resumes at step 5,000 needs no steps 0–4,999);
- it is the same on every machine (``random.Random`` hashes a text seed with SHA-512, not with Python's salted hash);
- no batch's generator is a split's (those are seeded with the integers 1, 2, 3).

The sentences are samples, so a frequent sentence appears in the stream, in the training split and in the test split
alike, as it would in any corpus drawn from the language; what the stream never does is show a model the same 60,000
sentences twice.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Callable

from course_utils.language.grammar import CourseLanguage
from course_utils.language.vocab import course_vocab
from course_utils.validation import check_int


@lru_cache(maxsize=1)
def stream_language() -> CourseLanguage:
    """The distribution the stream samples: the training split's (no held-out compositions)."""
    return CourseLanguage(include_held_out=False)


def batch_seed(step: int, seed: int = 0) -> str:
    """The text that seeds batch ``step`` of stream ``seed``."""
    return f"course stream {check_int('seed', seed, minimum=0)}, batch {check_int('step', step, minimum=0)}"


def fresh_sentences(step: int, *, batch_size: int, seed: int = 0) -> list[list[str]]:
    """Batch ``step`` of stream ``seed``: ``batch_size`` sentences (word lists) drawn with their exact probabilities."""
    rng = random.Random(batch_seed(step, seed))
    language = stream_language()
    return [list(language.sample(rng).words) for _ in range(check_int("batch_size", batch_size, minimum=1))]


def encoded_batches(*, batch_size: int, seed: int = 0) -> Callable[[int], list[tuple[int, ...]]]:
    """A function ``step -> id lists``: batch ``step`` of the stream, encoded with ``course_vocab()`` (without
    ``<s>`` and ``</s>``, like ``vocab.train_ids``)."""
    batch_size, seed = check_int("batch_size", batch_size, minimum=1), check_int("seed", seed, minimum=0)
    vocab = course_vocab()

    def encoded(step: int) -> list[tuple[int, ...]]:
        return [tuple(vocab.encode(words)) for words in fresh_sentences(step, batch_size=batch_size, seed=seed)]

    return encoded
