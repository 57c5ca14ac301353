"""Self-checks for notebook 08's exercises (transformer self-attention).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: the causal mask (position t sees the keys s ≤ t), one
attention head, the lecture's softmax(Q Kᵀ / √d_k) V under a boolean mask, and the slide's sinusoidal positional
encoding.

Masks follow ``torch.nn.functional.scaled_dot_product_attention``: a boolean mask is ``True`` where a
query **may attend** to a key. ``check_causal_mask`` asks for such a boolean mask and rejects (with a
hint saying how to convert it) an additive float mask (0 = attend, -inf = blocked, as
``nn.Transformer.generate_square_subsequent_mask`` builds): the notebook feeds the student's mask to
``masked_fill(~mask, -inf)``, which needs booleans.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from course_utils.exercises.answers import as_tensors
from course_utils.exercises import NAN_WEIGHTS, answer_of, never_raises, verdict
from course_utils.models.transformer.attention import causal_mask, scaled_dot_product_attention
from course_utils.models.transformer.positional import sinusoidal_positions

Tensor = torch.Tensor

# the lengths T of the causal-mask cases
_MASK_CASES = (1, 2, 5, 9)
# (B, T, d_model, d_k, mask, seed) of the attention-head cases: no mask, a causal one, a padding mask (the last keys
# hidden from every query) and a random one (each query still sees itself), so that a head which ignores the mask's
# values (say, one that always masks the future) fails. The first has T = d_k, so that a forgotten transpose (q @ k)
# runs instead of crashing and gets its own hint
_HEAD_CASES = [
    (2, 4, 6, 4, None, 0),
    (1, 3, 5, 2, None, 1),
    (2, 5, 8, 4, "causal", 2),
    (3, 6, 4, 6, "causal", 3),
    (1, 1, 3, 2, "causal", 4),
    (2, 5, 6, 4, "padding", 5),
    (2, 6, 4, 3, "random", 6),
]
# (length, d_model) of the positional-encoding cases
_PE_CASES = [(1, 4), (10, 16), (50, 64)]


def _same(a: Tensor, b: Tensor, *, atol: float = 1e-6) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=atol)


# ---------------------------------------------------------------- exercise: the causal mask


def _mask_variants(length: int) -> dict[str, Tensor]:
    """(T, T) boolean masks of the usual mistakes, each named by its hint (the first that fits is shown)."""
    ones = torch.ones(length, length, dtype=torch.bool)
    return {
        "the diagonal is excluded: a token must see itself (s = t), else the first position has nothing to "
        "attend to; keep the diagonal: .tril() with diagonal=0": ones.tril(-1),
        "the convention is inverted: here True means *may attend*, as in F.scaled_dot_product_attention and "
        "the course's attention (nn.MultiheadAttention's masks use True = blocked); flip it with ~": ~ones.tril(),
        "that is the upper triangle, which lets position t see the future s > t: keep the lower triangle "
        "(s ≤ t), e.g. .tril() instead of .triu()": ones.triu(),
        "nothing is masked: position t may attend only to the positions s ≤ t (the lower triangle)": ones,
        "everything is masked: True marks the positions s ≤ t that position t may attend to": ~ones,
    }


def _as_mask(answer) -> Tensor | None:
    """``answer`` as a tensor: a tensor as it is, a NumPy array or a list of booleans or numbers converted."""
    if isinstance(answer, Tensor):
        return answer.detach().cpu()
    try:
        array = np.asarray(answer)
    except (TypeError, ValueError):
        return None
    return torch.from_numpy(array) if array.dtype == bool or np.issubdtype(array.dtype, np.number) else None


def _mask_problem(answer, length: int) -> str | None:
    """Why ``answer`` is not a (T, T) boolean tensor (the type, shape or dtype), or None."""
    expected = causal_mask(length)  # (T, T)
    answer = _as_mask(answer)
    if answer is None:
        return "return a (T, T) boolean mask (a tensor, or a NumPy array or list of True/False)"
    if answer.shape != expected.shape:
        hint = f"one row per query position t and one column per key position s: (T, T) = {tuple(expected.shape)}"
        if answer.numel() == expected.numel():
            hint += "; it broadcasts over the batch (and the heads) by itself, no extra dimensions needed"
        return f"wrong shape for length={length}: got {tuple(answer.shape)}. Hint: {hint}"
    if answer.dtype == torch.bool:
        return None
    values = answer.detach().double()
    if answer.is_floating_point() and bool(((values == 0) | (values == -math.inf)).all()):
        flipped = " — and its -inf marks the positions that may attend, the wrong way round" if torch.equal(
            values.isinf(), expected) else ""  # fmt: skip
        return (f"that is an additive float mask (0 = attend, -inf = blocked, like nn.Transformer's "
                f"generate_square_subsequent_mask){flipped}. Hint: this course's masks are boolean, True where "
                "position t may attend to s: return yours == 0 (dtype torch.bool)")  # fmt: skip
    if torch.equal(values != 0, expected) and bool(((values == 0) | (values == 1)).all()):
        return (f"the pattern is right but the dtype is {answer.dtype}. Hint: make it boolean (dtype=torch.bool): "
                "SDPA *adds* a float mask to the scores, so 1s and 0s would block nothing")  # fmt: skip
    return f"return a boolean mask (dtype=torch.bool, True = may attend); got dtype {answer.dtype}"


@never_raises
def check_causal_mask(fn) -> bool:
    """Exercise: ``fn(length) -> (T, T)`` boolean tensor, True where position t may attend to position s (s ≤ t).

    Row t is the query, column s the key; the mask is True on and below the diagonal, in
    F.scaled_dot_product_attention's convention (True = may attend). Checked for T = 1, 2, 5, 9. An additive float mask
    (0 / -inf) is not accepted: the hint says how to turn it into booleans.
    """
    answers = []
    for length in _MASK_CASES:
        answer, why = answer_of(fn, (length,), "length is an int T; return torch.ones(T, T, ...) shaped (T, T)")
        answer = answer if why else _as_mask(answer)  # a mask made on the GPU, or as NumPy or a list, too
        why = why or _mask_problem(answer, length)
        if why:
            return verdict(False, why if why.startswith("wrong shape") else f"for length={length}: {why}")
        answers.append(answer)
    if all(torch.equal(answer, causal_mask(length)) for answer, length in zip(answers, _MASK_CASES)):
        return verdict(True, f"your mask is the lower triangle for T = {', '.join(map(str, _MASK_CASES))}: "
                             "each position sees itself and the past, never the future")  # fmt: skip
    length, answer = next((t, a) for t, a in zip(_MASK_CASES, answers) if not torch.equal(a, causal_mask(t)))
    hint = next((name for name in _mask_variants(1)  # a mistake fits when it gives every answer
                 if all(torch.equal(a, _mask_variants(t)[name]) for a, t in zip(answers, _MASK_CASES))),
                "row t (the query) is True at the columns s ≤ t (the keys it may see): the lower triangle, "
                "diagonal included")  # fmt: skip
    shown = f", yours is {answer.int().tolist()}" if length <= 5 else ""
    return verdict(False, f"not the causal mask yet (length={length}{shown}). Hint: {hint}")


# ---------------------------------------------------------------- exercise: one attention head


def _head_mask(kind: str | None, length: int, g: torch.Generator) -> Tensor | None:
    """The (T, T) boolean mask of a case (True = may attend), or None; every query keeps at least one key."""
    if kind is None:
        return None
    if kind == "causal":
        return causal_mask(length)
    if kind == "padding":  # the last two positions are padding: no query attends to them
        return (torch.arange(length) < max(1, length - 2)).expand(length, length).clone()
    return (torch.rand(length, length, generator=g) < 0.5) | torch.eye(length, dtype=torch.bool)


def _head_case(batch: int, length: int, d_model: int, d_k: int, kind: str | None, seed: int):
    """Arguments (x, W_q, W_k, W_v[, mask]) in float64 and the reference (output, weights)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, length, d_model, generator=g, dtype=torch.float64)  # (B, T, d_model)
    W_q, W_k, W_v = (torch.randn(d_model, d_k, generator=g, dtype=torch.float64) for _ in range(3))  # (d_model, d_k)
    mask = _head_mask(kind, length, g)  # (T, T) or None
    expected = scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask)  # (B, T, d_k), (B, T, T)
    return ((x, W_q, W_k, W_v) if mask is None else (x, W_q, W_k, W_v, mask)), expected


