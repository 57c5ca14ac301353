# %% [markdown]
# # 03 · Activation functions and feed-forward networks
#
# *Accompanies the lecture "Neural Language Models" (CMU 11-411/611): the slides on units, non-linear
# activation functions, feed-forward networks and their multi-layer notation, and the note on GELU. Also the
# "Activation Functions" slides of the lecture "Deep Learning and Masked Language Modelling" (CSE538).*
#
# ### Learning objectives
#
# After this notebook you can
# - compute a single unit, z = w·x + b and y = σ(z), by hand and in code;
# - write sigmoid, tanh, ReLU and GELU and their derivatives from scratch, and check them against PyTorch;
# - explain, with a measurement, why a network needs a non-linear activation (XOR);
# - run the forward pass of a multi-layer network in the slides' notation and follow every shape;
# - turn scores into class probabilities with a numerically stable softmax;
# - measure vanishing gradients through depth and connect them to the largest value of g'(z).

# %%
from course_utils import setup_notebook

device = setup_notebook(seed=0)

# %% [markdown]
# The networks in this notebook are small (section 6's stack of 20 layers of 32 units has about twenty thousand
# weights, the widget's deepest about thirty thousand), so everything runs on the CPU whatever `device` says:
# for tensors this small, moving them to a GPU likely costs more time than it saves (the course does not time it).

# %%
import inspect

import matplotlib.pyplot as plt
import torch

from course_utils import budget
from course_utils.analysis.seed_spread import spread, verdict
from course_utils.models.basics import activations
from course_utils.models.basics import feedforward
from course_utils.models.basics.activations import ACTIVATIONS

# %% [markdown]
# ## 1. A single unit
#
# The building block of a neural network is a **unit**: a weighted sum of its inputs plus a bias,
#
# $$z = b + \sum_i w_i x_i = \mathbf{w}\cdot\mathbf{x} + b,$$
#
# the unit's **pre-activation**. It is passed through a non-linear **activation function**, for example
# the sigmoid
#
# $$y = \sigma(z) = \frac{1}{1 + e^{-z}}.$$
#
# The slides' unit has weights w = [0.1, 0.4, 0.2], bias b = 0.4 and input x = [0.3, 0.2, 0.9]:
# z = 0.1(0.3) + 0.4(0.2) + 0.2(0.9) + 0.4 = 0.69 and y = σ(0.69) = 0.67.

# %%
# NBVAL_CHECK_OUTPUT
w = torch.tensor([0.1, 0.4, 0.2], dtype=torch.float64)
b = torch.tensor(0.4, dtype=torch.float64)
x = torch.tensor([0.3, 0.2, 0.9], dtype=torch.float64)
z = w @ x + b  # z = w·x + b, a scalar
y = activations.sigmoid(z)  # y = σ(z), our sigmoid from scratch
assert round(z.item(), 2) == 0.69 and round(y.item(), 2) == 0.67  # the slide's numbers
assert torch.isclose(y, torch.sigmoid(z))  # PyTorch's sigmoid agrees
print(f"z = {z.item():.2f}")
print(f"y = σ(z) = {y.item():.2f}   (unrounded {y.item():.4f})")

# %% [markdown]
# ## 2. Four activation functions and their derivatives
#
# | name | g(z) | g'(z) |
# |---|---|---|
# | sigmoid | σ(z) = 1 / (1 + e^(−z)) | σ(z)(1 − σ(z)) |
# | tanh | (e^(2z) − 1) / (e^(2z) + 1) = 2σ(2z) − 1 | yours to write: exercise 1 (section 8) |
# | ReLU | max(0, z) | 1 if z > 0, else 0 (see the slide check below) |
# | GELU | z·Φ(z) = z · ½[1 + erf(z/√2)] | Φ(z) + z·φ(z) |
#
# Φ is the cumulative distribution function of the standard normal distribution and φ its density.
# GELU (used in BERT and GPT) is, in the slides' words, "similar, in some respects, to ReLU", but it
# weights its input by how likely a standard normal variable is to be smaller, where ReLU gates it by its
# sign. `course_utils.models.basics.activations` writes the four functions and their four derivatives with plain tensor
# operations; two of the eight:

# %%
print(inspect.getsource(activations.sigmoid))
print(inspect.getsource(activations.gelu_derivative))

# %% [markdown]
# The sigmoid is written so that no exponential can overflow: for z < 0 it uses the equal form
# e^z / (1 + e^z). Here are all four, with their derivatives.

# %%
z = torch.linspace(-5, 5, 401, dtype=torch.float64)
fig, (ax_g, ax_d) = plt.subplots(1, 2, figsize=(11, 4))
for name, act in ACTIVATIONS.items():
    ax_g.plot(z, act.function(z), label=name)
    ax_d.plot(z, act.derivative(z), label=name)
ax_g.set(title="g(z)", xlabel="z", ylim=(-1.5, 3))
ax_d.set(title="g'(z)", xlabel="z", ylim=(-0.2, 1.3))
ax_g.legend()
plt.show()

