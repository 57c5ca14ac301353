"""The transformer's encoder block from scratch, against ``nn.TransformerEncoderLayer`` and BERT's layer.

One block (Vaswani et al. 2017, Fig. 1, left; the CMU slide "The Structure of the Encoders"):

    a = LayerNorm(x + MultiHead(x, x, x))          self-attention, residual, LayerNorm
    y = LayerNorm(a + W_2 GELU(W_1 a + b_1) + b_2)  position-wise feed-forward, residual, LayerNorm

This is the "post-LN" order of the paper, of BERT and of ``nn.TransformerEncoderLayer``'s default;
GPT-2 normalises first ("pre-LN", ``norm_first=True``). With a causal mask the same block is a
decoder-only (GPT-style) block: nothing in it knows which way the mask points.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.transformer.attention import (
    MultiHeadAttention,
    scaled_dot_product_attention,
    split_heads,
    merge_heads,
)
from course_utils.validation import CourseInputError, check_int

Tensor = torch.Tensor


class EncoderBlock(nn.Module):
    """Self-attention + residual + LayerNorm, then feed-forward (GELU) + residual + LayerNorm.

    ``forward(x (B, T, d), mask)`` → (B, T, d); ``mask`` broadcastable to (B, h, T, T), ``True`` = may attend.
    The attention weights of the last call are kept in ``last_weights`` (B, h, T, T).
    """

    def __init__(self, d_model: int, heads: int, d_ff: int, *, norm_first: bool = False, eps: float = 1e-5):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, heads)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.linear1 = nn.Linear(d_model, check_int("d_ff", d_ff, minimum=1))  # W_1: d → d_ff
        self.linear2 = nn.Linear(d_ff, d_model)  # W_2: d_ff → d
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm_first = norm_first
        self.last_weights: Tensor | None = None

    def _attend(self, x: Tensor, mask: Tensor | None) -> Tensor:
        out, self.last_weights = self.attention(x, x, x, mask)  # (B, T, d), (B, h, T, T)
        return out

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # (B, T, d): the same two layers at every position

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        if self.norm_first:  # GPT-2's order
            x = x + self._attend(self.norm1(x), mask)  # (B, T, d)
            return x + self._feed_forward(self.norm2(x))
        # (B, T, d): the paper's and BERT's order
        x = self.norm1(x + self._attend(x, mask))
        return self.norm2(x + self._feed_forward(x))

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> "EncoderBlock":
        """A scratch copy of a GELU ``nn.TransformerEncoderLayer`` (batch_first), weights included."""
        if getattr(layer, "activation_relu_or_gelu", 0) != 2:
            raise CourseInputError("copy an nn.TransformerEncoderLayer built with activation='gelu'")
        attention = layer.self_attn
        block = cls(attention.embed_dim, attention.num_heads, layer.linear1.out_features,
                    norm_first=layer.norm_first, eps=layer.norm1.eps)  # fmt: skip
        block = block.to(layer.linear1.weight.dtype)
        block.attention = MultiHeadAttention.from_torch(attention)
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(block, name).load_state_dict(getattr(layer, name).state_dict())
        return block


# ---------------------------------------------------------------- BERT's layer, by hand


def bert_layer_matrices(layer) -> list[tuple[str, tuple[int, ...]]]:
    """Every weight of a Hugging Face ``BertLayer`` with its shape, in the order the layer uses them."""
    return [(name, tuple(param.shape)) for name, param in layer.named_parameters()]


def bert_layer_by_hand(layer, hidden: Tensor, may_attend: Tensor | None = None) -> Tensor:
    """A ``BertLayer``'s output recomputed from its weights with plain tensor algebra: (B, T, d) → (B, T, d).

    ``may_attend`` (B, T) is ``True`` at real tokens (BERT's attention mask: 1 = attend, 0 = padding).
    """
    attention, config = layer.attention, layer.attention.self
    heads = config.num_attention_heads
    eps = attention.output.LayerNorm.eps

    def linear(module, x):  # x Wᵀ + b, as nn.Linear stores W (out, in)
        return x @ module.weight.T + module.bias

    q = split_heads(linear(config.query, hidden), heads)  # (B, h, T, d_k)
    k = split_heads(linear(config.key, hidden), heads)  # (B, h, T, d_k)
    v = split_heads(linear(config.value, hidden), heads)  # (B, h, T, d_k)
    mask = None if may_attend is None else may_attend[:, None, None, :]  # (B, 1, 1, T)
    context, _ = scaled_dot_product_attention(q, k, v, mask)  # (B, h, T, d_k)
    attended = linear(attention.output.dense, merge_heads(context))  # (B, T, d): W^O
    a = F.layer_norm(hidden + attended, (hidden.shape[-1],), attention.output.LayerNorm.weight,
                     attention.output.LayerNorm.bias, eps)  # fmt: skip
    inner = linear(layer.intermediate.dense, a)  # (B, T, d_ff)
    inner = 0.5 * inner * (1 + torch.erf(inner / math.sqrt(2)))  # GELU, exactly (BERT's "gelu")
    out = linear(layer.output.dense, inner)  # (B, T, d)
    return F.layer_norm(a + out, (hidden.shape[-1],), layer.output.LayerNorm.weight, layer.output.LayerNorm.bias,
                        layer.output.LayerNorm.eps)  # fmt: skip