def _weights_variants(x: Tensor, W_q: Tensor, W_k: Tensor, W_v: Tensor,
                      mask: Tensor | None = None) -> dict[str, Tensor]:  # fmt: skip
    """Weights (B, T, T) of the usual mistakes, each named by its hint (the first that matches is shown)."""
    q, k = x @ W_q, x @ W_k  # (B, T, d_k)
    d_k, d_model = q.shape[-1], x.shape[-1]
    scores = q @ k.transpose(-2, -1)  # (B, T, T)

    def softmax(s: Tensor, fill: float = -math.inf, dim: int = -1) -> Tensor:
        return torch.softmax(s if mask is None else s.masked_fill(~mask, fill), dim=dim)

    variants = {
        f"no 1/√d_k scaling: divide the scores q·kᵀ by √d_k = √{d_k} before the softmax": softmax(scores),
        "divide the scores by √d_k, not by d_k": softmax(scores / d_k),
        f"scale by 1/√d_k, d_k = {d_k} the size of q and k (W_q.shape[1]), not by 1/√d_model = 1/√{d_model}":
            softmax(scores / math.sqrt(d_model)),
        "scores[b, t, s] = q_t · k_s is q @ k.transpose(-2, -1); k @ q.transpose(-2, -1) transposes them":
            softmax(k @ q.transpose(-2, -1) / math.sqrt(d_k)),
    }  # fmt: skip
    if q.shape[-2] == q.shape[-1]:  # (T, d_k) @ (T, d_k) only runs when T = d_k
        variants["k is not transposed: the scores are q @ k.transpose(-2, -1), (B, T, d_k) @ (B, d_k, T) → "
                 "(B, T, T)"] = softmax(q @ k / math.sqrt(d_k))  # fmt: skip
    if mask is not None:
        plain = torch.softmax(scores / math.sqrt(d_k), dim=-1)  # (B, T, T)
        causal = torch.ones_like(mask).tril()  # (T, T)
        if not torch.equal(mask, causal):
            variants["that is a causal mask of your own: use the mask you are given, whatever its pattern (here "
                     "not a causal one): scores.masked_fill(~mask, float('-inf'))"] = (
                torch.softmax((scores / math.sqrt(d_k)).masked_fill(~causal, -math.inf), dim=-1))  # fmt: skip
        variants.update({
            "the mask is ignored: set the scores where mask is False to -inf before the softmax, so that the "
            "blocked keys get weight 0": plain,
            "mask before the softmax (scores → -inf), not after it: zeroing weights afterwards leaves rows "
            "that no longer sum to 1": plain * mask,
            "a blocked score must be -inf (weight exactly 0), not 0: exp(0) still gives a blocked key a weight":
                softmax(scores / math.sqrt(d_k), fill=0.0),
        })  # fmt: skip
    return variants


