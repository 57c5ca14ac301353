"""Self-checks for notebook 07's exercises (seq2seq translation with attention).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: Luong's dot attention over a padded source, the BLEU of
one pair (on real pairs of ``data/translation/test.jsonl.bz2``), and the alignment error rate of the links an
attention matrix's row maxima give.
"""

from __future__ import annotations

import functools
import math
from collections import Counter

import torch

from course_utils.exercises.answers import as_tensors, shown
from course_utils.exercises import NAN_WEIGHTS, answer_of, close, never_raises, numeric_answer, verdict
from course_utils.language import parallel
from course_utils.models.recurrent.seq2seq import attend
from course_utils.evaluation.translation_metrics import alignment_error_rate, argmax_alignment, bleu

Tensor = torch.Tensor

# ---------------------------------------------------------------- exercise 1: dot attention

# (B, T, S, H, source lengths, seed): no padding first, then padded sources, one decoder step (T = 1)
_ATTENTION_CASES = [
    (2, 3, 4, 5, (4, 4), 0),
    (3, 4, 6, 5, (6, 3, 1), 1),
    (2, 1, 5, 3, (2, 5), 2),
    (4, 5, 7, 8, (7, 5, 2, 6), 3),
]


def _attention_case(batch: int, steps: int, length: int, hidden: int, lengths: tuple[int, ...], seed: int):
    """Arguments (query, keys, mask) in float64 and the reference (context, weights) from ``attend``."""
    g = torch.Generator().manual_seed(seed)
    query = torch.randn(batch, steps, hidden, generator=g, dtype=torch.float64)  # (B, T, H)
    keys = torch.randn(batch, length, hidden, generator=g, dtype=torch.float64)  # (B, S, H)
    mask = torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]  # (B, S): True at real words
    scores = query @ keys.transpose(1, 2)  # (B, T, S)
    return (query, keys, mask), attend(scores, keys, mask)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def _weights_hint(weights: Tensor, query: Tensor, keys: Tensor, mask: Tensor) -> str:
    """Name the mistake the weights (B, T, S) show; the first that fits is shown."""
    scores = query @ keys.transpose(1, 2)  # (B, T, S)
    masked = scores.masked_fill(~mask[:, None, :], float("-inf"))  # (B, T, S)
    real = mask[:, None, :].expand_as(scores)  # (B, T, S): where a score is a real one
    if _same(weights[real], scores[real]):
        return ("those are the scores q·k: turn them into weights with a softmax over the source "
                "(scores → mask → softmax → weighted sum)")  # fmt: skip
    if _same(weights, torch.softmax(scores, dim=-1)):
        return ("padding gets weight: set the scores of padded source positions (mask False) to -inf "
                "before the softmax, so their weights are 0")  # fmt: skip
    if _same(weights, torch.softmax(scores, dim=-1) * mask[:, None, :]):
        return ("mask before the softmax (scores → -inf), not after it: zeroing weights afterwards leaves rows "
                "that no longer sum to 1")  # fmt: skip
    if _same(weights, torch.softmax(masked / math.sqrt(query.shape[-1]), dim=-1)):
        return "no 1/√H scaling here: Luong's dot score is plain q·k (scale 1)"
    if bool(torch.isnan(weights).any()):
        return NAN_WEIGHTS
    if not torch.allclose(weights.sum(dim=-1), torch.ones(weights.shape[:2], dtype=weights.dtype), atol=1e-6):
        return ("softmax over the wrong dim: each row of weights (one query over the source positions) must "
                "sum to 1, so take the softmax over the last axis S (dim=-1)")  # fmt: skip
    return "weights = softmax(q·kᵀ with padded positions at -inf) over the source axis"