# %% [markdown]
# **Scratch against the library.** Each function should agree with PyTorch's own (`torch.sigmoid`,
# `torch.tanh`, `torch.nn.functional.relu` and `.gelu`, the last in its exact erf form), and each
# derivative with what autograd computes from PyTorch's function, on a fine grid in [−8, 8], plus z = 0 exactly
# (the linspace alone misses it by a rounding error) and z = ±700.

# %%
z = torch.cat(
    [
        torch.linspace(-8, 8, 1601, dtype=torch.float64),
        torch.tensor([-700.0, 0.0, 700.0], dtype=torch.float64),  # z = 0 exactly
    ]
)
z.requires_grad_(True)
print(f"{'':8s} {'max |g − torch|':>16s} {'max |g′ − autograd|':>20s}")
for name, act in ACTIVATIONS.items():
    reference = act.library(z)
    (slope,) = torch.autograd.grad(reference.sum(), z)
    value_error = (act.function(z) - reference).abs().max().item()
    slope_error = (act.derivative(z) - slope).abs().max().item()
    print(f"{name:8s} {value_error:16.1e} {slope_error:20.1e}")
    assert value_error < 1e-12 and slope_error < 1e-12

# %% [markdown]
# **The identity tanh(z) = 2σ(2z) − 1** (CSE538 slides): tanh is the sigmoid of 2z, stretched to the range (−1, 1):
# twice as steep and twice as tall, so its slope at 0 is 2 · 2 · 1/4 = 1 (the table of slopes below).
# We check it with PyTorch's tanh against our sigmoid, in float64, on a grid.

# %%
# NBVAL_CHECK_OUTPUT
z = torch.linspace(-10, 10, 2001, dtype=torch.float64)
identity_error = (
    (torch.tanh(z) - (2 * activations.sigmoid(2 * z) - 1)).abs().max().item()
)
assert identity_error < 1e-12
print(f"max |tanh(z) − (2σ(2z) − 1)| over {len(z)} points in [−10, 10] is below 1e-12")

# %%
print(f"measured: {identity_error:.1e} (float64 rounding)")

# %% [markdown]
# **How large can g'(z) be?** This matters in section 6: backpropagation multiplies by g'(z) once per
# layer. The sigmoid's slope is at most 1/4, at z = 0; tanh's at most 1. On a grid of steps of 0.001 that
# contains z = 0, `argmax` gives the first grid point where the largest slope is reached; the last column
# is the slope at z = 0 itself.

# %%
# NBVAL_CHECK_OUTPUT
z = (
    torch.arange(-6000, 6001, dtype=torch.float64) / 1000
)  # steps of 0.001, with z = 0 exactly
zero = torch.zeros(1, dtype=torch.float64)
print(f"{'':8s} {'max g′(z)':>9s} {'first at z':>10s} {'min g′(z)':>9s} {'g′(0)':>6s}")
for name, act in ACTIVATIONS.items():
    slope = act.derivative(z)
    print(
        f"{name:8s} {slope.max().item():9.3f} {z[slope.argmax()].item():10.3f} "
        f"{slope.min().item():9.3f} {act.derivative(zero).item():6.3f}"
    )
assert activations.sigmoid_derivative(z).max().item() == 0.25  # exactly 1/4, at z = 0
assert (
    activations.relu_derivative(zero).item() == 0.0
    and z[activations.relu_derivative(z).argmax()].item() == 0.001
)

# %% [markdown]
# > **Slide check.** The slide (CMU 11-411/611, "Backward differentiation on a two layer network") writes
# > $\frac{d \text{ReLU}(z)}{dz} = 0$ for $z < 0$ and $1$ for $z \geq 0$.
# > In fact ReLU has no derivative at z = 0: its slope is 0 just left of 0 and 1 just right of it. Any value in
# > [0, 1] is a valid choice there (a subgradient). PyTorch's autograd and this course take 0 (the g′(0) column
# > above), so ReLU's largest slope 1 is first reached at the grid point z = 0.001, not at z = 0. The cell below
# > asks autograd. In training the choice likely matters little: a float pre-activation is seldom exactly 0
# > (this notebook does not count how often).

# %%
# NBVAL_CHECK_OUTPUT
z0 = torch.zeros(1, dtype=torch.float64, requires_grad=True)
(autograd_slope,) = torch.autograd.grad(torch.nn.functional.relu(z0).sum(), z0)
print(
    f"autograd: d relu/dz at z = 0 is {autograd_slope.item():g}; "
    f"ours: {activations.relu_derivative(z0.detach()).item():g}"
)

# %% [markdown]
# GELU's slope goes slightly below 0 for negative z and slightly above 1 for positive z: unlike ReLU it is
# neither monotonic nor flat on the left.
#
# ## 3. Why non-linearity matters: XOR
#
# Without an activation function a stack of layers is still one linear map:
# W²(W¹x + b¹) + b² = (W²W¹)x + (W²b¹ + b²). Two random layers, checked:

# %%
generator = torch.Generator().manual_seed(0)
W1, b1 = (
    torch.randn(4, 2, generator=generator),
    torch.randn(4, generator=generator),
)  # (4, 2), (4,)
W2, b2 = (
    torch.randn(1, 4, generator=generator),
    torch.randn(1, generator=generator),
)  # (1, 4), (1,)
x = torch.randn(10, 2, generator=generator)  # (10, 2)
two_layers = (x @ W1.T + b1) @ W2.T + b2  # (10, 1)
one_layer = x @ (W2 @ W1).T + (W2 @ b1 + b2)  # (10, 1)
print("two linear layers equal one:", torch.allclose(two_layers, one_layer, atol=1e-5))

