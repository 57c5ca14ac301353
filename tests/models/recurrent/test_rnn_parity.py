"""The scratch Elman RNN and LSTM against nn.RNN / nn.LSTM: outputs, final states and gradients; the gate equations."""

import pytest
import torch
from torch import nn

from course_utils import CourseInputError
from course_utils.models.recurrent.rnn import ScratchLSTM, ScratchRNN, elman_step, lstm_step

TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}
CASES = [(0, 1, 1, 3, 4), (1, 4, 7, 5, 8), (2, 3, 25, 16, 32), (3, 2, 12, 1, 6)]  # seed, B, T, D, H
PAIRS = {"rnn": (nn.RNN, ScratchRNN), "lstm": (nn.LSTM, ScratchLSTM)}


def library_and_scratch(kind, seed, D, H, dtype, **kwargs):
    library_cls, scratch_cls = PAIRS[kind]
    torch.manual_seed(seed)
    library = library_cls(D, H, batch_first=True, **kwargs).to(dtype)
    return library, scratch_cls.from_torch(library)


def inputs(seed, B, T, D, dtype):
    return torch.randn(B, T, D, generator=torch.Generator().manual_seed(seed + 100), dtype=dtype)


def max_diff(a, b):
    return (a - b).abs().max().item()


def final_states(kind, library_state, scratch_state):
    """Pairs (library, scratch) of final states: h for the RNN, h and c for the LSTM."""
    if kind == "rnn":
        return [(library_state[0], scratch_state)]
    return [(library_state[0][0], scratch_state[0]), (library_state[1][0], scratch_state[1])]


# --- forward parity --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_outputs_and_final_states_match_the_library(kind, case, dtype):
    seed, B, T, D, H = case
    library, scratch = library_and_scratch(kind, seed, D, H, dtype)
    x = inputs(seed, B, T, D, dtype)
    expected, library_state = library(x)
    got, scratch_state = scratch(x)
    assert got.shape == expected.shape == (B, T, H)
    assert max_diff(got, expected) <= TOLERANCE[dtype]
    for want, have in final_states(kind, (library_state,) if kind == "rnn" else library_state, scratch_state):
        assert max_diff(have, want) <= TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_a_given_initial_state_is_used_like_the_library_does(kind, dtype):
    B, T, D, H = 3, 6, 4, 5
    library, scratch = library_and_scratch(kind, 7, D, H, dtype)
    x = inputs(7, B, T, D, dtype)
    h0, c0 = torch.randn(2, B, H, dtype=dtype, generator=torch.Generator().manual_seed(8))
    if kind == "rnn":
        expected, _ = library(x, h0.unsqueeze(0))
        got, _ = scratch(x, h0)
    else:
        expected, _ = library(x, (h0.unsqueeze(0), c0.unsqueeze(0)))
        got, _ = scratch(x, (h0, c0))
    assert max_diff(got, expected) <= TOLERANCE[dtype]
    assert max_diff(got, scratch(x)[0]) > 1e-3  # the state mattered


# --- gradient parity -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES[1:3])
@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_gradients_of_a_loss_match_the_library(kind, case, dtype):
    seed, B, T, D, H = case
    library, scratch = library_and_scratch(kind, seed, D, H, dtype)
    x = inputs(seed, B, T, D, dtype)
    x_library, x_scratch = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    weights = torch.randn(B, T, H, dtype=dtype, generator=torch.Generator().manual_seed(seed + 200))
    (library(x_library)[0] * weights).square().sum().backward()
    (scratch(x_scratch)[0] * weights).square().sum().backward()
    pairs = [
        (scratch.W, library.weight_ih_l0),
        (scratch.U, library.weight_hh_l0),
        (x_scratch, x_library),
        (scratch.b, library.bias_ih_l0),
        (scratch.b, library.bias_hh_l0),
    ]  # b = b_ih + b_hh: both get b's gradient
    for mine, theirs in pairs:
        scale = max(1.0, theirs.grad.abs().max().item())  # gradients here reach ~20: compare relative to their size
        assert max_diff(mine.grad, theirs.grad) <= TOLERANCE[dtype] * scale
    assert scratch.U.grad.abs().max() > 1e-3  # the loss reached the recurrent weights