@never_raises
def check_dot_attention(fn) -> bool:
    """Exercise: ``fn(query, keys, mask) -> (context, weights)``: Luong's dot attention, from scratch.

    query (B, T, H) holds decoder states, keys (B, S, H) encoder states, mask (B, S) is True at real
    source words. Scores q·k (no scaling) → softmax over the source with padding excluded → weighted
    sum of the keys. Returns context (B, T, H) and weights (B, T, S); checked in float64, padded sources included.
    """
    for batch, steps, length, hidden, lengths, seed in _ATTENTION_CASES:
        args, (context, weights) = _attention_case(batch, steps, length, hidden, lengths, seed)
        answer, why = answer_of(fn, args)
        parts, why = (None, why) if why else as_tensors(answer, 2, "a pair (context, weights)", finite=False)
        if why:
            return verdict(False, why)
        got_context, got_weights = parts
        case = f"B={batch}, T={steps}, S={length}, H={hidden}, source lengths {list(lengths)}"
        shapes = (tuple(got_context.shape), tuple(got_weights.shape))
        if shapes != (tuple(context.shape), tuple(weights.shape)):
            hint = f"context is (B, T, H) = {tuple(context.shape)} and weights (B, T, S) = {tuple(weights.shape)}"
            if shapes == (tuple(weights.shape), tuple(context.shape)):
                hint = "return (context, weights) in this order"
            elif got_weights.shape == weights.transpose(1, 2).shape:
                hint = "the weights come out transposed: scores = query @ keys.transpose(1, 2) is (B, T, S)"
            return verdict(False, f"wrong shape ({case}): got {shapes[0]} and {shapes[1]}. Hint: {hint}")
        if not _same(got_weights, weights):
            hint = _weights_hint(got_weights, *args)
            return verdict(False, f"the weights are not attention weights yet ({case}). Hint: {hint}")
        if not _same(got_context, context):
            return verdict(False, f"the weights are right but the context is not ({case}). Hint: the context is "
                                  "the weighted sum of the keys, weights @ keys: (B, T, S) @ (B, S, H)")  # fmt: skip
    return verdict(True, f"your attention is softmax(q·kᵀ, padding at -inf) · keys on {len(_ATTENTION_CASES)} "
                         "cases, padded sources included")  # fmt: skip


# ---------------------------------------------------------------- exercise 2: BLEU of one pair


@functools.lru_cache(maxsize=1)
def _shipped_cases(build):
    """``(cases, None)``, or ``(None, why)`` when the shipped test pairs cannot be read."""
    try:
        return build(), None
    except Exception as error:  # noqa: BLE001 - the corpus is shipped; say so if it is missing
        return None, (
            f"could not read the test pairs ({type(error).__name__}: {error}); "
            f"regenerate them with `{parallel.REGENERATE}`"
        )