def _weights_hint(weights: Tensor, x: Tensor, W_q: Tensor, W_k: Tensor, W_v: Tensor, mask: Tensor | None = None) -> str:
    """Name the mistake the weights (B, T, T) show."""
    d_k = W_q.shape[1]
    scores = (x @ W_q) @ (x @ W_k).transpose(-2, -1)  # (B, T, T)
    for name, variant in _weights_variants(x, W_q, W_k, W_v, mask).items():
        if _same(weights, variant):
            return name
    allowed = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)  # (B, T, T)
    if any(_same(weights[allowed], s[allowed]) for s in (scores, scores / math.sqrt(d_k))):
        return ("those are the scores q·kᵀ/√d_k: turn them into weights with a softmax over the keys "
                "(scores → scale → mask → softmax)")  # fmt: skip
    early = weights[:, :-1]  # (B, T-1, T): rows that keep a key under either convention
    if (mask is not None and early.numel() and bool(torch.isfinite(early).all())
            and torch.allclose(early.sum(dim=-1), torch.ones_like(early[..., 0]), atol=1e-6)
            and bool(early[mask[:-1].expand_as(early)].abs().max() < 1e-9)):  # fmt: skip
        return ("the mask is inverted: True means *may attend* (SDPA's convention), so fill the scores where "
                "mask is False: scores.masked_fill(~mask, float('-inf'))")  # fmt: skip
    if bool(torch.isnan(weights).any()):
        return NAN_WEIGHTS
    sums = weights.sum(dim=-1)  # (B, T)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-6):
        return ("softmax over the wrong dim: each row of weights (one query t over the keys s) must sum to 1, "
                "so take the softmax over the last axis (dim=-1)")  # fmt: skip
    return ("weights = softmax(q kᵀ / √d_k, with the blocked scores at -inf) over the last axis, "
            "q = x @ W_q, k = x @ W_k")  # fmt: skip


