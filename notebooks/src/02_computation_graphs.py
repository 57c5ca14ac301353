# %% [markdown]
# # 02 · Computation graphs and backpropagation
#
# Accompanies the computation-graph and backward-differentiation slides of **Neural Language Models**
# (CMU 11-411/611): the example L(a, b, c) = c(a + 2b), the chain rule, and backward differentiation on a
# two-layer network. It also covers "Back Propagation: Linear Regression as DAG" from **Deep Learning and
# Masked Language Modelling** (CSE538).
#
# ## Learning objectives
#
# After this notebook you can:
# - split an expression into a computation graph and run its forward pass;
# - write the local derivative of every node and combine them with the chain rule by hand;
# - explain what `backward()` does: visit the nodes in reverse topological order, multiply, add;
# - check a gradient with finite differences, and say where the check fails (a kink such as ReLU's);
# - show that a small engine you can read in minutes and PyTorch's autograd compute the same gradients.

# %%
from course_utils import setup_notebook

device = setup_notebook(seed=0)

# %%
import inspect
import math
import random
import sys

import matplotlib.pyplot as plt
import torch

from course_utils import budget
from course_utils.models.basics.autograd import Value
from course_utils.models.basics.gradcheck import gradcheck, numerical_gradient
from course_utils.widgets.graph_drawing import draw_graph, to_dot

# %% [markdown]
# ## 1. A computation graph: L(a, b, c) = c(a + 2b)
#
# A computation graph writes an expression as a sequence of small steps, each one node of the graph.
# The slides split L(a, b, c) = c(a + 2b) into
#
# $$d = 2b, \qquad e = a + d, \qquad L = c \cdot e,$$
#
# and evaluate it at a = 3, b = 1, c = −2. Running the steps from the inputs to L is the **forward pass**.

# %%
# NBVAL_CHECK_OUTPUT
a, b, c = 3.0, 1.0, -2.0
d = 2 * b
e = a + d
L = c * e
print(f"d = 2b = {d:g}    e = a + d = {e:g}    L = c·e = {L:g}")
assert (d, e, L) == (2, 5, -10)  # the slide's numbers

# %% [markdown]
# ## 2. Local derivatives and the chain rule, by hand
#
# To train a network we need the derivative of the loss with respect to every weight. In the graph the
# weights are inputs, like a, b and c here.
# Each node only has to know the derivatives of its own output with respect to its own inputs,
# its **local derivatives**:
#
# | node | local derivatives |
# |---|---|
# | $L = c\,e$ | $\partial L/\partial e = c$, $\partial L/\partial c = e$ |
# | $e = a + d$ | $\partial e/\partial a = 1$, $\partial e/\partial d = 1$ |
# | $d = 2b$ | $\partial d/\partial b = 2$ |
#
# The **chain rule** multiplies them along the path from L back to each input:
#
# $$\frac{\partial L}{\partial a} = \frac{\partial L}{\partial e}\frac{\partial e}{\partial a}, \qquad
# \frac{\partial L}{\partial b} = \frac{\partial L}{\partial e}\frac{\partial e}{\partial d}\frac{\partial d}{\partial b}, \qquad
# \frac{\partial L}{\partial c} = e.$$

# %%
# NBVAL_CHECK_OUTPUT
dL_de, dL_dc = c, e  # L = c·e
de_da, de_dd = 1.0, 1.0  # e = a + d
dd_db = 2.0  # d = 2b
by_hand = {"a": dL_de * de_da, "b": dL_de * de_dd * dd_db, "c": dL_dc}
print("by hand:    " + "   ".join(f"∂L/∂{k} = {v:g}" for k, v in by_hand.items()))
assert by_hand == {"a": -2, "b": -4, "c": 5}  # the slide's numbers

# %% [markdown]
# What does ∂L/∂a = −2 mean? Nudge a by a small h and L moves by about −2h:


# %%
# NBVAL_CHECK_OUTPUT
def L_of(a, b, c):
    return c * (a + 2 * b)


h = 0.01
print(
    f"L(a + h) − L(a) = {L_of(a + h, b, c) - L_of(a, b, c):.4f}    "
    f"h · ∂L/∂a = {h * by_hand['a']:.4f}"
)

