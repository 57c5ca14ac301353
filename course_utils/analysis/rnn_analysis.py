"""Measuring what the lectures claim about recurrent networks: vanishing and exploding gradients, speed, gates.

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
``time_per_sequence`` measures the sequential cost; ``gate_activations`` reads an LSTM's gates.

What the states carry: ``states_after_prefixes`` and ``number_unit`` look for one unit that stores
the subject's number (chosen on half of the agreement items, tested on the other half);
``word_prediction_scores`` scores every word of a corpus from the left (an LM) or from both sides
(a ``MaskedBiLSTM``); ``gap_states`` gives the two states a BiLSTM predicts a word from, and
``masked_word_by_side`` hides one side of the gap at a time;
``pooled_layers`` and ``train_feature_head`` test one of ELMo's layers alone on a task.
"""

from __future__ import annotations

import collections
import math
import time
from typing import NamedTuple, Sequence

import torch
import torch.nn.functional as F

from course_utils.models import lm
from course_utils.models.classic.window_mlm import as_words, example_batches
from course_utils.models.classic.neural_lm import seeded
from course_utils.models.recurrent.recurrent_lm import (
    SCRATCH_CELLS,
    ElmoLM,
    MaskedBiLSTM,
    RecurrentLM,
    check_sequences,
    frame_sentences,
    reverse_each,
)
from course_utils.models.recurrent.rnn import ScratchRNN
from course_utils.models.classic.sentiment import FeatureClassifier
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.training import train
from course_utils.validation import CourseInputError, check_int, check_positive

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
        raise CourseInputError(f"U must be a square float matrix (H, H); got {_describe(U)}")
    if not isinstance(states, Tensor) or states.ndim != 2 or states.shape[1] != U.shape[0] or len(states) == 0:
        raise CourseInputError(
            f"states must be the hidden states h_0..h_t of one sequence, (t+1, {U.shape[0]}); got {_describe(states)}"
        )
    if states.dtype != U.dtype:
        raise CourseInputError(f"states are {states.dtype} but U is {U.dtype}: use one dtype (float64 is exact)")


def _describe(x) -> str:
    """A tensor's shape and dtype, or the type of anything else, for error messages."""
    return f"shape {list(x.shape)} ({x.dtype})" if isinstance(x, Tensor) else type(x).__name__


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
            f"grad_t must be ∂L_t/∂h_t, a ({U.shape[0]},) tensor of U's dtype {U.dtype}; got {_describe(grad_t)}"
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


# ---------------------------------------------------------------- an LSTM's gates over a sentence


def gate_activations(lstm_lm: RecurrentLM, vocab: Vocab, words) -> dict[str, Tensor]:
    """An LSTM's gates and cell state while it reads ``<s> w1..wn``: dict name → (T, H), T = n + 1.

    Keys "input", "forget", "output", "candidate", "cell"; row t is the step that reads token t (row 0 reads ``<s>``).
    """
    if not isinstance(lstm_lm, RecurrentLM) or lstm_lm.cell != "lstm":
        is_lm = isinstance(lstm_lm, RecurrentLM)
        kind = f"a RecurrentLM with cell={lstm_lm.cell!r}" if is_lm else type(lstm_lm).__name__
        raise CourseInputError(f"gate_activations needs an LSTM RecurrentLM (cell='lstm'); got {kind}")
    lm._check_vocab(lstm_lm, vocab)
    words = as_words(words)
    if not words:
        raise CourseInputError("the sentence is empty: give at least one word, e.g. 'the dog sleeps .'")
    ids = [vocab.bos_id] + vocab.encode(words, unknown="error")
    idx = torch.tensor([ids], device=lstm_lm.output.weight.device)  # (1, T)
    return {name: values[0].cpu() for name, values in lstm_lm.gates(idx).items()}  # (T, H) each


# ---------------------------------------------------------------- a unit that carries the subject's number


@torch.no_grad()
def states_after_prefixes(model: RecurrentLM, vocab: Vocab, prefixes, *, cell: bool = False) -> Tensor:
    """The top layer's state after reading ``<s>`` and each prefix: the hidden h, or an LSTM's cell c: (N, H)."""
    if not isinstance(model, RecurrentLM):
        raise CourseInputError(f"model must be a RecurrentLM; got {type(model).__name__}")
    if cell and model.cell != "lstm":
        raise CourseInputError(f"only an LSTM has a cell state c; this model's cell is {model.cell!r} (use cell=False)")
    lm._check_vocab(model, vocab)
    id_lists = lm.as_id_lists(vocab, prefixes)
    by_length = collections.defaultdict(list)  # one batch per prefix length: no padding
    for row, ids in enumerate(id_lists):
        by_length[len(ids)].append(row)
    device = model.output.weight.device
    states = torch.zeros(len(id_lists), model.output.in_features)  # (N, H)
    for rows in by_length.values():
        idx = torch.tensor([[vocab.bos_id, *id_lists[row]] for row in rows], device=device)  # (B, L+1)
        last = model.gates(idx)["cell"][:, -1] if cell else model.hidden_states(idx)[:, -1]  # (B, H)
        states[rows] = last.float().cpu()
    return states


