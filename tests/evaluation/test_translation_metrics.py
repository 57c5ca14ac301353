"""BLEU from scratch against sacrebleu on real targets; exact match, token accuracy; alignment error rate."""

from __future__ import annotations

import math
import random

import pytest
import sacrebleu
import torch
from sacrebleu.metrics import BLEU

from course_utils.language import parallel
from course_utils.evaluation import translation_metrics as tm
from course_utils.validation import CourseInputError


@pytest.fixture(scope="module")
def references():
    return [pair.target for pair in parallel.load("test")[:400]]


@pytest.fixture(scope="module")
def target_words():
    return parallel.vocabularies()[1]


def perturb(words, kind, rng, vocabulary):
    """A wrong hypothesis made from a reference: words dropped, swapped, substituted, cut short or removed."""
    words = list(words)
    if kind == "drop":
        return [w for w in words if rng.random() > 0.2]
    if kind == "swap":
        for _ in range(2):
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        return words
    if kind == "substitute":
        return [rng.choice(vocabulary) if rng.random() < 0.3 else w for w in words]
    if kind == "short":
        return words[: max(1, len(words) // 2)]
    if kind == "empty":
        return [] if rng.random() < 0.5 else words
    if kind == "mixed":
        return perturb(words, rng.choice(["drop", "swap", "substitute", "short", "empty", "same"]), rng, vocabulary)
    return words  # "same"


def sacre(hypotheses, references, smooth):
    return sacrebleu.corpus_bleu([" ".join(h) for h in hypotheses], [[" ".join(r) for r in references]],
                                 tokenize="none", smooth_method=smooth)  # fmt: skip


def assert_same_bleu(ours, theirs):
    assert abs(ours.score - theirs.score) <= 1e-9, (ours, theirs)
    assert ours.precisions == pytest.approx(theirs.precisions, abs=1e-9)
    assert ours.brevity_penalty == pytest.approx(theirs.bp, abs=1e-12)
    assert (ours.hypothesis_length, ours.reference_length) == (theirs.sys_len, theirs.ref_len)


KINDS = ["same", "drop", "swap", "substitute", "short", "empty", "mixed"]


@pytest.mark.parametrize("smooth", ["exp", "none"])
@pytest.mark.parametrize("kind", KINDS)
def test_corpus_bleu_equals_sacrebleu_on_perturbed_real_targets(references, target_words, kind, smooth):
    rng = random.Random(KINDS.index(kind))
    hypotheses = [perturb(r, kind, rng, target_words) for r in references]
    ours, theirs = tm.bleu(hypotheses, references, smooth=smooth), sacre(hypotheses, references, smooth)
    assert_same_bleu(ours, theirs)
    if kind == "short":
        assert ours.brevity_penalty < 0.6
    if kind == "same":
        assert ours.score == pytest.approx(100.0)


@pytest.mark.parametrize("smooth", ["exp", "none"])
def test_bleu_equals_sacrebleu_pair_by_pair_including_edge_cases(references, target_words, smooth):
    """Single-sentence corpora hit the edge cases: no match of some order, no match at all, too short for 4-grams."""
    rng = random.Random(11)
    cases = [(perturb(r, rng.choice(KINDS), rng, target_words), r) for r in references[:150]]
    cases += [(["zzz", "yyy", "xxx", "www"], references[0]),  # no match at all
              (list(references[0][:2]), references[0]),  # shorter than the 4-grams
              (list(references[0][::-1]), references[0]),  # unigrams only
              ([], references[0])]  # fmt: skip
    for hypothesis, reference in cases:
        assert_same_bleu(tm.bleu([hypothesis], [reference], smooth=smooth), sacre([hypothesis], [reference], smooth))


def test_smoothing_only_matters_when_an_order_has_no_match(references):
    reference = references[0]
    reversed_ = list(reference[::-1])  # unigram matches, few or no longer ones
    exp, none = tm.bleu([reversed_], [reference], smooth="exp"), tm.bleu([reversed_], [reference], smooth="none")
    assert exp.score > 0 and none.score == 0.0
    assert tm.bleu([reference], [reference], smooth="exp") == tm.bleu([reference], [reference], smooth="none")
    assert tm.bleu([["zzz"] * 5], [reference]).score == 0.0  # no match at all: 0 even with smoothing


def test_a_smaller_max_n_equals_sacrebleus_max_ngram_order(references, target_words):
    rng = random.Random(5)
    hypotheses = [perturb(r, "mixed", rng, target_words) for r in references]
    theirs = BLEU(tokenize="none", max_ngram_order=2).corpus_score([" ".join(h) for h in hypotheses],
                                                                   [[" ".join(r) for r in references]])  # fmt: skip
    assert_same_bleu(tm.bleu(hypotheses, references, max_n=2), theirs)


def test_sentence_bleu_of_one_pair_equals_sacrebleus_sentence_bleu(references, target_words):
    rng = random.Random(3)
    for reference in references[:100]:
        hypothesis = perturb(reference, "mixed", rng, target_words)
        if len(hypothesis) < 4:
            continue
        theirs = sacrebleu.sentence_bleu(" ".join(hypothesis), [" ".join(reference)], tokenize="none")
        assert abs(tm.bleu([hypothesis], [reference]).score - theirs.score) <= 1e-9
    # below four words sacrebleu's sentence_bleu uses only the orders the hypothesis has (effective order)
    short = list(references[0][:3])
    assert tm.bleu([short], [references[0]]).score == 0.0
    assert sacrebleu.sentence_bleu(" ".join(short), [" ".join(references[0])], tokenize="none").score > 0


def test_bleu_by_hand():
    """hypothesis 'a b c d e' against 'a b c d f': p = 4/5, 3/4, 2/3, 1/2, BP = 1."""
    score = tm.bleu([("a", "b", "c", "d", "e")], [("a", "b", "c", "d", "f")])
    assert score.precisions == pytest.approx((80.0, 75.0, 200 / 3, 50.0))
    assert score.score == pytest.approx(100 * (0.8 * 0.75 * (2 / 3) * 0.5) ** 0.25)
    short = tm.bleu([("a", "b", "c", "d")], [("a", "b", "c", "d", "e", "f")])
    assert short.brevity_penalty == pytest.approx(math.exp(1 - 6 / 4))
    assert short.score == pytest.approx(100 * math.exp(1 - 6 / 4))
    clipped = tm.bleu([("the",) * 4], [("the", "cat", "the", "mat")], max_n=1)  # "the" counts at most twice
    assert clipped.precisions == (50.0,)
    assert tm.bleu(["a b c d"], ["a b c d"]) == tm.bleu([("a", "b", "c", "d")], [["a", "b", "c", "d"]])


def test_exact_match_and_token_accuracy_by_hand():
    hypotheses = [("a", "b"), ("a", "c", "d"), ("x",)]
    references = [("a", "b"), ("a", "b", "c"), ("y", "z")]
    assert tm.exact_match(hypotheses, references) == pytest.approx(1 / 3)
    assert tm.token_accuracy(hypotheses, references) == pytest.approx((2 + 1 + 0) / 7)  # per reference position
    assert tm.token_accuracy([("a", "b", "c")], [("b", "c")]) == 0.0  # one word shifted: every position wrong
    assert tm.exact_match([()], [("a",)]) == 0.0 and tm.token_accuracy([()], [("a",)]) == 0.0


# --- alignments ------------------------------------------------------------------------------------


def test_argmax_alignment_of_a_hand_matrix():
    weights = [[0.1, 0.7, 0.2],  # target 0 <- source 1
               [0.6, 0.3, 0.1],  # target 1 <- source 0
               [0.2, 0.2, 0.6],  # target 2 <- source 2
               [0.0, 0.9, 0.1]]  # fmt: skip  # target 3 <- source 1 again
    assert tm.argmax_alignment(weights) == {(1, 0), (0, 1), (2, 2), (1, 3)}
    assert tm.argmax_alignment(torch.tensor(weights)) == tm.argmax_alignment(weights)


def test_alignment_error_rate_by_hand():
    sure = {(0, 0), (1, 1), (2, 2), (3, 3)}
    assert tm.alignment_error_rate(sure, sure) == 0.0
    assert tm.alignment_error_rate({(0, 1), (1, 0)}, sure) == 1.0
    predicted = {(0, 0), (1, 1), (2, 3)}  # two right, one wrong, two missing
    assert tm.alignment_error_rate(predicted, sure) == pytest.approx(1 - 2 * 2 / (3 + 4))
    assert tm.alignment_error_rate([[0, 0], [1, 1]], [(0, 0), (1, 1)]) == 0.0  # links as lists


def test_possible_links_count_for_precision_only():
    sure, possible = {(0, 0), (1, 1)}, {(2, 2)}
    # A ∩ S = 1, A ∩ P = 2 (P includes S): 1 - (1 + 2) / (2 + 2)
    assert tm.alignment_error_rate({(0, 0), (2, 2)}, sure, possible) == pytest.approx(0.25)
    assert tm.alignment_error_rate({(0, 0), (2, 2)}, sure) == pytest.approx(1 - 2 / 4)
    assert tm.alignment_error_rate(sure | possible, sure, possible) == 0.0  # 1 - (2 + 3) / (3 + 2): no penalty


def test_corpus_aer_pools_link_counts_rather_than_averaging_sentences():
    predictions = [{(0, 0)}, {(0, 1), (1, 0)}]
    truths = [{(0, 0)}, {(0, 0), (1, 1), (2, 2), (3, 3)}]
    assert tm.corpus_aer(predictions, truths) == pytest.approx(1 - 2 * 1 / (2 + 6))
    mean = sum(tm.alignment_error_rate(p, s) for p, s in zip(predictions, truths)) / 2
    assert mean == pytest.approx(0.5)  # not the same


def test_the_true_alignments_have_zero_error_and_a_shifted_one_does_not():
    pairs = parallel.load("test")[:50]
    truths = [set(p.alignment) for p in pairs]
    assert tm.corpus_aer(truths, truths) == 0.0
    matrices = [torch.zeros(len(p.target), len(p.source)).index_put_(
        (torch.tensor([t for _, t in p.alignment]), torch.tensor([s for s, _ in p.alignment])), torch.tensor(1.0))
        for p in pairs]  # fmt: skip
    assert [tm.argmax_alignment(m) for m in matrices] == truths
    shifted = [{(s, (t + 1) % len(p.target)) for s, t in p.alignment} for p in pairs]
    assert tm.corpus_aer(shifted, truths) > 0.9


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [tm.bleu, tm.exact_match, tm.token_accuracy])
def test_sentence_metrics_reject_mismatched_or_empty_corpora(metric):
    with pytest.raises(CourseInputError, match="2 hypotheses but 1 references"):
        metric([("a",), ("b",)], [("a",)])
    with pytest.raises(CourseInputError, match="at least one"):
        metric([], [])
    with pytest.raises(CourseInputError, match="string or a sequence of words"):
        metric([("a", 3)], [("a", "b")])


def test_bleu_rejects_bad_options():
    with pytest.raises(CourseInputError):
        tm.bleu(["a"], ["a"], smooth="floor")
    with pytest.raises(CourseInputError):
        tm.bleu(["a"], ["a"], max_n=0)


@pytest.mark.parametrize("weights", [[0.2, 0.8], [[[0.2, 0.8]]], torch.zeros(0, 3)], ids=["1d", "3d", "empty"])
def test_argmax_alignment_needs_a_non_empty_matrix(weights):
    with pytest.raises(CourseInputError, match="matrix"):
        tm.argmax_alignment(weights)


def test_aer_rejects_empty_or_mismatched_input():
    with pytest.raises(CourseInputError, match="at least one"):
        tm.alignment_error_rate(set(), set())
    with pytest.raises(CourseInputError, match="at least one link"):
        tm.corpus_aer([set()], [set()])
    with pytest.raises(CourseInputError, match="at least one link"):
        tm.corpus_aer([], [])
    with pytest.raises(CourseInputError, match="2 predicted alignments but 1"):
        tm.corpus_aer([{(0, 0)}, {(0, 0)}], [{(0, 0)}])