@never_raises
def check_attention_head(fn) -> bool:
    """Exercise: ``fn(x, W_q, W_k, W_v, mask=None) -> (output, weights)``: one self-attention head, from scratch.

    x (B, T, d_model); W_q, W_k, W_v (d_model, d_k) give q = x @ W_q, k = x @ W_k, v = x @ W_v. The weights
    (B, T, T) are softmax(q kᵀ / √d_k) over the keys, with weight 0 where the (T, T) boolean mask is False
    (True = may attend); the output (B, T, d_k) is weights @ v. Checked in float64 with no mask (the call leaves
    it out), with a causal mask, a padding mask and a random one.
    """
    for batch, length, d_model, d_k, kind, seed in _HEAD_CASES:
        masked = kind is not None
        args, (output, weights) = _head_case(batch, length, d_model, d_k, kind, seed)
        crash_hint = ("q, k, v = x @ W_q, x @ W_k, x @ W_v are (B, T, d_k) and the scores q @ k.transpose(-2, -1) "
                      "are (B, T, T)")  # fmt: skip
        if not masked:
            crash_hint = ("here the mask is left out (its default, mask=None): only mask `if mask is not None`; "
                          + crash_hint)  # fmt: skip
        answer, why = answer_of(fn, args, crash_hint)
        parts, why = (None, why) if why else as_tensors(answer, 2, "a pair (output, weights)", finite=False)
        if why:
            return verdict(False, why)
        got_output, got_weights = parts
        case = f"B={batch}, T={length}, d_model={d_model}, d_k={d_k}, " + (f"{kind} mask" if masked else "no mask")
        if _same(got_output, weights) and _same(got_weights, output):
            return verdict(False, f"not yet ({case}). Hint: return (output, weights) in this order")
        if got_weights.shape != weights.shape:
            hint = f"the weights are (B, T, T) = {tuple(weights.shape)}: one row per query t, one column per key s"
            if got_weights.shape == output.shape:
                hint = f"return (output, weights) in this order; {hint}"
            return verdict(False, f"wrong shape of the weights ({case}): got {tuple(got_weights.shape)}. Hint: {hint}")
        if not _same(got_weights, weights):
            hint = _weights_hint(got_weights, *args)
            return verdict(False, f"the weights are not attention weights yet ({case}). Hint: {hint}")
        if not _same(got_output, output):
            x, W_q, W_k, W_v = args[:4]
            hint = f"the output is weights @ v, (B, T, T) @ (B, T, d_k) → (B, T, d_k) = {tuple(output.shape)}"
            if any(_same(got_output, weights @ other) for other in (x, x @ W_q, x @ W_k)):
                hint = "the weights average the values v = x @ W_v: output = weights @ (x @ W_v)"
            elif _same(got_output, weights.transpose(-2, -1) @ (x @ W_v)):
                hint = "output = weights @ v, not weightsᵀ @ v: row t of the weights mixes the values for query t"
            return verdict(False, f"the weights are right but the output is not ({case}). Hint: {hint}")
    return verdict(True, f"your head computes softmax(q kᵀ / √d_k) v on {len(_HEAD_CASES)} cases: without a mask, "
                         "and with a causal, a padding and a random mask")  # fmt: skip


# ---------------------------------------------------------------- exercise: sinusoidal positions


