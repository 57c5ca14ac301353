"""Self-checks for notebook 06's exercises (the LSTM, its gradient path, ELMo's scalar mix).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: one LSTM step from the gate equations, ELMo's scalar mix
γ Σ_j softmax(w)_j · layer_j, the gradient along the cell path (checked by autograd) and the parameter count of
``nn.LSTM``.
"""

from __future__ import annotations

import torch
from torch import nn

from course_utils.exercises.answers import as_tensors, shown
from course_utils.exercises import answer_of, close, never_raises, numeric_answer, verdict
from course_utils.models.recurrent.recurrent_lm import ScalarMix
from course_utils.models.recurrent.rnn import lstm_step

Tensor = torch.Tensor

# (batch, input size D, hidden size H, seed) of the LSTM-step cases
_STEP_CASES = [(1, 3, 2, 0), (4, 5, 3, 1), (2, 2, 6, 2)]
# (layers L+1, tokens, width, seed) of the scalar-mix cases
_MIX_CASES = [(3, 4, 6, 0), (2, 1, 3, 1), (4, 5, 2, 2)]
# (steps T, units H, k, t, seed) of the cell-gradient cases: k = t and k = 0 included
_CELL_CASES = [(6, 3, 1, 4, 0), (5, 2, 0, 4, 1), (7, 4, 3, 3, 2), (8, 1, 2, 7, 3)]
# (input size D, hidden size H) of the parameter-count cases
_COUNT_CASES = [(64, 128), (1, 1), (300, 50), (10, 256)]


def _tensor_answer(fn, args: tuple, count: int, what: str) -> tuple[tuple[Tensor, ...] | None, str | None]:
    """Call ``fn(*args)`` and read its answer as ``count`` tensors: (tensors, None) or (None, why not)."""
    answer, why = answer_of(fn, args)
    return (None, why) if why else as_tensors(answer, count, what)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- exercise: one LSTM step


def _step_case(batch: int, d: int, h: int, seed: int) -> tuple[tuple[Tensor, ...], tuple[Tensor, Tensor]]:
    """Arguments (x, h_prev, c_prev, W, U, b) in float64, and the right (h_t, c_t)."""
    g = torch.Generator().manual_seed(seed)
    x, h_prev, c_prev = (torch.randn(batch, n, generator=g, dtype=torch.float64) for n in (d, h, h))
    W = torch.randn(4 * h, d, generator=g, dtype=torch.float64)  # (4H, D), blocks i, f, g, o
    U = torch.randn(4 * h, h, generator=g, dtype=torch.float64)  # (4H, H)
    b = torch.randn(4 * h, generator=g, dtype=torch.float64)  # (4H,)
    h_t, c_t, _ = lstm_step(x, (h_prev, c_prev), (W, U, b))
    return (x, h_prev, c_prev, W, U, b), (h_t, c_t)


def _step_variants(args: tuple[Tensor, ...]) -> dict[str, tuple[Tensor, Tensor]]:
    """(h, c) of the usual mistakes, each named by its hint."""
    x, h_prev, c_prev, W, U, b = args
    z_i, z_f, z_g, z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)  # (B, H) each
    i, f, o, g = torch.sigmoid(z_i), torch.sigmoid(z_f), torch.sigmoid(z_o), torch.tanh(z_g)
    c = f * c_prev + i * g
    io, fo, oo, go = torch.sigmoid(z_i), torch.sigmoid(z_f), torch.sigmoid(z_g), torch.tanh(z_o)  # order i, f, o, g
    c_iofg = fo * c_prev + io * go
    return {
        "the blocks come in torch's order i, f, g, o (rows [2H:3H] are the candidate g, rows [3H:] the output gate o)":
            (oo * torch.tanh(c_iofg), c_iofg),
        "h_t = o ⊙ tanh(c_t): squash the cell state before the output gate": (o * c, c),
        "the new cell is c_t = f ⊙ c_{t-1} + i ⊙ g: the input gate i scales the candidate": (o * torch.tanh(f * c_prev + g), f * c_prev + g),
        "the forget gate f multiplies the old cell c_{t-1}, the input gate i the candidate g": (
            o * torch.tanh(i * c_prev + f * g), i * c_prev + f * g),
        "the candidate g uses tanh (values in (-1, 1)); only the three gates use the sigmoid": (
            o * torch.tanh(f * c_prev + i * torch.sigmoid(z_g)), f * c_prev + i * torch.sigmoid(z_g)),
        "return (h_t, c_t) in this order": (c, o * torch.tanh(c)),
    }  # fmt: skip