# --- the equations ---------------------------------------------------------------------------


def test_elman_step_is_the_lectures_formula():
    g = torch.Generator().manual_seed(0)
    x, h = torch.randn(2, 3, generator=g, dtype=torch.float64), torch.randn(2, 4, generator=g, dtype=torch.float64)
    W, U, b = (torch.randn(4, 3, generator=g).double(), torch.randn(4, 4, generator=g).double(),
               torch.randn(4, generator=g).double())  # fmt: skip
    expected = torch.stack([torch.tanh(U @ h[r] + W @ x[r] + b) for r in range(2)])
    assert torch.allclose(elman_step(x, h, W, U, b), expected, rtol=0, atol=1e-14)


def test_lstm_gates_follow_the_slides_equations():
    H = 3
    g = torch.Generator().manual_seed(1)
    x, h, c = (torch.randn(2, n, generator=g, dtype=torch.float64) for n in (5, H, H))
    W, U = (torch.randn(4 * H, n, generator=g, dtype=torch.float64) for n in (5, H))
    b = torch.randn(4 * H, generator=g, dtype=torch.float64)
    h_new, c_new, gates = lstm_step(x, (h, c), (W, U, b))
    block = {name: slice(k * H, (k + 1) * H) for k, name in enumerate(["input", "forget", "candidate", "output"])}

    def pre(name):
        return x @ W[block[name]].T + h @ U[block[name]].T + b[block[name]]  # (B, H)

    assert set(gates) == {"input", "forget", "output", "candidate"}
    for name in ["input", "forget", "output"]:
        assert torch.allclose(gates[name], torch.sigmoid(pre(name)), rtol=0, atol=1e-14)
    assert torch.allclose(gates["candidate"], torch.tanh(pre("candidate")), rtol=0, atol=1e-14)
    assert torch.allclose(c_new, gates["forget"] * c + gates["input"] * gates["candidate"], rtol=0, atol=1e-14)
    assert torch.allclose(h_new, gates["output"] * torch.tanh(c_new), rtol=0, atol=1e-14)


def test_an_open_forget_gate_and_a_closed_input_gate_keep_the_cell():
    lstm = ScratchLSTM(4, 3).double()
    H = 3
    with torch.no_grad():
        lstm.b[:H] = -40.0  # input gate ≈ 0
        lstm.b[H : 2 * H] = 40.0  # forget gate ≈ 1
    c0 = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64)
    _, (_, c_T) = lstm(torch.randn(1, 30, 4, dtype=torch.float64), (torch.zeros(1, H, dtype=torch.float64), c0))
    assert torch.allclose(c_T, c0, atol=1e-12)


# --- states and gates for measurements -------------------------------------------------------


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_kept_states_are_the_outputs_and_nodes_of_the_graph(kind):
    module = PAIRS[kind][1](3, 5)
    x = inputs(0, 2, 6, 3, torch.float32)
    outputs, _, states = module(x, keep_states=True)
    assert len(states) == 6 and all(torch.equal(states[t], outputs[:, t]) for t in range(6))
    grads = torch.autograd.grad(outputs[:, 2].sum(), states, allow_unused=True, materialize_grads=True)
    assert all(grads[k].abs().sum() > 0 for k in range(3))  # h_2 depends on h_0, h_1, h_2
    assert all(grads[k].abs().sum() == 0 for k in range(3, 6))  # and not on later states


