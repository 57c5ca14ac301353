"""The self-checks of notebook 08: each passes right answers, fails wrong and unfinished ones, never raises."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from exercise_contract import contract_tests, solution_text
from torch import nn

from course_utils.exercises.attention import check_attention_head, check_causal_mask, check_positional_encoding
from course_utils.models.transformer import attention
from course_utils.models.transformer.positional import sinusoidal_positions

CHECKS = (check_causal_mask, check_attention_head, check_positional_encoding)


# ----- the reference solutions (the notebook's <details> blocks show these) -----


def causal_mask(length):
    return torch.ones(length, length, dtype=torch.bool).tril()  # (T, T): True where s <= t


def attention_head(x, W_q, W_k, W_v, mask=None):
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # (B, T, d_k) each
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # blocked: weight 0
    weights = torch.softmax(scores, dim=-1)  # each row sums to 1
    return weights @ v, weights  # (B, T, d_k), (B, T, T)


def positional_encoding(length, d_model):
    pos = torch.arange(length, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d/2,): 0, 2, 4, …
    angle = pos / 10000 ** (two_i / d_model)  # (T, d/2)
    pe = torch.zeros(length, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)  # even: sin, odd: cos
    return pe


SOLUTIONS = [(check_causal_mask, causal_mask), (check_attention_head, attention_head),
             (check_positional_encoding, positional_encoding)]  # fmt: skip


# ----- answers to the causal-mask exercise -----


def mask_in_loops(length):
    mask = torch.zeros(length, length, dtype=torch.bool)
    for t in range(length):
        for s in range(t + 1):
            mask[t, s] = True
    return mask


def additive_mask(length):
    return torch.zeros(length, length).masked_fill(~causal_mask(length), float("-inf"))


# ----- answers to the attention-head exercise -----


def head(x, W_q, W_k, W_v, mask=None, *, scale=None, fill=float("-inf"), dim=-1, after=False, invert=False):
    """The head with one knob turned: the usual mistakes."""
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.transpose(-2, -1) * (1 / math.sqrt(k.shape[-1]) if scale is None else scale)
    if mask is not None and not after:
        scores = scores.masked_fill(mask if invert else ~mask, fill)
    weights = torch.softmax(scores, dim=dim)
    if mask is not None and after:
        weights = weights * mask
    return weights @ v, weights


def head_with_sdpa(x, W_q, W_k, W_v, mask=None):
    """The output from torch's fused kernel, the weights by hand with a large negative number."""
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.mT / k.shape[-1] ** 0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(-1e9, dtype=scores.dtype))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), torch.softmax(scores, dim=-1)


def head_in_loops(x, W_q, W_k, W_v, mask=None):
    """One query at a time, in float32, each attending to the keys it may see."""
    x, W_q, W_k, W_v = (t.float() for t in (x, W_q, W_k, W_v))
    batch, length, _ = x.shape
    d_k = W_q.shape[1]
    weights, output = torch.zeros(batch, length, length), torch.zeros(batch, length, d_k)
    for b in range(batch):
        q, k, v = x[b] @ W_q, x[b] @ W_k, x[b] @ W_v
        for t in range(length):
            seen = torch.ones(length, dtype=torch.bool) if mask is None else mask[t]  # the keys query t may see
            w = torch.softmax(k[seen] @ q[t] / math.sqrt(d_k), dim=0)
            weights[b, t, seen] = w
            output[b, t] = w @ v[seen]
    return output, weights


def head_always_causal(x, W_q, W_k, W_v, mask=None):
    """Masks the future whenever a mask is given, whatever the mask's values."""
    causal = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
    return attention_head(x, W_q, W_k, W_v, None if mask is None else causal)


def head_nan(x, W_q, W_k, W_v, mask=None):
    """Every key blocked in every row: 0/0 in the softmax."""
    output, weights = attention_head(x, W_q, W_k, W_v, None if mask is None else torch.zeros_like(mask))
    return output, weights


def head_with_additive_mask(x, W_q, W_k, W_v, mask=None):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(1, 2)
    if mask is not None:
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, -math.inf)
    weights = scores.softmax(-1)
    return (weights @ v, weights)


def scores_returned(x, W_q, W_k, W_v, mask=None):
    output, _ = attention_head(x, W_q, W_k, W_v, mask)
    scores = (x @ W_q) @ (x @ W_k).transpose(-2, -1) / math.sqrt(W_q.shape[1])
    return output, scores if mask is None else scores.masked_fill(~mask, float("-inf"))


def k_not_transposed(x, W_q, W_k, W_v, mask=None):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    weights = torch.softmax(q @ k / math.sqrt(k.shape[-1]), dim=-1)
    return weights @ v, weights


def k_times_q(x, W_q, W_k, W_v, mask=None):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = k @ q.transpose(-2, -1) / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def mask_without_none(x, W_q, W_k, W_v, mask=None):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    weights = torch.softmax((q @ k.mT / math.sqrt(k.shape[-1])).masked_fill(~mask, float("-inf")), dim=-1)
    return weights @ v, weights


