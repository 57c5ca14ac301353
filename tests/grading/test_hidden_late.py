"""The hidden tests of notebooks 07-11 fail the usual wrong answers (the self-checks' hints), with a message that
says what is off; and 09's masking judge passes the course's solution on every draw of the global generator."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from grading.hidden import hidden_tests
from grading.judging import answer_here
from tests.exercises.test_exercises_bert import encode_shortest
from tests.grading.hidden_support import solved_namespace

TESTS = hidden_tests()


def _luong_unmasked(query, keys, mask):
    weights = torch.softmax(query @ keys.transpose(1, 2), dim=-1)  # padding gets weight
    return weights @ keys, weights


def _bleu_unclipped(hypothesis, reference):
    log_sum = 0.0
    for n in range(1, 5):
        grams = [tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1)]
        wanted = {tuple(reference[i : i + n]) for i in range(len(reference) - n + 1)}
        log_sum += math.log(sum(gram in wanted for gram in grams) / len(grams))
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_sum / 4)


def _aer_by_column(weights, true_links):
    predicted = {(s, int(t)) for s, t in enumerate(weights.argmax(dim=0).tolist())}
    return 1 - 2 * len(predicted & set(true_links)) / (len(predicted) + len(true_links))


def _head(x, W_q, W_k, W_v, mask=None, *, own_causal=False, scale=True):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.transpose(-2, -1) / (math.sqrt(k.shape[-1]) if scale else 1.0)
    if mask is not None:
        scores = scores.masked_fill(~(torch.ones_like(mask).tril() if own_causal else mask), -math.inf)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def _positions_swapped(length, d_model):
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    angle = pos / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1).reshape(length, d_model)


def _mask_all(input_ids, mask_id, vocab_size, special_ids, generator):
    chosen = (torch.rand(input_ids.shape, generator=generator) < 0.15) & ~torch.isin(
        input_ids, torch.tensor(special_ids)
    )
    masked = input_ids.clone()
    masked[chosen] = mask_id  # no 10 % random, no 10 % unchanged
    return masked, torch.where(chosen, input_ids, torch.full_like(input_ids, -100))


def _mask_labels_zero(input_ids, mask_id, vocab_size, special_ids, generator):
    masked, labels = solved_namespace("09_bert", 1)["mask_batch"](
        input_ids, mask_id, vocab_size, special_ids, generator
    )
    return masked, labels.clamp(min=0)


def _top_p_without_crossing(probs, p):
    ranked, order = torch.sort(probs, descending=True)
    keep = torch.zeros_like(ranked, dtype=torch.bool).scatter(0, order, ranked.cumsum(0) < p)
    kept = probs * keep
    return kept / kept.sum()


def _beam_by_next(beam_logprobs, next_logprobs, width):
    best = torch.topk(next_logprobs.flatten(), width)
    vocab = next_logprobs.shape[1]
    beam = best.indices // vocab
    return beam, best.indices % vocab, beam_logprobs[beam] + best.values


def _score_times_alpha(logprobs, kind, alpha):
    t, total = len(logprobs), float(logprobs.sum())
    return total / {"mean": t, "hf": t * alpha, "gnmt": ((5 + t) / 6) ** alpha}[kind]


def _isoflop_best_run(n, loss):
    x, loss = np.log(np.asarray(n, dtype=float)), np.asarray(loss, dtype=float)
    p2, p1, p0 = np.polyfit(x, loss, 2)
    return float(np.exp(x[np.argmin(loss)])), float(p0 - p1**2 / (4 * p2))


def _allocation_without_six(flops, E, A, alpha, B, beta):
    n_opt = (alpha * A / (beta * B)) ** (1 / (alpha + beta)) * flops ** (beta / (alpha + beta))
    return n_opt, flops / (6 * n_opt)


def _huber_mean(theta, n, d, loss, delta=1e-3):
    a, b, e, alpha, beta = theta
    terms = torch.stack([a - alpha * torch.log(n), b - beta * torch.log(d), e * torch.ones_like(n)])
    residual = torch.logsumexp(terms, dim=0) - torch.log(loss)
    return F.huber_loss(residual, torch.zeros_like(residual), delta=delta)  # the mean, not the sum


# (notebook, exercise, wrong answer, words one of its messages says)
WRONG = [
    ("07_seq2seq_attention", 1, _luong_unmasked, "context: "),
    ("07_seq2seq_attention", 2, _bleu_unclipped, "expected"),
    ("07_seq2seq_attention", 3, _aer_by_column, "expected"),
    ("08_transformer_self_attention", 1, lambda length: torch.ones(length, length).tril(), "boolean"),
    ("08_transformer_self_attention", 2, lambda *args: _head(*args, own_causal=True), "numbers are off"),
    ("08_transformer_self_attention", 2, lambda *args: _head(*args, scale=False), "numbers are off"),
    ("08_transformer_self_attention", 3, _positions_swapped, "numbers are off"),
    ("09_bert", 1, _mask_all, "mask: 1.000"),
    ("09_bert", 1, _mask_labels_zero, "label"),
    ("09_bert", 2, encode_shortest, "expected"),
    ("09_bert", 3, lambda hidden: hidden[-4:].sum(0), "shape"),
    ("10_generation_strategies", 1, _top_p_without_crossing, "numbers are off"),
    ("10_generation_strategies", 2, _beam_by_next, "best"),
    ("10_generation_strategies", 3, _score_times_alpha, "expected"),
    ("11_scaling_laws", 1, _isoflop_best_run, "N_opt"),
    ("11_scaling_laws", 2, _allocation_without_six, "N_opt"),
    ("11_scaling_laws", 3, _huber_mean, "expected"),
]


def _exercise(stem: str, number: int):
    return next(e for e in TESTS[stem] if e.number == number)


@pytest.mark.parametrize("stem, number, answer, word", WRONG)
def test_a_usual_mistake_fails_with_a_message_that_says_what_is_off(stem, number, answer, word):
    results = answer_here(_exercise(stem, number), answer)
    wrong = [r for r in results if r.status == "wrong"]
    assert wrong and {r.status for r in results} <= {"passed", "wrong"}
    assert sum(r.earned for r in results) < sum(r.points for r in results)
    assert all(r.message for r in wrong) and any(word in r.message for r in wrong), [r.message for r in wrong]


def test_an_attention_head_that_ignores_the_mask_fails_every_masked_case():
    exercise = _exercise("08_transformer_self_attention", 2)
    results = answer_here(exercise, lambda x, W_q, W_k, W_v, mask=None: _head(x, W_q, W_k, W_v))
    masked = [r for r in results if "no mask" not in r.label]
    assert masked and all(r.status == "wrong" for r in masked)
    assert [r.status for r in results if "no mask" in r.label] == ["passed"]


def test_the_masking_judge_passes_the_course_solution_on_other_draws():
    solution = solved_namespace("09_bert", 1)["mask_batch"]
    for seed in range(3):
        torch.manual_seed(seed)
        assert {r.status for r in answer_here(_exercise("09_bert", 1), solution)} == {"passed"}