# %% [markdown]
# ## 3. Backpropagation as an algorithm: a tiny autograd engine
#
# Doing this by hand does not scale to a network with millions of weights, but the recipe is mechanical.
# Running the chain rule backwards through a graph, from the loss to every input, is **backpropagation**
# (backprop; to the slides, a special case of backward differentiation).
# An autograd engine (automatic differentiation) does it for us: it records each operation as it runs, then
# applies the chain rule to the record. Its derivatives are exact up to rounding, not approximated like
# finite differences.
# `course_utils.models.basics.autograd` implements it for scalars in one short module. A `Value` holds a number
# (`data`), its gradient (`grad`), the `parents` it was computed from, and the local derivative with respect to
# each parent, recorded by the operation that made it. Almost every operation goes through one of two helpers
# (x ** p and negation build their node directly).
# `_unary(op, data, local)` makes a node with one parent (self), the value `data` and the local derivative
# `local`. `_binary(other, op, data, d_self, d_other)` makes a node with two parents; `data`, `d_self` and
# `d_other` are functions of the parents' numbers x = `self.data` and y = `other.data`: the node's value and
# its two local derivatives. (A plain number as `other` is a constant: the node gets one parent.)

# %%
print(inspect.getsource(Value._unary))
print(inspect.getsource(Value._binary))

# %% [markdown]
# With them, multiplication, whose local derivatives are ∂(xy)/∂x = y and ∂(xy)/∂y = x, and the **sigmoid**
# σ(x) = 1/(1 + e⁻ˣ), which maps any number into (0, 1) and whose local derivative is σ(x)(1 − σ(x)), need one
# helper call each:

# %%
print(inspect.getsource(Value.__mul__))
print(inspect.getsource(Value.sigmoid))

# %% [markdown]
# `backward()` is the whole of backpropagation. It sorts the graph into a **topological order**, one in which
# every node comes after its parents, sets L's own gradient to ∂L/∂L = 1, then walks that order backwards.
# By the time it reaches a node, every node that uses it has already passed its share back, so the node's
# gradient is complete and can be passed on to *its* parents:
#
# $$\text{parent.grad} \mathrel{+}= \text{local derivative} \times \text{node.grad}.$$
#
# The `+=` matters: a value used twice receives a gradient along both paths.

# %%
print(inspect.getsource(Value.backward))

# %% [markdown]
# The lecture's example with the engine. `named` sets the label that the printout and the drawing show;
# it changes no number.

# %%
# NBVAL_CHECK_OUTPUT
a, b, c = Value(3.0, "a"), Value(1.0, "b"), Value(-2.0, "c")
d = (2 * b).named("d")
e = (a + d).named("e")
L = (c * e).named("L")
L.backward()
for node in (a, b, c, d, e, L):
    print(node)
engine = {"a": a.grad, "b": b.grad, "c": c.grad}
assert engine == by_hand
print("the engine agrees with the chain rule by hand")

# %% [markdown]
# The graph, drawn with matplotlib alone (no Graphviz). It runs from left to right and ends at L;
# each input sits one column before the node that uses it (b, then a, then c). Each box shows how the node
# was computed, its value, and after ∇ its gradient ∂L/∂node; each arrow carries its operation (`2*`
# multiplies by the constant 2).

# %%
draw_graph(L)
plt.show()

# %% [markdown]
# If you have Graphviz, `to_dot` gives the same graph in its DOT language (the text needs no `dot` binary):

# %%
print(to_dot(L))

# %% [markdown]
# ## 4. The same with PyTorch autograd
#
# PyTorch builds the same graph while it computes the forward pass: every operation on a tensor made with
# `requires_grad=True` records, in its result's `grad_fn`, how to pass the gradient back. (The tensor made
# with `requires_grad=True` itself has no `grad_fn`.) `backward()` runs the same algorithm, with three
# differences. Our engine resets every gradient first; PyTorch adds to `.grad`, so a training loop zeroes it
# (notebook 01). PyTorch keeps `.grad` only on the tensors made with `requires_grad=True` (section 6 asks for
# z⁽²⁾'s with `retain_grad()`). And it frees the graph after `backward()`: a second call needs a new forward pass.
# We use float64, as everywhere in this notebook where gradients are compared.

