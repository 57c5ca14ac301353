"""Self-attention from the lecture's formula, then the library, with parity.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V
    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O,   head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

Masks follow ``torch.nn.functional.scaled_dot_product_attention``: a boolean mask is ``True`` where a
query **may attend** to a key. (``nn.MultiheadAttention``'s ``key_padding_mask`` is the other way round:
``True`` there means *ignore*; ``library_key_padding_mask`` converts.)
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.validation import CourseInputError, check_int
from course_utils.reference import course_reference

Tensor = torch.Tensor


# ---------------------------------------------------------------- masks


@course_reference
def causal_mask(length: int, *, device=None) -> Tensor:
    """(T, T) boolean, ``True`` on and below the diagonal: position t may attend to positions ≤ t."""
    length = check_int("length", length, minimum=1)
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()  # (T, T)


def padding_mask(lengths, max_len: int | None = None) -> Tensor:
    """(B, S) boolean, ``True`` at real tokens, ``False`` at padding, from each row's length."""
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or len(lengths) == 0 or bool((lengths < 1).any()):
        raise CourseInputError("lengths must be a non-empty list of positive lengths, one per sequence")
    max_len = int(lengths.max()) if max_len is None else max_len
    if max_len < int(lengths.max()):
        raise CourseInputError(f"max_len={max_len} is shorter than the longest sequence ({int(lengths.max())})")
    return torch.arange(max_len)[None, :] < lengths[:, None]  # (B, S)


def library_key_padding_mask(may_attend: Tensor) -> Tensor:
    """The same (B, S) mask in ``nn.MultiheadAttention``'s convention, where ``True`` means *ignore this key*."""
    return ~may_attend


# ---------------------------------------------------------------- scaled dot-product attention


@course_reference
def attention_weights(
    q: Tensor,
    k: Tensor,
    mask: Tensor | None = None,
    *,
    scale: float | None = None,
) -> Tensor:
    """softmax(q kᵀ · scale) over the keys, masked keys at weight 0:
    (…, T, d), (…, S, d) → (…, T, S).

    ``scale`` defaults to 1/√d_k. ``mask`` (broadcast to (…, T, S)) is ``True`` where
    attending is allowed. A query with no allowed key gets weight 0 everywhere
    (not NaN).
    """
    if q.shape[-1] != k.shape[-1]:
        sizes = f"{q.shape[-1]} and {k.shape[-1]}"
        raise CourseInputError(f"queries and keys need the same size d_k; got {sizes}")
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (…, T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)  # (…, T, S)
    weights = torch.softmax(scores, dim=-1)  # (…, T, S)
    # a fully masked row: softmax of all -inf is NaN
    return torch.nan_to_num(weights, nan=0.0)


@course_reference
def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V, from scratch:
    returns (output (…, T, d_v), weights (…, T, S))."""
    weights = attention_weights(q, k, mask, scale=scale)  # (…, T, S)
    return weights @ v, weights  # (…, T, d_v)


# ---------------------------------------------------------------- the slide's worked example

THINKING_MACHINES = {  # (repeat, value) runs: "2*48, 1*16" is forty-eight 2s then sixteen 1s
    "q1": "1*64",  # the query of "thinking"
    "k1": "2*48, 1*16",  # the key of "thinking":  q1·k1 = 96 + 16 = 112
    "k2": "2*32, 1*32",  # the key of "machines":  q1·k2 = 64 + 32 = 96
    "v1": "1, 0, 2",  # values may have another size d_v; the slide gives none, these are ours
    "v2": "0, 3, 1",
}


def parse_runs(text: str) -> Tensor:
    """A float64 vector from text like ``"2*48, 1*16"`` (runs of repeated values) or ``"1, 0, 2"``."""
    if not isinstance(text, str) or not text.strip():
        raise CourseInputError("give a vector as numbers separated by commas, e.g. '1, 0, 2' or '2*48, 1*16'")
    values = []
    for part in text.split(","):
        value, _, count = part.strip().partition("*")
        try:
            number, repeat = float(value), int(count) if count else 1
        except ValueError:
            raise CourseInputError(f"{part.strip()!r} is not a number or a run 'value*count' (e.g. 2*48)") from None
        if repeat < 1 or not math.isfinite(number):
            raise CourseInputError(f"{part.strip()!r}: a run needs a finite value and a count ≥ 1")
        values += [number] * repeat
    if len(values) > 4096:
        raise CourseInputError(f"{len(values)} numbers is too long for this example; keep vectors under 4096")
    return torch.tensor(values, dtype=torch.float64)


def thinking_machines() -> dict[str, Tensor]:
    """The slide's q1, k1, k2, v1, v2 built with d_k = 64, so that √d_k = 8 and q1·k1 = 112, q1·k2 = 96."""
    return {name: parse_runs(text) for name, text in THINKING_MACHINES.items()}


# ---------------------------------------------------------------- multi-head attention


