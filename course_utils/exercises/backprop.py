"""Self-checks for the exercises of notebook 02 (computation graphs and backpropagation).

Each check prints a ✓ or ✗ line and returns True or False; it never raises, so an
unfinished exercise (one that still returns ``None``) just says what is missing.
"""

from __future__ import annotations

import math
import random

import numpy as np

from course_utils.models.basics.autograd import Value
from course_utils.exercises.answers import ULPS, read_numbers, shown
from course_utils.exercises import NOT_FINISHED, never_raises, verdict

CHAIN_RULE_POINT = {"x": 2.0, "y": 3.0, "z": -1.0}  # f(x, y, z) = (x·y + z)·y
SOFTPLUS_POINTS = (-3.0, -0.5, 0.0, 1.2, 4.0)
# A number computed in float32 often comes back as a Python float (a Value keeps its data as one; a float32
# tensor's .item() and .tolist() give them), so its dtype is lost: every number here is judged at least at
# float32's tolerance. A mistake in a derivative is far larger.
TOLERANCE = ULPS * float(np.finfo(np.float32).eps)


def _close(a, b, floor: float = TOLERANCE) -> bool:
    """``a`` (a number of any type: float, NumPy, a 0-d tensor) equals ``b`` up to its precision, at least ``floor``."""
    read, why = read_numbers(a)
    if why or read.values.size != 1:
        return False
    return abs(float(read.values.reshape(())) - b) <= read.rel_tolerance(floor) * max(1.0, abs(b))


def _unreadable(value) -> str | None:
    """Why ``value`` is not one finite number (NaN, inf, not a number, several numbers), or None."""
    read, why = read_numbers(value)
    if why:
        return why
    return None if read.values.size == 1 else f"one number, not {read.values.size}"


def chain_rule_reference() -> dict[str, float]:
    """∂f/∂x, ∂f/∂y, ∂f/∂z of f = (x·y + z)·y at ``CHAIN_RULE_POINT``, from our engine."""
    x, y, z = (Value(CHAIN_RULE_POINT[k], k) for k in "xyz")
    f = (x * y + z) * y
    f.backward()
    return {"x": x.grad, "y": y.grad, "z": z.grad}


@never_raises
def check_chain_rule(answer) -> bool:
    """Exercise 1: ``answer`` maps "x", "y", "z" to the gradient of (x·y + z)·y you worked out by hand."""
    if not isinstance(answer, dict) or set(answer) != {"x", "y", "z"}:
        return verdict(False, 'answer must be a dict with the keys "x", "y" and "z"')
    if any(v is None for v in answer.values()):
        return verdict(False, f"{NOT_FINISHED}: replace each None by a number")
    unread = next(((k, why) for k in "xyz" if (why := _unreadable(answer[k]))), None)
    if unread:
        return verdict(False, f"the value for {unread[0]!r}: {unread[1]}")
    reference = chain_rule_reference()
    wrong = [k for k in "xyz" if not _close(answer[k], reference[k])]
    if not wrong:
        return verdict(True, "all three partial derivatives are right")
    q = CHAIN_RULE_POINT["x"] * CHAIN_RULE_POINT["y"] + CHAIN_RULE_POINT["z"]
    hint = ""
    if "y" in wrong and (_close(answer["y"], q) or _close(answer["y"], reference["y"] - q)):
        hint = " Hint: y is used twice (in x·y and as the last factor); add the gradients of both paths."
    return verdict(False, f"not right yet for {', '.join(wrong)}.{hint}")


