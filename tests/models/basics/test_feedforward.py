"""Forward pass, softmax, XOR and the vanishing-gradient measurement: parity, claims and bad input."""

import pytest
import torch
import torch.nn.functional as F

from course_utils import CourseInputError
from course_utils.models.basics.feedforward import (
    FeedForwardNet,
    best_linear_accuracy,
    continuous_xor,
    deep_stack,
    fit,
    forward,
    gradient_norm_table,
    initial_weight,
    layer_gradient_norms,
    softmax,
    xor_points,
)


def random_layers(sizes, seed=0):
    generator = torch.Generator().manual_seed(seed)
    weights = [
        torch.randn(n_out, n_in, generator=generator, dtype=torch.float64) for n_in, n_out in zip(sizes, sizes[1:])
    ]
    biases = [torch.randn(n_out, generator=generator, dtype=torch.float64) for n_out in sizes[1:]]
    return weights, biases


# --- softmax ---------------------------------------------------------------------------------


def test_softmax_matches_torch_on_batches_and_any_dim():
    logits = torch.randn(6, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 10
    for dim in (0, 1, -1):
        assert torch.allclose(softmax(logits, dim=dim), torch.softmax(logits, dim=dim), atol=1e-15)


def test_softmax_is_stable_where_the_naive_formula_overflows():
    large = torch.tensor([1000.0, 1001.0, 1002.0], dtype=torch.float64)
    assert torch.isnan(torch.exp(large) / torch.exp(large).sum()).all()
    probabilities = softmax(large)
    assert torch.isfinite(probabilities).all()
    assert torch.allclose(probabilities, softmax(large - 1000))
    assert torch.isclose(probabilities.sum(), torch.tensor(1.0, dtype=torch.float64))


def test_softmax_rejects_non_float_input():
    with pytest.raises(CourseInputError):
        softmax(torch.tensor([1, 2, 3]))
    with pytest.raises(CourseInputError):
        softmax([1.0, 2.0])


# --- forward pass ----------------------------------------------------------------------------


def test_the_slides_single_unit():
    w = torch.tensor([[0.1, 0.4, 0.2]], dtype=torch.float64)  # (1, 3)
    b = torch.tensor([0.4], dtype=torch.float64)
    x = torch.tensor([0.3, 0.2, 0.9], dtype=torch.float64)
    trace = forward(x, [w], [b], ["sigmoid"])
    assert round(trace.z[0].item(), 2) == 0.69
    assert round(trace.output.item(), 2) == 0.67


def test_forward_matches_nn_sequential_for_one_input_and_a_batch():
    weights, biases = random_layers([3, 4, 5, 3])
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 4),
        torch.nn.Tanh(),
        torch.nn.Linear(4, 5),
        torch.nn.GELU(),
        torch.nn.Linear(5, 3),
        torch.nn.Softmax(dim=-1),
    ).double()
    with torch.no_grad():
        for layer, W, b in zip((net[0], net[2], net[4]), weights, biases):
            layer.weight.copy_(W)
            layer.bias.copy_(b)
        batch = torch.randn(7, 3, dtype=torch.float64)
        for x in (batch, batch[0]):
            trace = forward(x, weights, biases, ["tanh", "gelu", "softmax"])
            assert torch.allclose(trace.output, net(x), atol=1e-14)


def test_forward_keeps_every_z_and_a_with_the_slides_shapes():
    weights, biases = random_layers([3, 4, 2])
    trace = forward(torch.zeros(5, 3, dtype=torch.float64), weights, biases, ["relu", "identity"])
    assert [tuple(z.shape) for z in trace.z] == [(5, 4), (5, 2)]
    assert [tuple(a.shape) for a in trace.a] == [(5, 3), (5, 4), (5, 2)]
    assert torch.equal(trace.a[1], torch.relu(trace.z[0])) and torch.equal(trace.output, trace.z[1])


def test_forward_rejects_mismatched_shapes_and_lengths():
    weights, biases = random_layers([3, 4, 2])
    x = torch.zeros(3, dtype=torch.float64)
    with pytest.raises(CourseInputError, match="layer 1"):
        forward(torch.zeros(2, dtype=torch.float64), weights, biases, ["relu", "sigmoid"])
    with pytest.raises(CourseInputError, match="layer 2"):
        forward(x, weights, [biases[0], torch.zeros(3, dtype=torch.float64)], ["relu", "sigmoid"])
    with pytest.raises(CourseInputError, match="must match"):
        forward(x, weights, biases[:1], ["relu", "sigmoid"])
    with pytest.raises(CourseInputError, match="must match"):
        forward(x, weights, biases, ["relu"])
    with pytest.raises(CourseInputError, match="activation must be one of"):
        forward(x, weights, biases, ["relu", "step"])


# --- XOR -------------------------------------------------------------------------------------


def test_xor_points_are_the_truth_table():
    x, y = xor_points()
    assert x.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]] and y.tolist() == [0, 1, 1, 0]


def test_continuous_xor_is_seeded_and_labelled_by_quadrant():
    x, y = continuous_xor(500, seed=3)
    again, _ = continuous_xor(500, seed=3)
    assert torch.equal(x, again) and not torch.equal(x, continuous_xor(500, seed=4)[0])
    assert x.abs().max() <= 1
    assert torch.equal(y, ((x[:, 0] < 0) != (x[:, 1] < 0)).float())
    with pytest.raises(CourseInputError):
        continuous_xor(0)


def test_best_linear_accuracy_separable_data_and_xor():
    x, y = xor_points()
    assert best_linear_accuracy(x, y) == 0.75
    assert best_linear_accuracy(x, x[:, 0] * x[:, 1]) == 1.0  # AND is linearly separable
    x_c, y_c = continuous_xor(1000, seed=0)
    assert 0.6 < best_linear_accuracy(x_c, y_c) < 0.75  # about 2/3 on the square


