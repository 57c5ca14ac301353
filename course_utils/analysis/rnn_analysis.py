"""Measuring what the lectures claim about recurrent networks: vanishing and exploding gradients, clipping, speed.

The loss at step t, L_t = -log P(target_t | idx[:t+1]), reaches an earlier hidden state h_k only
through the chain of recurrent steps between them:

    ∂L_t/∂h_k = (∂h_t/∂h_k)ᵀ ∂L_t/∂h_t,      ∂h_t/∂h_k = Π_{j=t..k+1} ∂h_j/∂h_{j-1}

and for the tanh RNN, h_j = tanh(U h_{j-1} + W x_j + b), each factor is ∂h_j/∂h_{j-1} = diag(1 - h_j²) U.
A product of t-k such factors shrinks (vanishing gradients) or grows (exploding gradients) roughly
geometrically with the distance t-k.

``hidden_gradient_norms`` measures ‖∂L_t/∂h_k‖ with autograd on a ``RecurrentLM`` (the scratch loop
keeps every h_k as a node of the graph; the library kernels hide them), ``jacobian_product_norms``
computes the same numbers from the product above, and ``gradient_decay_curve`` averages the decay
over a corpus. ``exploding_demo`` and ``clip_by_norm`` show the other failure and its usual fix;
``time_per_sequence`` measures the sequential cost. What the states carry is in ``lstm_analysis``.
Notebook 05's tables: ``slide_loop_notes``, ``ffnn_size_lines``, ``perplexity``, and ``twin`` /
``next_word_probs`` for the agreement contexts.
"""

from __future__ import annotations

import math
import time
from typing import Sequence

import torch
import torch.nn.functional as F

from course_utils.models import lm
from course_utils.models.classic.neural_lm import FeedForwardLM, seeded
from course_utils.models.recurrent.recurrent_lm import (
    SCRATCH_CELLS,
    RecurrentLM,
    check_sequences,
)
from course_utils.models.recurrent.rnn import ScratchRNN
from course_utils.evaluation.lm_probes import oracle_probs
from course_utils.language.lexicon import NOUNS
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError, check_int, check_positive, describe

Tensor = torch.Tensor

# ---------------------------------------------------------------- ‖∂L_t/∂h_k‖ measured with autograd


def _check_recurrent_lm(model) -> RecurrentLM:
    """``model`` must be a RecurrentLM whose cell has a scratch version (rnn or lstm)."""
    if not isinstance(model, RecurrentLM):
        raise CourseInputError(
            f"model must be a course_utils.models.recurrent.recurrent_lm.RecurrentLM; got {type(model).__name__}"
        )
    if model.cell not in SCRATCH_CELLS:
        raise CourseInputError(
            f"the measurement runs the scratch loop, which exists for {', '.join(SCRATCH_CELLS)}; "
            f"this model's cell is {model.cell!r}"
        )
    return model


def _states_and_logits(model: RecurrentLM, idx: Tensor) -> tuple[list[Tensor], Tensor]:
    """The top layer's h_k (a list of (B, H) graph nodes) and the logits (B, T, V), from the scratch loop."""
    layers = model.scratch_layers()  # a copy of the library weights, or the scratch layers themselves
    x = model.embedding(idx).detach().requires_grad_(True)  # (B, T, d): the graph starts here, not at E
    for layer in layers[:-1]:
        x = layer(x)[0]  # (B, T, H)
    outputs, _, states = layers[-1](x, keep_states=True)  # (B, T, H), _, T × (B, H)
    return states, model.output(outputs)  # T × (B, H), (B, T, V)


def _step_norms(states: list[Tensor], logits: Tensor, targets: Tensor, t: int) -> Tensor:
    """‖∂L_t/∂h_k‖ for k = 0..t, one row per sequence: (B, t+1); rows whose target is IGNORE_INDEX give 0."""
    loss = F.cross_entropy(logits[:, t], targets, ignore_index=lm.IGNORE_INDEX, reduction="sum")  # Σ_b L_t
    grads = torch.autograd.grad(loss, states[: t + 1], retain_graph=True)  # (t+1) × (B, H): rows are independent
    return torch.stack([g.norm(dim=-1) for g in grads], dim=1)  # (B, t+1)