class NumberUnit(NamedTuple):
    """The unit chosen by ``number_unit``, its correlation on the fit half, and its held-out accuracy."""

    unit: int
    r: float
    accuracy: dict[int, float]  # attractors -> accuracy on the held-out half


def number_unit(states: Tensor, items) -> NumberUnit:
    """The unit most correlated with the subject's number on the even items, and its accuracy on the odd ones.

    ``states`` (N, H) is one state per agreement item (``states_after_prefixes``); each item has
    "number" ("sg" or "pl") and "attractors". The unit is the one with the largest |Pearson r| with
    "the subject is plural" on items 0, 2, 4, ...; it then says "plural" on the other items when its
    value is on the plural side of the midpoint between the two means. Accuracy is by attractors.
    """
    items = list(items)
    if not isinstance(states, Tensor) or states.ndim != 2 or len(states) != len(items):
        raise CourseInputError(f"states must be (N, H) with one row per item ({len(items)}); got {_describe(states)}")
    if len(items) < 4 or any(item.get("number") not in ("sg", "pl") or "attractors" not in item for item in items):
        raise CourseInputError("items must be at least 4 agreement items with 'number' ('sg'/'pl') and 'attractors'")
    plural = torch.tensor([item["number"] == "pl" for item in items])  # (N,)
    fit = torch.arange(len(items)) % 2 == 0  # (N,): choose on these, test on the others
    x, y = states[fit].double(), plural[fit].double()  # (n, H), (n,)
    if y.min() == y.max():
        raise CourseInputError("the fit half has subjects of one number only: give items of both numbers")
    r = ((x - x.mean(0)) * (y - y.mean())[:, None]).sum(0) / (x.std(0) * y.std() * (len(y) - 1))  # (H,)
    r = r.nan_to_num(0.0)  # a unit that never changes correlates with nothing
    unit = int(r.abs().argmax())
    middle = (x[y == 1, unit].mean() + x[y == 0, unit].mean()) / 2  # halfway between the two means
    says_plural = (states[:, unit].double() > middle) == (r[unit] > 0)  # (N,)
    right = collections.defaultdict(list)
    for item, guess, truth, chosen_on in zip(items, says_plural.tolist(), plural.tolist(), fit.tolist()):
        if not chosen_on:
            right[item["attractors"]].append(guess == truth)
    return NumberUnit(unit, float(r[unit]), {n: sum(a) / len(a) for n, a in sorted(right.items())})


# ---------------------------------------------------------------- every word predicted: from the left, or from both sides


@torch.no_grad()
def word_prediction_scores(
    model: torch.nn.Module, vocab: Vocab, sentences, *, batch_size: int = 500
) -> tuple[float, float]:
    """(top-1 accuracy, mean NLL in nats) over every word of ``sentences`` (not ``</s>``).

    A ``MaskedBiLSTM`` predicts each word from the words on both sides of it; any other language
    model (``forward(idx) -> (logits, _)``) from the words before it.
    """
    lm._check_vocab(model, vocab)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    id_lists = sorted(lm.as_id_lists(vocab, sentences), key=len)  # similar lengths share a batch: little padding
    framing = torch.tensor([vocab.pad_id, vocab.bos_id, vocab.eos_id])  # (3,)
    device = lm._model_device(model)
    was_training = model.training
    model.eval()
    right, nll, words = 0, 0.0, 0
    try:
        for start in range(0, len(id_lists), batch_size):
            idx = frame_sentences(id_lists[start : start + batch_size], vocab).to(
                device
            )  # (B, T): <s> w1..wn </s> <pad>..
            if isinstance(model, MaskedBiLSTM):
                logits, target = model(idx)[0], idx  # (B, T, V): position t predicts idx[:, t] from both sides
            else:
                logits, target = model(idx[:, :-1])[0], idx[:, 1:]  # (B, T-1, V): position t predicts idx[:, t+1]
            keep = ~torch.isin(target, framing.to(device))  # (B, T'): the words only
            logp = torch.log_softmax(logits[keep].double(), dim=-1)  # (n, V)
            gold = target[keep]  # (n,)
            right += int((logp.argmax(-1) == gold).sum())
            nll -= float(logp.gather(1, gold[:, None]).sum())
            words += len(gold)
    finally:
        model.train(was_training)
    return right / words, nll / words


# ---------------------------------------------------------------- one side of a BiLSTM's gap at a time