# %%
# NBVAL_CHECK_OUTPUT
a_t, b_t, c_t = (
    torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (3.0, 1.0, -2.0)
)
L_t = c_t * (a_t + 2 * b_t)
L_t.backward()
torch_grads = {"a": a_t.grad.item(), "b": b_t.grad.item(), "c": c_t.grad.item()}
print(f"L = {L_t.item():g}")
print("PyTorch:    " + "   ".join(f"∂L/∂{k} = {v:g}" for k, v in torch_grads.items()))
assert torch_grads == engine == by_hand
print("by hand, our engine and PyTorch agree")

# %% [markdown]
# ## 5. The linear-regression DAG: L = (y − βx)²
#
# A computation graph is a **DAG**, a directed acyclic graph: each edge points one way, from an operand to
# the node computed from it, and no path returns to where it started. Deep-learning frameworks represent a model
# as such a graph. For linear regression on one example the CSE538 slide writes L = (y − βx)². We split it into
# three nodes: z = βx, r = y − z, L = r². The slide's PyTorch sketch also puts a `relu` (negative values set
# to 0) between z and the loss, which we leave out (notebook 01's slide check says why). Differentiating by hand:
#
# $$\frac{\partial L}{\partial \beta} = 2(y - \beta x)\cdot(-x) = 2x(\beta x - y).$$
#
# The slide has no numbers; we take x = 2, y = 3, β = 0.5.

# %%
x, y, beta = Value(2.0, "x"), Value(3.0, "y"), Value(0.5, "β")
z = (beta * x).named("z")
r = (y - z).named("r")
loss = (r**2).named("L")
loss.backward()
draw_graph(loss)
plt.show()

# %% [markdown]
# The engine's ∂L/∂β, from the graph above, against the formula, against PyTorch, and against finite differences.
# The function `regression_loss` serves PyTorch and both finite-difference checks: the engine's check gives it
# `Value`s, PyTorch's gives it tensors.


# %%
# NBVAL_CHECK_OUTPUT
def regression_loss(beta):
    return (3.0 - beta * 2.0) ** 2  # (y − βx)² at x = 2, y = 3


analytic = 2 * x.data * (beta.data * x.data - y.data)
beta_t = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
regression_loss(beta_t).backward()
print(
    f"L = {loss.data:g}   ∂L/∂β: engine {beta.grad:g}   2x(βx − y) {analytic:g}   "
    f"PyTorch {beta_t.grad.item():g}"
)
assert beta.grad == analytic == beta_t.grad.item()
for backend in ("engine", "torch"):
    check = gradcheck(regression_loss, [0.5], backend=backend)
    print(f"finite differences vs {backend} backprop: passed = {check.passed()}")
    assert check.passed()

# %% [markdown]
# With a data set the loss is a sum, L = Σᵢ (yᵢ − βxᵢ)², and β feeds every term. Its gradient is the sum
# of the gradients along all those paths, which is exactly what `+=` in `backward()` accumulates:

# %%
# NBVAL_CHECK_OUTPUT
xs, ys = [1.0, 2.0, 3.0], [2.0, 4.5, 5.5]
beta = Value(0.5, "β")
total = sum((y_i - beta * x_i) ** 2 for x_i, y_i in zip(xs, ys))
total.backward()
analytic = sum(2 * x_i * (0.5 * x_i - y_i) for x_i, y_i in zip(xs, ys))
print(f"∂L/∂β: engine {beta.grad:g}   Σ 2xᵢ(βxᵢ − yᵢ) {analytic:g}")
assert math.isclose(beta.grad, analytic, rel_tol=1e-12)