def split_heads(x: Tensor, heads: int) -> Tensor:
    """(B, T, h·d) → (B, h, T, d): each head gets its own slice of the features."""
    batch, length, width = x.shape
    return x.view(batch, length, heads, width // heads).transpose(1, 2)  # (B, h, T, d)


def merge_heads(x: Tensor) -> Tensor:
    """(B, h, T, d) → (B, T, h·d): Concat(head_1, …, head_h)."""
    batch, heads, length, width = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * width)  # (B, T, h·d)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O with head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    The h matrices W_i^Q (d_model × d_k each) sit side by side in one ``nn.Linear(d_model, h·d_k)``;
    ``split_heads`` cuts its output back into the h heads. ``forward(query, key, value, mask)`` takes
    (B, T, d_model), (B, S, d_model), (B, S, d_model) and a mask broadcastable to (B, h, T, S)
    (``True`` = may attend); it returns the output (B, T, d_model) and the weights (B, h, T, S).
    """

    def __init__(self, d_model: int, heads: int, *, bias: bool = True):
        super().__init__()
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        if d_model % heads:
            raise CourseInputError(f"d_model={d_model} must be a multiple of heads={heads}: d_k = d_model / h")
        self.W_q = nn.Linear(d_model, d_model, bias=bias)  # the h matrices W_i^Q side by side
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)  # W^O

    def _check(self, name: str, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[-1] != self.d_model:
            shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise CourseInputError(f"{name} must be (B, T, {self.d_model}); got {shape}")
        return x

    def keys_values(self, key: Tensor, value: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """The heads' keys and values of positions (B, S, d_model): each (B, h, S, d_k). A decoder caches these,
        and ``attend`` reads them: ``forward`` in two halves, for the translator's KV cache."""
        value = key if value is None else value
        self._check("key", key), self._check("value", value)
        return split_heads(self.W_k(key), self.heads), split_heads(self.W_v(value), self.heads)

    def attend(self, query: Tensor, keys_values: tuple[Tensor, Tensor], mask: Tensor | None = None
               ) -> tuple[Tensor, Tensor]:  # fmt: skip
        """Queries from ``query`` (B, T, d_model) against given keys and values → (B, T, d_model), (B, h, T, S)."""
        q = split_heads(self.W_q(self._check("query", query)), self.heads)  # (B, h, T, d_k)
        k, v = keys_values  # (B, h, S, d_k) each
        heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, h, T, d_k), (B, h, T, S)
        return self.W_o(merge_heads(heads)), weights  # (B, T, d_model)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O: the output
        (B, T, d_model) and the weights (B, h, T, S)."""
        for name, tensor in (("query", query), ("key", key), ("value", value)):
            self._check(name, tensor)
        # (B, h, T, d_k): head i's queries, Q W_i^Q
        q = split_heads(self.W_q(query), self.heads)
        k = split_heads(self.W_k(key), self.heads)  # (B, h, S, d_k): K W_i^K
        v = split_heads(self.W_v(value), self.heads)  # (B, h, S, d_k): V W_i^V
        # (B, h, T, d_k): every head at once
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        # (B, T, d_model): the heads side by side, mixed by W^O
        return self.W_o(merge_heads(heads)), weights

    @classmethod
    def from_torch(cls, library: nn.MultiheadAttention) -> "MultiHeadAttention":
        """A scratch copy of ``nn.MultiheadAttention``'s weights (its in_proj stacks W^Q, W^K, W^V)."""
        if not library._qkv_same_embed_dim:
            raise CourseInputError("only nn.MultiheadAttention with kdim = vdim = embed_dim can be copied")
        bias = library.in_proj_bias is not None
        scratch = cls(library.embed_dim, library.num_heads, bias=bias).to(library.in_proj_weight.dtype)
        with torch.no_grad():
            for mine, weight in zip((scratch.W_q, scratch.W_k, scratch.W_v), library.in_proj_weight.chunk(3)):
                mine.weight.copy_(weight)
            if bias:
                for mine, b in zip((scratch.W_q, scratch.W_k, scratch.W_v), library.in_proj_bias.chunk(3)):
                    mine.bias.copy_(b)
                scratch.W_o.bias.copy_(library.out_proj.bias)
            scratch.W_o.weight.copy_(library.out_proj.weight)
        return scratch


def library_attention(mha: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor,
                      mask: Tensor | None = None) -> Tensor:  # fmt: skip
    """The same multi-head attention through torch's fused ``F.scaled_dot_product_attention`` kernel."""
    q = split_heads(mha.W_q(query), mha.heads)  # (B, h, T, d_k)
    k = split_heads(mha.W_k(key), mha.heads)  # (B, h, S, d_k)
    v = split_heads(mha.W_v(value), mha.heads)  # (B, h, S, d_k)
    return mha.W_o(merge_heads(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)))  # (B, T, d_model)


# ---------------------------------------------------------------- why 1/√d_k


def softmax_entropy(weights: Tensor) -> Tensor:
    """Entropy (nats) of each row of attention weights (…, S) → (…,); log S for uniform, 0 for one-hot."""
    return -(weights * torch.log(weights.clamp_min(1e-300))).sum(dim=-1)


def scaling_effect(d_k: int, *, keys: int = 16, queries: int = 256, scaled: bool = True, seed: int = 0) -> dict:
    """Attention of random unit-variance q and k at size ``d_k``: mean entropy of the weights and gradient size.

    q·k has variance d_k, so without the 1/√d_k the scores spread as √d_k and the softmax saturates:
    the entropy falls towards 0 and so does the gradient reaching the scores (its softmax Jacobian).
    """
    d_k = check_int("d_k", d_k, minimum=1)
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(queries, 1, d_k, generator=generator, dtype=torch.float64)  # (N, 1, d_k)
    k = torch.randn(queries, keys, d_k, generator=generator, dtype=torch.float64)  # (N, S, d_k)
    scores = (q @ k.transpose(-2, -1))[:, 0]  # (N, S)
    scores = (scores / math.sqrt(d_k) if scaled else scores).requires_grad_(True)
    weights = torch.softmax(scores, dim=-1)  # (N, S)
    upstream = torch.randn(queries, keys, generator=generator, dtype=torch.float64)  # (N, S): a random dL/dweights
    (gradient,) = torch.autograd.grad((weights * upstream).sum(), scores)  # (N, S)
    return {
        "d_k": d_k,
        "score_std": float(scores.detach().std()),
        "entropy": float(softmax_entropy(weights.detach()).mean()),
        "max_weight": float(weights.detach().max(dim=-1).values.mean()),
        "grad_norm": float(gradient.norm(dim=-1).mean()),
    }