# %% [markdown]
# A linear classifier can only draw a straight line. XOR (exclusive or) is 1 when exactly one input is 1;
# its four points cannot be split by any line. Minsky and Papert made this limitation of the **perceptron** famous:
# a single unit whose output is 1 when z > 0 and 0 otherwise. `best_linear_accuracy` tries every cut along 360
# directions, so it measures what the *best* line achieves (up to that grid), however it is trained; it picks the
# line with the labels of the points it scores:

# %%
# NBVAL_CHECK_OUTPUT
x_xor, y_xor = feedforward.xor_points()
for point, label in zip(x_xor.int().tolist(), y_xor.int().tolist()):
    print(f"x = {point}  →  XOR = {label}")
best = feedforward.best_linear_accuracy(x_xor, y_xor)
print(f"the best straight line gets {round(best * 4)} of the 4 points right")

# %% [markdown]
# **Continuous XOR.** For training we want more points: points uniform in [−1, 1]², labelled 1 where the two
# coordinates differ in sign (the second and fourth quadrants). We train two models with the same loop
# (`course_utils.training.train`, full batch: each step computes the loss on all 400 points, as in notebook 01) and
# the same loss, the binary cross-entropy of a sigmoid output: a linear model and a 2-layer net with 8 ReLU hidden
# units, like the slides' "two-layer network with scalar output". The linear model is **logistic regression**:
# notebook 01's linear model with a sigmoid on its output, read as the probability of label 1 (layer sizes [2, 1]).
# The optimizer is **AdamW**: notebook 01's Adam with *decoupled weight decay*, which also shrinks every weight by a
# fraction 0.01 × the learning rate each step (torch's default), apart from the gradient (Loshchilov and Hutter,
# 2019).
#
# One training run is one draw: another seed (other initial weights) gives another score. So each model is trained
# with three seeds, and a comparison stands only where the gap between the means exceeds the larger of the two ranges
# over seeds (the course's noise rule); otherwise the verdict is "within noise". The **accuracy** below is the
# fraction of points a model classifies right (label 1 where its probability of label 1 is above ½), on 2000 fresh
# points drawn the same way (seed 1) that training never sees, the **test set**; printed as mean (lowest–highest).

# %%
x_train, y_train = feedforward.continuous_xor(400, seed=0)
x_test, y_test = feedforward.continuous_xor(2000, seed=1)
steps = budget(full=600, fast=200)
SEEDS = (0, 1, 2)


def train_seeds(sizes, activation="relu"):
    """One model per seed, trained on XOR; the models and their test accuracies."""
    models = [feedforward.FeedForwardNet(sizes, activation, seed=s) for s in SEEDS]
    for model in models:
        feedforward.fit(model, x_train, y_train, steps=steps, lr=0.05)
    return models, spread(model.accuracy(x_test, y_test) for model in models)


linears, linear_accuracy = train_seeds([2, 1])
nets, net_accuracy = train_seeds([2, 8, 1])
best_line = feedforward.best_linear_accuracy(x_test, y_test)
low, high = torch.cat([m(x_test)[0].sigmoid().detach() for m in linears]).aminmax()
print(f"test accuracy after {steps} steps:")
print(f"  linear model (logistic regression)  {linear_accuracy.format(3)}")
print(f"    its P(label 1) on test points     {low:.3f} to {high:.3f}")
print(f"  best straight line, 360 directions  {best_line:.3f}")
print(f"  2-layer ReLU net                    {net_accuracy.format(3)}")
labels = ("2-layer net", "linear model")
result = verdict(net_accuracy, linear_accuracy, labels, higher_is_better=True)
print("2-layer net against the linear model:", result)
# no line comes close to the 2-layer net
assert linear_accuracy.high <= best_line + 0.01 < net_accuracy.low

# %% [markdown]
# The 2-layer net beats the linear model by far more than the spread over seeds. Logistic regression does even worse
# than the best line found (picked with the test labels), with every seed. On this symmetric data its loss is lowest
# when it hedges (in this run, full mode, its probability of label 1 stays between 0.483 and 0.492 on every test
# point, just below ½) rather than cutting off a corner. Why: flipping both coordinates (x → −x) keeps every label, so
# on such data the weights w and −w give about the same loss. The loss is **convex**: at the midpoint of two weight
# vectors it is at most the mean of their losses, so w = 0 does at least as well as w and −w on average: the minimum
# lies near w = 0, a model that gives every point about the same probability. So it predicts label 0 everywhere, and
# its accuracy is the share of label-0 points. The 2-layer net bends its **decision boundary** (the curve where the
# probability of label 1 is ½, black in the right plot; the left has none) along both axes. The plots show the seed-0
# models.
#
# `model(x, targets)` returns a pair. Its first entry holds the **logits**, the scores before the sigmoid, one per
# point, and σ(logit) is the model's probability of label 1; its second is the loss, `None` when no targets are given.
# `model(points)[0]` takes the logits.