def hidden_gradient_norms(model: RecurrentLM, idx: Tensor, t: int) -> Tensor:
    """‖∂L_t/∂h_k‖ for k = 0..t, where L_t = -log P(idx[t+1] | idx[:t+1]): (t+1,), or (B, t+1) for idx (B, T).

    The targets are ``idx`` shifted by one, so give the whole framed sentence ``[<s>, w1..wn, </s>]``:
    t = n then measures the prediction of ``</s>``. h_k is the top layer's hidden state after reading
    ``idx[k]``; for an LSTM that is h_k with the cell state c_k held fixed (c_k's own path is not
    counted). A library model's weights are copied into the scratch cell. Computed in the model's
    dtype (``model.double()`` for exact numbers).
    """
    model = _check_recurrent_lm(model)
    single = isinstance(idx, Tensor) and idx.ndim == 1
    idx = check_sequences(idx.unsqueeze(0) if single else idx, model.vocab_size, model.max_len)  # (B, T)
    if idx.shape[1] < 2:
        raise CourseInputError(f"idx needs at least 2 tokens (an input and the target after it); got {idx.shape[1]}")
    t = check_int("t", t, minimum=0, maximum=idx.shape[1] - 2)  # the target idx[t+1] must exist
    with torch.enable_grad():
        idx = idx[:, : t + 2].to(model.output.weight.device)  # (B, t+2): the steps after t do not matter
        states, logits = _states_and_logits(model, idx)
        norms = _step_norms(states, logits, idx[:, t + 1], t).detach()  # (B, t+1)
    return norms[0] if single else norms


def gradient_decay_curve(
    model: RecurrentLM, vocab: Vocab, sentences, *, distance_max: int, batch_size: int = 64
) -> tuple[Tensor, Tensor]:
    """How ‖∂L_t/∂h_k‖ / ‖∂L_t/∂h_t‖ falls with the distance t-k, over all (sentence, t) pairs: (D+1,), (D+1,).

    Returns ``distances`` 0..distance_max and the geometric mean of the ratio at each distance (the
    ratios span orders of magnitude, so a plain mean would be one outlier's). Every prediction of
    every sentence counts, ``</s>`` included; a sentence of n words reaches distances up to n.
    """
    model = _check_recurrent_lm(model)
    lm._check_vocab(model, vocab)
    distance_max = check_int("distance_max", distance_max, minimum=0)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    id_lists = sorted(lm.as_id_lists(vocab, sentences), key=len)  # similar lengths share a batch
    if len(id_lists[-1]) < distance_max:
        raise CourseInputError(
            f"distance_max={distance_max} needs a sentence of at least {distance_max} words; "
            f"the longest given has {len(id_lists[-1])}. Give longer sentences or a smaller distance_max."
        )
    device = model.output.weight.device
    log_sums = torch.zeros(distance_max + 1, dtype=torch.float64)  # (D+1,)
    counts = torch.zeros(distance_max + 1, dtype=torch.float64)  # (D+1,)
    for start in range(0, len(id_lists), batch_size):
        idx, targets = (x.to(device) for x in lm.make_batch(id_lists[start : start + batch_size], vocab))  # (B, T) each
        with torch.enable_grad():
            states, logits = _states_and_logits(model, idx)
            for t in range(idx.shape[1]):
                keep = targets[:, t] != lm.IGNORE_INDEX  # (B,): sentences still going at t
                norms = _step_norms(states, logits, targets[:, t], t)[keep].detach().double().cpu()  # (b, t+1)
                ratios = norms.flip(1)[:, : distance_max + 1] / norms[:, -1:]  # (b, ≤D+1): column d is k = t-d
                log_sums[: ratios.shape[1]] += ratios.log().sum(dim=0)
                counts[: ratios.shape[1]] += ratios.shape[0]
    return torch.arange(distance_max + 1), torch.exp(log_sums / counts)  # (D+1,), (D+1,)


