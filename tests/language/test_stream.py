"""The stream of fresh sentences: deterministic per (seed, step), drawn from the training split's distribution,
never a split's generator, encoded like the training split."""

from __future__ import annotations

import math
import random

import pytest

from course_utils.language import corpus, stream
from course_utils.language.vocab import course_vocab, train_ids
from course_utils.validation import CourseInputError


def test_a_batch_is_the_same_whenever_and_in_whatever_order_it_is_drawn():
    later_first = [stream.fresh_sentences(step, batch_size=8, seed=3) for step in (5, 0, 5)]
    assert later_first[0] == later_first[2] and later_first[0] != later_first[1]
    assert stream.fresh_sentences(0, batch_size=8, seed=3) == later_first[1]
    assert stream.fresh_sentences(0, batch_size=8, seed=4) != later_first[1]  # another stream


def test_the_seed_text_is_fixed_and_no_split_generator_is_reused():
    assert stream.batch_seed(7, 2) == "course stream 2, batch 7"  # the documented text: stable across releases
    split_starts = {seed: [list(s.words) for s in stream.stream_language().sample_many(4, seed)]
                    for _, seed in corpus.SPLITS.values()}  # fmt: skip
    first_batches = [stream.fresh_sentences(step, batch_size=4) for step in range(20)]
    assert not any(batch == start for batch in first_batches for start in split_starts.values())
    rng = random.Random(stream.batch_seed(0))
    assert stream.fresh_sentences(0, batch_size=1) == [list(stream.stream_language().sample(rng).words)]


def test_the_stream_is_grammatical_and_has_the_training_distribution():
    sentences = [words for step in range(40) for words in stream.fresh_sentences(step, batch_size=50)]  # 2,000
    language = stream.stream_language()
    assert all(language.score(words).grammatical for words in sentences)
    entropy, _ = corpus.oracle_entropy(language, sentences)
    valid_entropy, _ = corpus.oracle_entropy(language, corpus.load_split("valid")[:2000])
    assert math.isclose(entropy, valid_entropy, abs_tol=0.05)  # the same language, to sampling error
    train = {tuple(words) for words in corpus.load_split("train")}
    assert 0 < sum(tuple(words) in train for words in sentences) < len(sentences)  # frequent ones recur, not all


def test_encoded_batches_use_the_course_vocabulary_like_the_training_split():
    batches = stream.encoded_batches(batch_size=6, seed=1)
    vocab = course_vocab()
    assert batches(3) == [tuple(vocab.encode(w)) for w in stream.fresh_sentences(3, batch_size=6, seed=1)]
    assert all(vocab.bos_id not in ids and vocab.eos_id not in ids for ids in batches(3))
    assert isinstance(train_ids()[0], tuple) and isinstance(batches(0)[0], tuple)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0}, {"batch_size": 4, "seed": -1}, {"batch_size": 2.5}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(CourseInputError):
        stream.encoded_batches(**kwargs)
    with pytest.raises(CourseInputError):
        stream.fresh_sentences(-1, batch_size=4)