@never_raises
def check_lstm_step(fn) -> bool:
    """Exercise: ``fn(x, h_prev, c_prev, W, U, b) -> (h_t, c_t)``, one LSTM step from the gate equations.

    x (B, D), h_prev and c_prev (B, H); W (4H, D), U (4H, H), b (4H,) hold the four blocks in torch's
    order i, f, g, o. Checked in float64 on three batches.
    """
    for batch, d, h, seed in _STEP_CASES:
        args, expected = _step_case(batch, d, h, seed)
        parts, why = _tensor_answer(fn, args, 2, "a pair (h_t, c_t)")
        if why:
            return verdict(False, why)
        if all(_same(a, e) for a, e in zip(parts, expected)):
            continue
        hint = next((name for name, variant in _step_variants(args).items()
                     if all(_same(a, v) for a, v in zip(parts, variant))), None)  # fmt: skip
        if hint is None and parts[1].shape == expected[1].shape and _same(parts[1], expected[1]):
            hint = "c_t is right; h_t = o ⊙ tanh(c_t) with o = σ(W_o x + U_o h_{t-1} + b_o)"
        if hint is None:
            hint = (
                "follow the equations: i, f, o = σ(...), g = tanh(...), c_t = f ⊙ c_{t-1} + i ⊙ g, h_t = o ⊙ tanh(c_t)"
            )
        return verdict(False, f"not the LSTM step yet (batch {batch}, D={d}, H={h}). Hint: {hint}")
    return verdict(
        True,
        f"your step computes the gates, c_t = f ⊙ c_{{t-1}} + i ⊙ g and h_t = o ⊙ tanh(c_t) on "
        f"{len(_STEP_CASES)} cases",
    )


# ---------------------------------------------------------------- exercise: ELMo's scalar mix


def _mix_case(n_layers: int, tokens: int, width: int, seed: int) -> tuple[tuple[Tensor, Tensor, Tensor], Tensor]:
    """Arguments (layers, w, gamma) in float64 and the right mix."""
    g = torch.Generator().manual_seed(seed)
    layers = torch.randn(n_layers, tokens, width, generator=g, dtype=torch.float64)  # (L+1, T, D)
    w = torch.randn(n_layers, generator=g, dtype=torch.float64)  # (L+1,)
    gamma = torch.tensor(0.5 + torch.rand((), generator=g, dtype=torch.float64).item(), dtype=torch.float64)
    mix = ScalarMix(n_layers).double()
    with torch.no_grad():
        mix.w.copy_(w)
        mix.gamma.copy_(gamma)
        expected = mix(layers)  # (T, D)
    return (layers, w, gamma), expected


def _mix_variants(layers: Tensor, w: Tensor, gamma: Tensor) -> dict[str, Tensor]:
    """The usual mistakes, each named by its hint."""
    s = torch.softmax(w, dim=0)  # (L+1,)
    return {
        "normalise the weights with a softmax, s = softmax(w), before mixing: raw w can be negative and need not sum to 1":
            gamma * torch.tensordot(w, layers, dims=1),
        "dividing w by its sum is not a softmax: use s = softmax(w) = exp(w) / Σ exp(w)":
            gamma * torch.tensordot(w / w.sum(), layers, dims=1),
        "multiply the mix by the scale γ": torch.tensordot(s, layers, dims=1),
        "that is the plain mean of the layers: weight layer j by s_j = softmax(w)_j": gamma * layers.mean(0),
    }  # fmt: skip


@never_raises
def check_scalar_mix(fn) -> bool:
    """Exercise: ``fn(layers, w, gamma) -> γ Σ_j softmax(w)_j · layers[j]``: (L+1, T, D), (L+1,), () → (T, D).

    Checked in float64 on mixes of 2 to 4 layers.
    """
    for n_layers, tokens, width, seed in _MIX_CASES:
        args, expected = _mix_case(n_layers, tokens, width, seed)
        parts, why = _tensor_answer(fn, args, 1, "one tensor (T, D)")
        if why:
            return verdict(False, why)
        if _same(parts[0], expected):
            continue
        hint = next((name for name, variant in _mix_variants(*args).items() if _same(parts[0], variant)), None)
        if hint is None and parts[0].shape != expected.shape:
            hint = f"the mix of layers {tuple(args[0].shape)} has the shape of one layer, {tuple(expected.shape)}"
        hint = hint or "γ · Σ_j s_j · layers[j] with s = softmax(w)"
        return verdict(False, f"not ELMo's mix yet ({n_layers} layers). Hint: {hint}")
    return verdict(True, f"your mix is γ Σ_j softmax(w)_j · layers[j] on {len(_MIX_CASES)} cases")


# ---------------------------------------------------------------- exercise: the gradient along the cell