# %%
grid = torch.linspace(-1, 1, 201)
g1, g2 = torch.meshgrid(grid, grid, indexing="xy")
points = torch.stack([g1.reshape(-1), g2.reshape(-1)], dim=1)  # (201·201, 2)
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
for ax, model, title in zip(
    axes, (linears[0], nets[0]), ("linear model", "2-layer ReLU net")
):
    with torch.no_grad():
        probability = torch.sigmoid(model(points)[0]).reshape(g1.shape)  # (201, 201)
    ax.contourf(g1, g2, probability, levels=[0, 0.5, 1], colors=["#c6dbef", "#fdd0a2"])
    ax.contour(g1, g2, probability, levels=[0.5], colors="black")
    ax.scatter(*x_train.T, c=y_train, cmap="coolwarm", s=8)
    ax.set(
        title=f"{title}: {model.accuracy(x_test, y_test):.1%} on the test set",
        xlabel="x1",
        ylabel="x2",
        aspect="equal",
        xticks=[-1, 0, 1],
        yticks=[-1, 0, 1],
    )
plt.show()

# %% [markdown]
# ## 4. The forward pass in multi-layer notation
#
# Superscripts in square brackets number the layers (the input layer is layer 0 and is not counted).
# The slides write the forward pass of an n-layer network as a loop:
#
# $$\text{for } l = 1..n:\quad z^{[l]} = W^{[l]} a^{[l-1]} + b^{[l]}, \qquad a^{[l]} = g^{[l]}(z^{[l]}), \qquad \hat y = a^{[n]}$$
#
# with a^[0] = x. For their two-layer network, g^[1] is ReLU and g^[2] is a sigmoid (one output) or a
# **softmax** (several classes: it turns K scores into K positive probabilities that sum to 1; section 5 writes
# it out). W^[l] has one row per unit of layer l and one column per unit of layer l − 1.
# `feedforward.forward` is that loop:

# %%
print(inspect.getsource(feedforward.forward))

# %% [markdown]
# A tiny example: 3 inputs, 4 ReLU hidden units, 3 output classes with softmax.

# %%
# NBVAL_CHECK_OUTPUT
generator = torch.Generator().manual_seed(0)
sizes = [3, 4, 3]
weights = [
    torch.randn(n_out, n_in, generator=generator, dtype=torch.float64)
    for n_in, n_out in zip(sizes, sizes[1:])
]
biases = [
    torch.randn(n_out, generator=generator, dtype=torch.float64) for n_out in sizes[1:]
]
x = torch.tensor([0.3, 0.2, 0.9], dtype=torch.float64)  # a[0], shape (3,)
trace = feedforward.forward(x, weights, biases, ["relu", "softmax"])
for l in (1, 2):
    print(
        f"layer {l}: W[{l}] {tuple(weights[l - 1].shape)}  "
        f"a[{l - 1}] {tuple(trace.a[l - 1].shape)}  "
        f"b[{l}] {tuple(biases[l - 1].shape)}  →  "
        f"z[{l}] {tuple(trace.z[l - 1].shape)}  a[{l}] {tuple(trace.a[l].shape)}"
    )
print(
    "ŷ = a[2] =",
    ", ".join(f"{p:.3f}" for p in trace.output.tolist()),
    f"  (sum {trace.output.sum().item():.6f})",
)

# %% [markdown]
# The same network with PyTorch's layers (`nn.Linear` computes x Wᵀ + b for a row x, which is W x + b for a
# column x), given the same weights, must give the same output. A batch of inputs is a stack of rows,
# (N, 3) → (N, 3):

# %%
library_net = torch.nn.Sequential(
    torch.nn.Linear(3, 4),
    torch.nn.ReLU(),
    torch.nn.Linear(4, 3),
    torch.nn.Softmax(dim=-1),
).double()
with torch.no_grad():
    for layer, W, b in zip((library_net[0], library_net[2]), weights, biases):
        layer.weight.copy_(W)
        layer.bias.copy_(b)
    batch = torch.randn(5, 3, generator=generator, dtype=torch.float64)  # (5, 3)
    ours, theirs = (
        feedforward.forward(batch, weights, biases, ["relu", "softmax"]).output,
        library_net(batch),
    )
print(
    "batch",
    tuple(batch.shape),
    "→",
    tuple(ours.shape),
    "| ours == nn.Sequential:",
    torch.allclose(ours, theirs),
)
assert torch.allclose(ours, theirs)

# %% [markdown]
# ## 5. Softmax for multiclass outputs
#
# For K classes the output layer has K units and softmax turns their scores (logits) into probabilities:
#
# $$\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{K} e^{z_j}}.$$
#
# > **Slide check.** The slide (CMU 11-411/611, "Reminder: Multiclass Outputs") writes
# > $\text{softmax}(z_i) = \frac{e^{z_i}}{\sum_{j=1}^k e^{z_j}} \quad 1 \leq i \leq D$.
# > In fact i and j run over the same classes: k and D are both the number of classes, here K. The cell below
# > uses K = 3.
#
# Every output is positive and they sum to 1; the largest score gets the largest probability. Adding the
# same constant to every z_i changes nothing, so our `softmax` subtracts max(z) first; then no exponential
# can overflow.

