"""The self-checks of notebook 05: each passes right answers, fails wrong and unfinished ones, never raises."""

import numpy as np
import torch
import torch.nn.functional as F
from exercise_contract import contract_tests

from course_utils.exercises.recurrent import (
    check_clip_by_norm,
    check_elman_step,
    check_parameter_count,
    check_sequence_loss,
    rnn_lm_parameters,
)
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.analysis.rnn_analysis import clip_by_norm

CHECKS = (check_elman_step, check_sequence_loss, check_clip_by_norm, check_parameter_count)


def loss_by_hand(logits, targets):
    keep = targets != IGNORE_INDEX
    logp = torch.log_softmax(logits, dim=-1)
    chosen = logp.gather(-1, targets.clamp(min=0).unsqueeze(-1))[..., 0]
    return -(chosen * keep).sum() / keep.sum()


def loss_in_a_loop(logits, targets):
    total, count = 0.0, 0
    for b in range(targets.shape[0]):
        for t in range(targets.shape[1]):
            if targets[b, t] != IGNORE_INDEX:
                total -= float(torch.log_softmax(logits[b, t], dim=-1)[targets[b, t]])
                count += 1
    return total / count


def clip_by_hand(grads, max_norm):
    norm = torch.sqrt(sum((g**2).sum() for g in grads))
    scale = min(1.0, max_norm / (norm.item() + 1e-6))
    return [g * scale for g in grads]


def clip_in_place(grads, max_norm):
    norm = torch.sqrt(sum((g**2).sum() for g in grads)).item()
    for g in grads:
        g.mul_(min(1.0, max_norm / norm))
    return grads


def count_by_hand(V, d, H, T):
    return V * d + H * d + H * H + H + V * H + V


RIGHT = [
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(h @ U.T + x @ W.T + b)),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh((U @ h.T + W @ x.T).T + b)),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(F.linear(h, U) + F.linear(x, W, b))),
    (check_sequence_loss, lambda lo, ta: F.cross_entropy(lo.flatten(0, 1), ta.flatten(), ignore_index=-100)),
    (check_sequence_loss, loss_by_hand),
    (check_sequence_loss, loss_in_a_loop),
    (check_sequence_loss, lambda lo, ta: np.float64(loss_by_hand(lo, ta).item())),
    (check_clip_by_norm, clip_by_hand),
    (check_clip_by_norm, lambda grads, m: clip_by_norm(grads, m)[0]),
    (check_clip_by_norm, lambda grads, m: tuple(clip_by_hand(grads, m))),
    (check_parameter_count, count_by_hand),
    (check_parameter_count, lambda V, d, H, T: np.int64(V * (d + H + 1) + H * (d + H + 1))),
    (check_parameter_count, lambda V, d, H, T: float(count_by_hand(V, d, H, T))),
]