def cell_path_gradient(forget: Tensor, k: int, t: int) -> Tensor:
    """∂c_t/∂c_k along the cell path (gates held fixed), by autograd: its diagonal, (H,).

    ``forget`` (T, H) holds f_0..f_{T-1}; the cell runs c_j = f_j ⊙ c_{j-1} + (a constant) for j ≥ 1.
    """
    c_k = torch.zeros(forget.shape[1], dtype=torch.float64, requires_grad=True)  # (H,)
    c = c_k
    for j in range(k + 1, t + 1):
        c = forget[j].double() * c + 0.1  # the i ⊙ g term does not depend on c_k
    if t == k:
        return torch.ones_like(c_k.detach())
    return torch.autograd.grad(c.sum(), c_k)[0]  # diagonal Jacobian: the sum's gradient is its diagonal


def _cell_variants(forget: Tensor, k: int, t: int) -> dict[str, Tensor]:
    """The usual mistakes, each named by its hint (the first that matches is shown)."""
    f = forget.double()
    ones = torch.ones(f.shape[1], dtype=torch.float64)
    variants = {"with k = t the cell is its own derivative: a vector of ones": torch.zeros_like(ones)} if k == t else {}
    variants.update({
        "the product starts at f_{k+1}: c_k is already past its own forget gate f_k": f[k : t + 1].prod(0),
        "the product stops at f_t, the last gate the cell goes through: j = k+1..t":
            f[k + 1 : t].prod(0) if t > k + 1 else ones,
        "the gates multiply along the path (c_j = f_j ⊙ c_{j-1} + ...): a product, not a sum": f[k + 1 : t + 1].sum(0),
    })  # fmt: skip
    return variants


@never_raises
def check_cell_gradient(fn) -> bool:
    """Exercise: ``fn(forget, k, t) -> ∂c_t/∂c_k = Π_{j=k+1..t} f_j`` (its diagonal, (H,)), forget (T, H).

    Checked against autograd through the cell recursion c_j = f_j ⊙ c_{j-1} + i_j ⊙ g_j with the
    gates held fixed.
    """
    for steps, units, k, t, seed in _CELL_CASES:
        g = torch.Generator().manual_seed(seed)
        forget = 0.5 + 0.5 * torch.rand(steps, units, generator=g, dtype=torch.float64)  # (T, H) in (0.5, 1)
        expected = cell_path_gradient(forget, k, t)  # (H,)
        parts, why = _tensor_answer(fn, (forget, k, t), 1, f"one tensor ({units},)")
        if why:
            return verdict(False, why)
        if _same(parts[0], expected):
            continue
        hint = next((name for name, variant in _cell_variants(forget, k, t).items() if _same(parts[0], variant)), None)
        if hint is None and parts[0].shape != expected.shape:
            hint = f"one number per unit: shape ({units},), the product over the time axis (dim 0)"
        hint = hint or "∂c_t/∂c_k = f_{k+1} ⊙ f_{k+2} ⊙ ... ⊙ f_t"
        return verdict(False, f"not ∂c_t/∂c_k yet for k={k}, t={t}. Hint: {hint}")
    return verdict(True, f"your product matches autograd on {len(_CELL_CASES)} cases, k = t included")


# ---------------------------------------------------------------- exercise: counting an LSTM's weights


def torch_parameter_count(module: nn.Module) -> int:
    """How many numbers a module learns."""
    return sum(p.numel() for p in module.parameters())


@never_raises
def check_lstm_parameters(fn) -> bool:
    """Exercise: ``fn(input_size, hidden_size)`` is the number of parameters of ``nn.LSTM(input_size, hidden_size)``."""
    for d, h in _COUNT_CASES:
        expected = torch_parameter_count(nn.LSTM(d, h))
        value, why = numeric_answer(fn, (d, h))
        if why:
            return verdict(False, why)
        if close(value, expected):
            continue
        mistakes = {
            h * d + h * h + 2 * h: "that is an RNN's count: an LSTM has four such blocks (i, f, g, o)",
            4 * (h * d + h * h + h): "torch keeps two bias vectors per block, b_ih and b_hh: 2H biases per block",
            4 * (h * d + h * h): "add the biases: two vectors of H per block in torch (b_ih and b_hh)",
            3 * (h * d + h * h + 2 * h): "three gates and the candidate g: four blocks, not three",
            4 * (h * d + d * d + 2 * h): "the recurrent weights U map h_{t-1} (H numbers) to H numbers: H·H per block",
        }
        hint = mistakes.get(round(value), "each of the 4 blocks has W (H×D), U (H×H) and two biases of H")
        want, got = shown(expected, value, 0, group=True)
        return verdict(False, f"nn.LSTM({d}, {h}) has {want} parameters; yours gives {got}. Hint: {hint}")
    return verdict(True, f"your count matches nn.LSTM on {len(_COUNT_CASES)} sizes")