# %% [markdown]
# ## 6. Backward differentiation on a two-layer network
#
# The slides' network: a hidden layer of **ReLU** units (the rectified linear unit, ReLU(z) = max(0, z), which
# passes positive numbers and sets negative ones to 0), a sigmoid output, and the **cross-entropy** loss: the
# negative log of the probability the network gives the true label y (−log a if y = 1, −log(1 − a) if y = 0).
# Each of the sums z⁽¹⁾ⱼ and z⁽²⁾ that enter the ReLU and the sigmoid is a **pre-activation**.
#
# $$z^{[1]} = W^{[1]}x + b^{[1]},\quad a^{[1]} = \mathrm{ReLU}(z^{[1]}),\quad
# z^{[2]} = W^{[2]}a^{[1]} + b^{[2]},\quad a^{[2]} = \sigma(z^{[2]}) = \hat y,$$
#
# $$L(a, y) = -\big(y\log a + (1 - y)\log(1 - a)\big)\qquad (a = a^{[2]},\ z = z^{[2]}).$$
#
# The backward pass starts with ∂L/∂z = ∂L/∂a · ∂a/∂z:
#
# $$\frac{\partial L}{\partial a} = -\Big(\frac{y}{a} + \frac{y - 1}{1 - a}\Big),\qquad
# \frac{\partial a}{\partial z} = a(1 - a),\qquad
# \frac{\partial L}{\partial z} = -\Big(\frac{y}{a} + \frac{y - 1}{1 - a}\Big)a(1 - a) = a - y.$$
#
# The function below is the forward pass, written once. It runs on our `Value`s and, unchanged, on
# PyTorch tensors (both have `.relu()`, `.sigmoid()` and `.log()`). Its arithmetic is on scalars; a vector is
# a list of them or a tensor, which iterates as 0-d tensors (a 2-d one as its rows). The comments `(H,)` give
# a vector's length (H hidden units), `()` a scalar. `sum(terms, b)` adds the terms to the start value b, so the
# first line computes, for every hidden unit j, $z^{[1]}_j = b^{[1]}_j + \sum_i W^{[1]}_{ji} x_i$.


# %%
def two_layer_loss(x, W1, b1, W2, b2, y):
    """The slides' network, forward on one example; returns z⁽²⁾, a⁽²⁾ and the loss."""
    z1 = [sum((w * x_i for w, x_i in zip(row, x)), b) for row, b in zip(W1, b1)]  # (H,)
    a1 = [z.relu() for z in z1]  # (H,)
    z2 = sum((w * h for w, h in zip(W2, a1)), b2)  # ()
    a2 = z2.sigmoid()  # ()
    loss = -(y * a2.log() + (1 - y) * (1 - a2).log())  # ()
    return z2, a2, loss


# Two inputs, three hidden units; the second hidden unit is inactive (z < 0) for this x.
X = [0.5, -1.0]
W1_init = [[0.3, -0.4], [0.2, 0.6], [-0.5, -0.4]]
b1_init = [0.1, -0.2, 0.05]
W2_init = [0.7, -0.3, 0.5]
b2_init = 0.2


def flat(W1, b1, W2, b2):
    """All 13 parameters in one list (W⁽¹⁾ row by row, b⁽¹⁾, W⁽²⁾, b⁽²⁾)."""
    return [w for row in W1 for w in row] + list(b1) + list(W2) + [b2]


def unflat(p):
    """The inverse of ``flat``."""
    return [p[0:2], p[2:4], p[4:6]], p[6:9], p[9:12], p[12]


# %% [markdown]
# Backprop with the engine, for both labels: the gradient at z⁽²⁾ is a − y.

# %%
# NBVAL_CHECK_OUTPUT
for label in (1.0, 0.0):
    params = [Value(p) for p in flat(W1_init, b1_init, W2_init, b2_init)]
    z2, a2, loss = two_layer_loss(X, *unflat(params), label)
    loss.backward()
    print(
        f"y = {label:g}: z = {z2.data:.6f}  a = {a2.data:.6f}  L = {loss.data:.6f}  "
        f"∂L/∂z = {z2.grad:.6f}  a − y = {a2.data - label:.6f}"
    )
    assert math.isclose(z2.grad, a2.data - label, rel_tol=1e-12, abs_tol=1e-15)

# %% [markdown]
# And numerically: treat L as a function of z alone, L(z) = −(y log σ(z) + (1 − y) log(1 − σ(z))),
# and take a central difference at the network's z.


# %%
# NBVAL_CHECK_OUTPUT
def loss_of_z(z, y):
    a = 1 / (1 + math.exp(-z))
    return -(y * math.log(a) + (1 - y) * math.log(1 - a))


for label in (1.0, 0.0):
    params = [Value(p) for p in flat(W1_init, b1_init, W2_init, b2_init)]
    z2, a2, _ = two_layer_loss(X, *unflat(params), label)
    numeric = numerical_gradient(lambda p: loss_of_z(p[0], label), [z2.data])[0]
    print(
        f"y = {label:g}: finite difference {numeric:.6f}   "
        f"a − y = {a2.data - label:.6f}"
    )
    assert math.isclose(numeric, a2.data - label, rel_tol=1e-7)