def values_not_projected(x, W_q, W_k, W_v, mask=None):
    _, weights = attention_head(x, W_q, W_k, W_v, mask)
    return weights @ x, weights


# ----- answers to the positional-encoding exercise -----


def pe_in_numpy(length, d_model):
    pe = np.zeros((length, d_model))
    for pos in range(length):
        for i in range(d_model // 2):
            pe[pos, 2 * i] = np.sin(pos / 10000 ** (2 * i / d_model))
            pe[pos, 2 * i + 1] = np.cos(pos / 10000 ** (2 * i / d_model))
    return torch.from_numpy(pe)


def pe_float32(length, d_model):
    """The Annotated Transformer's way, in torch's default float32: exp(−2i · ln 10000 / d_model)."""
    position = torch.arange(length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe = torch.zeros(length, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_by_column(length, d_model, *, exponent=lambda j: j - j % 2, swap=False, first=0):
    """Column by column from math.sin / math.cos, with a knob for each usual mistake."""
    even, odd = (math.cos, math.sin) if swap else (math.sin, math.cos)
    rows = [[(odd if j % 2 else even)(pos / 10000 ** (exponent(j) / d_model)) for j in range(d_model)]
            for pos in range(first, first + length)]  # fmt: skip
    return torch.tensor(rows, dtype=torch.float64)


def pe_halves(length, d_model):
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    angle = pos / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([angle.sin(), angle.cos()], dim=1)


def pe_multiplied(length, d_model):
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    angle = pos * 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1)


RIGHT = [
    (check_causal_mask, causal_mask),
    (check_causal_mask, mask_in_loops),
    (check_causal_mask, lambda T: torch.arange(T)[None, :] <= torch.arange(T)[:, None]),
    (check_causal_mask, lambda T: ~torch.ones(T, T, dtype=torch.bool).triu(1)),
    (check_causal_mask, lambda T: torch.from_numpy(np.tril(np.ones((T, T), dtype=bool)))),
    (check_causal_mask, lambda T: additive_mask(T) == 0),
    (check_causal_mask, attention.causal_mask),
    (check_attention_head, attention_head),
    (check_attention_head, head_with_sdpa),
    (check_attention_head, head_in_loops),
    (check_attention_head, head_with_additive_mask),
    (check_attention_head, lambda x, W_q, W_k, W_v, mask=None: head(x, W_q, W_k, W_v, mask, fill=-1e9)),
    (
        check_attention_head,
        lambda x, W_q, W_k, W_v, mask=None: list(
            attention.scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask)
        ),
    ),
    (
        check_attention_head,
        lambda x, W_q, W_k, W_v, mask=None: attention_head(x.float(), W_q.float(), W_k.float(), W_v.float(), mask),
    ),
    (check_positional_encoding, positional_encoding),
    (check_positional_encoding, pe_in_numpy),
    (check_positional_encoding, pe_float32),
    (check_positional_encoding, pe_by_column),
    (check_positional_encoding, sinusoidal_positions),
    (check_positional_encoding, lambda T, d: positional_encoding(T, d).float().requires_grad_()),
]

WRONG = [
    (check_causal_mask, lambda T: torch.ones(T, T, dtype=torch.bool).triu(), "see the future"),
    (check_causal_mask, lambda T: torch.ones(T, T, dtype=torch.bool).tril(-1), "must see itself"),
    (check_causal_mask, lambda T: torch.ones(T, T, dtype=torch.bool).triu(1), "True = blocked"),
    (check_causal_mask, lambda T: ~causal_mask(T), "True = blocked"),
    (check_causal_mask, lambda T: torch.ones(T, T, dtype=torch.bool), "nothing is masked"),
    (check_causal_mask, lambda T: torch.zeros(T, T, dtype=torch.bool), "everything is masked"),
    (check_causal_mask, additive_mask, "additive float mask"),
    (check_causal_mask, nn.Transformer.generate_square_subsequent_mask, "additive float mask"),
    (check_causal_mask, lambda T: torch.zeros(T, T).masked_fill(causal_mask(T), float("-inf")), "wrong way round"),
    (check_causal_mask, lambda T: torch.ones(T, T).tril(), "dtype=torch.bool"),
    (check_causal_mask, lambda T: torch.tril(torch.ones(T, T, dtype=torch.long)), "dtype=torch.bool"),
    (check_causal_mask, lambda T: causal_mask(T)[None], "no extra dimensions"),
    (check_causal_mask, lambda T: causal_mask(T + 1), "wrong shape"),
    (check_causal_mask, lambda T: causal_mask(T) if T < 5 else causal_mask(T).triu(), "lower triangle"),
    (check_attention_head, lambda *a: head(*a, scale=1.0), "no 1/√d_k scaling"),
    (check_attention_head, lambda x, *a: head(x, *a, scale=1 / a[0].shape[1]), "not by d_k"),
    (check_attention_head, lambda x, *a: head(x, *a, scale=x.shape[-1] ** -0.5), "not by 1/√d_model"),
    (check_attention_head, lambda *a: head(*a, dim=1), "softmax over the wrong dim"),
    (check_attention_head, lambda *a: head(*a, dim=0), "softmax over the wrong dim"),
    (check_attention_head, lambda *a: head(*a, after=True), "mask before the softmax"),
    (check_attention_head, lambda x, W_q, W_k, W_v, mask=None: attention_head(x, W_q, W_k, W_v), "mask is ignored"),
    (check_attention_head, lambda *a: head(*a, fill=0.0), "must be -inf"),
    (check_attention_head, lambda *a: head(*a, invert=True), "the mask is inverted"),
    (check_attention_head, lambda *a: head(*a, invert=True, fill=-1e9), "the mask is inverted"),
    (check_attention_head, k_not_transposed, "k is not transposed"),
    (check_attention_head, k_times_q, "q @ k.transpose(-2, -1)"),
    (check_attention_head, scores_returned, "those are the scores"),
    (check_attention_head, mask_without_none, "only mask `if mask is not None`"),
    (check_attention_head, values_not_projected, "v = x @ W_v"),
    (check_attention_head, lambda *a: attention_head(*a)[::-1], "(output, weights) in this order"),
    (check_attention_head, lambda *a: (attention_head(*a)[0], attention_head(*a)[1][:, None]), "(B, T, T)"),
    (check_attention_head, lambda *a: attention_head(*a)[0], "a pair (output, weights)"),
    (check_attention_head, lambda *a: head(*a, scale=-1.0), "weights = softmax(q kᵀ / √d_k"),
    (check_attention_head, head_always_causal, "causal mask of your own"),
    (check_attention_head, head_nan, "contain NaN"),
    (check_positional_encoding, lambda T, d: pe_by_column(T, d, swap=True), "sin and cos are swapped"),
    (check_positional_encoding, lambda T, d: pe_by_column(T, d, exponent=lambda j: j), "both columns 2i and 2i+1"),
    (check_positional_encoding, lambda T, d: pe_by_column(T, d, exponent=lambda j: j // 2), "not i/d_model"),
    (check_positional_encoding, lambda T, d: pe_by_column(T, d, exponent=lambda j: j + j % 2), "next pair's frequency"),
    (check_positional_encoding, lambda T, d: pe_by_column(T, d, first=1), "positions start at 0"),
    (check_positional_encoding, pe_halves, "interleave"),
    (check_positional_encoding, pe_multiplied, "divide by the power"),
    (check_positional_encoding, lambda T, d: positional_encoding(T, d).T, "the shape is transposed"),
    (check_positional_encoding, lambda T, d: positional_encoding(T + 1, d), "(length, d_model)"),
    (check_positional_encoding, lambda T, d: positional_encoding(T, d) * 2, "PE(pos, 2i) = sin"),
]


# The same right answers as NumPy arrays: a check judges the value, not the type (issue 33).
RIGHT += [
    (check_causal_mask, lambda T: np.tril(np.ones((T, T), dtype=bool))),
    (check_causal_mask, lambda T: causal_mask(T).tolist()),
    (check_attention_head, lambda *a: tuple(t.numpy() for t in attention_head(*a))),
    (check_positional_encoding, lambda T, d: positional_encoding(T, d).numpy()),
]
test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


@pytest.mark.parametrize("check, solution", SOLUTIONS)
def test_the_reference_solutions_pass(capsys, check, solution):
    assert check(solution) is True
    assert capsys.readouterr().out.startswith("✓")


def test_the_reference_solutions_agree_with_torch():
    for length in (1, 2, 7):
        assert torch.equal(causal_mask(length), nn.Transformer.generate_square_subsequent_mask(length) == 0)
    torch.manual_seed(0)
    x, W_q, W_k, W_v = torch.randn(2, 5, 6, dtype=torch.float64), *torch.randn(3, 6, 4, dtype=torch.float64)
    output, weights = attention_head(x, W_q, W_k, W_v, causal_mask(5))
    assert torch.allclose(output, F.scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, is_causal=True))
    assert torch.all(weights[:, ~causal_mask(5)] == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 5, dtype=torch.float64))
    assert torch.allclose(positional_encoding(50, 64), sinusoidal_positions(50, 64), rtol=0, atol=1e-12)


def test_the_notebooks_solutions_hold_the_reference_answers_and_the_docstrings_do_not():
    """The answers live in the notebook's <details> solutions; Shift-Tab on a check must not show them."""
    solutions = solution_text("08_transformer_self_attention")
    for answer, check in [
        ("torch.ones(length, length, dtype=torch.bool).tril()", check_causal_mask),
        ('scores.masked_fill(~mask, float("-inf"))', check_attention_head),
        ("angle = pos / 10000 ** (two_i / d_model)", check_positional_encoding),
    ]:
        assert answer in solutions, answer
        assert answer not in check.__doc__, check.__name__
