"""Positional encodings: the slide's sinusoids, learned positions, and what each does beyond the training lengths.

The CSE538 slide "Positional Encoding":

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

Each pair of dimensions (2i, 2i+1) is a point turning on a circle at its own frequency ω_i, so moving k
positions on is one fixed rotation per pair: PE(pos + k) = PE(pos) · M_k for every pos (``shift_matrix``).

``PositionLM`` is a small decoder-only transformer (``EncoderBlock``s under a causal mask) whose positions
are learned, sinusoidal, or absent; trained on short sentences only, it shows what each kind of position
does at lengths it never saw.
"""

from __future__ import annotations


import torch
from torch import nn

from course_utils.models.transformer.attention import causal_mask
from course_utils.models.transformer.encoder_block import EncoderBlock
from course_utils.models.lm import IGNORE_INDEX, batch_stream, target_log_probs
from course_utils.models.recurrent.recurrent_lm import check_sequences, sequence_loss
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.reference import course_reference

Tensor = torch.Tensor
POSITIONS = ("learned", "sinusoidal", "none")


def frequencies(d_model: int) -> Tensor:
    """ω_i = 1 / 10000^(2i / d_model) for i = 0 … d_model/2 − 1: (d_model/2,) float64."""
    d_model = check_int("d_model", d_model, minimum=2)
    if d_model % 2:
        raise CourseInputError(f"d_model={d_model} must be even: sines and cosines come in pairs")
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d/2,): the values of 2i
    return 1.0 / 10000 ** (two_i / d_model)  # (d/2,)


@course_reference
def sinusoidal_positions(length: int, d_model: int, *, offset: int = 0) -> Tensor:
    """The slide's PE rows for positions offset … offset + length − 1:
    (length, d_model), float64.

    Sines in the even columns, cosines in the odd ones; any position, so no table to
    outgrow.
    """
    length = check_int("length", length, minimum=1)
    positions = torch.arange(offset, offset + length, dtype=torch.float64)
    positions = positions[:, None]  # (T, 1)
    angles = positions * frequencies(d_model)[None, :]  # (T, d/2)
    pe = torch.empty(length, d_model, dtype=torch.float64)  # (T, d)
    pe[:, 0::2] = torch.sin(angles)  # PE(pos, 2i)
    pe[:, 1::2] = torch.cos(angles)  # PE(pos, 2i+1)
    return pe


def shift_matrix(k: int, d_model: int) -> Tensor:
    """M_k (d_model, d_model), block-diagonal rotations with PE(pos + k) = PE(pos) @ M_k for every pos."""
    k = check_int("k", k)
    angles = k * frequencies(d_model)  # (d/2,)
    cos, sin = torch.cos(angles), torch.sin(angles)
    m = torch.zeros(d_model, d_model, dtype=torch.float64)  # (d, d)
    m[0::2, 0::2] = torch.diag(cos)  # sin(a + b) = sin a cos b + cos a sin b
    m[1::2, 0::2] = torch.diag(sin)
    m[0::2, 1::2] = torch.diag(-sin)  # cos(a + b) = cos a cos b − sin a sin b
    m[1::2, 1::2] = torch.diag(cos)
    return m


class PositionLM(nn.Module):
    """A decoder-only transformer LM: embeddings (+ positions) → causal ``EncoderBlock``s → logits over V.

    ``positions``: "learned" (a trained vector per position, up to ``max_len``), "sinusoidal" (the slide's
    fixed PE), or "none". The LM contract of ``course_utils.models.lm``: ``forward(idx, targets=None)``.
    """

    def __init__(self, vocab_size: int, *, positions: str = "sinusoidal", d_model: int = 64, heads: int = 4,
                 layers: int = 2, d_ff: int = 128, max_len: int = 64, seed: int = 0):  # fmt: skip
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.positions = check_choice("positions", positions, POSITIONS)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.arguments = {"positions": positions, "d_model": d_model, "heads": heads, "layers": layers,
                          "d_ff": d_ff, "max_len": max_len, "seed": seed}  # fmt: skip
        torch.manual_seed(seed)
        self.embedding = nn.Embedding(vocab_size, d_model)  # (V, d)
        nn.init.normal_(self.embedding.weight, std=0.02)
        self.learned = nn.Embedding(max_len, d_model) if positions == "learned" else None  # (max_len, d)
        if self.learned is not None:
            nn.init.normal_(self.learned.weight, std=0.02)
        self.register_buffer("sinusoids", sinusoidal_positions(max_len, d_model).float(), persistent=False)
        self.blocks = nn.ModuleList(EncoderBlock(d_model, heads, d_ff, norm_first=True) for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.output = nn.Linear(d_model, vocab_size)

    def config(self) -> dict:
        """The constructor's arguments, as plain values for a checkpoint's config.json."""
        return {"vocab_size": self.vocab_size, **self.arguments}

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        length = check_sequences(idx, self.vocab_size, self.max_len).shape[1]
        x = self.embedding(idx)  # (B, T, d)
        if self.positions == "learned":
            x = x + self.learned.weight[:length]  # (B, T, d)
        elif self.positions == "sinusoidal":
            x = x + self.sinusoids[:length].to(x.dtype)  # (B, T, d)
        mask = causal_mask(length, device=idx.device)  # (T, T)
        for block in self.blocks:
            x = block(x, mask)  # (B, T, d)
        logits = self.output(self.norm(x))  # (B, T, V)
        return logits, None if targets is None else sequence_loss(logits, targets, self.vocab_size)


@torch.no_grad()
def nll_by_position(model: nn.Module, idx: Tensor, targets: Tensor) -> Tensor:
    """Mean negative log-likelihood (nats) of the targets at each position t over the batch: (T,)."""
    model.eval()
    logp = target_log_probs(model(idx)[0].double(), targets)  # (B, T)
    keep = (targets != IGNORE_INDEX).double()  # (B, T)
    return -(logp.sum(dim=0) / keep.sum(dim=0).clamp_min(1))  # (T,)


def cropped_batches(id_lists, vocab, *, length: int, batch_size: int, seed: int):
    """``step -> (idx, targets)`` of sentences cut to their first ``length`` positions.

    A cut sentence is an honest prefix: its targets are the true next words, so a model trained on these
    learns the language's distribution at positions < ``length`` and never sees a later position.
    """
    length = check_int("length", length, minimum=1)
    stream = batch_stream(id_lists, vocab, batch_size=batch_size, seed=seed)

    def get_batch(step: int) -> tuple[Tensor, Tensor]:
        idx, targets = stream(step)  # (B, T), (B, T)
        return idx[:, :length], targets[:, :length]  # (B, ≤ length)

    return get_batch