def gap_states(model: MaskedBiLSTM, idx: Tensor) -> tuple[Tensor, Tensor]:
    """The two states a MaskedBiLSTM predicts word t from: (before, after), each (B, T, H), as in its forward."""
    lengths = model.lengths(idx)  # (B,)
    e = model.embedding(idx)  # (B, T, d)
    left = model.left_to_right(e)[0]  # (B, T, H): left[:, t] has read idx[:, :t+1]
    right = reverse_each(model.right_to_left(reverse_each(e, lengths))[0], lengths)  # (B, T, H): read idx[:, t:]
    before = F.pad(left[:, :-1], (0, 0, 1, 0))  # (B, T, H): the words before t
    after = F.pad(right[:, 1:], (0, 0, 0, 1))  # (B, T, H): the words after t ...
    after = after * (torch.arange(idx.shape[1], device=idx.device) + 1 < lengths[:, None]).unsqueeze(-1)  # ... or 0
    return before, after


def _check_bilstm(model, vocab: Vocab) -> MaskedBiLSTM:
    if not isinstance(model, MaskedBiLSTM):
        raise CourseInputError(
            f"model must be a MaskedBiLSTM (it reads both sides of a gap); got {type(model).__name__}"
        )
    lm._check_vocab(model, vocab)
    return model


@torch.no_grad()
def mean_side_states(model: MaskedBiLSTM, vocab: Vocab, sentences) -> tuple[Tensor, Tensor]:
    """The average left-side and right-side state over every word of ``sentences``: (H,), (H,).

    What the BiLSTM receives from a side "on average", knowing nothing about the sentence at hand.
    """
    model = _check_bilstm(model, vocab)
    idx = frame_sentences(lm.as_id_lists(vocab, sentences), vocab).to(model.embedding.weight.device)  # (B, T)
    before, after = gap_states(model.eval(), idx)  # (B, T, H) each
    words = ~torch.isin(idx, torch.tensor([vocab.pad_id, vocab.bos_id, vocab.eos_id], device=idx.device))  # (B, T)
    return before[words].mean(0).cpu(), after[words].mean(0).cpu()


@torch.no_grad()
def masked_word_by_side(model: MaskedBiLSTM, vocab: Vocab, words, means: tuple[Tensor, Tensor]) -> dict[str, Tensor]:
    """P(word at the ``<mask>``) from both sides, from the left side only and from the right side only.

    Returns {"both sides", "left only", "right only"} -> float64 probabilities (V,). To hide a side,
    its state is replaced by that side's average state ``means`` (from ``mean_side_states``): the
    prediction then uses only what the other side read (an ablation by the mean).
    """
    model = _check_bilstm(model, vocab)
    words = as_words(words)
    if words.count(MASK) != 1:
        raise CourseInputError(f"put exactly one {MASK} where the hidden word goes; found {words.count(MASK)}")
    position = words.index(MASK) + 1  # after <s>
    device = model.embedding.weight.device
    idx = torch.tensor([[vocab.bos_id, *vocab.encode(words, unknown="error"), vocab.eos_id]], device=device)  # (1, n+2)
    before, after = (state[0, position] for state in gap_states(model.eval(), idx))  # (H,), (H,)
    mean_before, mean_after = (m.to(device) for m in means)
    pairs = {"both sides": (before, after), "left only": (before, mean_after), "right only": (mean_before, after)}
    return {side: torch.softmax(model.output(torch.cat(pair)).double(), dim=-1).cpu() for side, pair in pairs.items()}


# ---------------------------------------------------------------- one of ELMo's layers alone


@torch.no_grad()
def pooled_layers(elmo: ElmoLM, x: Tensor, pad_id: int) -> Tensor:
    """Each of ELMo's layers averaged over each row's real (non-pad) tokens: (L+1, N, 2d) from ids x (N, T)."""
    if not isinstance(elmo, ElmoLM):
        raise CourseInputError(f"elmo must be an ElmoLM; got {type(elmo).__name__}")
    layers = elmo.eval().layers(x)  # (L+1, N, T, 2d)
    keep = (x != pad_id).unsqueeze(-1).to(layers.dtype)  # (N, T, 1)
    if (keep.sum(dim=1) == 0).any():
        raise CourseInputError("a row of x has no token that is not padding: every review needs at least one word")
    return (layers * keep).sum(dim=2) / keep.sum(dim=1)  # (L+1, N, 2d)


def train_feature_head(
    features: Tensor, labels: Tensor, *, steps: int, lr: float, batch_size: int, seed: int = 0, hidden_dim: int = 32
) -> FeatureClassifier:
    """A feed-forward classifier trained on fixed feature vectors (N, F) for ``labels`` (N,), in eval mode.

    AdamW with a cosine schedule, random batches (``example_batches``), no progress bar. Trained on
    ``pooled_layers(...)[j]`` it is ELMo's classifier head with the mix fixed to layer j: averaging
    over the words and mixing the layers are both linear, so they commute.
    """
    head = FeatureClassifier(n_features=features.shape[-1], hidden_dim=hidden_dim, seed=seed)
    batches = example_batches(features, labels, batch_size=batch_size, seed=seed)
    train(head, batches, steps=steps, lr=lr, schedule="cosine", progress=False)
    return head.eval()
