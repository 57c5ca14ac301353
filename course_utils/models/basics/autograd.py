"""A minimal scalar autograd engine: every ``Value`` remembers how it was made.

Each operation creates a new ``Value`` that stores its parents and the *local* derivative
of its output with respect to each parent (for ``e = a + d``: ∂e/∂a = 1, ∂e/∂d = 1).
``backward()`` visits the graph from the output back to the inputs and applies the chain
rule at every node: ``parent.grad += local derivative × node.grad``.

    a, b, c = Value(3, "a"), Value(1, "b"), Value(-2, "c")
    L = c * (a + 2 * b)
    L.backward()              # a.grad == -2, b.grad == -4, c.grad == 5

A plain number in an expression is a constant: it is written into the op label
(``2 * b`` has op ``"2*"``) and gets no node and no gradient of its own.
"""

from __future__ import annotations

import math

from course_utils.validation import CourseInputError, check_number


class Value:
    """A scalar with a gradient, the parents it was computed from, and the local derivatives."""

    def __init__(self, data, label: str = "", *, parents=(), local_grads=(), op: str = ""):
        self.data = check_number("Value data", data)
        self.grad = 0.0
        self.label = label
        self.parents = tuple(parents)
        self.local_grads = tuple(check_number("local derivative", g) for g in local_grads)
        self.op = op
        if len(self.parents) != len(self.local_grads):
            raise CourseInputError(
                f"{len(self.parents)} parents need {len(self.parents)} local derivatives, got {len(self.local_grads)}"
            )
        if not all(isinstance(p, Value) for p in self.parents):
            raise CourseInputError("parents must all be Value objects")

    def __repr__(self) -> str:
        name = f"{self.label!r}, " if self.label else ""
        return f"Value({name}data={self.data:.6g}, grad={self.grad:.6g})"

    def named(self, label: str) -> Value:
        """Give this value a name (shown in drawings) and return it: ``d = (2 * b).named("d")``."""
        self.label = label
        return self

    # --- arithmetic: each op returns a new node with its local derivatives ------------------
    def _binary(self, other, op, data, d_self, d_other, *, reflected=False) -> Value:
        """A node for ``self op other`` (``other op self`` if reflected); a number is a
        constant.

        ``data(x, y)`` computes the result; ``d_self(x, y)`` and ``d_other(x, y)`` are
        its local derivatives with respect to self (x) and to other (y).
        """
        x = self.data
        if isinstance(other, Value):
            y = other.data
            return Value(
                data(x, y),
                parents=(self, other),
                op=op,
                local_grads=(d_self(x, y), d_other(x, y)),
            )
        k = check_number("the other operand", other)
        label = f"{k:g}{op}" if reflected else f"{op}{k:g}"
        return Value(data(x, k), parents=(self,), local_grads=(d_self(x, k),), op=label)

    def __add__(self, other) -> Value:
        return self._binary(other, "+", data=lambda x, y: x + y, d_self=lambda x, y: 1.0, d_other=lambda x, y: 1.0)

    def __radd__(self, other) -> Value:
        return self._binary(other, "+", data=lambda x, y: x + y, d_self=lambda x, y: 1.0, d_other=None, reflected=True)

    def __sub__(self, other) -> Value:
        return self._binary(other, "-", data=lambda x, y: x - y, d_self=lambda x, y: 1.0, d_other=lambda x, y: -1.0)

    def __rsub__(self, other) -> Value:
        return self._binary(other, "-", data=lambda x, y: y - x, d_self=lambda x, y: -1.0, d_other=None, reflected=True)

    def __mul__(self, other) -> Value:
        return self._binary(
            other,
            "*",
            data=lambda x, y: x * y,
            d_self=lambda x, y: y,  # ∂(xy)/∂x
            d_other=lambda x, y: x,  # ∂(xy)/∂y
        )

    def __rmul__(self, other) -> Value:
        return self._binary(other, "*", data=lambda x, y: x * y, d_self=lambda x, y: y, d_other=None, reflected=True)

    def __truediv__(self, other) -> Value:
        if (other.data if isinstance(other, Value) else other) == 0:
            raise CourseInputError("division by zero")
        return self._binary(
            other, "/", data=lambda x, y: x / y, d_self=lambda x, y: 1 / y, d_other=lambda x, y: -x / y**2
        )

    def __rtruediv__(self, other) -> Value:
        if self.data == 0:
            raise CourseInputError("division by zero")
        return self._binary(
            other, "/", data=lambda x, y: y / x, d_self=lambda x, y: -y / x**2, d_other=None, reflected=True
        )

    def __pow__(self, exponent) -> Value:
        if isinstance(exponent, Value):
            raise CourseInputError("the exponent must be a plain number, not a Value")
        p = check_number("exponent", exponent)
        x = self.data
        if x < 0 and not p.is_integer():
            raise CourseInputError(f"a negative base ({x:g}) needs an integer exponent, got {p:g}")
        if x == 0 and p < 1 and p != 0:
            raise CourseInputError(f"0 ** {p:g} has no finite derivative")
        local = p * x ** (p - 1) if p != 0 else 0.0
        return Value(x**p, parents=(self,), local_grads=(local,), op=f"**{p:g}")

    def __rpow__(self, base) -> Value:
        if check_number("base", base) <= 0:
            raise CourseInputError(f"a number raised to a Value needs a positive base, got {base!r}")
        return self._binary(
            base, "**", data=lambda x, k: k**x, d_self=lambda x, k: k**x * math.log(k), d_other=None, reflected=True
        )

    def __neg__(self) -> Value:
        return Value(-self.data, parents=(self,), local_grads=(-1.0,), op="neg")

    # --- functions ------------------------------------------------------------------------
    def _unary(self, op: str, data: float, local: float) -> Value:
        """A node for ``op(self)``: value ``data``, local derivative ``local``."""
        return Value(data, parents=(self,), local_grads=(local,), op=op)

    def relu(self) -> Value:
        """max(0, x); its derivative is taken as 0 at x = 0, as in PyTorch."""
        return self._unary("relu", max(0.0, self.data), 1.0 if self.data > 0 else 0.0)

    def sigmoid(self) -> Value:
        """σ(x) = 1 / (1 + e^-x), with σ'(x) = σ(x)(1 − σ(x))."""
        x = self.data
        # the two forms are equal; each is free of overflow on its side of 0
        s = 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))
        return self._unary("sigmoid", s, s * (1 - s))

    def tanh(self) -> Value:
        """tanh(x), with tanh'(x) = 1 − tanh²(x)."""
        t = math.tanh(self.data)
        return self._unary("tanh", t, 1 - t * t)

    def exp(self) -> Value:
        """eˣ, its own derivative."""
        if self.data > 709:
            raise CourseInputError(f"exp({self.data:g}) overflows a float")
        e = math.exp(self.data)
        return self._unary("exp", e, e)

    def log(self) -> Value:
        """The natural log, with derivative 1/x; x must be positive."""
        if self.data <= 0:
            raise CourseInputError(f"log needs a positive number, got {self.data:g}")
        return self._unary("log", math.log(self.data), 1 / self.data)

    # --- backpropagation ------------------------------------------------------------------
    def topological_order(self) -> list[Value]:
        """Every node this value depends on, each after all of its parents (self is last)."""
        order, seen, stack = [], set(), [(self, False)]
        while stack:  # depth-first, without recursion, so long chains are fine
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in reversed(node.parents))
        return order

    def backward(self) -> None:
        """Fill ``grad`` of every node with ∂self/∂node (gradients are reset first)."""
        order = self.topological_order()
        for node in order:
            node.grad = 0.0
        self.grad = 1.0
        # in reverse order, each node's grad is complete before it is passed on
        for node in reversed(order):
            for parent, local in zip(node.parents, node.local_grads):
                parent.grad += local * node.grad

    def formula(self) -> str:
        """How this node was computed, from its parents' names: ``"a + d"``, ``"2*b"``, ``"relu(z)"``."""
        if not self.parents:
            return self.label or f"{self.data:g}"
        names = [p.label or "·" for p in self.parents]
        if len(names) == 2:
            return f"{names[0]} {self.op} {names[1]}"
        if self.op.isalpha():
            return f"-{names[0]}" if self.op == "neg" else f"{self.op}({names[0]})"
        reflected = self.op[-1] in "+-*/"
        return f"{self.op}{names[0]}" if reflected else f"{names[0]}{self.op}"


def lecture_graph(a: float = 3.0, b: float = 1.0, c: float = -2.0) -> Value:
    """The lecture's example, d = 2b, e = a + d, L = c·e, with named nodes; returns L (not yet backpropagated)."""
    a, b, c = Value(a, "a"), Value(b, "b"), Value(c, "c")
    d = (2 * b).named("d")
    e = (a + d).named("e")
    return (c * e).named("L")
