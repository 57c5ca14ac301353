"""The self-checks of notebook 07: each passes right answers, fails wrong and unfinished ones, never raises."""

import math
from collections import Counter

import numpy as np
import sacrebleu
import torch
import torch.nn.functional as F
from exercise_contract import contract_tests

from course_utils.exercises.translation import (
    aer_cases,
    bleu_cases,
    check_aer,
    check_dot_attention,
    check_sentence_bleu,
)
from course_utils.language import parallel
from course_utils.models.recurrent.seq2seq import library_dot_attention
from course_utils.evaluation.translation_metrics import alignment_error_rate, argmax_alignment, bleu

CHECKS = (check_dot_attention, check_sentence_bleu, check_aer)


# ----- answers to the dot-attention exercise -----


def dot_attention(query, keys, mask):
    scores = query @ keys.transpose(1, 2)
    scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ keys, weights


def attention_with_sdpa(query, keys, mask):
    """The context from torch's fused kernel, the weights with a large negative number instead of -inf."""
    scores = torch.where(mask[:, None, :], query @ keys.transpose(1, 2), torch.tensor(-1e9, dtype=query.dtype))
    return library_dot_attention(query, keys, mask), torch.softmax(scores, dim=-1)


def attention_in_a_loop(query, keys, mask):
    """One source at a time, cut to its real length; float32 is close enough."""
    contexts, weights = [], torch.zeros(query.shape[0], query.shape[1], keys.shape[1])
    for b in range(query.shape[0]):
        real = keys[b, : int(mask[b].sum())]
        w = torch.softmax(query[b] @ real.T, dim=1)
        weights[b, :, : real.shape[0]] = w
        contexts.append(w @ real)
    return [torch.stack(contexts).float(), weights]


def softmax_then_mask(query, keys, mask):
    weights = torch.softmax(query @ keys.transpose(1, 2), dim=-1) * mask[:, None, :]
    return weights @ keys, weights


