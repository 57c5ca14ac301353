"""The oracle's most probable sentences: exact, sorted, distinct, and unlike typical sentences."""

from __future__ import annotations

import math
import time

import pytest

from course_utils.language import best_sentences as bs
from course_utils.language.grammar import EOS, CourseLanguage, Edge
from course_utils.validation import CourseInputError


@pytest.fixture(scope="module")
def lang():
    return CourseLanguage(include_held_out=False)


@pytest.fixture(scope="module")
def search(lang):
    start = time.perf_counter()
    result = bs.most_probable_search(lang, k=20)
    return result, time.perf_counter() - start


def test_the_probabilities_are_the_oracles(lang, search):
    result, _ = search
    for sentence in result.sentences:
        assert sentence.words and sentence.words[-1] != EOS
        assert math.isclose(sentence.prob, lang.score(sentence.words).prob, rel_tol=1e-9)


def test_the_sentences_are_sorted_and_distinct(search):
    result, _ = search
    logprobs = [s.logprob for s in result.sentences]
    assert len(result.sentences) == 20
    assert all(a >= b - 1e-12 for a, b in zip(logprobs, logprobs[1:]))
    assert len({s.words for s in result.sentences}) == 20


def test_the_best_sentence(search):
    best = search[0].sentences[0]
    # two sentences tie exactly (p = 11/1500): the hunter / the hunters hunted the game in the forest
    assert best.text() in ("the hunter hunted the game in the forest .", "the hunters hunted the game in the forest .")
    assert math.isclose(best.prob, 11 / 1500, rel_tol=1e-9)
    assert best.length == 9


def test_no_sample_is_more_probable_than_the_best(lang, search):
    best = search[0].sentences[0]
    _, logprobs = bs.sample_logprobs(lang, 20_000, seed=0)
    assert max(logprobs) <= best.logprob + 1e-9


def test_the_first_k_are_a_prefix_of_the_first_2k(lang, search):
    """Exactness seen another way: asking for fewer gives the same head (up to exact ties)."""
    head = bs.most_probable_sentences(lang, k=5)
    assert [round(s.logprob, 9) for s in head] == [round(s.logprob, 9) for s in search[0].sentences[:5]]


def test_it_is_fast(search):
    result, seconds = search
    assert seconds < 3.0, f"{seconds:.1f} s for k=20"
    assert result.expansions < 5_000


def test_the_found_sentences_have_one_derivation(lang, search):
    for sentence in search[0].sentences:
        count, best = bs.derivations(lang, sentence.words)
        assert count == 1 and math.isclose(best, sentence.logprob, rel_tol=1e-9, abs_tol=1e-12)


class _AmbiguousLanguage:
    """'a' has two derivations of .3 each (p = .6); 'b' one of .4. A derivation search would rank 'b' first."""

    start = ("S",)

    def edges(self, stack):
        if stack == ("S",):
            return (
                Edge("a", 0.3, ("X",), None, "S"),
                Edge("a", 0.3, ("Y",), None, "S"),
                Edge("b", 0.4, ("Z",), None, "S"),
            )
        return (Edge(EOS, 1.0, (), None, stack[0]),)


def test_the_search_sums_over_derivations():
    found = bs.most_probable_sentences(_AmbiguousLanguage(), k=2)
    assert [s.words for s in found] == [("a",), ("b",)]
    assert math.isclose(found[0].prob, 0.6) and math.isclose(found[1].prob, 0.4)
    assert bs.derivations(_AmbiguousLanguage(), "a") == (2, pytest.approx(math.log(0.3)))


def test_the_expansion_bound_is_an_error_not_a_wrong_answer(lang):
    with pytest.raises(CourseInputError, match="max_expansions"):
        bs.most_probable_sentences(lang, k=10, max_expansions=5)


def test_most_probable_is_not_typical(lang, search):
    best = search[0].sentences[0]
    t = bs.typicality(lang, best, n=20_000, seed=0)
    # typical sentences are far less probable than the best: about e^-10 times on average
    assert t.mean_logprob < best.logprob - 8
    assert t.median_logprob < best.logprob - 6
    # the best sentence's per-token log-probability is far above minus the entropy rate
    assert -best.logprob_per_token < t.entropy_rate / 2
    assert 1.6 < t.entropy_rate < 1.9 and 6.5 < t.mean_length < 8.5
    # how often the best is sampled: its probability
    assert abs(t.share_equal_to_best - best.prob) < 0.002
    assert "most probable" in t.summary()
    assert max(map(len, t.summary().splitlines())) <= 88  # a projector's width (notebook 10 prints it)
