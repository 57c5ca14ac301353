"""The Elman RNN and the LSTM (and a GRU step) written from the lecture's equations, one Python step per token.

    Elman RNN:  h_t = tanh(U h_{t-1} + W x_t + b)

    LSTM:       i_t = σ(W_i x_t + U_i h_{t-1} + b_i)        input gate
                f_t = σ(W_f x_t + U_f h_{t-1} + b_f)        forget gate
                o_t = σ(W_o x_t + U_o h_{t-1} + b_o)        output gate
                g_t = tanh(W_g x_t + U_g h_{t-1} + b_g)     candidate
                c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t            cell state (the memory)
                h_t = o_t ⊙ tanh(c_t)                       hidden state

``ScratchRNN`` and ``ScratchLSTM`` run these loops; ``from_torch`` copies the weights of a
``nn.RNN`` / ``nn.LSTM`` so the two can be checked against each other. The LSTM keeps its four
gates' weights stacked in torch's order (rows i, f, g, o of W, U and b), so W_i is ``W[:H]``.
A fresh module draws its weights exactly as torch does (same order, same ranges), so under the
same seed it starts from the same numbers as the library module.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from course_utils.reference import course_reference
from course_utils.validation import CourseInputError, check_int

Tensor = torch.Tensor


@course_reference
def elman_step(x_t: Tensor, h_prev: Tensor, W: Tensor, U: Tensor, b: Tensor) -> Tensor:
    """One step of the lecture's loop: h_t = tanh(U h_{t-1} + W x_t + b), for a batch of rows."""
    return torch.tanh(h_prev @ U.T + x_t @ W.T + b)  # (B, H)


@course_reference
def lstm_step(x_t: Tensor, state: tuple[Tensor, Tensor], params: tuple[Tensor, ...]):
    """One LSTM step from the gate equations: returns ``(h_t, c_t, gates)``, gates a
    dict of (B, H) tensors.

    ``params`` is ``(W, U, b)`` with the gates' blocks stacked in torch's order
    i, f, g, o: W (4H, D), U (4H, H), b (4H,).
    """
    h_prev, c_prev = state  # (B, H), (B, H)
    W, U, b = params
    z = x_t @ W.T + h_prev @ U.T + b  # (B, 4H): the four gates' pre-activations
    z_i, z_f, z_g, z_o = z.chunk(4, dim=-1)  # (B, H) each
    i = torch.sigmoid(z_i)  # (B, H): how much of the candidate to write
    f = torch.sigmoid(z_f)  # (B, H): how much of the old cell to keep
    o = torch.sigmoid(z_o)  # (B, H): how much of the cell to show
    g = torch.tanh(z_g)  # (B, H): the candidate values
    c = f * c_prev + i * g  # (B, H)
    h = o * torch.tanh(c)  # (B, H)
    return h, c, {"input": i, "forget": f, "output": o, "candidate": g}


GRUParams = tuple[Tensor, Tensor, Tensor, Tensor]  # W (3H, D), U (3H, H), b_W (3H,), b_U (3H,)


def gru_gates(x_t: Tensor, h_prev: Tensor, params: GRUParams) -> tuple[Tensor, ...]:
    """A GRU's reset gate r, update gate z and candidate n (B, H) each, in torch's
    convention; ``params`` = (W (3H, D), U (3H, H), b_W (3H,), b_U (3H,)), rows r, z, n.

    r_t = σ(W_r x_t + b_Wr + U_r h_{t-1} + b_Ur)          reset gate
    z_t = σ(W_z x_t + b_Wz + U_z h_{t-1} + b_Uz)          update gate
    n_t = tanh(W_n x_t + b_Wn + r_t ⊙ (U_n h_{t-1} + b_Un))  candidate
    """
    W, U, b_W, b_U = params
    from_input = x_t @ W.T + b_W  # (B, 3H)
    from_state = h_prev @ U.T + b_U  # (B, 3H)
    x_r, x_z, x_n = from_input.chunk(3, dim=-1)  # (B, H) each
    h_r, h_z, h_n = from_state.chunk(3, dim=-1)  # (B, H) each
    r = torch.sigmoid(x_r + h_r)  # (B, H): how much old state the candidate sees
    z = torch.sigmoid(x_z + h_z)  # (B, H): how much of the old state to keep
    n = torch.tanh(x_n + r * h_n)  # (B, H): the candidate
    return r, z, n


def gru_step(x_t: Tensor, h_prev: Tensor, params: GRUParams) -> Tensor:
    """One GRU step: h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t-1}, the gates from
    ``gru_gates``."""
    _, z, n = gru_gates(x_t, h_prev, params)  # (B, H) each
    return (1 - z) * n + z * h_prev  # (B, H)