def bleu_cases() -> tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...]:
    """(hypothesis, reference, what) on real test targets; every n-gram order (1–4) has a match in each."""
    targets = [pair.target for pair in parallel.load("test") if len(pair.target) >= 10][:5]
    vocabulary = sorted({word for target in targets for word in target})
    first, second, third, fourth, fifth = (list(t) for t in targets)

    def foreign(reference: list[str]) -> str:  # a real target word the reference lacks
        return next(word for word in vocabulary if word not in reference)

    def once(reference: list[str]) -> int:  # the middle-most position of a word the reference has only once
        counts = Counter(reference)
        return min((i for i, w in enumerate(reference) if counts[w] == 1), key=lambda i: abs(i - len(reference) // 2))

    k = len(second) // 2
    r = once(third)
    m = once(fifth)
    cases = [
        (first, first, "the reference itself"),
        (second[:k] + [foreign(second)] + second[k + 1 :], second, "one word replaced"),
        (third[: r + 1] + [third[r]] * 2 + third[r + 1 :], third, "one word said three times"),
        (fourth[:-3], fourth, "the last three words dropped"),
        (fifth[: m + 1] + [fifth[m]] + fifth[m + 1 : -4], fifth, "a word said twice, the end dropped"),
    ]
    return tuple((tuple(h), tuple(ref), what) for h, ref, what in cases)


def _counts(hypothesis, reference, clip: bool = True) -> tuple[list[float], float]:
    """Modified n-gram precisions p_1..p_4 (0–1; unclipped if ``clip`` is False) and the brevity penalty."""
    precisions = []
    for n in range(1, 5):
        found = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        wanted = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matched = sum(min(c, wanted[g]) if clip else c * (g in wanted) for g, c in found.items())
        precisions.append(matched / max(len(hypothesis) - n + 1, 1))
    c, r = len(hypothesis), len(reference)
    return precisions, 1.0 if c > r else math.exp(1 - r / c)


def _bleu_variants(hypothesis, reference) -> dict[str, float]:
    """BLEU (0–100) with the usual mistakes, each named by its hint."""
    p, bp = _counts(hypothesis, reference)
    unclipped, _ = _counts(hypothesis, reference, clip=False)
    geometric = lambda ps: math.exp(sum(math.log(x) for x in ps) / 4) if min(ps) > 0 else 0.0  # noqa: E731
    c, r = len(hypothesis), len(reference)
    return {
        "clip the counts: a hypothesis n-gram counts at most as often as it occurs in the reference "
        "(a word repeated in the hypothesis is not matched twice)": 100 * bp * geometric(unclipped),
        "apply the brevity penalty BP = exp(1 − r/c) when the hypothesis is shorter than the reference (c ≤ r)":
            100 * geometric(p),
        "the brevity penalty is exp(1 − r/c), r the reference length and c the hypothesis length":
            100 * (1.0 if c > r else math.exp(1 - c / r)) * geometric(p),
        "average the precisions geometrically, exp(¼ Σ log p_n), not with the arithmetic mean ¼ Σ p_n":
            100 * bp * sum(p) / 4,
        "BLEU is reported on sacrebleu's 0–100 scale: multiply by 100": bp * geometric(p),
    }  # fmt: skip


@never_raises
def check_sentence_bleu(fn) -> bool:
    """Exercise: ``fn(hypothesis, reference) -> BLEU`` (0–100) of one pair, both lists of words.

    BLEU = 100 · BP · exp(¼ Σ_{n=1..4} log p_n), with p_n the clipped n-gram precision and
    BP = exp(1 − r/c) when the hypothesis (c words) is not longer than the reference (r words), else 1.
    Every case has a match at every order, so no smoothing is needed. Checked on real pairs of the test set.
    """
    cases, why = _shipped_cases(bleu_cases)
    if why:
        return verdict(False, why)
    for hypothesis, reference, what in cases:
        expected = bleu([hypothesis], [reference]).score
        value, why = numeric_answer(fn, (list(hypothesis), list(reference)))
        if why:
            return verdict(False, why)
        if close(value, expected):
            continue
        hint = next((name for name, variant in _bleu_variants(hypothesis, reference).items() if close(value, variant)),
                    "BLEU = 100 · BP · exp(¼ Σ log p_n) with clipped n-gram precisions p_1..p_4")  # fmt: skip
        want, got = shown(expected, value, 2)
        return verdict(False, f"on a real pair ({what}: {' '.join(hypothesis)!r} against {' '.join(reference)!r}) "
                              f"BLEU is {want}, yours gives {got}. Hint: {hint}")  # fmt: skip
    return verdict(True, f"your BLEU is 100 · BP · exp(¼ Σ log p_n) on {len(cases)} real pairs")


# ---------------------------------------------------------------- exercise 3: the AER of an attention matrix

# hand matrices (M target rows, S source columns) with their true links (source s, target t)
_HAND_AER_CASES = [
    ([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.3, 0.6]], {(0, 0), (1, 1), (2, 2)}, "a perfect diagonal"),
    ([[0.1, 0.7, 0.1, 0.1], [0.6, 0.2, 0.1, 0.1], [0.1, 0.1, 0.2, 0.6]], {(1, 0), (0, 1), (2, 2)},
     "3 target words, 4 source words"),
    ([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]],
     {(0, 0), (2, 1), (1, 2), (2, 3), (0, 4), (1, 4)}, "5 target words, 3 source words, two links for one word"),
]  # fmt: skip


