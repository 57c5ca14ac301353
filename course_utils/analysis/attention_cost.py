"""What self-attention costs against recurrence: Vaswani et al. (2017) Table 1, counted and measured.

Table 1 of "Attention is all you need" (n = sequence length, d = representation dimension):

    layer type        complexity per layer   sequential operations   maximum path length
    self-attention    O(n²·d)                O(1)                    O(1)
    recurrent         O(n·d²)                O(n)                    O(n)

``layer_flops`` writes the constants out (multiply-adds of one layer on one sequence, and where the
two layers cost the same); ``time_layers`` times one layer of each kind against n, with the LSTM twice:
the library's fused kernel and a Python loop over ``nn.LSTMCell``, one step per token, which is the
"n sequential operations" made visible; ``measured_crossover`` reads off where attention becomes the
slower layer. ``training_throughput`` compares whole language models on the course language:
training tokens per second of notebook 08's GPT against notebook 06's LSTM, at a similar parameter
count (``comparison_models``).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.classic.neural_lm import seeded
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.analysis.rnn_analysis import _check_lengths, _timed_forward
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError, check_choice, check_int, check_positive

Tensor = torch.Tensor

ATTENTION_KINDS = ("sdpa", "mha")

# ---------------------------------------------------------------- Table 1, counted


def layer_flops(n: int, d: int) -> dict[str, int]:
    """Multiply-adds of one self-attention layer and one LSTM layer on one sequence of n tokens, width d.

    Counted: the matrix products only (biases, softmax, masking and the LSTM's elementwise gate
    arithmetic are O(n·d) or O(n²) and left out), with every score of the n × n matrix computed
    (Table 1's count; a causal kernel may skip the half above the diagonal).

    - attention: the Q, K, V and output projections 4·n·d², Q Kᵀ n²·d, and the weighted sum A V n²·d
      (the heads split d, so their number changes nothing);
    - LSTM (input size = hidden size = d): 4 gates, each W x_t and U h_{t-1}: 4·n·d² + 4·n·d² = 8·n·d².

    Crossovers: ``table1_crossover_n`` = d, where Table 1's n²·d equals n·d² (constants dropped);
    ``crossover_n`` = 2d, where the counts above are equal: 4nd² + 2n²d = 8nd² ⇔ n = 2d (it is also
    where attention's own n²-terms, 2n²d, catch up with its projections, 4nd²).
    ``*_steps`` are the sequential steps (the LSTM's step t needs h_{t-1}); ``*_path`` the longest path
    from one token to another (Table 1's "maximum path length").
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    projections, scores, mix = 4 * n * d * d, n * n * d, n * n * d
    lstm_input, lstm_recurrent = 4 * n * d * d, 4 * n * d * d
    return {
        "n": n,
        "d": d,
        "attention_projections": projections,
        "attention_scores": scores,
        "attention_mix": mix,
        "attention": projections + scores + mix,
        "lstm_input": lstm_input,
        "lstm_recurrent": lstm_recurrent,
        "lstm": lstm_input + lstm_recurrent,
        "attention_steps": 1,
        "lstm_steps": n,
        "attention_path": 1,
        "lstm_path": n,
        "crossover_n": 2 * d,
        "table1_crossover_n": d,
    }


# ---------------------------------------------------------------- the layers that are timed


class CausalSelfAttention(nn.Module):
    """One causal self-attention layer: Q, K, V from one Linear, ``heads`` heads, the output projection.

    ``kind="sdpa"``: ``F.scaled_dot_product_attention(is_causal=True)``, the fused kernel (``transformers``'
    default for GPT-2; on CPU a flash-style kernel that skips the blocks above the diagonal);
    ``kind="mha"``: ``nn.MultiheadAttention`` with a boolean causal mask (every score computed, then masked).
    """

    def __init__(self, d: int, heads: int = 4, *, kind: str = "sdpa"):
        super().__init__()
        self.d = check_int("d", d, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        if d % heads:
            raise CourseInputError(f"d={d} must be a multiple of heads={heads}: each head gets d / heads dimensions")
        self.kind = check_choice("kind", kind, ATTENTION_KINDS)
        if kind == "mha":
            self.mha = nn.MultiheadAttention(d, heads, batch_first=True)
        else:
            self.qkv = nn.Linear(d, 3 * d)  # W^Q, W^K, W^V side by side: (3d, d)
            self.out = nn.Linear(d, d)  # W^O: (d, d)

    def forward(self, x: Tensor) -> Tensor:
        """(B, T, d) → (B, T, d): position t reads positions ≤ t."""
        B, T, C = x.shape
        if self.kind == "mha":
            ignore = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)  # (T, T): True = may NOT attend
            return self.mha(x, x, x, attn_mask=ignore, need_weights=False)[0]  # (B, T, C)
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)  # 3 × (B, h, T, C/h)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, C/h)
        return self.out(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)


class LSTMCellLoop(nn.Module):
    """An ``nn.LSTM`` layer's weights run one token at a time through ``nn.LSTMCell``: the n sequential steps."""

    def __init__(self, lstm: nn.LSTM):
        super().__init__()
        if not isinstance(lstm, nn.LSTM) or lstm.num_layers != 1 or lstm.bidirectional or lstm.proj_size:
            raise CourseInputError("give a one-layer, one-direction nn.LSTM without projection (nn.LSTM(d, d))")
        self.batch_first = lstm.batch_first
        self.cell = nn.LSTMCell(lstm.input_size, lstm.hidden_size, bias=lstm.bias)
        with torch.no_grad():  # the same weights: the same outputs, computed step by step
            for name in ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if lstm.bias else ()):
                getattr(self.cell, name).copy_(getattr(lstm, f"{name}_l0"))

    def forward(self, x: Tensor) -> Tensor:
        """(B, T, d) → the hidden state at every step (B, T, H), as ``nn.LSTM(x)[0]`` (batch first)."""
        x = x if self.batch_first else x.transpose(0, 1)  # (B, T, d)
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)  # (B, H)
        c = torch.zeros_like(h)  # (B, H)
        outputs = []
        for t in range(x.shape[1]):  # step t needs h_{t-1}: nothing here can run in parallel over t
            h, c = self.cell(x[:, t], (h, c))  # (B, H) each
            outputs.append(h)
        y = torch.stack(outputs, dim=1)  # (B, T, H)
        return y if self.batch_first else y.transpose(0, 1)


class _LastOutput(nn.Module):
    """``nn.LSTM`` returning its outputs only, so every timed layer maps (B, T, d) → (B, T, d)."""

    def __init__(self, lstm: nn.LSTM):
        super().__init__()
        self.lstm = lstm

    def forward(self, x: Tensor) -> Tensor:
        return self.lstm(x)[0]  # (B, T, H)


def timed_layers(d: int, *, heads: int = 4, attention: str = "sdpa", seed: int = 0) -> dict[str, nn.Module]:
    """The three layers ``time_layers`` times, width d, in eval mode: "attention", "lstm", "lstm_cell"."""
    with seeded(seed):
        attend = CausalSelfAttention(d, heads, kind=attention)
        lstm = nn.LSTM(d, d, batch_first=True)
    return {"attention": attend.eval(), "lstm": _LastOutput(lstm).eval(), "lstm_cell": LSTMCellLoop(lstm).eval()}


# ---------------------------------------------------------------- Table 1, measured


def time_layers(
    lengths, d: int, *, batch: int = 8, repeats: int = 5, threads: int | None = 1, heads: int = 4,
    attention: str = "sdpa",
) -> list[dict]:  # fmt: skip
    """Forward seconds of one causal self-attention layer, one ``nn.LSTM`` layer and its ``nn.LSTMCell`` loop.

    One row per length n: {"n", "d", "batch", "attention_s", "lstm_s", "lstm_cell_s"}, each the median
    of ``repeats`` forward passes of a (batch, n, d) input after one warm-up, without autograd.
    ``attention`` picks the attention layer (``CausalSelfAttention``: "sdpa" or "mha"). ``threads``
    sets torch's thread count for the measurement (restored after); ``None`` keeps the current one.
    """
    lengths = _check_lengths(lengths, None)
    d = check_int("d", d, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    repeats = check_int("repeats", repeats, minimum=1)
    threads = None if threads is None else check_int("threads", threads, minimum=1)
    layers = timed_layers(d, heads=heads, attention=attention)
    generator = torch.Generator().manual_seed(0)
    before = torch.get_num_threads()
    rows = []
    try:
        torch.set_num_threads(threads or before)
        with torch.no_grad():
            for n in lengths:
                x = torch.randn(batch, n, d, generator=generator)  # (B, T, d)
                row = {"n": n, "d": d, "batch": batch}
                for name, layer in layers.items():
                    layer(x)  # warm-up
                    row[f"{name}_s"] = statistics.median(_timed_forward(layer, x) for _ in range(repeats))
                rows.append(row)
    finally:
        torch.set_num_threads(before)
    return rows


def measured_crossover(rows: list[dict], slower: str = "attention_s", faster: str = "lstm_s") -> int | None:
    """The shortest measured n from which ``slower`` takes longer than ``faster`` at every longer n; None if never."""
    if not rows or any(slower not in row or faster not in row or "n" not in row for row in rows):
        raise CourseInputError(f"rows must be time_layers' rows, each with 'n', {slower!r} and {faster!r}")
    crossover = None
    for row in sorted(rows, key=lambda row: row["n"], reverse=True):  # from the longest down
        if row[slower] <= row[faster]:
            break
        crossover = row["n"]
    return crossover


# ---------------------------------------------------------------- whole language models, training


COMPARISON_LAYERS = 3  # the GPT compared with the LSTM: gpt_lm's shape, one more layer (similar parameter count)


def comparison_models(vocab: Vocab, *, attentions=("eager",)) -> dict[str, nn.Module]:
    """Notebook 06's LSTM LM and notebook 08's GPT (one per attention kernel), untrained: label → model.

    The LSTM: ``RecurrentLM(cell="lstm", embed_dim=64, hidden_dim=128)`` (217,058 parameters). The GPT: the
    shipped ``gpt_lm``'s shape (width 64, 4 heads, tied embeddings) with ``COMPARISON_LAYERS`` = 3 layers instead
    of 2, so that its size (197,312) is close to the LSTM's; each of ``attentions`` is "eager" (the notebook's: it
    returns the weights) or "sdpa" (fused).
    """
    from course_utils.zoo.transformer_checkpoints import LM_RECIPES  # here: the layer timings need no GPT
    from course_utils.models.transformer.transformer_lm import CourseGPT

    if isinstance(attentions, str) or not attentions:
        raise CourseInputError(f"attentions must be a list of kernels, e.g. ['eager', 'sdpa']; got {attentions!r}")
    attentions = [check_choice("each attention", kind, ("eager", "sdpa")) for kind in attentions]
    if not isinstance(vocab, Vocab):
        raise CourseInputError(f"vocab must be course_vocab(); got {type(vocab).__name__}")
    shape, recipe = LM_RECIPES["gpt_lm"]
    shape = {**shape, "n_layer": COMPARISON_LAYERS}
    gpts = {kind: CourseGPT.for_vocab(vocab, seed=recipe["seed"], **shape) for kind in attentions}  # the same weights
    size = gpts[attentions[0]].vocab_size
    if len(vocab) != size:
        raise CourseInputError(f"the GPT reads the course vocabulary ({size} words); this vocab has {len(vocab)}")
    models = {"LSTM LM": RecurrentLM(len(vocab), cell="lstm", embed_dim=64, hidden_dim=128, seed=0)}
    for kind, gpt in gpts.items():
        gpt.hf.set_attn_implementation(kind)
        models[f"GPT LM ({kind} attention)"] = gpt
    return models


def parameter_count(model: nn.Module) -> int:
    """The number of trainable numbers in ``model``."""
    if not isinstance(model, nn.Module):
        raise CourseInputError(f"model must be an nn.Module; got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def training_throughput(
    models: dict[str, nn.Module], batches: Callable[[int], tuple[Tensor, Tensor]], *, steps: int = 20,
    warmup: int = 2, lr: float = 1e-3, threads: int | None = 1,
) -> dict[str, float]:  # fmt: skip
    """Training tokens per second (forward, backward, AdamW step) of each model: label → tokens/s.

    ``batches(step) -> (idx, targets)`` (``lm.batch_stream``). The models take turns on the same
    batches, so a busy machine slows them alike; after ``warmup`` steps each, tokens/s is the predicted
    (not padded) tokens of ``steps`` batches over the seconds they took. The models are trained (lr ``lr``).
    """
    if not isinstance(models, dict) or not models or not all(isinstance(m, nn.Module) for m in models.values()):
        raise CourseInputError("models must be a non-empty dict label → language model (an nn.Module)")
    if not callable(batches):
        raise CourseInputError("batches must be a function step → (idx, targets), e.g. lm.batch_stream(...)")
    steps = check_int("steps", steps, minimum=1)
    warmup = check_int("warmup", warmup, minimum=0)
    lr = check_positive("lr", lr)
    threads = None if threads is None else check_int("threads", threads, minimum=1)
    optimizers = {label: torch.optim.AdamW(model.parameters(), lr=lr) for label, model in models.items()}
    seconds = dict.fromkeys(models, 0.0)
    tokens = 0
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(threads or before)
        for step in range(warmup + steps):
            idx, targets = batches(step)  # (B, T) each
            for label, model in models.items():
                elapsed = _timed_train_step(model.train(), optimizers[label], idx, targets)
                seconds[label] += elapsed if step >= warmup else 0.0
            tokens += int((targets != IGNORE_INDEX).sum()) if step >= warmup else 0
    finally:
        torch.set_num_threads(before)
    return {label: tokens / seconds[label] for label in models}


def _timed_train_step(model: nn.Module, optimizer: torch.optim.Optimizer, idx: Tensor, targets: Tensor) -> float:
    """Seconds of one training step: forward, backward, optimizer step."""
    start = time.perf_counter()
    _, loss = model(idx, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return time.perf_counter() - start