# %%
# NBVAL_CHECK_OUTPUT
logits = torch.tensor([2.0, 1.0, 0.1], dtype=torch.float64)
ours, theirs = feedforward.softmax(logits), torch.softmax(logits, dim=-1)
print("softmax([2.0, 1.0, 0.1]) =", ", ".join(f"{p:.4f}" for p in ours.tolist()))
print(
    "agrees with torch.softmax:",
    torch.allclose(ours, theirs),
    "| sums to 1:",
    torch.isclose(ours.sum(), torch.tensor(1.0, dtype=torch.float64)).item(),
)
large = logits + 1000
naive = torch.exp(large) / torch.exp(large).sum()
print("naive formula at z + 1000:", naive.tolist())
print(
    "stable softmax at z + 1000:",
    ", ".join(f"{p:.4f}" for p in feedforward.softmax(large).tolist()),
)

# %% [markdown]
# ## 6. Vanishing gradients through depth
#
# Backpropagation sends an error signal δ^[l] = ∂L/∂z^[l] from the loss back to the input. Notebook 02 derived one
# step of it for a two-layer net; for any layer the same chain rule gives
#
# $$\delta^{[l-1]} = \big(W^{[l]\top} \delta^{[l]}\big) \odot g'(z^{[l-1]}), \qquad
# \frac{\partial L}{\partial W^{[l]}} = \delta^{[l]} a^{[l-1]\top},$$
#
# where ⊙ is the **elementwise product** (multiply two vectors entry by entry; also called the Hadamard product).
# So at each step back the signal is multiplied by a layer's weights (transposed) and by g'(z) of the layer below.
# With the sigmoid, g'(z) ≤ 1/4 (section 2), so across many layers the signal can shrink geometrically: the
# **vanishing-gradient problem**.
#
# **Initialisation.** How large the weights start decides how large z is, and so where on g' each unit sits.
# A unit sums n_in terms, z = Σᵢ wᵢ aᵢ; with weights drawn independently with mean 0 and variance s², the variance
# of z is n_in · s² · E[a²]. Drawing W from N(0, gain²/n_in) therefore keeps E[z²] = gain² · E[a²]: with gain 1
# (the fan-in rule) each layer's weighted sum z is about the size of the input a it receives; the activation may
# then shrink it (tanh does: the table below). LeCun et al. (1998) gave the rule for a scaled tanh,
# 1.7159 tanh(2z/3), whose slope at 0 is above 1; this notebook uses it for the plain sigmoid and tanh.
# **Glorot initialisation** (Glorot and Bengio 2010; PyTorch's `xavier_normal_`) uses the variance
# 2/(n_in + n_out) instead; for the square 32 × 32 layers below the two are the same. ReLU sets about half its
# outputs to 0, which halves E[a²]; the gain √2 (**He initialisation**, He et al. 2015) doubles the variance back.
# He et al. derived it for ReLU. This notebook uses it for GELU too, where it fits only roughly: GELU does not pass
# its positive inputs on unchanged (z·Φ(z) < z for z > 0), and for z ~ N(0, 1) it keeps less of E[z²] than ReLU:
# the little it passes for z < 0 does not make up for it.
#
# `layer_gradient_norms` builds a stack of `depth` hidden layers of 32 units with these initialisations, topped by
# one sigmoid output unit (weights r of shape (32, 1), gain 1). It runs one batch of random inputs (N(0, 1))
# with random labels 0 or 1 forward and backward (binary cross-entropy; the backward pass written out as above),
# and returns ‖∂L/∂W^[l]‖ for every hidden layer. Layer 1 is next to the input. First the forward pass of that
# stack (seed 0): the root-mean-square size of the layer's input a^[l−1] ("rms in") and of z^[l], and the mean
# slope g'(z^[l]) over the batch and the units.

# %%
depth = 20
LAYERS = (1, 5, 10, 15, 20)
print("layer       " + "".join(f"{layer:>12d}" for layer in LAYERS))
batch = torch.Generator().manual_seed(1)  # the batch the gradient uses (seed + 1)
inputs = torch.randn(64, 32, generator=batch)  # (N, 32)
for name, act in ACTIVATIONS.items():
    weights_stack, _ = feedforward.deep_stack(name, depth)
    zeros = [torch.zeros(32)] * depth
    stack = feedforward.forward(inputs, weights_stack, zeros, [name] * depth)
    rows = {
        "rms in": [stack.a[layer - 1].pow(2).mean().sqrt() for layer in LAYERS],
        "rms z": [stack.z[layer - 1].pow(2).mean().sqrt() for layer in LAYERS],
        "g'(z)": [act.derivative(stack.z[layer - 1]).mean() for layer in LAYERS],
    }
    for label, values in rows.items():
        digits = 3 if label == "g'(z)" else 2
        first = name if label == "rms in" else ""
        print(f"{first:8s} {label:6s}" + "".join(f"{v:12.{digits}f}" for v in values))

