"""The faults an audit of the checks found (issue 43): each right answer here was rejected, each wrong one passed or
was told the wrong thing, before its fix.

Array views are read; a float32 computation is judged at float32's tolerance; a rejection prints numbers that differ;
a nucleus that keeps a token at an exact tie of its cumulative mass passes; a head that ignores the mask's values
fails; NaN is called NaN; the AER's "1 minus it" hint goes only to 1 minus the AER.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course_utils.exercises.answers import read_numbers, shown
from course_utils.exercises.attention import check_attention_head, check_positional_encoding
from course_utils.exercises.backprop import check_softplus
from course_utils.exercises.generation import check_length_normalised_score, check_top_p
from course_utils.exercises.recurrent import check_elman_step, check_sequence_loss
from course_utils.exercises.regression import check_gradient
from course_utils.exercises.scaling import check_huber_objective
from course_utils.exercises.translation import check_aer, check_sentence_bleu
from course_utils.models.basics.autograd import Value

# ----- 1. any array view is read: negative strides, non-contiguous, Fortran order


def reversed_view(array) -> np.ndarray:
    """The same values as a view with negative strides (what a[::-1] gives)."""
    return np.ascontiguousarray(np.asarray(array)[::-1])[::-1]


def strided_view(array) -> np.ndarray:
    """The same values as a non-contiguous view: every other column of a doubled array."""
    array = np.asarray(array)
    return np.repeat(array, 2, axis=-1)[..., ::2]


VIEWS = {"reversed": reversed_view, "strided": strided_view, "fortran": np.asfortranarray}


def gradient(X, y, beta):
    return -2.0 / len(y) * X.T @ (y - X @ beta)


def elman(x_t, h_prev, W, U, b):
    return torch.tanh(h_prev @ U.T + x_t @ W.T + b).numpy()


def encoding(length, d_model):
    pos = np.arange(length)[:, None]
    angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((length, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def top_p(probs, p):
    ranked, order = torch.sort(probs, descending=True)
    keep = torch.zeros_like(ranked, dtype=torch.bool).scatter(0, order, ranked.cumsum(0) - ranked < p)
    kept = probs * keep
    return (kept / kept.sum()).numpy()


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize(
    "check, solution",
    [
        (check_gradient, gradient),
        (check_elman_step, elman),
        (check_positional_encoding, encoding),
        (check_top_p, top_p),
    ],  # fmt: skip
)
def test_a_right_answer_returned_as_a_view_passes(capsys, check, solution, view):
    assert check(lambda *args: VIEWS[view](solution(*args))) is True, capsys.readouterr().out


def test_a_view_is_read_as_its_values():
    values = np.arange(6.0).reshape(2, 3)
    for view in VIEWS.values():
        read, why = read_numbers(view(values))
        assert why is None and read.values.flags.c_contiguous and np.array_equal(read.values, values)
        assert torch.from_numpy(read.values).shape == (2, 3)


# ----- 2. tolerances follow the answer's precision


def softplus_float32(x):
    data = np.float32(x.data)
    return Value(np.log1p(np.exp(data)), parents=(x,), local_grads=(1 / (1 + np.exp(-data)),), op="softplus")


def huber_float32(theta, n, d, loss, delta=1e-3):
    a, b, e, alpha, beta = (float(v) for v in (theta.detach() if isinstance(theta, torch.Tensor) else theta))
    n, d, loss = n.float(), d.float(), loss.float()
    law = torch.logsumexp(torch.stack([a - alpha * n.log(), b - beta * d.log(), torch.full_like(n, e)]), dim=0)
    residual = law - loss.log()
    return F.huber_loss(residual, torch.zeros_like(residual), delta=delta, reduction="sum")


def test_a_float32_softplus_passes(capsys):
    assert check_softplus(softplus_float32) is True, capsys.readouterr().out


def test_a_float32_huber_objective_passes_and_a_small_error_in_it_does_not(capsys):
    assert check_huber_objective(huber_float32) is True, capsys.readouterr().out
    assert check_huber_objective(lambda *args, **kwargs: huber_float32(*args, **kwargs) * 1.001) is False
    assert check_huber_objective(lambda *args, **kwargs: huber_float32(*args, **kwargs).double() * (1 + 1e-5)) is False


def test_a_float32_loss_and_score_pass(capsys):
    def loss(logits, targets):
        return F.cross_entropy(logits.float().flatten(0, 1), targets.flatten(), ignore_index=-100)

    def score(logprobs, kind, alpha):
        t, total = len(logprobs), logprobs.float().sum()
        return total / {"mean": t, "hf": t**alpha, "gnmt": ((5 + t) / 6) ** alpha}[kind]

    assert check_sequence_loss(loss) is True, capsys.readouterr().out
    assert check_length_normalised_score(score) is True, capsys.readouterr().out


# ----- 3. a rejection shows the difference


@pytest.mark.parametrize(
    "expected, got, places", [(76.1234, 76.12, 2), (1.4632824, 1.4632831, 6), (2.5e-5, 2.50001e-5, 4)]
)
def test_two_different_numbers_are_shown_differently(expected, got, places):
    for kind in ("f", "g"):
        want, given = shown(expected, got, places, kind)
        assert want != given and float(want) == pytest.approx(expected, rel=1e-3)
    assert shown(0.5, 0.5, 2) == ("0.50", "0.50")


def test_a_bleu_rounded_to_two_decimals_is_shown_to_differ(capsys):
    from course_utils.evaluation.translation_metrics import bleu

    assert check_sentence_bleu(lambda hyp, ref: round(bleu([hyp], [ref]).score + 0.004, 2)) is False
    out = capsys.readouterr().out
    numbers = out.split("BLEU is ")[1].split(". Hint")[0].split(", yours gives ")
    assert numbers[0] != numbers[1], out


def test_the_softplus_message_shows_the_difference(capsys):
    def off(x):
        value = math.log1p(math.exp(x.data)) * (1 + 3e-6)
        return Value(value, parents=(x,), local_grads=(1 / (1 + math.exp(-x.data)),), op="softplus")

    assert check_softplus(off) is False
    out = capsys.readouterr().out
    want, got = out.split(" = ")[-1].split(", got ")
    assert want.strip() != got.strip(), out


# ----- 4. a library's nucleus, rounding at an exact tie, passes


def test_transformers_top_p_warper_passes(capsys):
    from transformers.generation.logits_process import TopPLogitsWarper

    def warper(probs, p):
        return torch.softmax(TopPLogitsWarper(top_p=p)(None, probs.log()[None]), dim=-1)[0]

    assert check_top_p(warper) is True, capsys.readouterr().out


def test_top_p_still_fails_a_nucleus_one_token_too_large(capsys):
    def one_more(probs, p):
        ranked, order = torch.sort(probs, descending=True)
        keep = torch.zeros_like(ranked, dtype=torch.bool).scatter(0, order, ranked.cumsum(0) - ranked < p + 0.1)
        kept = probs * keep
        return kept / kept.sum()

    assert check_top_p(one_more) is False


# ----- 5. a head that ignores the mask's values fails


def test_a_head_that_always_masks_the_future_fails(capsys):
    def always_causal(x, W_q, W_k, W_v, mask=None):
        q, k, v = x @ W_q, x @ W_k, x @ W_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~torch.ones_like(scores, dtype=torch.bool).tril(), -math.inf)
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights

    assert check_attention_head(always_causal) is False
    assert "use the mask you are given" in capsys.readouterr().out


# ----- 6. messages fit the mistake


def test_a_nan_score_is_called_nan(capsys):
    assert check_length_normalised_score(lambda logprobs, kind, alpha: float("nan")) is False
    out = capsys.readouterr().out
    assert "NaN" in out and "return one number" not in out, out


def test_nan_attention_weights_are_called_nan(capsys):
    def all_blocked(x, W_q, W_k, W_v, mask=None):
        scores = (x @ W_q) @ (x @ W_k).transpose(-2, -1)
        weights = torch.softmax(scores.masked_fill(torch.ones_like(scores, dtype=torch.bool), -math.inf), dim=-1)
        return weights @ (x @ W_v), weights

    assert check_attention_head(all_blocked) is False
    out = capsys.readouterr().out
    assert "NaN" in out and "wrong dim" not in out, out


def _aer(weights, sure):
    links = {(int(weights[t].argmax()), t) for t in range(weights.shape[0])}
    return 1 - 2 * len(links & sure) / (len(links) + len(sure))


@pytest.mark.parametrize("wrong", [lambda w, s: 1.0, lambda w, s: 0.9 * (1 - _aer(w, s))])
def test_only_one_minus_the_aer_gets_the_one_minus_hint(capsys, wrong):
    assert check_aer(lambda w, s: 1 - _aer(w, s)) is False
    assert "1 minus it" in capsys.readouterr().out
    assert check_aer(wrong) is False
    assert "1 minus it" not in capsys.readouterr().out


def test_a_nan_bleu_is_called_nan(capsys):
    assert check_sentence_bleu(lambda hyp, ref: float("nan")) is False
    assert "NaN" in capsys.readouterr().out


@pytest.mark.parametrize(
    "check, nan_answer",
    [
        (check_elman_step, lambda x_t, h_prev, W, U, b: torch.full((x_t.shape[0], W.shape[0]), math.nan)),
        (check_positional_encoding, lambda length, d_model: torch.full((length, d_model), math.nan)),
        (check_top_p, lambda probs, p: probs * math.nan),
    ],
)
def test_a_tensor_answer_holding_nan_is_called_nan(capsys, check, nan_answer):
    assert check(nan_answer) is False
    assert "NaN" in capsys.readouterr().out


def test_a_count_off_by_a_half_is_shown_to_differ(capsys):
    from course_utils.exercises.lstm import check_lstm_parameters

    assert check_lstm_parameters(lambda d, h: 4 * (h * d + h * h + 2 * h) + 0.5) is False
    out = capsys.readouterr().out
    assert "has 99,328.0 parameters; yours gives 99,328.5" in out, out


def test_output_layer_gradients_computed_in_float32_and_returned_as_a_list_pass(capsys):
    from course_utils.exercises.backprop import check_output_layer_grads

    def grads(h, a, y):
        delta = torch.tensor(a) - torch.tensor(y)  # float32, torch's default
        return (delta * torch.tensor(h)).tolist(), delta.item()

    assert check_output_layer_grads(grads) is True, capsys.readouterr().out
    assert check_output_layer_grads(lambda h, a, y: ([(a - y) * v * (1 + 1e-4) for v in h], a - y)) is False


def test_a_nucleus_slightly_off_is_shown_to_differ(capsys):
    def slightly_off(probs, p):
        nucleus = torch.as_tensor(top_p(probs, p))
        return nucleus * (1 + 1e-4 * (nucleus > 0).double().cumsum(0))  # no longer sums to 1, by 1e-4

    assert check_top_p(slightly_off) is False
    out = capsys.readouterr().out
    assert "sums to 1)" not in out and "sums to 1 " not in out, out
    want, got = out.split("the nucleus is ")[1].split(". Hint")[0].split(", yours ")
    assert want != got, out


def test_nan_in_hand_worked_gradients_is_called_nan(capsys):
    from course_utils.exercises.backprop import check_chain_rule, check_output_layer_grads

    assert check_chain_rule({"x": math.nan, "y": 1.0, "z": 2.0}) is False
    assert "NaN" in capsys.readouterr().out
    assert check_output_layer_grads(lambda h, a, y: ([math.nan] * len(h), math.nan)) is False
    assert "NaN" in capsys.readouterr().out


def test_a_probability_above_one_is_told_so(capsys):
    from course_utils.exercises.language_models import check_bigram_probability

    assert check_bigram_probability(lambda sentences, previous, word: 2.0) is False
    assert "between 0 and 1" in capsys.readouterr().out