def test_kept_gates_rebuild_the_hidden_states():
    lstm = ScratchLSTM(3, 5)
    outputs, (h_T, c_T), states, gates = lstm(inputs(1, 2, 7, 3, torch.float32), keep_states=True, keep_gates=True)
    assert set(gates) == {"input", "forget", "output", "candidate", "cell"}
    assert all(value.shape == (2, 7, 5) for value in gates.values())
    assert torch.allclose(outputs, gates["output"] * torch.tanh(gates["cell"]))
    assert torch.equal(gates["cell"][:, -1], c_T) and torch.equal(states[-1], h_T)
    assert all(
        ((value > 0) & (value < 1)).all() for name, value in gates.items() if name in ("input", "forget", "output")
    )


# --- construction ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_a_fresh_module_starts_from_the_librarys_weights_under_the_same_seed(kind):
    library_cls, scratch_cls = PAIRS[kind]
    torch.manual_seed(5)
    library = library_cls(3, 4)
    torch.manual_seed(5)
    scratch = scratch_cls(3, 4)
    assert torch.equal(scratch.W, library.weight_ih_l0) and torch.equal(scratch.U, library.weight_hh_l0)
    assert torch.equal(scratch.b, library.bias_ih_l0 + library.bias_hh_l0)


def test_from_torch_copies_any_layer_of_a_stack():
    torch.manual_seed(0)
    library = nn.LSTM(3, 4, num_layers=2, batch_first=True).double()
    x = inputs(2, 2, 5, 3, torch.float64)
    first, second = ScratchLSTM.from_torch(library, 0), ScratchLSTM.from_torch(library, 1)
    assert max_diff(second(first(x)[0])[0], library(x)[0]) <= 1e-10
    assert first.W.dtype == torch.float64 and first.W.data_ptr() != library.weight_ih_l0.data_ptr()


def test_from_torch_without_biases_uses_zero():
    library = nn.RNN(3, 4, bias=False, batch_first=True)
    x = inputs(3, 2, 5, 3, torch.float32)
    assert max_diff(ScratchRNN.from_torch(library)(x)[0], library(x)[0]) <= 1e-5


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ScratchRNN.from_torch(nn.LSTM(3, 4)), "takes an RNN"),
        (lambda: ScratchLSTM.from_torch(nn.GRU(3, 4)), "takes an LSTM"),
        (lambda: ScratchRNN.from_torch(nn.RNN(3, 4, bidirectional=True)), "bidirectional"),
        (lambda: ScratchRNN.from_torch(nn.RNN(3, 4, nonlinearity="relu")), "relu"),
        (lambda: ScratchLSTM.from_torch(nn.LSTM(3, 4, num_layers=2), layer=2), "layer must be <= 1"),
        (lambda: ScratchRNN(0, 4), "input_size"),
        (lambda: ScratchLSTM(3, 2.5), "hidden_size"),
    ],
)
def test_bad_construction_is_refused(make, match):
    with pytest.raises(CourseInputError, match=match):
        make()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda m: m(torch.randn(5, 3)), r"\(batch, time, 3\)"),
        (lambda m: m(torch.randn(2, 5, 4)), r"\(batch, time, 3\)"),
        (lambda m: m([[1.0, 2.0, 3.0]]), "got list"),
        (lambda m: m(torch.randn(0, 5, 3)), "empty"),
        (lambda m: m(torch.randn(2, 0, 3)), "empty"),
        (lambda m: m(torch.randn(2, 5, 3, dtype=torch.float64)), "float64"),
        (lambda m: m(torch.randn(2, 5, 3), torch.zeros(3, 4)), r"h0 must be a tensor \(2, 4\)"),
    ],
)
@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_bad_input_gets_a_clear_message(kind, call, match):
    module = PAIRS[kind][1](3, 4)
    if kind == "lstm" and "h0" in match:
        call = lambda m: m(torch.randn(2, 5, 3), (torch.zeros(3, 4), torch.zeros(2, 4)))  # noqa: E731
    with pytest.raises(CourseInputError, match=match):
        call(module)


def test_an_lstm_state_must_be_a_pair():
    with pytest.raises(CourseInputError, match=r"pair \(h0, c0\)"):
        ScratchLSTM(3, 4)(torch.randn(2, 5, 3), torch.zeros(2, 4))