# %% [markdown]
# With gain 1 the sigmoid's pre-activations stay near 0 (rms 0.42 to 0.59 at layers 5, 10, 15 and 20), where its
# slope is close to its maximum 1/4. tanh's shrink from rms 1.05 at layer 1 to 0.22–0.24 at layers 10, 15 and 20,
# because |tanh(z)| < |z|: there its mean slope is about 0.95. ReLU's active units all have slope 1, and about half are
# active (mean slope about 0.5). Now the gradients, for the same stack:

# %%
norms = {name: feedforward.layer_gradient_norms(name, depth) for name in ACTIVATIONS}
print("layer " + "".join(f"{name:>10s}" for name in norms))
for layer in LAYERS:
    print(
        f"{layer:5d} " + "".join(f"{n[layer - 1].item():10.1e}" for n in norms.values())
    )

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for name, n in norms.items():
    ax.semilogy(range(1, depth + 1), n, "o-", markersize=3, label=name)
ax.set(
    xlabel="layer l (1 = next to the input)",
    ylabel="‖∂L/∂W[l]‖",
    title=f"Gradient norm per layer, {depth} layers",
    xticks=[1, *range(5, depth + 1, 5)],
)
ax.legend()
plt.show()

# %% [markdown]
# What the numbers say: the ratio between the first and the last layer's gradient, and the average factor
# per layer (the (depth − 1)-th root of that ratio), next to the largest slope of each activation. One stack is one
# draw of weights and inputs, so the ratio is measured for three seeds, and the factors per layer are compared with
# the noise rule of section 3.

# %%
ratios = {}
for name in ACTIVATIONS:
    norms = [feedforward.layer_gradient_norms(name, depth, seed=s) for s in SEEDS]
    ratios[name] = [(n[0] / n[-1]).item() for n in norms]
per_layer = {
    name: spread(r ** (1 / (depth - 1)) for r in rs) for name, rs in ratios.items()
}
grid = torch.linspace(-6, 6, 12001, dtype=torch.float64)
print(f"{'':8s} {'layer 1 / layer ' + str(depth):26s}   {'per layer':28s}   max g'(z)")
for name, rs in ratios.items():
    peak = ACTIVATIONS[name].derivative(grid).max().item()
    print(
        f"{name:8s} "
        + " ".join(f"{r:8.1e}" for r in rs)
        + f"   {per_layer[name].format(3):28s}   {peak:.3f}"
    )
for other in ("sigmoid", "tanh"):
    result = verdict(
        per_layer["relu"], per_layer[other], ("ReLU", other), higher_is_better=True
    )
    print(f"factor per layer, ReLU against {other + ':':8s}", result)
assert max(ratios["sigmoid"]) < 1e-6  # sigmoid vanishes
assert 0.1 < min(ratios["relu"]) <= max(ratios["relu"]) < 10
# close to max σ' = 1/4 per layer
assert 0.2 < per_layer["sigmoid"].low <= per_layer["sigmoid"].high < 0.3

# %% [markdown]
# - **Sigmoid.** The first layer gets a gradient between 4 × 10⁻¹³ and 7 × 10⁻¹² times the last layer's, over the
#   three seeds. The factor per layer is close to the maximum slope 1/4: the weights keep the signal's size on
#   average, the pre-activations are small, so the mean σ'(z) is near 1/4 (0.23 to 0.24 at layers 5, 10, 15 and 20
#   in the table above, 0.20 at layer 1), and 19 such factors multiply. One seed's factor, 0.259, is above 1/4:
#   the weights keep the size only on average, and layer 1's input (rms 1.03, seed 0) is about twice that of layer 20
#   (0.51), a lift the tanh bullet below explains.
# - **ReLU.** The ratio is not the same from seed to seed: between 0.27 and 1.9, so the factor per layer lies
#   between about 0.93 and 1.04. Its slope is exactly 1 for every active unit, and He's gain √2 makes up for the
#   half that are off; what remains is a drift of the gradient's size that changes with the seed, not a steady
#   shrinking. Over 20 layers the first layer's gradient stays within a factor of 4 of the last layer's. Its
#   factor per layer is far above the sigmoid's, and within noise of tanh's.
# - **tanh** does not vanish here either: its ratio is above 1 with every seed (1.1 to 2.0). At layers 10,
#   15 and 20 its pre-activations are small (rms 0.22 to 0.24) and its slope there is about 0.95, so δ barely shrinks.
#   And ∂L/∂W^[1] = δ^[1] a^[0]ᵀ multiplies by the raw input a^[0] = x, whose rms (1.03, the row "rms in"
#   above) is four to five times that of the inputs of layers 10, 15 and 20 (0.22 to 0.23). That lifts layer 1 above
#   layer 20 and makes the column uneven. tanh's slope falls towards 0 for large |z| (section 2's plot), so it
#   keeps the signal only while its pre-activations stay small, as gain 1 keeps them here.
# - **GELU** (He's gain, like ReLU) does not vanish either: its ratio runs from 0.80 to 3.8 over the seeds and
#   its factor per layer from 0.988 to 1.073. Its slope can exceed 1 (up to 1.129), but the seeds' range holds
#   factors below 1 as well as above, so no steady growth is measured.
#
# This shrinking of the gradient with depth is the vanishing-gradient problem (Glorot and Bengio 2010 follow
# activations and gradients through deep sigmoid and tanh networks whose weights start with variance 1/(3 n_in),
# a third of ours); the slides meet it again in recurrent networks, where the "depth" is the length of the sequence.
#
# ### Does a vanished gradient stop learning? A short training run
#
# The gradient norms say how much each layer *would* change; a training run shows what happens. We train nets with
# 10 hidden layers of 16 units on the continuous XOR of section 3, with sigmoid, tanh and ReLU, three seeds each,
# for 400 steps of plain full-batch gradient descent (`torch.optim.SGD`, α = 0.5). Not Adam: Adam rescales every
# coordinate to steps of about α for all but the tiniest gradients (below its ε, steps shrink) (notebook 01), which
# would hide the very thing we measure. For each run: the test accuracy, the gradient norm of layer 1 at the start, and
# how far layers 1 and 10 moved, ‖W_after − W_before‖ / ‖W_before‖. This takes a few seconds.