def masked_softmax(query, keys, mask, dim=-1, scale=1.0):
    scores = (query @ keys.transpose(1, 2) * scale).masked_fill(~mask[:, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=dim)
    return weights @ keys, weights


def scores_returned(query, keys, mask):
    scores = (query @ keys.transpose(1, 2)).masked_fill(~mask[:, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ keys, scores


# ----- answers to the BLEU exercise -----


def ngram_counts(words, n):
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def precisions(hypothesis, reference, clip=True):
    found = [ngram_counts(hypothesis, n) for n in range(1, 5)]
    wanted = [ngram_counts(reference, n) for n in range(1, 5)]
    return [
        sum(min(c, w[g]) if clip else c * (g in w) for g, c in f.items()) / sum(f.values())
        for f, w in zip(found, wanted)
    ]


def brevity(hypothesis, reference):
    c, r = len(hypothesis), len(reference)
    return 1.0 if c > r else math.exp(1 - r / c)


def sentence_bleu(hypothesis, reference):
    p = precisions(hypothesis, reference)
    return 100 * brevity(hypothesis, reference) * math.exp(sum(math.log(x) for x in p) / 4)


def bleu_without_clipping(hypothesis, reference):
    p = precisions(hypothesis, reference, clip=False)
    return 100 * brevity(hypothesis, reference) * math.exp(sum(math.log(x) for x in p) / 4)


def bleu_arithmetic(hypothesis, reference):
    return 100 * brevity(hypothesis, reference) * sum(precisions(hypothesis, reference)) / 4


def bleu_inverted_brevity(hypothesis, reference):
    c, r = len(hypothesis), len(reference)
    return (
        sentence_bleu(hypothesis, reference) / brevity(hypothesis, reference) * (1.0 if c > r else math.exp(1 - c / r))
    )


# ----- answers to the AER exercise -----


def aer(weights, sure):
    links = {(int(s), t) for t, s in enumerate(weights.argmax(dim=1))}
    return 1 - 2 * len(links & sure) / (len(links) + len(sure))


def aer_in_numpy(weights, sure):
    rows = weights.numpy()
    links = [(int(np.argmax(row)), t) for t, row in enumerate(rows)]
    hits = sum(link in sure for link in links)
    return np.float64(1 - 2 * hits / (len(links) + len(sure)))


def links_by_column(weights, sure):
    links = {(s, int(t)) for s, t in enumerate(weights.argmax(dim=0))}
    return 1 - 2 * len(links & sure) / (len(links) + len(sure))


def links_swapped(weights, sure):
    links = {(t, int(s)) for t, s in enumerate(weights.argmax(dim=1))}
    return 1 - 2 * len(links & sure) / (len(links) + len(sure))


def one_sided(weights, sure, side):
    links = argmax_alignment(weights)
    return 1 - len(links & sure) / len(links if side == "A" else sure)


RIGHT = [
    (check_dot_attention, dot_attention),
    (check_dot_attention, attention_with_sdpa),
    (check_dot_attention, attention_in_a_loop),
    (check_dot_attention, lambda q, k, m: masked_softmax(q.float(), k.float(), m)),
    (check_sentence_bleu, sentence_bleu),
    (check_sentence_bleu, lambda h, r: sacrebleu.sentence_bleu(" ".join(h), [" ".join(r)], tokenize="none").score),
    (check_sentence_bleu, lambda h, r: bleu([h], [r]).score),
    (check_sentence_bleu, lambda h, r: np.float32(sentence_bleu(h, r))),
    (check_aer, aer),
    (check_aer, aer_in_numpy),
    (check_aer, lambda weights, sure: alignment_error_rate(argmax_alignment(weights), sure)),
]

WRONG = [
    (check_dot_attention, lambda q, k, m: masked_softmax(q, k, torch.ones_like(m)), "padding gets weight"),
    (check_dot_attention, lambda q, k, m: masked_softmax(q, k, m, dim=1), "softmax over the wrong dim"),
    (
        check_dot_attention,
        lambda q, k, m: masked_softmax(q, k, torch.ones_like(m), dim=1),
        "softmax over the wrong dim",
    ),
    (check_dot_attention, scores_returned, "those are the scores"),
    (check_dot_attention, softmax_then_mask, "mask before the softmax"),
    (check_dot_attention, lambda q, k, m: masked_softmax(q, k, m, scale=q.shape[-1] ** -0.5), "no 1/√H scaling"),
    (check_dot_attention, lambda q, k, m: masked_softmax(q, k, m, scale=-1.0), "weights = softmax(q·kᵀ"),
    (check_dot_attention, lambda q, k, m: dot_attention(q, k, m)[::-1], "(context, weights) in this order"),
    (
        check_dot_attention,
        lambda q, k, m: (dot_attention(q, k, m)[0], dot_attention(q, k, m)[1].transpose(1, 2)),
        "come out transposed",
    ),
    (check_dot_attention, lambda q, k, m: (q, dot_attention(q, k, m)[1][:, 0]), "wrong shape"),
    (
        check_dot_attention,
        lambda q, k, m: (k.mean(1, keepdim=True).expand_as(q), dot_attention(q, k, m)[1]),
        "weights @ keys",
    ),
    (check_dot_attention, lambda q, k, m: dot_attention(q, k, m)[0], "a pair (context, weights)"),
    (check_sentence_bleu, bleu_without_clipping, "clip the counts"),
    (check_sentence_bleu, lambda h, r: sentence_bleu(h, r) / brevity(h, r), "apply the brevity penalty"),
    (check_sentence_bleu, bleu_inverted_brevity, "r the reference length"),
    (check_sentence_bleu, bleu_arithmetic, "not with the arithmetic mean"),
    (check_sentence_bleu, lambda h, r: sentence_bleu(h, r) / 100, "0–100 scale"),
    (check_sentence_bleu, lambda h, r: 100 * brevity(h, r) * precisions(h, r)[0], "clipped n-gram precisions"),
    (check_sentence_bleu, lambda h, r: bleu([h], [r]), "one number"),
    (check_aer, links_by_column, "argmax over the source axis"),
    (check_aer, links_swapped, "not (t, s)"),
    (check_aer, lambda weights, sure: 1 - aer(weights, sure), "1 minus it"),
    (check_aer, lambda weights, sure: one_sided(weights, sure, "A"), "not 1 − |A∩S|/|A|"),
    (check_aer, lambda weights, sure: one_sided(weights, sure, "S"), "not 1 − |A∩S|/|S|"),
    (check_aer, lambda weights, sure: 1 - len(argmax_alignment(weights) & sure) / (len(sure) + len(sure)), "links A ="),
    (check_aer, lambda weights, sure: argmax_alignment(weights), "one number"),
]


# The same right answers as NumPy arrays: a check judges the value, not the type (issue 33).
RIGHT += [
    (check_dot_attention, lambda q, k, m: tuple(t.numpy() for t in dot_attention(q, k, m))),
]
test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


def test_every_bleu_case_is_a_real_pair_with_a_match_at_every_order():
    references = {pair.target for pair in parallel.load("test")}
    for hypothesis, reference, _ in bleu_cases():
        assert reference in references
        score = bleu([hypothesis], [reference])
        assert min(score.precisions) > 0  # no smoothing is needed
        assert math.isclose(score.score, sacrebleu.corpus_bleu([" ".join(hypothesis)], [[" ".join(reference)]],
                                                               tokenize="none").score, abs_tol=1e-9)  # fmt: skip
    assert any(bleu([h], [r]).brevity_penalty < 1 for h, r, _ in bleu_cases())
    assert any(max(Counter(h).values()) > max(Counter(r).values()) for h, r, _ in bleu_cases())


def test_the_aer_cases_cover_uneven_shapes_and_real_alignments():
    cases = aer_cases()
    shapes = {tuple(weights.shape) for weights, _, _ in cases}
    assert any(m < s for m, s in shapes) and any(m > s for m, s in shapes)
    assert any("real pair" in what for _, _, what in cases)
    rates = [alignment_error_rate(argmax_alignment(w), sure) for w, sure, _ in cases]
    assert min(rates) == 0 and all(0 <= r < 1 for r in rates)


def test_the_attention_reference_equals_torch_sdpa_with_padding():
    torch.manual_seed(0)
    query, keys = torch.randn(3, 4, 6, dtype=torch.float64), torch.randn(3, 5, 6, dtype=torch.float64)
    mask = torch.arange(5)[None, :] < torch.tensor([5, 2, 1])[:, None]
    context, weights = dot_attention(query, keys, mask)
    assert torch.allclose(
        context, F.scaled_dot_product_attention(query, keys, keys, attn_mask=mask[:, None, :], scale=1.0)
    )
    assert torch.all(weights[~mask[:, None, :].expand_as(weights)] == 0)