def _pe_variants(length: int, d_model: int) -> dict[str, Tensor]:
    """(length, d_model) encodings of the usual mistakes, each named by its hint (the first that matches is shown)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]  # (T, 1)
    j = torch.arange(d_model, dtype=torch.float64)  # (d,): the column index
    pair = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d/2,): the values of 2i

    def interleave(sines: Tensor, cosines: Tensor) -> Tensor:  # (T, d/2) each → (T, d)
        return torch.stack([sines, cosines], dim=-1).reshape(length, d_model)

    def sinusoids(exponent: Tensor, *, positions: Tensor = pos, cos_exponent: Tensor | None = None) -> Tensor:
        angle = positions / 10000 ** (exponent / d_model)  # (T, d/2)
        cos_angle = angle if cos_exponent is None else positions / 10000 ** (cos_exponent / d_model)
        return interleave(torch.sin(angle), torch.cos(cos_angle))

    column_angle = pos / 10000 ** (j / d_model)  # (T, d)
    by_column = torch.where(j % 2 == 0, torch.sin(column_angle), torch.cos(column_angle))
    angle = pos / 10000 ** (pair / d_model)  # (T, d/2): the right angles
    return {
        "sin and cos are swapped: sines go in the even columns 2i, cosines in the odd columns 2i+1":
            interleave(torch.cos(angle), torch.sin(angle)),
        "interleave them: sines in the even columns 0, 2, 4, …, cosines in the odd columns 1, 3, 5, … "
        "(not all the sines, then all the cosines)": torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1),
        "the exponent is 2i/d_model for both columns 2i and 2i+1 of a pair: with the column index j, use "
        "j − j % 2 (the even column of its pair), not j": by_column,
        "the exponent is 2i/d_model, not i/d_model: i counts the pairs of columns (2i, 2i+1), so the powers "
        "are 10000^(0/d), 10000^(2/d), 10000^(4/d), … (torch.arange(0, d_model, 2))": sinusoids(pair / 2),
        "a cosine column 2i+1 shares the frequency of its sine column 2i: both use pos / 10000^(2i/d_model), "
        "not the next pair's frequency": sinusoids(pair, cos_exponent=pair + 2),
        "the angle is pos / 10000^(2i/d_model): divide by the power, so the frequencies fall from 1 to 1/10000":
            interleave(torch.sin(pos * 10000 ** (pair / d_model)), torch.cos(pos * 10000 ** (pair / d_model))),
        "positions start at 0: the first row is PE(0) = [0, 1, 0, 1, …]": sinusoids(pair, positions=pos + 1),
    }  # fmt: skip


@never_raises
def check_positional_encoding(fn) -> bool:
    """Exercise: ``fn(length, d_model) -> (length, d_model)`` tensor, the slide's sinusoidal positional encoding.

    PE(pos, 2i) = sin(pos / 10000^(2i/d_model)) and PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)), pos = 0 …
    length − 1. Checked for (length, d_model) = (1, 4), (10, 16) and (50, 64), up to float32 rounding (1e-5).
    """
    for length, d_model in _PE_CASES:
        expected = sinusoidal_positions(length, d_model)  # (T, d)
        answer, why = answer_of(fn, (length, d_model), "length and d_model are ints; return a (length, d_model) tensor")
        parts, why = (None, why) if why else as_tensors(answer, 1, "one tensor (length, d_model)")
        if why:
            return verdict(False, why)
        pe = parts[0]
        case = f"length={length}, d_model={d_model}"
        if _same(pe, expected, atol=1e-5):
            continue
        if pe.shape != expected.shape:
            hint = f"one row per position and one column per dimension: (length, d_model) = {tuple(expected.shape)}"
            if _same(pe, expected.T, atol=1e-5):
                hint = f"the shape is transposed: {hint}, not (d_model, length)"
            return verdict(False, f"wrong shape ({case}): got {tuple(pe.shape)}. Hint: {hint}")
        hint = next(
            (name for name, variant in _pe_variants(length, d_model).items() if _same(pe, variant, atol=1e-5)),
            "PE(pos, 2i) = sin(pos / 10000^(2i/d_model)) and PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))",
        )
        return verdict(False, f"not the sinusoidal encoding yet ({case}). Hint: {hint}")
    return verdict(True, f"your encoding is sin / cos of pos / 10000^(2i/d_model) on {len(_PE_CASES)} sizes")