# %%
DEEP = ("sigmoid", "tanh", "relu")
data = (x_train, y_train), (x_test, y_test)
runs = {
    name: [feedforward.train_deep(name, *data, seed=seed) for seed in SEEDS]
    for name in DEEP
}
deep_accuracy = {name: spread(run.accuracy for run in rs) for name, rs in runs.items()}


def value_range(values) -> str:
    """``low–high`` of the seeds' values, in scientific notation."""
    values = spread(values)
    return f"{values.low:.1e}–{values.high:.1e}"


print(f"{'':8s} {'test accuracy':>28s}")
for name in DEEP:
    print(f"{name:8s} {deep_accuracy[name].format(3):>28s}")
print(f"{'':8s} {'‖∂L/∂W[1]‖ at start':>22s}", end="")
print(f" {'layer 1 moved':>18s} {'layer 10 moved':>18s}")
for name, rs in runs.items():
    gradient = value_range(r.first_gradients[0] for r in rs)
    moved = [value_range(r.moved[layer] for r in rs) for layer in (0, -2)]
    print(f"{name:8s} {gradient:>22s} {moved[0]:>18s} {moved[1]:>18s}")
relu, tanh, labels = deep_accuracy["relu"], deep_accuracy["tanh"], ("ReLU", "tanh")
print("ReLU against tanh:", verdict(relu, tanh, labels, higher_is_better=True))
share = max(y_test.mean(), 1 - y_test.mean()).item()
print(f"share of the larger class in the test set: {share:.3f}")

# %%
# NBVAL_CHECK_OUTPUT
for name in ("tanh", "relu"):
    print(
        f"{name} against sigmoid:",
        verdict(
            deep_accuracy[name],
            deep_accuracy["sigmoid"],
            (name, "sigmoid"),
            higher_is_better=True,
        ),
    )
assert all(
    run.moved[0] < 1e-6 for run in runs["sigmoid"]
)  # the sigmoid net's first layer does not move

# %% [markdown]
# The sigmoid net does not learn: its test accuracy equals the share of the larger class, which is what predicting
# that class everywhere gives, the same with every seed. Its layer 1 starts with a gradient whose norm is a few times
# 10⁻⁹, over 32 weights; α = 0.5 times that is far less than half the gap between neighbouring numbers near 0.5 in
# **float32**, PyTorch's default number format (24 significant bits: near 0.5 the gap is 2⁻²⁴). Adding less
# than half that gap to a weight of size about 0.5 leaves it unchanged: every update of layer 1 is rounded away and
# its weights do not move at all (0 in the table). Even layer 10 moves by at most about 1%. The tanh and ReLU nets,
# whose layer-1 gradients start at least 10⁵ times larger, learn XOR and move layer 1 by about half its size or more.
# Between tanh and ReLU the difference is within noise. So for this net and this optimizer the layer-1 gradient at the
# start told which nets would learn. The table measures layers 1 and 10 only, so it does not say which of the sigmoid
# net's layers hold it back: it shows only that both printed layers barely move.
#
# ## 7. Widget: activation, derivative and gradient per layer
#
# Choose an activation and a depth. Left: g(z) (solid) and g'(z) (dashed, its maximum dotted). Right: the
# gradient norm of every layer of a net that deep, for all four activations, the chosen one bold. The line
# above the plot gives the first/last ratio and the factor per layer. For projecting, run
# `from course_utils.lecture import lecture_mode; lecture_mode()` first.

# %%
from course_utils.widgets.activation_demo import ActivationDemo

demo = ActivationDemo(activation="sigmoid", depth=20)
demo.box

# %% [markdown]
# Things to try: sigmoid from depth 2 to 30 (each extra layer costs about a factor 4); tanh at the same
# depths; ReLU against GELU.
#
# ## 8. Exercises
#
# Each exercise ships unfinished, so "Restart and run all" still works; fill it in and run its check.
#
# **Exercise 1 (tanh's derivative).** Write tanh'(z) using `activations.tanh`. The check compares it with
# autograd on a grid.

# %% tags=["exercise"]
from course_utils.exercises.activations import (
    check_sigmoid_depth,
    check_tanh_derivative,
    check_xor_network,
)


def my_tanh_derivative(z):
    """tanh'(z) for a tensor z."""
    return None  # your formula here