# %% [markdown]
# The same network in PyTorch, with every parameter a float64 tensor. `retain_grad()` asks PyTorch to keep
# the gradient of the intermediate z⁽²⁾ (by default it keeps only the gradients of the tensors made with
# `requires_grad=True`, not those of results computed from them). Then all 13 parameter
# gradients are compared with the engine's.

# %%
# NBVAL_CHECK_OUTPUT
label = 1.0
params = [Value(p) for p in flat(W1_init, b1_init, W2_init, b2_init)]
_, _, loss = two_layer_loss(X, *unflat(params), label)
loss.backward()

params_t = [
    torch.tensor(p, dtype=torch.float64, requires_grad=True)
    for p in flat(W1_init, b1_init, W2_init, b2_init)
]
z2_t, a2_t, loss_t = two_layer_loss(
    torch.tensor(X, dtype=torch.float64), *unflat(params_t), label
)
z2_t.retain_grad()
loss_t.backward()
print(
    f"PyTorch: L = {loss_t.item():.6f}  ∂L/∂z = {z2_t.grad.item():.6f}  "
    f"a − y = {a2_t.item() - label:.6f}"
)
largest = max(abs(p.grad - p_t.grad.item()) for p, p_t in zip(params, params_t))
print(f"13 parameter gradients, engine vs PyTorch: all within 1e-12: {largest < 1e-12}")
assert largest < 1e-12
dW1 = unflat([p.grad for p in params])[0]
print("∂L/∂W⁽¹⁾ (engine):", [[round(g, 6) for g in row] for row in dW1])
assert list(dW1[1]) == [0.0, 0.0]  # the inactive hidden unit passes no gradient back

# %% [markdown]
# The row of W⁽¹⁾ that feeds the inactive hidden unit has zero gradient: ReLU's derivative is 0 there, so no
# blame flows back through it.
#
# ### The hidden layer by hand
#
# The engine's ∂L/∂W⁽¹⁾ can be derived with the same chain rule, one node further back at a time. Write
# δ⁽²⁾ = ∂L/∂z⁽²⁾ = a − y (derived above) and δ⁽¹⁾ = ∂L/∂z⁽¹⁾, a vector with one entry per hidden unit.
#
# - z⁽²⁾ = Σⱼ W⁽²⁾ⱼ a⁽¹⁾ⱼ + b⁽²⁾, so ∂z⁽²⁾/∂a⁽¹⁾ⱼ = W⁽²⁾ⱼ and ∂L/∂a⁽¹⁾ⱼ = W⁽²⁾ⱼ (a − y).
# - a⁽¹⁾ⱼ = ReLU(z⁽¹⁾ⱼ), so δ⁽¹⁾ⱼ = W⁽²⁾ⱼ (a − y) · ReLU'(z⁽¹⁾ⱼ), with ReLU'(z) = 1 for z > 0 and 0 otherwise.
#   The slide writes 1 for z ≥ 0. The two differ only at z = 0, where ReLU has no derivative and either value
#   is a convention; the engine and PyTorch take 0. No z⁽¹⁾ here is 0.
# - z⁽¹⁾ⱼ = Σᵢ W⁽¹⁾ⱼᵢ xᵢ + b⁽¹⁾ⱼ, so ∂L/∂W⁽¹⁾ⱼᵢ = δ⁽¹⁾ⱼ xᵢ and ∂L/∂b⁽¹⁾ⱼ = δ⁽¹⁾ⱼ.
#
# In vector form, with ⊙ the **elementwise product** (multiply two vectors entry by entry; also called the
# Hadamard product):
#
# $$\delta^{[1]} = W^{[2]\top}(a - y) \odot \mathrm{ReLU}'(z^{[1]}), \qquad
# \frac{\partial L}{\partial W^{[1]}} = \delta^{[1]} x^\top, \qquad \frac{\partial L}{\partial b^{[1]}} = \delta^{[1]} .$$
#
# δ⁽¹⁾xᵀ is an outer product: a (3, 1) column times a (1, 2) row gives the (3, 2) shape of W⁽¹⁾. (∂L/∂W⁽²⁾ is
# exercise 3.) The formulas in plain Python, for y = 1, against the engine's numbers from the cell above:

# %%
# NBVAL_CHECK_OUTPUT
z1 = [
    sum(w * x_i for w, x_i in zip(row, X)) + b for row, b in zip(W1_init, b1_init)
]  # (3,) z⁽¹⁾
a1 = [max(0.0, z) for z in z1]  # (3,) a⁽¹⁾
a_out = 1 / (
    1 + math.exp(-(sum(w * h for w, h in zip(W2_init, a1)) + b2_init))
)  # () a⁽²⁾
delta1 = [
    w * (a_out - label) * (1.0 if z > 0 else 0.0) for w, z in zip(W2_init, z1)
]  # (3,) W⁽²⁾ᵀ(a − y) ⊙ ReLU'(z⁽¹⁾)
dW1_by_hand = [[d * x_i for x_i in X] for d in delta1]  # (3, 2) δ⁽¹⁾xᵀ
db1 = unflat([p.grad for p in params])[1]
print("z⁽¹⁾ =", [round(z, 6) for z in z1], "  δ⁽¹⁾ =", [round(d, 6) for d in delta1])
print(
    "∂L/∂W⁽¹⁾ by hand :", [[round(g, 6) + 0.0 for g in row] for row in dW1_by_hand]
)  # + 0.0 turns −0.0 into 0.0
print("∂L/∂W⁽¹⁾ (engine):", [[round(g, 6) for g in row] for row in dW1])
print(
    "∂L/∂b⁽¹⁾ by hand :",
    [round(d, 6) for d in delta1],
    "  engine:",
    [round(g, 6) for g in db1],
)
largest = max(
    abs(h - e) for row_h, row_e in zip(dW1_by_hand, dW1) for h, e in zip(row_h, row_e)
)
largest = max(largest, *(abs(d - g) for d, g in zip(delta1, db1)))
print(f"by hand and engine agree within 1e-12: {largest < 1e-12}")
assert largest < 1e-12

# %% [markdown]
# ## 7. A finite-difference gradient check
#
# Backprop can be checked without calculus. For a function f of the parameters θ (here the loss L of section 6,
# y = 1) and each parameter θᵢ (eᵢ: 1 in place i, 0 elsewhere),
#
# $$\frac{\partial f}{\partial \theta_i} \approx \frac{f(\theta + h\,e_i) - f(\theta - h\,e_i)}{2h},$$
#
# the **central difference**. Its **truncation error** (its error in exact arithmetic) shrinks like h².
# Two forward passes per parameter: too slow for training, fine for tests. `gradcheck` does it for the 13
# parameters (h = 10⁻⁶ unless `eps` is given). Near a kink it fails: a step that carries a ReLU input across 0
# mixes two slopes by their share of the step. A step of h in W⁽¹⁾ⱼᵢ moves z⁽¹⁾ⱼ by h·|xᵢ|; here |xᵢ| ≤ 1 and
# every |z⁽¹⁾| ≥ 0.2.

# %%
print(
    "gradcheck's default step h:",
    inspect.signature(gradcheck).parameters["eps"].default,
)


def network_loss(*p):
    """The two-layer loss (y = 1) as a function of its 13 parameters."""
    x = torch.tensor(X, dtype=torch.float64) if isinstance(p[0], torch.Tensor) else X
    return two_layer_loss(x, *unflat(list(p)), 1.0)[2]


point = flat(W1_init, b1_init, W2_init, b2_init)
for backend in ("engine", "torch"):
    check = gradcheck(network_loss, point, backend=backend)
    print(
        f"{backend:>6}: max |numerical − backprop| = {check.max_abs_error:.1e}  "
        f"max relative error = {check.max_rel_error:.1e}  passed: {check.passed()}"
    )
    assert check.passed()
rule = inspect.signature(check.passed).parameters
print(
    f"passed(): every |numerical − backprop| ≤ {rule['atol'].default:g} "
    f"+ {rule['rtol'].default:g}·|backprop|"
)

# %% [markdown]
# How small should h be? Too large and the truncation error, about h²·|f‴|/6 (f‴ the third derivative),
# dominates. Too small and rounding does: each value of f is off by about ε·|f| (ε ≈ 2.2·10⁻¹⁶, float64's
# relative precision, machine epsilon); dividing by 2h magnifies that to about ε·|f|/h. The sum is smallest
# where the two roughly match, at h ≈ (3ε·|f|/|f‴|)^{1/3}: when |f| and |f‴| are of order 1,
# h ≈ ε^{1/3}, about 6·10⁻⁶. Measured on powers of ten:

# %%
hs = [10.0**-k for k in range(1, 13)]
backprop = gradcheck(network_loss, point).backprop
errors = []
for step in hs:
    numeric = numerical_gradient(
        lambda p: network_loss(*[Value(v) for v in p]).data, point, eps=step
    )
    errors.append(max(abs(n - g) for n, g in zip(numeric, backprop)))
fig, ax = plt.subplots()
ax.loglog(hs, errors, "o-")
ax.set(
    xlabel="step h",
    ylabel="max |central difference − backprop|",
    title="Truncation (right) vs rounding (left)",
)
plt.show()
best = min(range(len(hs)), key=errors.__getitem__)
epsilon = sys.float_info.epsilon  # float64's machine epsilon
print(
    f"smallest error {errors[best]:.1e} at h = {hs[best]:g};  "
    f"ε = {epsilon:.1e}, ε^(1/3) = {epsilon ** (1 / 3):.1e}"
)
print(
    f"at gradcheck's default h = 1e-06 the error is {errors[hs.index(1e-6)]:.1e}, "
    "as gradcheck reported above"
)

# %% [markdown]
# The best step on the grid, 10⁻⁵, is the power of ten nearest to ε^{1/3}. Its neighbour 10⁻⁶, gradcheck's default,
# gives an error about ten times larger, 1.0·10⁻¹⁰: the number gradcheck reported above, still far inside the
# tolerance of `passed()` (10⁻⁸ plus 10⁻⁵ times the gradient).

# %% [markdown]
# ## 8. Gradient parity with PyTorch on random networks
#
# One example could agree by luck. Here are random two-layer networks (random sizes, weights, inputs and
# labels), each differentiated by our engine and by PyTorch. The unit tests in `tests/models/basics/test_autograd.py` do
# the same for random expressions built from the engine's operations.


# %%
from course_utils.models.basics.gradcheck import random_two_layer_network


def engine_vs_torch(x, weights, label):
    """The largest difference between the engine's and PyTorch's parameter gradients."""
    W1, b1, W2, b2 = weights
    vals = (
        [[Value(w) for w in row] for row in W1],
        [Value(v) for v in b1],
        [Value(v) for v in W2],
        Value(b2),
    )
    tens = [torch.tensor(t, dtype=torch.float64, requires_grad=True) for t in weights]
    two_layer_loss(x, *vals, label)[2].backward()
    two_layer_loss(torch.tensor(x, dtype=torch.float64), *tens, label)[2].backward()
    engine = [*[v for row in vals[0] for v in row], *vals[1], *vals[2], vals[3]]
    engine_grads = [v.grad for v in engine]
    torch_grads = torch.cat([t.grad.reshape(-1) for t in tens]).tolist()
    return max(abs(g - t) for g, t in zip(engine_grads, torch_grads))


rng = random.Random(0)
trials = budget(full=200, fast=40)
largest = max(engine_vs_torch(*random_two_layer_network(rng)) for _ in range(trials))
print(
    f"{trials} random networks: largest |engine − PyTorch| "
    f"over all gradients = {largest:.1e}"
)
assert largest < 1e-10

# %% [markdown]
# ## 9. Widget: forward, then backward, step by step
#
# Type values for a, b and c, then move **step** to the right. The first steps run the forward pass,
# one node at a time (orange), and show each node's value and local derivatives. The remaining steps
# run the backward pass (blue): each node's gradient is completed with the chain rule, and the line
# above the graph shows the product. Each box shows the node's value and, after ∇, its gradient ∂L/∂node;
# `?` marks what is not computed yet.

# %%
from course_utils.widgets.backprop_demo import BackpropDemo

demo = BackpropDemo(a=3.0, b=1.0, c=-2.0)
demo.box

# %% [markdown]
# ## 10. Exercises
#
# Each exercise ships unfinished, so "Restart and run all" still works; fill it in and run its check.
#
# **Exercise 1 (the chain rule with a shared input).** For f(x, y, z) = (x·y + z)·y at x = 2, y = 3, z = −1,
# work out ∂f/∂x, ∂f/∂y and ∂f/∂z by hand. Draw the graph first: which input is used twice?