class _ScratchRecurrence(nn.Module):
    """What the scratch RNN and LSTM share: weights W, U, b, torch's init, input checks, ``from_torch``."""

    blocks = 1  # stacked weight blocks per hidden unit: 1 for the RNN, 4 gates for the LSTM
    library = nn.RNN

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = check_int("input_size", input_size, minimum=1)
        self.hidden_size = check_int("hidden_size", hidden_size, minimum=1)
        rows = self.blocks * self.hidden_size
        self.W = nn.Parameter(torch.empty(rows, self.input_size))  # (blocks·H, D): input → hidden
        self.U = nn.Parameter(torch.empty(rows, self.hidden_size))  # (blocks·H, H): the recurrent loop
        self.b = nn.Parameter(torch.empty(rows))  # (blocks·H,)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Torch's init in torch's order: W, U and two biases from U(-1/√H, 1/√H); b is the biases' sum."""
        bound = 1 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            self.W.uniform_(-bound, bound)
            self.U.uniform_(-bound, bound)
            b_ih, b_hh = torch.empty(2, len(self.b)).uniform_(-bound, bound)  # (blocks·H,) each
            self.b.copy_(b_ih + b_hh)

    @classmethod
    def from_torch(cls, module: nn.Module, layer: int = 0):
        """A scratch module holding a copy of layer ``layer`` of a library ``nn.RNN`` / ``nn.LSTM``."""
        if type(module) is not cls.library:
            raise CourseInputError(
                f"{cls.__name__}.from_torch takes an {cls.library.__name__}; got {type(module).__name__}"
            )
        if module.bidirectional or getattr(module, "proj_size", 0):
            raise CourseInputError(
                "from_torch copies one direction of a plain layer: no bidirectional or proj_size modules"
            )
        if getattr(module, "nonlinearity", "tanh") != "tanh":
            raise CourseInputError(f"the scratch RNN uses tanh; this nn.RNN uses {module.nonlinearity}")
        layer = check_int("layer", layer, minimum=0, maximum=module.num_layers - 1)
        weight = getattr(module, f"weight_ih_l{layer}")  # (blocks·H, D)
        scratch = cls(weight.shape[1], module.hidden_size).to(device=weight.device, dtype=weight.dtype)
        with torch.no_grad():
            scratch.W.copy_(weight)
            scratch.U.copy_(getattr(module, f"weight_hh_l{layer}"))
            if module.bias:
                scratch.b.copy_(getattr(module, f"bias_ih_l{layer}") + getattr(module, f"bias_hh_l{layer}"))
            else:
                scratch.b.zero_()
        return scratch

    def _check_input(self, x) -> tuple[int, int]:
        """``x`` must be a (B, T, D) float tensor of the weights' dtype with B, T ≥ 1; return (B, T)."""
        if not isinstance(x, torch.Tensor) or x.ndim != 3 or x.shape[2] != self.input_size:
            shape = list(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise CourseInputError(f"x must be a tensor (batch, time, {self.input_size}); got {shape}")
        if x.shape[0] == 0 or x.shape[1] == 0:
            raise CourseInputError(f"x is empty (shape {list(x.shape)}): give at least one sequence of one step")
        if x.dtype != self.W.dtype:
            raise CourseInputError(f"x is {x.dtype} but the weights are {self.W.dtype}: convert one with .to(dtype)")
        return x.shape[0], x.shape[1]

    def _initial(self, state, batch: int, x: Tensor, name: str) -> Tensor:
        """A given initial state (B, H), checked, or zeros."""
        if state is None:
            return x.new_zeros(batch, self.hidden_size)  # (B, H)
        if not isinstance(state, torch.Tensor) or tuple(state.shape) != (batch, self.hidden_size):
            shape = list(state.shape) if isinstance(state, torch.Tensor) else type(state).__name__
            raise CourseInputError(f"{name} must be a tensor ({batch}, {self.hidden_size}); got {shape}")
        return state


class ScratchRNN(_ScratchRecurrence):
    """The lecture's Elman RNN: a Python loop of ``elman_step`` over time. Weights W (H, D), U (H, H), b (H,)."""

    def forward(self, x: Tensor, h0: Tensor | None = None, *, keep_states: bool = False):
        """``(outputs (B, T, H), h_T (B, H))``; with ``keep_states`` also the list of every h_t (B, H).

        ``states[t]`` is the hidden state after reading ``x[:, t]``: a node of the graph, so
        ``torch.autograd.grad(loss, states)`` gives ∂loss/∂h_t.
        """
        batch, steps = self._check_input(x)
        h = self._initial(h0, batch, x, "h0")  # (B, H)
        states = []
        for t in range(steps):
            h = elman_step(x[:, t], h, self.W, self.U, self.b)  # (B, H)
            states.append(h)
        outputs = torch.stack(states, dim=1)  # (B, T, H)
        return (outputs, h, states) if keep_states else (outputs, h)


class ScratchLSTM(_ScratchRecurrence):
    """The LSTM from its gate equations: a Python loop of ``lstm_step``. Weights W (4H, D), U (4H, H), b (4H,)."""

    blocks = 4
    library = nn.LSTM

    def forward(self, x: Tensor, state=None, *, keep_states: bool = False, keep_gates: bool = False):
        """``(outputs (B, T, H), (h_T, c_T))``, then the extras asked for, in this order.

        ``keep_states``: the list of every h_t (B, H), each a node of the graph.
        ``keep_gates``: a dict of (B, T, H) tensors, the four gates and the cell state ("cell") at each step.
        """
        batch, steps = self._check_input(x)
        if state is not None and not (isinstance(state, (tuple, list)) and len(state) == 2):
            raise CourseInputError("state must be a pair (h0, c0) of (batch, hidden) tensors, or None")
        h0, c0 = state if state is not None else (None, None)
        h, c = self._initial(h0, batch, x, "h0"), self._initial(c0, batch, x, "c0")  # (B, H), (B, H)
        states, gate_steps = [], []
        for t in range(steps):
            h, c, gates = lstm_step(x[:, t], (h, c), (self.W, self.U, self.b))  # (B, H), (B, H), dict of (B, H)
            states.append(h)
            gate_steps.append({**gates, "cell": c})
        result = (torch.stack(states, dim=1), (h, c))  # outputs (B, T, H)
        if keep_states:
            result += (states,)
        if keep_gates:
            result += (
                {name: torch.stack([g[name] for g in gate_steps], dim=1) for name in gate_steps[0]},
            )  # (B, T, H)
        return result