def aer_cases() -> list[tuple[Tensor, set[tuple[int, int]], str]]:
    """(weights (M, S), true links, what): the hand cases, random ones, and noisy attention on real test pairs."""
    cases = [(torch.tensor(w, dtype=torch.float64), set(links), what) for w, links, what in _HAND_AER_CASES]
    g = torch.Generator().manual_seed(7)
    for rows, cols in ((6, 4), (4, 7)):
        weights = torch.softmax(torch.randn(rows, cols, generator=g, dtype=torch.float64), dim=-1)  # (M, S)
        guesses = torch.randint(cols, (rows,), generator=g).tolist()  # a true source word for the odd rows
        links = {(int(weights[t].argmax()) if t % 2 == 0 else guesses[t], t) for t in range(rows)}
        cases.append((weights, links, f"random {rows}×{cols} attention"))
    for pair in parallel.load("test")[:2]:
        weights = torch.rand(len(pair.target), len(pair.source), generator=g, dtype=torch.float64)  # (M, S)
        for s, t in pair.alignment[::2]:  # half the rows attend to their true source word
            weights[t, s] += 1.0
        weights = weights / weights.sum(dim=1, keepdim=True)  # (M, S): rows sum to 1, as attention's do
        cases.append((weights, set(pair.alignment), f"noisy attention on the real pair {' '.join(pair.source)!r}"))
    return cases


def _aer_variants(weights: Tensor, sure: set[tuple[int, int]]) -> dict[str, float]:
    """The AER with the usual mistakes, each named by its hint."""
    links = argmax_alignment(weights)
    aer = alignment_error_rate(links, sure)
    by_column = {(s, int(t)) for s, t in enumerate(weights.argmax(dim=0).tolist())}
    swapped = {(t, s) for s, t in links}
    return {
        "take the argmax over the source axis: each target row t links to its source argmax s "
        "(weights.argmax(dim=1)), one link per target word": alignment_error_rate(by_column, sure),
        "the links are (source s, target t): row t with source argmax s gives (s, t), not (t, s)":
            alignment_error_rate(swapped, sure),
        "that is the agreement 2|A∩S|/(|A|+|S|): the error rate is 1 minus it": 1 - aer,
        "AER counts both sides: 1 − 2|A∩S| / (|A| + |S|), not 1 − |A∩S|/|A|": 1 - len(links & sure) / len(links),
        "AER counts both sides: 1 − 2|A∩S| / (|A| + |S|), not 1 − |A∩S|/|S|": 1 - len(links & sure) / len(sure),
    }  # fmt: skip


@never_raises
def check_aer(fn) -> bool:
    """Exercise: ``fn(weights, sure) -> AER`` of an attention matrix against the true links.

    weights (M, S) has one row per target word t and one column per source word s; sure is a set of
    true links (s, t). The predicted links A are (argmax of row t, t) for every row, and
    AER = 1 − 2|A ∩ S| / (|A| + |S|). Checked on hand-made, random and real cases.
    """
    cases, why = _shipped_cases(aer_cases)
    if why:
        return verdict(False, why)
    for weights, sure, what in cases:
        expected = alignment_error_rate(argmax_alignment(weights), sure)
        value, why = numeric_answer(fn, (weights, sure))
        if why:
            return verdict(False, why)
        if close(value, expected):
            continue
        want, got = shown(expected, value, 3)
        return verdict(False, f"on {what} the AER is {want}, yours gives {got}. Hint: {_aer_hint(fn, cases)}")
    return verdict(True, f"your AER is 1 − 2|A∩S| / (|A| + |S|) on {len(cases)} matrices")


def _aer_hint(fn, cases) -> str:
    """The hint of the mistake that gives the answer's value on every case (one case alone can fit two mistakes)."""
    fits = None
    for weights, sure, _ in cases:
        value, why = numeric_answer(fn, (weights, sure))
        if why:
            continue
        fitting = {name for name, variant in _aer_variants(weights, sure).items() if close(value, variant)}
        fits = fitting if fits is None else fits & fitting
    order = list(_aer_variants(*cases[0][:2]))
    return next(
        (name for name in order if name in (fits or set())),
        "links A = {(argmax of row t, t)}, then AER = 1 − 2|A∩S| / (|A| + |S|)",
    )