# %% tags=["exercise"]
from course_utils.exercises.backprop import (
    check_chain_rule,
    check_output_layer_grads,
    check_softplus,
)

my_gradients = {"x": None, "y": None, "z": None}  # replace each None by a number
_ = check_chain_rule(my_gradients)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# With q = x·y + z = 5 and f = q·y: ∂f/∂q = y = 3 and ∂f/∂x = ∂f/∂q · y = 9, ∂f/∂z = ∂f/∂q = 3.
# y reaches f along two paths, through q (∂f/∂q · x = 6) and directly (q = 5), so ∂f/∂y = 6 + 5 = 11.
#
# ```python
# my_gradients = {"x": 9, "y": 11, "z": 3}
# ```
# </details>

# %% [markdown]
# **Exercise 2 (a new operation).** Add softplus(x) = log(1 + eˣ) to the engine as *one* node. Its
# local derivative is σ(x). A node is `Value(data, parents=(x,), local_grads=(local,), op="softplus")`;
# `backward()` needs nothing else.


# %% tags=["exercise"]
def softplus(x: Value) -> Value:
    """log(1 + e^x) as a single node of the graph."""
    return None  # build and return the new Value here


_ = check_softplus(softplus)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ```python
# def softplus(x):
#     data = math.log1p(math.exp(x.data))
#     return Value(data, parents=(x,), local_grads=(1 / (1 + math.exp(-x.data)),), op="softplus")
# ```
# </details>

# %% [markdown]
# **Exercise 3 (the output layer).** In the two-layer network, z = W⁽²⁾·h + b⁽²⁾ with h = a⁽¹⁾ the hidden
# activations. Use ∂L/∂z = a − y to write ∂L/∂W⁽²⁾ (one number per hidden unit) and ∂L/∂b⁽²⁾. The check compares
# your formula with PyTorch autograd on random cases.


# %% tags=["exercise"]
def output_layer_grads(h, a, y):
    """(∂L/∂W⁽²⁾ as a list, ∂L/∂b⁽²⁾) from the hidden activations h, the output a
    and the label y."""
    return None  # return (list_of_weight_gradients, bias_gradient)


_ = check_output_layer_grads(output_layer_grads)

# %% [markdown] tags=["solution"]
# <details><summary>Solution</summary>
#
# ∂z/∂W⁽²⁾ⱼ = hⱼ and ∂z/∂b⁽²⁾ = 1, so each weight's gradient is (a − y)·hⱼ and the bias's is a − y:
#
# ```python
# def output_layer_grads(h, a, y):
#     return [(a - y) * h_j for h_j in h], a - y
# ```
# </details>

# %% [markdown]
# ## Summary
#
# - A computation graph splits an expression into small nodes; the forward pass computes them from the inputs out.
# - Each node knows only its **local derivatives**. The chain rule multiplies them along every path back from
#   the loss and adds the paths: for L = c(a + 2b) at (3, 1, −2), ∂L/∂a = −2, ∂L/∂b = −4, ∂L/∂c = 5.
# - **Backpropagation** does this mechanically: reverse topological order, `parent.grad += local × grad`.
#   Our small engine does exactly this and agrees with PyTorch's autograd to rounding error.
# - For a sigmoid output with cross-entropy loss the gradient at the pre-activation is simply ∂L/∂z = a − y.
# - Central differences check a gradient without calculus, if h balances truncation against rounding and the
#   function is smooth around the point (no ReLU input that a step of h carries across 0).
#
# ## References
#
# - D. E. Rumelhart, G. E. Hinton, R. J. Williams (1986). *Learning representations by back-propagating errors.*
#   Nature 323, 533–536. (Cited by the slides.)
# - D. Jurafsky, J. H. Martin. *Speech and Language Processing*, 3rd ed. draft, chapter 7 (Neural networks):
#   computation graphs and backward differentiation, the source of the slides' examples.
# - A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind (2018). *Automatic differentiation in machine
#   learning: a survey.* JMLR 18(153).
# - A. Paszke et al. (2017). *Automatic differentiation in PyTorch.* NIPS Autodiff Workshop.
# - A. Karpathy. *micrograd* (github.com/karpathy/micrograd): the scalar engine whose style ours follows.