_ = check_tanh_derivative(my_tanh_derivative)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# tanh = (e^{2z} − 1)/(e^{2z} + 1); the quotient rule gives 1 − tanh(z)²:
#
# ```python
# def my_tanh_derivative(z):
#     return 1 - activations.tanh(z) ** 2
# ```
# </details>

# %% [markdown]
# **Exercise 2 (XOR by hand).** Choose weights for a network with two ReLU hidden units and one linear output,
# ŷ = W² ReLU(W¹x + b¹) + b², such that ŷ > 0.5 exactly for the XOR inputs whose label is 1.
# Shapes: W¹ (2, 2), b¹ (2,), W² (1, 2), b² (1,). Hint: let one hidden unit count the 1s in the input and the
# other fire only when both inputs are 1.

# %% tags=["exercise"]
W1 = None  # e.g. [[..., ...], [..., ...]]
b1 = None
W2 = None
b2 = None
_ = check_xor_network(W1, b1, W2, b2)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# h₁ = ReLU(x₁ + x₂) counts the 1s, h₂ = ReLU(x₁ + x₂ − 1) is 1 only for (1, 1), and ŷ = h₁ − 2h₂ gives
# 0, 1, 1, 0:
#
# ```python
# W1 = [[1, 1], [1, 1]]
# b1 = [0, -1]
# W2 = [[1, -2]]
# b2 = [0]
# ```
# </details>

# %% [markdown]
# **Exercise 3 (how deep before it vanishes?).** Each sigmoid layer multiplies the backward signal by
# σ'(z) ≤ 1/4. Ignoring the weights, what is the smallest number of layers L for which (1/4)^L is below
# one millionth (10⁻⁶)?

# %% tags=["exercise"]
my_depth = None  # a whole number
_ = check_sigmoid_depth(my_depth)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# (1/4)^L < 10⁻⁶ means 4^L > 10⁶, L > 6 / log₁₀ 4 ≈ 9.97, so ten layers (4¹⁰ = 1 048 576):
#
# ```python
# my_depth = 10
# ```
# </details>

# %% [markdown]
# ## Summary
#
# - A unit computes z = w·x + b and y = g(z); the slides' unit gives z = 0.69 and σ(z) = 0.67.
# - Sigmoid, tanh, ReLU and GELU, and their derivatives, are a few tensor operations each; written from
#   scratch they agree with PyTorch to rounding error, and tanh(z) = 2σ(2z) − 1.
# - Without non-linear activations, layers collapse into one linear map, and no line separates XOR; a
#   2-layer ReLU net learns it (in full mode, test accuracy 0.98 or more with each of three seeds, against 0.676 for
#   the best line, picked with the test labels themselves).
# - The forward pass is the loop `z^[l] = W^[l] a^[l−1] + b^[l]`, `a^[l] = g^[l](z^[l])`; `W^[l]` is (n_l, n_{l−1}).
# - Softmax turns K scores into probabilities; subtracting the maximum first keeps it finite.
# - Backprop multiplies by g'(z) at every layer. The sigmoid's slope is at most 1/4, so in a stack of 20 hidden
#   layers with gain 1 the first layer's gradient is 4 × 10⁻¹³ to 7 × 10⁻¹² of the last layer's (three seeds). With
#   ReLU and GELU (He's gain √2) and tanh (gain 1) it stays within a factor of 4 of the last layer's, over three
#   seeds.
# - In a short training run of nets with 10 hidden layers and plain gradient descent, the sigmoid net's first layer
#   did not move and the net did not learn XOR; the tanh and ReLU nets did (three seeds each, gaps well beyond the
#   spread).
#
# ## References
#
# - D. E. Rumelhart, G. E. Hinton, R. J. Williams (1986). *Learning representations by back-propagating errors.*
#   Nature 323, 533–536. (Cited by the slides.)
# - D. Hendrycks, K. Gimpel (2016). *Gaussian Error Linear Units (GELUs).* arXiv:1606.08415. (The GELU formula
#   on the slides.)
# - D. Jurafsky, J. H. Martin. *Speech and Language Processing*, 3rd ed. draft, chapter 7 (Neural networks):
#   units, XOR, feed-forward networks and the multi-layer notation the slides use.
# - M. Minsky, S. Papert (1969). *Perceptrons.* MIT Press. (XOR and the limits of single-layer perceptrons.)
# - Y. LeCun, L. Bottou, G. B. Orr, K.-R. Müller (1998). *Efficient BackProp.* In *Neural Networks: Tricks of the
#   Trade*, Springer. (Weights with variance 1/n_in: the fan-in rule.)
# - I. Loshchilov, F. Hutter (2019). *Decoupled weight decay regularization.* ICLR. (AdamW.)
# - X. Glorot, Y. Bengio (2010). *Understanding the difficulty of training deep feedforward neural networks.*
#   AISTATS. (Vanishing gradients with sigmoid units; the "Glorot" initialisation.)
# - V. Nair, G. E. Hinton (2010). *Rectified linear units improve restricted Boltzmann machines.* ICML. (ReLU.)
# - K. He, X. Zhang, S. Ren, J. Sun (2015). *Delving deep into rectifiers.* ICCV. (The gain √2 for ReLU layers.)
