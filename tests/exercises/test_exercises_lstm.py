"""The self-checks of notebook 06: each passes right answers, fails wrong and unfinished ones, never raises."""

import numpy as np
import torch
from exercise_contract import contract_tests
from torch import nn

from course_utils.exercises.lstm import (
    cell_path_gradient,
    check_cell_gradient,
    check_lstm_parameters,
    check_lstm_step,
    check_scalar_mix,
    torch_parameter_count,
)
from course_utils.models.recurrent.recurrent_lm import RecurrentLM

CHECKS = (check_lstm_step, check_scalar_mix, check_cell_gradient, check_lstm_parameters)


# ----- answers to the LSTM-step exercise -----


def step(x, h_prev, c_prev, W, U, b):
    z_i, z_f, z_g, z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(z_f) * c_prev + torch.sigmoid(z_i) * torch.tanh(z_g)
    return torch.sigmoid(z_o) * torch.tanh(c), c


def step_with_lstm_cell(x, h_prev, c_prev, W, U, b):
    """Through the library: nn.LSTMCell with the same weights (one bias vector holds b, the other zeros)."""
    cell = nn.LSTMCell(W.shape[1], U.shape[1]).double()
    with torch.no_grad():
        cell.weight_ih.copy_(W)
        cell.weight_hh.copy_(U)
        cell.bias_ih.copy_(b)
        cell.bias_hh.zero_()
    return cell(x, (h_prev, c_prev))


def step_by_slices(x, h_prev, c_prev, W, U, b):
    H = h_prev.shape[1]
    gate = lambda k: x @ W[k * H : (k + 1) * H].T + h_prev @ U[k * H : (k + 1) * H].T + b[k * H : (k + 1) * H]  # noqa: E731
    i, f, g, o = torch.sigmoid(gate(0)), torch.sigmoid(gate(1)), torch.tanh(gate(2)), torch.sigmoid(gate(3))
    c = f * c_prev + i * g
    return [o * torch.tanh(c), c.float()]  # a list, and float32 is close enough


def step_order_ifog(x, h_prev, c_prev, W, U, b):
    z_i, z_f, z_o, z_g = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(z_f) * c_prev + torch.sigmoid(z_i) * torch.tanh(z_g)
    return torch.sigmoid(z_o) * torch.tanh(c), c


def step_without_tanh_of_c(x, h_prev, c_prev, W, U, b):
    h, c = step(x, h_prev, c_prev, W, U, b)
    z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)[3]
    return torch.sigmoid(z_o) * c, c


def step_without_input_gate(x, h_prev, c_prev, W, U, b):
    z_i, z_f, z_g, z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(z_f) * c_prev + torch.tanh(z_g)
    return torch.sigmoid(z_o) * torch.tanh(c), c


def step_swapped_gates(x, h_prev, c_prev, W, U, b):
    z_i, z_f, z_g, z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(z_i) * c_prev + torch.sigmoid(z_f) * torch.tanh(z_g)
    return torch.sigmoid(z_o) * torch.tanh(c), c


def step_sigmoid_candidate(x, h_prev, c_prev, W, U, b):
    z_i, z_f, z_g, z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(z_f) * c_prev + torch.sigmoid(z_i) * torch.sigmoid(z_g)
    return torch.sigmoid(z_o) * torch.tanh(c), c


def step_wrong_output_gate(x, h_prev, c_prev, W, U, b):
    z_i, z_f, z_g, z_o = (x @ W.T + h_prev @ U.T + b).chunk(4, dim=-1)
    c = torch.sigmoid(z_f) * c_prev + torch.sigmoid(z_i) * torch.tanh(z_g)
    return torch.sigmoid(z_f) * torch.tanh(c), c


RIGHT = [
    (check_lstm_step, step),
    (check_lstm_step, step_with_lstm_cell),
    (check_lstm_step, step_by_slices),
    (check_scalar_mix, lambda layers, w, gamma: gamma * (torch.softmax(w, dim=0)[:, None, None] * layers).sum(0)),
    (check_scalar_mix, lambda layers, w, gamma: gamma * torch.einsum("l,ltd->td", w.exp() / w.exp().sum(), layers)),
    (
        check_scalar_mix,
        lambda layers, w, gamma: sum(s * layer for s, layer in zip(torch.softmax(w, 0), layers)) * gamma,
    ),
    (check_cell_gradient, lambda forget, k, t: forget[k + 1 : t + 1].prod(dim=0)),
    (check_cell_gradient, lambda forget, k, t: torch.exp(torch.log(forget[k + 1 : t + 1]).sum(0))),
    (check_cell_gradient, cell_path_gradient),
    (check_lstm_parameters, lambda d, h: 4 * (h * d + h * h + 2 * h)),
    (check_lstm_parameters, lambda d, h: torch_parameter_count(nn.LSTM(d, h))),
    (check_lstm_parameters, lambda d, h: np.int64(4 * h * (d + h + 2))),
]

