"""Scoring translations: BLEU from scratch (Papineni et al. 2002), exact match, token accuracy, alignment error rate.

    p_n  = Σ_sentences Σ_ngrams min(count in hypothesis, count in reference) / Σ_sentences #ngrams in hypothesis
    BP   = 1 if c > r else exp(1 − r / c)        c, r: total hypothesis and reference lengths
    BLEU = BP · exp((1/N) Σ_n log p_n)           N = 4, reported ×100 as sacrebleu does

    AER  = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|)   (Och & Ney 2003); with P = S: 1 − 2|A ∩ S| / (|A| + |S|)

Sentences are tuples of words (already tokenized). ``bleu`` matches sacrebleu's ``corpus_bleu`` with
``tokenize="none"``; ``smooth="exp"`` is sacrebleu's default smoothing, which only matters when some
n-gram order has no match at all.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import torch

from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.reference import course_reference


@dataclass(frozen=True)
class BleuScore:
    """Corpus BLEU (0–100), its n-gram precisions (0–100), brevity penalty and lengths."""

    score: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    hypothesis_length: int
    reference_length: int

    def __str__(self) -> str:
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (f"BLEU = {self.score:.2f} {precisions} (BP = {self.brevity_penalty:.3f} "
                f"hyp_len = {self.hypothesis_length} ref_len = {self.reference_length})")  # fmt: skip


def ngrams(words: Sequence[str], n: int) -> Counter:
    """The n-grams of a sentence with their counts."""
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _as_words(sentence, role: str) -> tuple[str, ...]:
    if isinstance(sentence, str):
        return tuple(sentence.split())
    if not isinstance(sentence, (list, tuple)) or not all(isinstance(w, str) for w in sentence):
        raise CourseInputError(f"each {role} must be a string or a sequence of words, got {sentence!r}")
    return tuple(sentence)


def _pairs(hypotheses, references) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise CourseInputError(f"{len(hypotheses)} hypotheses but {len(references)} references: one each")
    if not hypotheses:
        raise CourseInputError("BLEU needs at least one sentence")
    return [(_as_words(h, "hypothesis"), _as_words(r, "reference")) for h, r in zip(hypotheses, references)]


@course_reference
def bleu(
    hypotheses: Iterable,
    references: Iterable,
    *,
    max_n: int = 4,
    smooth: str = "exp",
) -> BleuScore:
    """Corpus BLEU of hypotheses against one reference each: clipped n-gram counts
    summed over the corpus."""
    max_n = check_int("max_n", max_n, minimum=1)
    check_choice("smooth", smooth, ("none", "exp"))
    pairs = _pairs(hypotheses, references)
    matches, totals = [0] * max_n, [0] * max_n
    for hypothesis, reference in pairs:
        for n in range(1, max_n + 1):
            found, wanted = ngrams(hypothesis, n), ngrams(reference, n)
            clipped = (min(count, wanted[gram]) for gram, count in found.items())
            matches[n - 1] += sum(clipped)
            totals[n - 1] += max(len(hypothesis) - n + 1, 0)
    c, r = sum(len(h) for h, _ in pairs), sum(len(ref) for _, ref in pairs)
    brevity = 1.0 if c > r else (math.exp(1 - r / c) if c > 0 else 0.0)
    # no n-gram matches at all: 0, and no smoothing (sacrebleu's early stop)
    if not any(matches):
        return BleuScore(0.0, (0.0,) * max_n, brevity, c, r)
    precisions, zero_orders = [], 0
    for match, total in zip(matches, totals):
        if total == 0:
            precisions.append(0.0)
        elif match == 0 and smooth == "exp":
            zero_orders += 1
            # sacrebleu's "exp": 1/2, 1/4, ... of a match
            precisions.append(100.0 / (2**zero_orders * total))
        else:
            precisions.append(100.0 * match / total)
    if min(precisions) <= 0.0:
        return BleuScore(0.0, tuple(precisions), brevity, c, r)
    score = brevity * math.exp(sum(math.log(p / 100.0) for p in precisions) / max_n)
    return BleuScore(100.0 * score, tuple(precisions), brevity, c, r)


def exact_match(hypotheses: Iterable, references: Iterable) -> float:
    """The share of hypotheses identical to their reference, word for word."""
    pairs = _pairs(hypotheses, references)
    return sum(h == r for h, r in pairs) / len(pairs)


def token_accuracy(hypotheses: Iterable, references: Iterable) -> float:
    """The share of reference positions whose word the hypothesis has at the same position."""
    pairs = _pairs(hypotheses, references)
    right = sum(sum(a == b for a, b in zip(h, r)) for h, r in pairs)
    return right / max(sum(len(r) for _, r in pairs), 1)


# ---------------------------------------------------------------- alignments


@course_reference
def argmax_alignment(weights) -> set[tuple[int, int]]:
    """For each target position t (a row of the (M, S) weights), the link (source argmax, t)."""
    weights = torch.as_tensor(weights)
    if weights.dim() != 2 or weights.numel() == 0:
        raise CourseInputError(
            f"attention weights must be a non-empty (target, source) matrix, got shape {tuple(weights.shape)}"
        )
    return {(int(s), t) for t, s in enumerate(weights.argmax(dim=1).tolist())}


@course_reference
def alignment_error_rate(predicted: Iterable, sure: Iterable, possible: Iterable = ()) -> float:
    """AER of predicted links against the sure links S (and possible links P ⊇ S); 0 is perfect."""
    predicted, sure = {tuple(link) for link in predicted}, {tuple(link) for link in sure}
    possible = sure | {tuple(link) for link in possible}
    if not predicted and not sure:
        raise CourseInputError("AER needs at least one predicted or true link")
    return 1 - (len(predicted & sure) + len(predicted & possible)) / (len(predicted) + len(sure))


def corpus_aer(predictions: Iterable, truths: Iterable) -> float:
    """AER over a corpus: the link counts of every sentence pooled, as Och & Ney do."""
    predictions, truths = list(predictions), list(truths)
    if len(predictions) != len(truths):
        raise CourseInputError(f"{len(predictions)} predicted alignments but {len(truths)} true ones: one each")
    hit, total = 0, 0
    for predicted, sure in zip(predictions, truths):
        predicted, sure = {tuple(link) for link in predicted}, {tuple(link) for link in sure}
        hit += 2 * len(predicted & sure)
        total += len(predicted) + len(sure)
    if total == 0:
        raise CourseInputError("AER needs at least one link")
    return 1 - hit / total