def test_best_linear_accuracy_rejects_bad_input():
    x, y = xor_points()
    with pytest.raises(CourseInputError):
        best_linear_accuracy(x, y[:3])
    with pytest.raises(CourseInputError, match=r"\(N, 2\)"):
        best_linear_accuracy(torch.zeros(4, 3), y)
    with pytest.raises(CourseInputError):
        best_linear_accuracy(x, y, n_angles=0)


def test_a_linear_model_fails_xor_and_a_two_layer_net_solves_it():
    x, y = continuous_xor(400, seed=0)
    x_test, y_test = continuous_xor(1000, seed=1)
    linear, net = FeedForwardNet([2, 1], seed=0), FeedForwardNet([2, 8, 1], "relu", seed=0)
    history = fit(linear, x, y, steps=150)
    fit(net, x, y, steps=150)
    assert history.final_loss > 0.6  # about log 2: the linear model hedges
    assert linear.accuracy(x_test, y_test) <= best_linear_accuracy(x_test, y_test) + 0.01
    assert net.accuracy(x_test, y_test) > 0.95


def test_training_is_seeded():
    x, y = continuous_xor(100, seed=0)
    runs = []
    for _ in range(2):
        net = FeedForwardNet([2, 4, 1], "tanh", seed=5)
        fit(net, x, y, steps=20)
        runs.append(torch.cat([p.detach().reshape(-1) for p in net.parameters()]))
    assert torch.equal(runs[0], runs[1])
    other = FeedForwardNet([2, 4, 1], "tanh", seed=6)
    assert not torch.equal(other.weights[0], FeedForwardNet([2, 4, 1], "tanh", seed=5).weights[0])


def test_feedforward_net_and_fit_reject_bad_input():
    with pytest.raises(CourseInputError):
        FeedForwardNet([2])
    with pytest.raises(CourseInputError):
        FeedForwardNet([2, 3])  # the output must be one unit
    with pytest.raises(CourseInputError):
        FeedForwardNet([2, 0, 1])
    with pytest.raises(CourseInputError):
        FeedForwardNet([2, 4, 1], "swish")
    x, y = continuous_xor(10)
    with pytest.raises(CourseInputError):
        fit(FeedForwardNet([2, 1]), x, y[:5], steps=5)
    with pytest.raises(CourseInputError):
        fit(FeedForwardNet([2, 1]), x, y, steps=0)
    with pytest.raises(CourseInputError):
        fit(FeedForwardNet([2, 1]), x, y, steps=5, lr=-1.0)


# --- vanishing gradients ---------------------------------------------------------------------


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu", "gelu"])
def test_written_out_backprop_matches_autograd_for_every_depth(activation):
    max_depth, width, batch, seed = 6, 8, 16, 2
    table = gradient_norm_table(activation, max_depth, width=width, batch=batch, seed=seed)
    weights, readout = deep_stack(activation, max_depth, width=width, seed=seed)
    generator = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch, width, generator=generator)
    targets = torch.randint(0, 2, (batch, 1), generator=generator).float()
    for depth in range(1, max_depth + 1):
        layers = [W.clone().requires_grad_(True) for W in weights[:depth]]
        trace = forward(x, layers, [torch.zeros(width)] * depth, [activation] * depth)
        F.binary_cross_entropy_with_logits(trace.output @ readout, targets).backward()
        expected = torch.stack([W.grad.norm() for W in layers])
        assert torch.allclose(table[depth - 1, :depth], expected, rtol=1e-5, atol=0)
        assert (table[depth - 1, depth:] == 0).all()


def test_a_shallow_stack_is_the_start_of_a_deeper_one():
    shallow, readout = deep_stack("tanh", 3, width=5, seed=1)
    deep, same_readout = deep_stack("tanh", 9, width=5, seed=1)
    assert all(torch.equal(a, b) for a, b in zip(shallow, deep)) and torch.equal(readout, same_readout)
    assert torch.allclose(
        layer_gradient_norms("tanh", 3, width=5), gradient_norm_table("tanh", 9, width=5)[2, :3], rtol=1e-5
    )


def test_initial_weights_follow_the_gain():
    generator = torch.Generator().manual_seed(0)
    relu_like = initial_weight(400, 400, 2**0.5, generator)
    assert abs(relu_like.var().item() - 2 / 400) < 0.1 * 2 / 400
    assert deep_stack("sigmoid", 1, width=400)[0][0].std() < deep_stack("relu", 1, width=400)[0][0].std()


def test_sigmoid_gradients_vanish_and_relu_gradients_do_not():
    sigmoid, relu = layer_gradient_norms("sigmoid", 20), layer_gradient_norms("relu", 20)
    sigmoid_ratio, relu_ratio = (sigmoid[0] / sigmoid[-1]).item(), (relu[0] / relu[-1]).item()
    assert sigmoid_ratio < 1e-8
    assert 0.1 < relu_ratio < 10
    assert sigmoid_ratio ** (1 / 19) <= 0.25  # at most max σ' per layer


def test_layer_gradient_norms_rejects_bad_arguments():
    for kwargs in ({"depth": 0}, {"depth": 101}, {"depth": 2.5}, {"depth": 3, "width": 0}, {"depth": 3, "batch": 0}):
        with pytest.raises(CourseInputError):
            layer_gradient_norms("relu", **kwargs)
    with pytest.raises(CourseInputError):
        layer_gradient_norms("softmax", 3)
    with pytest.raises(CourseInputError):
        gradient_norm_table("relu", 3, seed=-1)