WRONG = [
    (check_lstm_step, step_order_ifog, "order i, f, g, o"),
    (check_lstm_step, step_without_tanh_of_c, "o ⊙ tanh(c_t)"),
    (check_lstm_step, step_without_input_gate, "input gate i scales the candidate"),
    (check_lstm_step, step_swapped_gates, "forget gate f multiplies the old cell"),
    (check_lstm_step, step_sigmoid_candidate, "candidate g uses tanh"),
    (check_lstm_step, lambda *args: step(*args)[::-1], "(h_t, c_t) in this order"),
    (check_lstm_step, step_wrong_output_gate, "c_t is right"),
    (check_lstm_step, lambda *args: step(*args)[0], "a pair (h_t, c_t)"),
    (check_lstm_step, lambda x, h, c, W, U, b: (h, c), "follow the equations"),
    (check_scalar_mix, lambda layers, w, gamma: gamma * torch.tensordot(w, layers, dims=1), "softmax"),
    (check_scalar_mix, lambda layers, w, gamma: gamma * torch.tensordot(w / w.sum(), layers, dims=1), "not a softmax"),
    (check_scalar_mix, lambda layers, w, gamma: (torch.softmax(w, 0)[:, None, None] * layers).sum(0), "scale γ"),
    (check_scalar_mix, lambda layers, w, gamma: gamma * layers.mean(0), "plain mean"),
    (
        check_scalar_mix,
        lambda layers, w, gamma: gamma * torch.softmax(w, 0)[:, None, None] * layers,
        "shape of one layer",
    ),
    (check_scalar_mix, lambda layers, w, gamma: layers.sum(0) + gamma, "γ · Σ_j"),
    (check_cell_gradient, lambda forget, k, t: forget[k : t + 1].prod(0), "starts at f_{k+1}"),
    (check_cell_gradient, lambda forget, k, t: forget[k + 1 : t].prod(0), "stops at f_t"),
    (check_cell_gradient, lambda forget, k, t: forget[k + 1 : t + 1].sum(0), "not a sum"),
    (check_cell_gradient, lambda forget, k, t: forget[k + 1 : t + 1].prod(), "one number per unit"),
    (
        check_cell_gradient,
        lambda forget, k, t: forget[k + 1 : t + 1].prod(0) if t > k else torch.zeros(forget.shape[1]),
        "vector of ones",
    ),
    (check_cell_gradient, lambda forget, k, t: 1 - forget[k + 1 : t + 1].prod(0), "f_{k+1} ⊙ f_{k+2}"),
    (check_lstm_parameters, lambda d, h: h * d + h * h + 2 * h, "an RNN's count"),
    (check_lstm_parameters, lambda d, h: 4 * (h * d + h * h + h), "two bias vectors"),
    (check_lstm_parameters, lambda d, h: 4 * (h * d + h * h), "add the biases"),
    (check_lstm_parameters, lambda d, h: 3 * (h * d + h * h + 2 * h), "four blocks, not three"),
    (check_lstm_parameters, lambda d, h: 4 * (h * d + d * d + 2 * h), "H·H per block"),
    (check_lstm_parameters, lambda d, h: 4 * h * d, "W (H×D), U (H×H)"),
    (check_lstm_parameters, lambda d, h: "99328", "one number"),
]


# The same right answers as NumPy arrays: a check judges the value, not the type (issue 33).
RIGHT += [
    (check_lstm_step, lambda *args: tuple(t.numpy() for t in step(*args))),
]
test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


def test_the_parameter_count_is_four_rnn_layers():
    d, h = 64, 128
    assert torch_parameter_count(nn.LSTM(d, h)) == 4 * torch_parameter_count(nn.RNN(d, h))
    lm = RecurrentLM(50, cell="lstm", embed_dim=d, hidden_dim=h)
    assert torch_parameter_count(lm.recurrent) == 4 * (h * d + h * h + 2 * h)


def test_the_cell_gradient_reference_is_the_product_of_forget_gates():
    forget = torch.rand(6, 3, dtype=torch.float64)
    assert torch.allclose(cell_path_gradient(forget, 1, 4), forget[2:5].prod(0))
    assert torch.equal(cell_path_gradient(forget, 3, 3), torch.ones(3, dtype=torch.float64))


def test_the_cell_gradient_matches_a_real_lstm_with_frozen_gates():
    """In a real LSTM, ∂c_t/∂c_k along the cell path (gates computed from fixed h) is Π f_j."""
    torch.manual_seed(0)
    H, T = 4, 6
    f = torch.sigmoid(torch.randn(T, H, dtype=torch.float64))
    i, g = torch.rand(T, H, dtype=torch.float64), torch.tanh(torch.randn(T, H, dtype=torch.float64))
    c_1 = torch.randn(H, dtype=torch.float64)
    jacobian = torch.autograd.functional.jacobian(lambda start: _run(start, f, i, g, 2, T), c_1)  # ∂c_{T-1}/∂c_1
    assert torch.allclose(torch.diagonal(jacobian), f[2:].prod(0))
    assert torch.allclose(jacobian, torch.diag(torch.diagonal(jacobian)))


def _run(start, f, i, g, first, steps):
    c = start
    for j in range(first, steps):
        c = f[j] * c + i[j] * g[j]
    return c
