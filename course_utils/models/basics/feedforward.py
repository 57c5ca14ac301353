"""Feed-forward networks in the slides' notation, and what they can do that a linear model cannot.

    for l in 1..n:  z[l] = W[l] a[l−1] + b[l];  a[l] = g[l](z[l]);   ŷ = a[n]

Here: the forward pass, softmax, the XOR data, a small classifier (``FeedForwardNet``: sizes
[2, 1] is logistic regression, [2, 8, 1] a 2-layer net), the best accuracy any straight line
reaches, and the per-layer gradient norms of deep stacks, with backprop written out (the
vanishing-gradient measurement: ``layer_gradient_norms``, ``gradient_norm_table``), and a short training
run of a deep net with plain gradient descent that shows what a vanished gradient does (``train_deep``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from course_utils.models.basics.activations import get_activation
from course_utils.training import TrainingHistory, train
from course_utils.validation import CourseInputError, check_int, check_same_length

Tensor = torch.Tensor

OUTPUT_ACTIVATIONS = ("identity", "softmax")  # besides the ones in ACTIVATIONS


def softmax(z: Tensor, dim: int = -1) -> Tensor:
    """softmax(z)_i = e^(z_i) / Σ_j e^(z_j), computed as e^(z_i − max z) / Σ_j e^(z_j − max z).

    Subtracting the maximum changes nothing mathematically, but the largest exponent becomes
    e^0 = 1, so large logits cannot overflow to inf (and inf / inf = nan).
    """
    if not isinstance(z, torch.Tensor) or not z.is_floating_point():
        raise CourseInputError("softmax needs a floating-point torch tensor of logits")
    shifted = z - z.amax(dim=dim, keepdim=True)  # same shape as z, max 0 along dim
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=dim, keepdim=True)


def apply_activation(name: str, z: Tensor) -> Tensor:
    """g(z) for a name in ``ACTIVATIONS``, or "identity" / "softmax" for an output layer."""
    if name == "identity":
        return z
    if name == "softmax":
        return softmax(z)
    return get_activation(name).function(z)


@dataclass
class ForwardPass:
    """Every z[l] (l = 1..n) and a[l] (l = 0..n) of one forward pass; ``output`` is ŷ = a[n]."""

    z: list[Tensor]
    a: list[Tensor]

    @property
    def output(self) -> Tensor:
        return self.a[-1]


def forward(
    a0: Tensor,
    weights: Sequence[Tensor],
    biases: Sequence[Tensor],
    activations: Sequence[str],
) -> ForwardPass:
    """The slides' loop: z[l] = W[l] a[l−1] + b[l], a[l] = g[l](z[l]) for l = 1..n.

    ``a0`` is one input (n0,) or a batch of rows (N, n0); W[l] has shape
    (n_l, n_{l−1}) and b[l] shape (n_l,); ``activations`` names g[1], ..., g[n].
    """
    check_same_length("weights", len(weights), "biases", len(biases))
    check_same_length("weights", len(weights), "activations", len(activations))
    result = ForwardPass(z=[], a=[a0])
    for layer, (W, b, g) in enumerate(zip(weights, biases, activations), start=1):
        a = result.a[-1]
        if W.shape[1] != a.shape[-1] or b.shape != W.shape[:1]:
            raise CourseInputError(
                f"layer {layer}: W{list(W.shape)} and b{list(b.shape)} do not fit "
                f"an input of size {a.shape[-1]}; "
                "W[l] must be (n_l, n_{l-1}) and b[l] must be (n_l,)"
            )
        z = a @ W.T + b  # (N, n_l): W a + b for every row a
        result.z.append(z)
        result.a.append(apply_activation(g, z))
    return result


def xor_points() -> tuple[Tensor, Tensor]:
    """The four corners of the XOR truth table: inputs (4, 2) and labels y = x1 XOR x2 (4,)."""
    x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])  # (4, 2)
    return x, (x[:, 0] != x[:, 1]).float()  # (4,)


def continuous_xor(n: int, seed: int = 0) -> tuple[Tensor, Tensor]:
    """n points uniform in [−1, 1]², label 1 where the two coordinates have different signs."""
    n = check_int("n", n, minimum=1)
    generator = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 2, generator=generator) * 2 - 1  # (n, 2)
    return x, (x[:, 0] * x[:, 1] < 0).float()  # (n,)


def initial_weight(n_out: int, n_in: int, gain: float, generator: torch.Generator) -> Tensor:
    """W of shape (n_out, n_in) drawn from N(0, gain²/n_in), so that W a keeps the size of a on average."""
    return torch.randn(n_out, n_in, generator=generator) * gain / math.sqrt(n_in)


class FeedForwardNet(torch.nn.Module):
    """A binary classifier with layer sizes ``sizes``: [2, 1] is a linear model (logistic
    regression), [2, 8, 1] a 2-layer net with ``activation`` in its hidden layer.

    Follows the course contract ``forward(x, targets=None) -> (logits, loss)``; the loss is
    binary cross-entropy on σ(logits). Weights start as N(0, gain²/fan_in), seeded.
    """

    def __init__(self, sizes: Sequence[int], activation: str = "tanh", *, seed: int = 0):
        super().__init__()
        if len(sizes) < 2 or sizes[-1] != 1:
            raise CourseInputError(f"sizes must list at least the input size and a last size of 1, got {list(sizes)}")
        sizes = [check_int("each layer size", n, minimum=1) for n in sizes]
        gain = get_activation(activation).init_gain
        generator = torch.Generator().manual_seed(check_int("seed", seed, minimum=0))
        self.weights = torch.nn.ParameterList(
            torch.nn.Parameter(initial_weight(n_out, n_in, gain, generator))
            for n_in, n_out in zip(sizes[:-1], sizes[1:])
        )
        self.biases = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(n_out)) for n_out in sizes[1:])
        self.activations = [activation] * (len(sizes) - 2) + ["identity"]

    def forward(self, x: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        logits = forward(x, self.weights, self.biases, self.activations).output.squeeze(-1)  # (N,)
        loss = None if targets is None else F.binary_cross_entropy_with_logits(logits, targets)
        return logits, loss

    @torch.no_grad()
    def accuracy(self, x: Tensor, y: Tensor) -> float:
        """The fraction of points classified right (ŷ = 1 where σ(logit) > 1/2, i.e. logit > 0)."""
        logits, _ = self(x)
        return ((logits > 0).float() == y).float().mean().item()


def fit(model: FeedForwardNet, x: Tensor, y: Tensor, *, steps: int, lr: float = 0.05) -> TrainingHistory:
    """Full-batch training of ``model`` on (x, y) with the course's training loop; returns its history."""
    check_same_length("x", len(x), "y", len(y))
    return train(model, lambda step: (x, y), steps=steps, lr=lr, progress=False, log_every=10)


