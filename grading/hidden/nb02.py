"""Hidden tests of notebook 02 (computation graphs): the output layer's gradients on new layers; the chain rule's
three numbers by their check.

Exercise 2 (``softplus``) takes and gives a ``Value`` of the course's engine, which does not travel: the grader
calls it through ``course_utils.exercises.probes.softplus_probe`` in the student's process, on new points, and
judges the plain numbers that come back (the output, one new node, the gradient on the input).
"""

from __future__ import annotations

import math

import torch

from course_utils.exercises.backprop import check_chain_rule
from grading.spec import Case, HiddenExercise, Judged, check_judge, compare_numbers

NOTEBOOK = "02_computation_graphs"


def _output_layer_cases() -> list[Case]:
    cases = []
    for seed, (size, y) in enumerate([(6, 1.0), (1, 0.0), (3, 1.0), (5, 0.0)], start=9021):
        generator = torch.Generator().manual_seed(seed)
        h = torch.randn(size, generator=generator, dtype=torch.float64).clamp(min=0)  # (H,): after a ReLU
        w = torch.randn(size, generator=generator, dtype=torch.float64)  # (H,)
        b = torch.randn((), generator=generator, dtype=torch.float64)  # ()
        a = torch.sigmoid(w @ h + b).item()
        cases.append(Case((h.tolist(), a, y), label=f"{size} hidden unit{'s' * (size > 1)}, y = {y:g}"))
    cases.append(Case(([0.0, 2.5, 0.0, 1.0], 0.999, 0.0), label="a confident wrong output, two units at 0"))
    return cases


def _output_layer_grads(h, a, y) -> tuple[torch.Tensor, float]:
    """(∂L/∂W2, ∂L/∂b2) by autograd through z = W2·h + b2, the cross-entropy of σ(z) and y, with z = logit(a)."""
    h = torch.tensor(h, dtype=torch.float64)  # (H,)
    w = torch.zeros_like(h, requires_grad=True)  # (H,): W2 = 0, so that z = b2
    b = torch.tensor(a, dtype=torch.float64).logit().requires_grad_()  # ()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(w @ h + b, torch.tensor(y, dtype=torch.float64))
    loss.backward()
    return w.grad, b.grad.item()


def _judge_output_layer(answer, case: Case) -> Judged:
    dw, db = _output_layer_grads(*case.args)
    if not isinstance(answer, list | tuple) or len(answer) != 2:
        return Judged(False, "return a pair (the list of ∂L/∂W2, ∂L/∂b2)")
    for name, part, reference in (("∂L/∂W2", answer[0], dw), ("∂L/∂b2", answer[1], db)):
        judged = compare_numbers(part, reference)
        if not judged.passed:
            return Judged(False, f"{name}: {judged.message}")
    return Judged(True, "right")


SOFTPLUS_POINTS = (-6.5, -0.75, 0.0, 1.3, 8.25)


def _judge_softplus(answer, case: Case) -> Judged:
    (point,) = case.args
    if not isinstance(answer, dict) or answer.get("type") != "Value":
        kind = answer.get("type") if isinstance(answer, dict) else type(answer).__name__
        return Judged(False, f"softplus must return a Value, got {kind}")
    if not answer["one_node"]:
        return Judged(False, "softplus must be one new node whose only parent is x")
    value = compare_numbers(answer["data"], math.log1p(math.exp(point)))
    if not value.passed:
        return Judged(False, f"the value log(1 + eˣ): {value.message}")
    gradient = compare_numbers(answer["grad"], 1 / (1 + math.exp(-point)))
    if not gradient.passed:
        return Judged(False, f"the gradient on x, σ(x): {gradient.message}")
    return Judged(True, "right")


EXERCISES = (
    HiddenExercise(1, ("my_gradients",), check_judge(check_chain_rule), points=1),
    HiddenExercise(
        2,
        ("softplus",),
        _judge_softplus,
        lambda: [Case((p,), label=f"x = {p:g}") for p in SOFTPLUS_POINTS],
        probe="course_utils.exercises.probes.softplus_probe",
    ),  # fmt: skip
    HiddenExercise(3, ("output_layer_grads",), _judge_output_layer, _output_layer_cases),
)
