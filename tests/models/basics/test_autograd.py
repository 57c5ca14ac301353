"""The scalar autograd engine: the lecture's numbers, every operation, parity with PyTorch, bad input."""

import math
import random

import pytest
import torch

from course_utils.models.basics.autograd import Value
from course_utils.validation import CourseInputError


def f64(x, grad=True):
    return torch.tensor(x, dtype=torch.float64, requires_grad=grad)


def test_lecture_example_forward_values_and_gradients():
    a, b, c = Value(3, "a"), Value(1, "b"), Value(-2, "c")
    d = (2 * b).named("d")
    e = (a + d).named("e")
    L = (c * e).named("L")
    L.backward()
    assert (d.data, e.data, L.data) == (2, 5, -10)
    assert (a.grad, b.grad, c.grad) == (-2, -4, 5)
    assert (d.grad, e.grad, L.grad) == (-2, -2, 1)


# Each operation once, on a number where it is smooth: the engine against torch in float64.
OPERATIONS = {
    "add": (lambda x, y: x + y, lambda x, y: x + y),
    "sub": (lambda x, y: x - y, lambda x, y: x - y),
    "mul": (lambda x, y: x * y, lambda x, y: x * y),
    "div": (lambda x, y: x / y, lambda x, y: x / y),
    "radd": (lambda x, y: 2.5 + x, lambda x, y: 2.5 + x),
    "rsub": (lambda x, y: 2.5 - x, lambda x, y: 2.5 - x),
    "rmul": (lambda x, y: 2.5 * y, lambda x, y: 2.5 * y),
    "rdiv": (lambda x, y: 2.5 / y, lambda x, y: 2.5 / y),
    "pow": (lambda x, y: x**3, lambda x, y: x**3),
    "pow_fraction": (lambda x, y: y**0.5, lambda x, y: y**0.5),
    "rpow": (lambda x, y: 2.0**x, lambda x, y: 2.0**x),
    "neg": (lambda x, y: -x, lambda x, y: -x),
    "relu": (lambda x, y: x.relu() + y.relu(), lambda x, y: torch.relu(x) + torch.relu(y)),
    "sigmoid": (lambda x, y: x.sigmoid(), lambda x, y: torch.sigmoid(x)),
    "tanh": (lambda x, y: x.tanh(), lambda x, y: torch.tanh(x)),
    "exp": (lambda x, y: x.exp(), lambda x, y: torch.exp(x)),
    "log": (lambda x, y: y.log(), lambda x, y: torch.log(y)),
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
@pytest.mark.parametrize("point", [(-1.3, 0.7), (0.4, 2.2)])
def test_each_operation_matches_torch(name, point):
    engine_op, torch_op = OPERATIONS[name]
    x, y = Value(point[0]), Value(point[1])
    out = engine_op(x, y)
    out.backward()
    xt, yt = f64(point[0]), f64(point[1])
    out_t = torch_op(xt, yt)
    out_t.backward()
    assert out.data == pytest.approx(out_t.item(), rel=1e-14)
    for v, t in ((x, xt), (y, yt)):
        expected = 0.0 if t.grad is None else t.grad.item()
        assert v.grad == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_sigmoid_is_stable_for_large_inputs():
    assert Value(-800).sigmoid().data == 0.0
    assert Value(800).sigmoid().data == 1.0


def test_relu_derivative_at_zero_is_zero_like_torch():
    x = Value(0.0)
    x.relu().backward()
    xt = f64(0.0)
    torch.relu(xt).backward()
    assert x.grad == xt.grad.item() == 0.0


def test_a_value_used_twice_gets_both_gradients():
    x = Value(3.0)
    (x * x).backward()
    assert x.grad == 6.0
    a = Value(2.0)
    (a * 4 + a.exp() + a).backward()
    assert a.grad == pytest.approx(4 + math.exp(2) + 1)


def test_backward_twice_gives_the_same_gradients():
    x = Value(1.5)
    y = (x * x + x).tanh()
    y.backward()
    first = x.grad
    y.backward()
    assert x.grad == first


def test_a_long_chain_needs_no_recursion():
    x = Value(1.0)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    y.backward()
    assert x.grad == pytest.approx(1.0001**5000)


def test_topological_order_puts_parents_first():
    a, b = Value(1.0, "a"), Value(2.0, "b")
    c = (a * b).named("c")
    d = (c + a).named("d")
    order = d.topological_order()
    position = {id(n): i for i, n in enumerate(order)}
    assert order[-1] is d and len(order) == 4
    for node in order:
        assert all(position[id(p)] < position[id(node)] for p in node.parents)


def test_constants_are_written_into_the_op_and_get_no_node():
    b = Value(1.0, "b")
    assert (2 * b).op == "2*" and (2 * b).parents == (b,)
    assert (b * 2).op == "*2" and (b * 2).formula() == "b*2"
    assert (2 * b).formula() == "2*b"
    assert (1 - b).formula() == "1-b"
    assert (b**2).formula() == "b**2"
    assert (b + Value(3.0, "c")).formula() == "b + c"
    assert b.relu().formula() == "relu(b)" and (-b).formula() == "-b"


# --- random expressions and small networks: the engine against torch ----------------------
UNARY = [
    lambda v: -v,
    lambda v: v.relu() if isinstance(v, Value) else torch.relu(v),
    lambda v: v.sigmoid(),
    lambda v: v.tanh(),
    lambda v: (v * 0.3).exp(),
    lambda v: (v * v + 1).log(),
    lambda v: v**2,
    lambda v: 1.0 / (v * v + 1),
    lambda v: (v * v + 0.5) ** 0.5,
    lambda v: 2.0 - v,
    lambda v: 2.0 ** v.tanh(),
]
BINARY = [
    lambda u, v: u + v,
    lambda u, v: u - v,
    lambda u, v: u * v,
    lambda u, v: u / (v * v + 1),
]


def random_program(rng: random.Random, n_inputs: int, depth: int):
    """A random expression tree as nested tuples; inputs are reused, so gradients accumulate."""
    if depth == 0 or rng.random() < 0.2:
        return ("input", rng.randrange(n_inputs))
    if rng.random() < 0.5:
        return ("unary", rng.randrange(len(UNARY)), random_program(rng, n_inputs, depth - 1))
    return (
        "binary",
        rng.randrange(len(BINARY)),
        random_program(rng, n_inputs, depth - 1),
        random_program(rng, n_inputs, depth - 1),
    )


def evaluate(program, inputs):
    kind = program[0]
    if kind == "input":
        return inputs[program[1]]
    if kind == "unary":
        return UNARY[program[1]](evaluate(program[2], inputs))
    return BINARY[program[1]](evaluate(program[2], inputs), evaluate(program[3], inputs))


@pytest.mark.parametrize("seed", range(150))
def test_random_expressions_match_torch(seed):
    rng = random.Random(seed)
    n_inputs = rng.randint(1, 4)
    program = ("binary", 0, random_program(rng, n_inputs, 5), ("input", 0))  # depends on input 0 at least
    point = [rng.uniform(-2, 2) for _ in range(n_inputs)]
    values = [Value(p) for p in point]
    tensors = [f64(p) for p in point]
    out = evaluate(program, values)
    out.backward()
    out_t = evaluate(program, tensors)
    out_t.backward()
    assert out.data == pytest.approx(out_t.item(), rel=1e-12, abs=1e-12)
    for v, t in zip(values, tensors):
        expected = 0.0 if t.grad is None else t.grad.item()
        assert v.grad == pytest.approx(expected, rel=1e-10, abs=1e-12)


def engine_mlp_loss(x, layers, activation, y):
    """A scalar-by-scalar MLP: hidden layers with ``activation``, a sigmoid output, cross-entropy."""
    h = x
    for i, (W, b) in enumerate(layers):
        z = [sum((w * h_j for w, h_j in zip(row, h)), b_i) for row, b_i in zip(W, b)]
        h = [getattr(z_i, activation)() for z_i in z] if i < len(layers) - 1 else z
    p = h[0].sigmoid()
    return -(y * p.log() + (1 - y) * (1 - p).log())


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid"])
def test_small_mlps_match_torch(seed, activation):
    gen = torch.Generator().manual_seed(seed)
    sizes = [int(s) for s in torch.randint(1, 5, (3,), generator=gen)] + [1]  # input, hidden, hidden, output
    weights = [
        (
            torch.randn(n_out, n_in, generator=gen, dtype=torch.float64),
            torch.randn(n_out, generator=gen, dtype=torch.float64),
        )
        for n_in, n_out in zip(sizes, sizes[1:])
    ]
    x = torch.randn(sizes[0], generator=gen, dtype=torch.float64)  # (D,)
    y = float(seed % 2)

    layers = [([[Value(w) for w in row] for row in W.tolist()], [Value(v) for v in b.tolist()]) for W, b in weights]
    engine_mlp_loss(x.tolist(), layers, activation, y).backward()

    params = [(W.clone().requires_grad_(), b.clone().requires_grad_()) for W, b in weights]
    h = x  # (D,)
    for i, (W, b) in enumerate(params):
        h = W @ h + b  # (n_out,)
        if i < len(params) - 1:
            h = getattr(torch, activation)(h)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(h, torch.tensor([y], dtype=torch.float64))
    loss.backward()

    for (W_v, b_v), (W, b) in zip(layers, params):
        assert [v.grad for row in W_v for v in row] == pytest.approx(W.grad.reshape(-1).tolist(), rel=1e-10, abs=1e-12)
        assert [v.grad for v in b_v] == pytest.approx(b.grad.tolist(), rel=1e-10, abs=1e-12)


# --- bad input ----------------------------------------------------------------------------
BAD = {
    "text data": lambda: Value("3"),
    "None data": lambda: Value(None),
    "bool data": lambda: Value(True),
    "nan data": lambda: Value(float("nan")),
    "inf data": lambda: Value(float("inf")),
    "text operand": lambda: Value(1.0) + "a",
    "text operand reflected": lambda: "a" * Value(1.0),
    "log of zero": lambda: Value(0.0).log(),
    "log of negative": lambda: Value(-1.0).log(),
    "divide by zero": lambda: Value(1.0) / 0,
    "divide by zero Value": lambda: Value(1.0) / Value(0.0),
    "zero denominator reflected": lambda: 1 / Value(0.0),
    "fractional power of negative": lambda: Value(-2.0) ** 0.5,
    "negative power of zero": lambda: Value(0.0) ** -1,
    "root of zero": lambda: Value(0.0) ** 0.5,
    "Value exponent": lambda: Value(2.0) ** Value(2.0),
    "negative base": lambda: (-2.0) ** Value(1.0),
    "exp overflow": lambda: Value(1000.0).exp(),
    "product overflow": lambda: Value(1e200) * 1e200,
    "missing local derivative": lambda: Value(1.0, parents=(Value(1.0),), local_grads=()),
    "parent not a Value": lambda: Value(1.0, parents=(3.0,), local_grads=(1.0,)),
    "non-number local derivative": lambda: Value(1.0, parents=(Value(1.0),), local_grads=("x",)),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_raises_a_clear_error(case):
    with pytest.raises(CourseInputError) as error:
        BAD[case]()
    assert str(error.value)