def best_linear_accuracy(x: Tensor, y: Tensor, n_angles: int = 360) -> float:
    """The best accuracy of any straight line w·x = c through 2-D points, over ``n_angles`` directions.

    For each direction every cut between sorted projections is tried, so this is what the
    best linear classifier reaches (up to the angle grid), however it is trained.
    """
    check_same_length("x", len(x), "y", len(y))
    if x.ndim != 2 or x.shape[1] != 2:
        raise CourseInputError(f"x must hold 2-D points, shape (N, 2); got {list(x.shape)}")
    angles = (torch.arange(check_int("n_angles", n_angles, minimum=1)) + 0.5) * math.pi / n_angles  # (A,)
    directions = torch.stack([angles.cos(), angles.sin()], dim=1).to(x)  # (A, 2)
    order = (x @ directions.T).argsort(dim=0)  # (N, A): points sorted along each direction
    ones_below = torch.cat([y.new_zeros(1, n_angles, dtype=torch.float), y.float()[order].cumsum(dim=0)])  # (N+1, A)
    below = torch.arange(len(x) + 1, device=x.device).unsqueeze(1)  # (N+1, 1): points below each cut
    correct = (below - ones_below) + (y.sum() - ones_below)  # predict 0 below the cut, 1 above
    accuracy = correct / len(x)  # (N+1, A); 1 − accuracy is the same line with the sides swapped
    return torch.maximum(accuracy, 1 - accuracy).max().item()


def deep_stack(activation: str, depth: int, *, width: int = 32, seed: int = 0) -> tuple[list[Tensor], Tensor]:
    """``depth`` hidden layers W[l] of shape (width, width), N(0, gain²/width), and a read-out r (width, 1).

    The read-out is drawn first, so the stack of depth d is the first d layers of any deeper one.
    """
    depth = check_int("depth", depth, minimum=1, maximum=100)
    width = check_int("width", width, minimum=1, maximum=1024)
    gain = get_activation(activation).init_gain
    generator = torch.Generator().manual_seed(check_int("seed", seed, minimum=0))
    readout = initial_weight(1, width, 1.0, generator).T  # (width, 1)
    weights = [initial_weight(width, width, gain, generator) for _ in range(depth)]
    return weights, readout