# ---------------------------------------------------------------- the same numbers from the Jacobian product


def _check_states(U, states) -> None:
    """``U`` must be (H, H) and ``states`` (t+1, H), floating point, of one dtype."""
    if not isinstance(U, Tensor) or U.ndim != 2 or U.shape[0] != U.shape[1] or not U.is_floating_point():
        raise CourseInputError(f"U must be a square float matrix (H, H); got {describe(U)}")
    if not isinstance(states, Tensor) or states.ndim != 2 or states.shape[1] != U.shape[0] or len(states) == 0:
        raise CourseInputError(
            f"states must be the hidden states h_0..h_t of one sequence, (t+1, {U.shape[0]}); got {describe(states)}"
        )
    if states.dtype != U.dtype:
        raise CourseInputError(f"states are {states.dtype} but U is {U.dtype}: use one dtype (float64 is exact)")


def hidden_jacobians(U: Tensor, states: Tensor) -> Tensor:
    """∂h_t/∂h_k = Π_{j=t..k+1} diag(1 - h_j²) U for k = 0..t, from tanh RNN states h_0..h_t (t+1, H): (t+1, H, H)."""
    _check_states(U, states)
    jacobians = [torch.eye(U.shape[0], dtype=U.dtype, device=U.device)]  # ∂h_t/∂h_t = I: (H, H)
    for j in range(len(states) - 1, 0, -1):  # j = t, ..., 1: one more factor each step back
        step = (1 - states[j] ** 2)[:, None] * U  # (H, H): ∂h_j/∂h_{j-1} = diag(1 - h_j²) U
        jacobians.append(jacobians[-1] @ step)  # (H, H): ∂h_t/∂h_{j-1}
    return torch.stack(jacobians[::-1])  # (t+1, H, H): index k holds ∂h_t/∂h_k


def jacobian_product_norms(U: Tensor, states: Tensor, grad_t: Tensor) -> Tensor:
    """‖∂L_t/∂h_k‖ = ‖(∂h_t/∂h_k)ᵀ ∂L_t/∂h_t‖ for k = 0..t, given ``grad_t`` = ∂L_t/∂h_t (H,): (t+1,)."""
    _check_states(U, states)
    if not isinstance(grad_t, Tensor) or tuple(grad_t.shape) != (U.shape[0],) or grad_t.dtype != U.dtype:
        raise CourseInputError(
            f"grad_t must be ∂L_t/∂h_t, a ({U.shape[0]},) tensor of U's dtype {U.dtype}; got {describe(grad_t)}"
        )
    return (hidden_jacobians(U, states).transpose(1, 2) @ grad_t).norm(dim=-1)  # (t+1, H) → (t+1,)


# ---------------------------------------------------------------- exploding gradients, and clipping


def scaled_orthogonal(size: int, radius: float, *, seed: int = 0) -> Tensor:
    """A random orthogonal matrix times ``radius``: every eigenvalue has |λ| = radius (float64, (size, size))."""
    size = check_int("size", size, minimum=1)
    radius = check_positive("radius", radius)
    with seeded(seed):
        q, r = torch.linalg.qr(torch.randn(size, size, dtype=torch.float64))  # (size, size) each
    return radius * q * torch.sign(torch.diagonal(r))  # (size, size): signs fixed so q is uniformly random


