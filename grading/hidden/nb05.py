"""Hidden tests of notebook 05 (the RNN language model): new shapes, dtypes and seeds."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.models.recurrent.rnn import elman_step
from grading.spec import Case, HiddenExercise, Judged, compare_numbers, equal_judge, numbers_judge

NOTEBOOK = "05_rnn_language_models"


def _draw(seed: int, shapes, dtype=torch.float64, scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(scale * torch.randn(shape, generator=generator, dtype=dtype) for shape in shapes)


def _elman_cases() -> list[Case]:
    cases = []
    for seed, (B, D, H, dtype) in enumerate([(2, 5, 3, torch.float64), (7, 2, 6, torch.float32),
                                              (1, 1, 1, torch.float64), (5, 8, 4, torch.float64)], start=9051):  # fmt: skip
        args = _draw(seed, [(B, D), (B, H), (H, D), (H, H), (H,)], dtype)
        cases.append(Case(args, label=f"B={B}, D={D}, H={H}, {str(dtype)[6:]}"))
    return cases


def _loss_cases() -> list[Case]:
    cases = []
    for seed, (B, T, V, lengths) in enumerate([(2, 3, 4, [3, 1]), (4, 6, 9, [6, 2, 5, 4]),
                                               (1, 5, 3, [5]), (3, 2, 11, [2, 2, 1])], start=9061):  # fmt: skip
        generator = torch.Generator().manual_seed(seed)
        logits = 3 * torch.randn(B, T, V, generator=generator, dtype=torch.float64)  # (B, T, V)
        targets = torch.randint(V, (B, T), generator=generator)  # (B, T)
        for row, length in enumerate(lengths):
            targets[row, length:] = IGNORE_INDEX
        cases.append(Case((logits, targets), label=f"B={B}, T={T}, V={V}, lengths {lengths}"))
    return cases


def _sequence_loss(logits, targets) -> float:
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX).item()


def _clip_cases() -> list[Case]:
    big = list(_draw(9071, [(3, 2), (4,), (2, 2)], torch.float32, scale=4.0))
    small = list(_draw(9072, [(5,), (1, 3)], torch.float32, scale=0.001))
    return [Case((big, 0.5), label="three tensors of joint norm > max_norm"),
            Case((small, 3.0), label="gradients already below max_norm"),
            Case(([torch.tensor([0.0, 6.0, 8.0])], 5.0), label="one gradient of norm 10")]  # fmt: skip


def _clipped(grads, max_norm) -> list[torch.Tensor]:
    norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))
    return [g.double() * min(1.0, max_norm / norm.item()) for g in grads]


def _judge_clip(answer, case: Case) -> Judged:
    expected = _clipped(*case.args)
    if not isinstance(answer, list | tuple) or len(answer) != len(expected):
        return Judged(False, f"return a list of {len(expected)} tensors, one per gradient")
    for index, (part, reference) in enumerate(zip(answer, expected)):
        judged = compare_numbers(part, reference, rel=1e-5)
        if not judged.passed:
            return Judged(False, f"tensor {index}: {judged.message}")
    return Judged(True, "right")


def _count_cases() -> list[Case]:
    return [Case((V, d, H, T), label=f"V={V}, d={d}, H={H}, T={T}")
            for V, d, H, T in [(37, 5, 11, 3), (37, 5, 11, 90), (1200, 32, 16, 7), (9, 9, 9, 1)]]  # fmt: skip


def _parameter_count(V: int, d: int, H: int, T: int) -> int:
    model = RecurrentLM(V, impl="scratch", embed_dim=d, hidden_dim=H)
    return sum(p.numel() for p in model.parameters())


EXERCISES = (
    HiddenExercise(1, ("my_elman_step",), numbers_judge(elman_step), _elman_cases, references=(elman_step,)),
    HiddenExercise(2, ("my_sequence_loss",), numbers_judge(_sequence_loss, rel=1e-6), _loss_cases),
    HiddenExercise(3, ("my_clip",), _judge_clip, _clip_cases),
    HiddenExercise(4, ("my_parameter_count",), equal_judge(_parameter_count), _count_cases),
)