@never_raises
def check_softplus(softplus) -> bool:
    """Exercise 2: ``softplus(x)`` must return one new ``Value``, log(1 + eˣ), whose local derivative is σ(x)."""
    for p in SOFTPLUS_POINTS:
        try:
            x = Value(p, "x")
            out = softplus(x)
            if out is None:
                return verdict(False, f"{NOT_FINISHED}: softplus returns None")
            if not isinstance(out, Value):
                return verdict(False, f"softplus must return a Value, got {type(out).__name__}")
            if out.parents != (x,):
                return verdict(
                    False, "build softplus as one new node: Value(data, parents=(x,), local_grads=(...,), op=...)"
                )
            expected = math.log1p(math.exp(p))
            if not _close(out.data, expected):
                want, got = shown(expected, out.data, 6)
                return verdict(False, f"softplus({p:g}) should be log(1 + e^{p:g}) = {want}, got {got}")
            out.backward()
            expected = 1 / (1 + math.exp(-p))
            if not _close(x.grad, expected):
                want, got = shown(expected, x.grad, 6)
                return verdict(False, f"at x = {p:g} backprop gives {got}, but d softplus/dx = σ(x) = {want}")
        except Exception as error:  # noqa: BLE001 - a self-check reports, it never raises
            return verdict(False, f"softplus raised {type(error).__name__}: {error}")
    return verdict(True, "softplus computes log(1 + eˣ) and passes σ(x)·upstream back to x")


def _output_layer_cases(count: int = 5):
    """Random (h, w, b, y) for the last layer of the two-layer network; h ≥ 0 as after a ReLU."""
    rng = random.Random(0)
    for _ in range(count):
        size = rng.randint(2, 4)
        h = [max(0.0, rng.gauss(0, 1)) for _ in range(size)]
        yield h, [rng.gauss(0, 1) for _ in range(size)], rng.gauss(0, 1), float(rng.randint(0, 1))


def output_layer_reference(h, w, b, y) -> tuple[float, list[float], float]:
    """(a, ∂L/∂w, ∂L/∂b) for a = σ(w·h + b) and the cross-entropy loss, from PyTorch autograd."""
    import torch

    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)  # (H,)
    b_t = torch.tensor(b, dtype=torch.float64, requires_grad=True)  # ()
    a = torch.sigmoid(w_t @ torch.tensor(h, dtype=torch.float64) + b_t)  # ()
    loss = -(y * torch.log(a) + (1 - y) * torch.log(1 - a))
    loss.backward()
    return a.item(), w_t.grad.tolist(), b_t.grad.item()


@never_raises
def check_output_layer_grads(output_layer_grads) -> bool:
    """Exercise 3: ``output_layer_grads(h, a, y)`` must return (∂L/∂W2 as a list, ∂L/∂b2)."""
    for h, w, b, y in _output_layer_cases():
        a, dw, db = output_layer_reference(h, w, b, y)
        try:
            result = output_layer_grads(h, a, y)
            if result is None:
                return verdict(False, f"{NOT_FINISHED}: output_layer_grads returns None")
            your_dw, your_db = result
            your_dw = list(your_dw)
        except Exception as error:  # noqa: BLE001 - a self-check reports, it never raises
            return verdict(
                False, f"output_layer_grads raised or returned the wrong shape ({type(error).__name__}: {error})"
            )
        if len(your_dw) != len(dw):
            return verdict(False, f"∂L/∂W2 needs one entry per hidden unit ({len(dw)}), got {len(your_dw)}")
        unread = next(((name, why) for name, value in (("∂L/∂b2", your_db), *(("∂L/∂W2", v) for v in your_dw))
                       if (why := _unreadable(value))), None)  # fmt: skip
        if unread:
            return verdict(False, f"{unread[0]}: {unread[1]}")
        if not _close(your_db, db):
            return verdict(False, f"∂L/∂b2 is not right yet (got {your_db!r}): how does L change with z2, "
                                  "and how does z2 change with b2?")  # fmt: skip
        if not all(_close(mine, ref) for mine, ref in zip(your_dw, dw)):
            return verdict(False, "∂L/∂b2 is right but ∂L/∂W2 is not: ∂z/∂W2[j] is the j-th hidden activation")
    return verdict(True, "both gradients match PyTorch autograd on 5 random cases")
