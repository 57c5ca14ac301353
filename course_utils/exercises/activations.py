"""Self-checks for notebook 03's exercises: each prints ✓ or ✗ with a hint and returns a bool."""

from __future__ import annotations

import math

import torch

from course_utils.models.basics.activations import tanh
from course_utils.exercises.answers import numbers_close, read_numbers, whole_number
from course_utils.exercises import NOT_FINISHED, never_raises, verdict
from course_utils.models.basics.feedforward import forward, xor_points


def _verdict(ok: bool, praise: str, hint: str) -> bool:
    """✓ with the praise, or ✗ with the hint."""
    return verdict(ok, praise if ok else hint)


@never_raises
def check_tanh_derivative(fn) -> bool:
    """Exercise 1: ``fn(z)`` must return tanh'(z) for a tensor of z (compared with autograd)."""
    z = torch.linspace(-6, 6, 241, dtype=torch.float64, requires_grad=True)  # (241,)
    (expected,) = torch.autograd.grad(tanh(z).sum(), z)
    try:
        answer = fn(z.detach().clone())
    except Exception as error:  # noqa: BLE001 - a self-check reports, it never raises
        return _verdict(False, "", f"your function raised {type(error).__name__}: {error}")
    if answer is None:
        return _verdict(False, "", f"your function returns None: {NOT_FINISHED} (hint: differentiate tanh's "
                                   "definition, or the identity tanh(z) = 2σ(2z) − 1, and write it with tanh)")  # fmt: skip
    ok, why = numbers_close(answer, expected)
    if why:
        return _verdict(False, "", f"return a tensor with the same shape as z: {why}")
    far = int((torch.as_tensor(read_numbers(answer)[0].values) - expected).abs().argmax())
    hint = f"not tanh'(z) yet: at z = {z[far].item():g} yours is furthest from autograd's; check the formula"
    return _verdict(ok, "tanh'(z) matches autograd on 241 points in [−6, 6]", hint)


@never_raises
def check_xor_network(W1, b1, W2, b2) -> bool:
    """Exercise 2: a ReLU hidden layer and a linear output, ŷ = W2 ReLU(W1 x + b1) + b2, must compute XOR."""
    if any(p is None for p in (W1, b1, W2, b2)):
        return _verdict(False, "", f"{NOT_FINISHED}: fill in W1, b1, W2 and b2 (lists of numbers are fine)")
    x, y = xor_points()
    read = [read_numbers(p) for p in (W1, b1, W2, b2)]
    why = next((why for _, why in read if why), None)
    if why:
        return _verdict(False, "", f"these weights do not make a network: W1, b1, W2 and b2 must be numbers; {why}")
    W1, b1, W2, b2 = (torch.from_numpy(numbers.values) for numbers, _ in read)
    try:
        weights = [torch.atleast_2d(W) for W in (W1, W2)]
        biases = [b.reshape(-1) for b in (b1, b2)]
        output = forward(x.double(), weights, biases, ["relu", "identity"]).output.reshape(-1)  # (4,)
    except Exception as error:  # noqa: BLE001
        return _verdict(False, "", f"these weights do not make a network: {error}")
    if output.shape != (4,):
        return _verdict(False, "", f"the output layer must have one unit; yours gives {output.numel() // 4} per input")
    predictions = (output > 0.5).double()
    ok = bool(torch.equal(predictions, y.double()))
    table = ", ".join(
        f"{tuple(int(v) for v in point)} → {value:.2f}" for point, value in zip(x.tolist(), output.tolist())
    )
    return _verdict(ok, f"your network computes XOR: {table}", f"not XOR yet (ŷ > 0.5 should mean 1): {table}")


@never_raises
def check_sigmoid_depth(answer) -> bool:
    """Exercise 3: the fewest sigmoid layers L for which (max σ')^L = (1/4)^L is below one millionth."""
    expected = math.ceil(math.log(1e6) / math.log(4))
    if answer is None:
        return _verdict(False, "", f"{NOT_FINISHED}: answer with a whole number of layers, at least 1")
    answer = whole_number(answer)
    if answer is None or answer < 1:
        return _verdict(False, "", "answer with a whole number of layers, at least 1")
    if answer < expected:
        return _verdict(False, "", f"too few: (1/4)^{answer} = {0.25**answer:.1e} is still above 1e-6")
    ok = answer == expected
    return _verdict(ok, f"L = {expected}: (1/4)^{expected} = {0.25**expected:.1e} < 1e-6", "not the smallest such L")