def gradient_norm_table(activation: str, max_depth: int, *, width: int = 32, batch: int = 64, seed: int = 0) -> Tensor:
    """‖∂L/∂W[l]‖ for nets of every depth d = 1..max_depth: row d−1 holds layers l = 1..d (zeros after).

    The depth-d net is the first d layers of ``deep_stack`` (zero biases) and its read-out; the loss is
    binary cross-entropy on random inputs and labels. Backprop is written out: each layer multiplies the
    error signal δ by W and by g'(z), for the sigmoid at most 1/4. One forward pass serves every depth, and
    the backward pass carries one δ per depth side by side, so the whole table costs about one deep net.
    """
    batch = check_int("batch", batch, minimum=1, maximum=4096)
    weights, readout = deep_stack(activation, max_depth, width=width, seed=seed)
    generator = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch, width, generator=generator)  # (B, width)
    targets = torch.randint(0, 2, (batch, 1), generator=generator).float()  # (B, 1)
    derivative = get_activation(activation).derivative
    depth = len(weights)
    with torch.no_grad():
        trace = forward(x, weights, [torch.zeros(width)] * depth, [activation] * depth)
        delta = torch.zeros(depth, batch, width)  # (D, B, width): δ[l] of the depth-d net in row d−1
        table = torch.zeros(depth, depth)
        for layer in range(depth, 0, -1):
            if layer < depth:
                delta = delta @ weights[layer]  # (D, B, width): δ[l+1] W[l+1], for the nets deeper than l
            error = (torch.sigmoid(trace.a[layer] @ readout) - targets) / batch  # (B, 1): ∂L/∂(a[l] r) = (ŷ − y)/B
            delta[layer - 1] = error @ readout.T  # (B, width): the depth-l net starts its backward pass here
            delta = delta * derivative(trace.z[layer - 1])  # (D, B, width): × g'(z[l])
            table[:, layer - 1] = (delta.transpose(1, 2) @ trace.a[layer - 1]).norm(dim=(1, 2))  # ‖δ[l]ᵀ a[l−1]‖
    return table


def layer_gradient_norms(activation: str, depth: int, *, width: int = 32, batch: int = 64, seed: int = 0) -> Tensor:
    """‖∂L/∂W[l]‖ for the layers l = 1..depth of a deep stack of ``activation`` (see ``gradient_norm_table``).

    Entry 0 is layer 1, the one next to the input.
    """
    return gradient_norm_table(activation, depth, width=width, batch=batch, seed=seed)[-1]  # (depth,)


@dataclass(frozen=True)
class DeepRun:
    """One short training run of a deep ``FeedForwardNet`` (see ``train_deep``); layer 1 first in each list."""

    accuracy: float  # on the test points, after training
    first_gradients: list[float]  # ‖∂L/∂W[l]‖ at the first step
    moved: list[float]  # ‖W[l] after − W[l] before‖ / ‖W[l] before‖


def train_deep(
    activation: str,
    train_data: tuple[Tensor, Tensor],
    test_data: tuple[Tensor, Tensor],
    *,
    depth: int = 10,
    width: int = 16,
    steps: int = 400,
    lr: float = 0.5,
    seed: int = 0,
) -> DeepRun:
    """Train a net of ``depth`` hidden layers of ``width`` units with plain full-batch gradient descent.

    Plain ``torch.optim.SGD``, not Adam: Adam rescales every coordinate, so it would hide how small a
    gradient is, and that size is what this run is about.
    """
    (x, y), depth = train_data, check_int("depth", depth, minimum=1, maximum=100)
    model = FeedForwardNet([x.shape[1], *[check_int("width", width, minimum=1)] * depth, 1], activation, seed=seed)
    before = [w.detach().clone() for w in model.weights]
    model(x, y)[1].backward()
    first_gradients = [w.grad.norm().item() for w in model.weights]
    model.zero_grad()
    train(model, lambda step: (x, y), steps=steps, optimizer=torch.optim.SGD(model.parameters(), lr=lr), progress=False)
    moved = [((w.detach() - w0).norm() / w0.norm()).item() for w, w0 in zip(model.weights, before)]
    return DeepRun(model.accuracy(*test_data), first_gradients, moved)