def exploding_demo(
    radius: float, *, hidden_size: int = 8, steps: int = 20, input_scale: float = 1e-6, seed: int = 0
) -> tuple[Tensor, Tensor]:
    """‖∂L/∂h_k‖ by distance T-1-k in a float64 tanh RNN with U = ``scaled_orthogonal(radius)``: (T,), (T,).

    L = v · h_{T-1} for a fixed random unit vector v, so ∂L/∂h_{T-1} = v and distance 0 has norm 1.
    With small inputs tanh stays near its linear part (1 - h² ≈ 1) and the norm is ≈ radius^distance:
    it explodes for radius > 1 and vanishes for radius < 1. Large inputs saturate tanh, which
    shrinks every factor: then even radius > 1 can vanish.
    """
    hidden_size = check_int("hidden_size", hidden_size, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    input_scale = check_positive("input_scale", input_scale, allow_zero=True)
    U = scaled_orthogonal(hidden_size, radius, seed=seed)  # (H, H)
    with seeded(seed):
        rnn = ScratchRNN(hidden_size, hidden_size).double()
        x = input_scale * torch.randn(1, steps, hidden_size, dtype=torch.float64)  # (1, T, D)
        v = F.normalize(torch.randn(hidden_size, dtype=torch.float64), dim=0)  # (H,)
    with torch.no_grad():
        rnn.U.copy_(U)
        rnn.b.zero_()  # no bias: with small inputs the states stay near 0, where tanh is linear
        states = rnn(x)[0][0]  # (T, H)
    norms = jacobian_product_norms(U, states, v)  # (T,): index k
    return torch.arange(steps), norms.flip(0)  # index = distance T-1-k


def clip_by_norm(grads: Sequence[Tensor], max_norm: float) -> tuple[list[Tensor], float]:
    """Rescale gradients so their joint L2 norm is at most ``max_norm``: (clipped copies, norm before clipping).

    As ``torch.nn.utils.clip_grad_norm_``: the scale is min(1, max_norm / (norm + 1e-6)), the same for
    every tensor, so the direction of the whole gradient is kept. The inputs are left unchanged.
    """
    max_norm = check_positive("max_norm", max_norm)
    grads = list(grads) if isinstance(grads, (list, tuple)) else grads
    if not isinstance(grads, list) or not grads or not all(isinstance(g, Tensor) for g in grads):
        raise CourseInputError("grads must be a non-empty list of tensors, e.g. [p.grad for p in model.parameters()]")
    total = torch.sqrt(sum(g.double().pow(2).sum() for g in grads)).item()  # ‖all gradients as one vector‖
    if not math.isfinite(total):
        raise CourseInputError(
            f"the gradient norm is {total}: clipping cannot repair NaN or infinite gradients. "
            "Lower the learning rate, or clip earlier, before the weights blow up."
        )
    scale = min(1.0, max_norm / (total + 1e-6))
    return [g * scale for g in grads], total


# ---------------------------------------------------------------- "not parallelizable", measured


def time_per_sequence(model: torch.nn.Module, lengths, *, batch_size: int = 16, repeats: int = 3) -> dict[int, float]:
    """Wall-clock seconds of one forward pass per sequence, for each length: {length: seconds}.

    Each length runs ``batch_size`` random sequences once to warm up, then ``repeats`` times; the
    fastest run counts (the least disturbed by other work), divided by ``batch_size``.
    """
    if not isinstance(model, torch.nn.Module) or not isinstance(getattr(model, "vocab_size", None), int):
        kind = type(model).__name__
        raise CourseInputError(f"model must be a language model (an nn.Module with vocab_size); got {kind}")
    lengths = _check_lengths(lengths, getattr(model, "max_len", None))
    batch_size = check_int("batch_size", batch_size, minimum=1)
    repeats = check_int("repeats", repeats, minimum=1)
    device = lm._model_device(model)
    generator = torch.Generator().manual_seed(0)
    was_training = model.training
    model.eval()
    times = {}
    try:
        with torch.no_grad():
            for length in lengths:
                idx = torch.randint(model.vocab_size, (batch_size, length), generator=generator).to(device)  # (B, T)
                model(idx)  # warm-up
                times[length] = min(_timed_forward(model, idx) for _ in range(repeats)) / batch_size
    finally:
        model.train(was_training)
    return times


def _check_lengths(lengths, max_len: int | None) -> list[int]:
    """Distinct sequence lengths ≥ 1 (and ≤ the model's ``max_len``), in the order given."""
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__iter__"):
        raise CourseInputError(f"lengths must be a list of sequence lengths, e.g. [8, 16, 32]; got {lengths!r}")
    lengths = [check_int("each length", n, minimum=1, maximum=max_len) for n in lengths]
    if not lengths:
        raise CourseInputError("lengths is empty: give at least one sequence length, e.g. [8, 16, 32]")
    if len(set(lengths)) != len(lengths):
        raise CourseInputError(f"lengths has repeats: {lengths}; give each length once")
    return lengths


def _timed_forward(model: torch.nn.Module, idx: Tensor) -> float:
    """Seconds for one forward pass (waiting for the GPU to finish, on a GPU)."""
    synchronize = torch.cuda.synchronize if idx.is_cuda else (lambda: None)
    synchronize()
    start = time.perf_counter()
    model(idx)
    synchronize()
    return time.perf_counter() - start


def slide_loop_notes(loop: Tensor, ids: list[int], vocab: Vocab, oracle_prob: float) -> str:
    """Two lines on the slide's loop (notebook 05): the inputs that a loop over ``range(1, len(x))`` would skip,
    and the sentence's probability by the chain rule from the loop's next-word distributions ``loop`` (T, V)
    beside the grammar's ``oracle_prob``."""
    skipped = [vocab.itos[i] for k, i in enumerate(ids) if k not in range(1, len(ids))]
    next_ids = ids[1:] + [vocab.eos_id]  # the word that follows each step
    sentence_prob = math.prod(loop[t, i].item() for t, i in enumerate(next_ids))
    sentence = " ".join(vocab.itos[i] for i in next_ids)
    return (
        f"range(1, len(x)) would read {len(range(1, len(ids)))} of the {len(ids)} inputs, skipping {skipped}\n"
        f"P({sentence}) by the loop: {sentence_prob:.3e}   oracle: {oracle_prob:.3e}"
    )


def ffnn_size_lines(ffnns: dict, hidden: int, vocab_size: int) -> list[str]:
    """The parameter counts of feed-forward LMs ``{N: model}``, shipped and (untrained) at the RNN's ``hidden``
    width, and the weights each extra word of window adds (notebook 05)."""

    def count(model) -> int:
        return sum(p.numel() for p in model.parameters())

    lines = []
    for n, ffnn in ffnns.items():
        narrow = FeedForwardLM(vocab_size, n, embed_dim=ffnn.embedding.embedding_dim, hidden_dim=hidden)
        lines.append(
            f"FFNN, window of N = {n}: shipped (hidden {ffnn.hidden.out_features}) {count(ffnn):,}   "
            f"at the RNN's width ({hidden}) {count(narrow):,}"
        )
    first, second = sorted(ffnns)[:2]
    d, width = ffnns[first].embedding.embedding_dim, ffnns[first].hidden.out_features
    lines.append(
        f"each extra word of window adds d × hidden = {d} × {width} = {d * width:,} weights\n"
        f"(shipped N = {first} → {second}: {count(ffnns[second]) - count(ffnns[first]):,}); "
        f"at the RNN's width, {d} × {hidden} = {d * hidden:,}"
    )
    return lines


def perplexity(logits: Tensor, targets: Tensor) -> float:
    """exp of the mean cross-entropy of ``logits`` (B, T, V), in float64, against ``targets`` (B, T)."""
    return math.exp(lm.lm_loss(logits.double(), targets).item())


def twin(prefix: list[str]) -> list[str]:
    """The same context with the subject (its second word) in the other number: "the girl …" ↔ "the girls …"."""
    other = {noun.singular: noun.plural for nouns in NOUNS.values() for noun in nouns}
    other |= {plural: singular for singular, plural in other.items()}
    return [prefix[0], other[prefix[1]], *prefix[2:]]


def next_word_probs(model, context: list[str], vocab: Vocab, lang) -> Tensor:
    """The next-word distribution (V,) after ``context``: the model's, or the grammar's when model is "oracle"."""
    if isinstance(model, str) and model == "oracle":
        return oracle_probs(lang, vocab, context)
    return lm.next_token_probs(model, vocab, context)