WRONG = [
    (check_elman_step, lambda x, h, W, U, b: h @ U.T + x @ W.T + b, "apply tanh"),
    (check_elman_step, lambda x, h, W, U, b: torch.sigmoid(h @ U.T + x @ W.T + b), "not the sigmoid"),
    (check_elman_step, lambda x, h, W, U, b: torch.relu(h @ U.T + x @ W.T + b), "not ReLU"),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(h @ U.T + x @ W.T), "bias"),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(x @ W.T + b), "previous state"),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(h @ U + x @ W.T + b), "h_prev @ U.T"),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(U @ h + W @ x + b), "one row per example"),
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(h @ U.T + x @ W.T + b)[0], "shape (B, H)"),
    (
        check_sequence_loss,
        lambda lo, ta: F.cross_entropy(lo.flatten(0, 1), ta.flatten(), ignore_index=-100, reduction="sum"),
        "divide the sum",
    ),
    (check_sequence_loss, lambda lo, ta: -loss_by_hand(lo, ta), "negative"),
    (check_sequence_loss, lambda lo, ta: torch.log_softmax(lo, -1).gather(-1, ta.unsqueeze(-1)).mean(), "padding"),
    (check_sequence_loss, lambda lo, ta: loss_by_hand(lo, ta) * (ta != -100).sum() / ta.numel(), "not by B·T"),
    (
        check_sequence_loss,
        lambda lo, ta: torch.stack([loss_by_hand(lo[b : b + 1], ta[b : b + 1]) for b in range(len(ta))]).mean(),
        "not per sentence first",
    ),
    (
        check_sequence_loss,
        lambda lo, ta: loss_by_hand(lo, ta) - torch.logsumexp(lo, -1).mul(ta != -100).sum() / (ta != -100).sum(),
        "log_softmax",
    ),
    (check_sequence_loss, lambda lo, ta: loss_by_hand(lo, ta).unsqueeze(0).repeat(2), "one number"),
    (check_clip_by_norm, lambda grads, m: [g * min(1.0, m / g.norm().item()) for g in grads], "joint norm"),
    (check_clip_by_norm, lambda grads, m: [g.clamp(-m, m) for g in grads], "clamping"),
    (
        check_clip_by_norm,
        lambda grads, m: [g * m / torch.sqrt(sum((x**2).sum() for x in grads)) for g in grads],
        "only when the norm is larger",
    ),
    (
        check_clip_by_norm,
        lambda grads, m: [g * min(1.0, m / sum((x**2).sum() for x in grads).item()) for g in grads],
        "square root",
    ),
    (check_clip_by_norm, clip_in_place, "changed the gradients"),
    (check_clip_by_norm, lambda grads, m: torch.cat([g.flatten() for g in grads]), "list of tensors"),
    (check_clip_by_norm, lambda grads, m: clip_by_hand(grads, m)[:1], "one tensor per gradient"),
    (check_parameter_count, lambda V, d, H, T: count_by_hand(V, d, H, T) + 0 * T + H * H * (T - 1), "must not depend"),
    (check_parameter_count, lambda V, d, H, T: count_by_hand(V, d, H, T) + H, "two bias vectors"),
    (check_parameter_count, lambda V, d, H, T: count_by_hand(V, d, H, T) - V * d, "embedding matrix E"),
    (check_parameter_count, lambda V, d, H, T: count_by_hand(V, d, H, T) - H - V, "biases"),
    (check_parameter_count, lambda V, d, H, T: count_by_hand(V, d, H, T) - H * H, "recurrent matrix"),
    (check_parameter_count, lambda V, d, H, T: count_by_hand(V, d, H, T) + 1, "add up their sizes"),
    (check_parameter_count, lambda V, d, H, T: "many", "one number"),
]


# The same right answers as NumPy arrays: a check judges the value, not the type (issue 33).
RIGHT += [
    (check_elman_step, lambda x, h, W, U, b: torch.tanh(h @ U.T + x @ W.T + b).numpy()),
]
test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


def test_the_reference_count_is_the_slide_formula_and_library_adds_one_bias():
    V, d, H = 50, 6, 9
    assert rnn_lm_parameters(V, d, H) == count_by_hand(V, d, H, 0)
    library = RecurrentLM(V, impl="library", embed_dim=d, hidden_dim=H)
    assert sum(p.numel() for p in library.parameters()) == count_by_hand(V, d, H, 0) + H


def test_a_crash_on_the_class_axis_gets_the_class_axis_hint_not_the_padding_one(capsys):
    """The first reading saw the padding hint on a crash that had nothing to do with padding."""
    assert check_sequence_loss(lambda logits, targets: torch.nn.functional.cross_entropy(logits, targets)) is False
    out = capsys.readouterr().out
    assert "axis 1" in out and "padding" not in out


def test_a_parameter_count_far_off_gets_no_list_of_the_shapes(capsys):
    """The fallback used to list every matrix with its shape: the whole solution."""
    assert check_parameter_count(lambda V, d, H, T: 12345) is False
    out = capsys.readouterr().out
    assert "V × d" not in out and "H × H" not in out and "list every weight matrix" in out
