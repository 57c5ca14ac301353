"""Hidden tests of notebook 06 (the LSTM and ELMo): new shapes, dtypes and seeds; the references are the course's
``lstm_step``, ``ScalarMix``, autograd through the cell recursion and ``nn.LSTM``."""

from __future__ import annotations

import torch
from torch import nn

from course_utils.exercises.lstm import cell_path_gradient
from course_utils.models.recurrent.recurrent_lm import ScalarMix
from course_utils.models.recurrent.rnn import lstm_step
from grading.spec import Case, HiddenExercise, Judged, compare_numbers, numbers_judge

NOTEBOOK = "06_lstm_and_elmo"


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _step_cases() -> list[Case]:
    cases = []
    for seed, (B, D, H, dtype) in enumerate([(3, 4, 5, torch.float64), (1, 1, 1, torch.float64),
                                              (6, 3, 2, torch.float32), (2, 7, 4, torch.float64)], start=9061):  # fmt: skip
        generator = _generator(seed)
        shapes = [(B, D), (B, H), (B, H), (4 * H, D), (4 * H, H), (4 * H,)]  # x, h_prev, c_prev, W, U, b
        args = tuple(torch.randn(shape, generator=generator, dtype=dtype) for shape in shapes)
        cases.append(Case(args, label=f"B={B}, D={D}, H={H}, {str(dtype)[6:]}"))
    return cases


def _judge_step(answer, case: Case) -> Judged:
    x, h_prev, c_prev, W, U, b = (arg.double() for arg in case.args)
    expected = lstm_step(x, (h_prev, c_prev), (W, U, b))[:2]  # (h_t, c_t), float64
    if not isinstance(answer, list | tuple) or len(answer) != 2:
        return Judged(False, "return a pair (h_t, c_t)")
    for name, part, reference in zip(("h_t", "c_t"), answer, expected):
        judged = compare_numbers(part, reference)
        if not judged.passed:
            return Judged(False, f"{name}: {judged.message}")
    return Judged(True, "right")


def _mix_cases() -> list[Case]:
    cases = []
    for seed, (layers, tokens, width, dtype) in enumerate([(3, 5, 4, torch.float64), (1, 2, 3, torch.float64),
                                                           (5, 1, 6, torch.float32),
                                                           (2, 7, 2, torch.float64)], start=9071):  # fmt: skip
        generator = _generator(seed)
        stacked = torch.randn(layers, tokens, width, generator=generator, dtype=dtype)  # (L+1, T, D)
        w = 3 * torch.randn(layers, generator=generator, dtype=dtype)  # (L+1,)
        gamma = (0.2 + 2 * torch.rand((), generator=generator, dtype=torch.float64)).to(dtype)  # ()
        cases.append(Case((stacked, w, gamma), label=f"{layers} layers, T={tokens}, D={width}, {str(dtype)[6:]}"))
    return cases


@torch.no_grad()
def _scalar_mix(layers: torch.Tensor, w: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """``ScalarMix`` with weights w and scale γ, in float64: (L+1, T, D) → (T, D)."""
    mix = ScalarMix(layers.shape[0]).double()
    mix.w.copy_(w)
    mix.gamma.copy_(gamma)
    return mix(layers.double())


def _cell_cases() -> list[Case]:
    cases = []
    for seed, (T, H, k, t, dtype) in enumerate([(9, 4, 2, 8, torch.float64), (1, 3, 0, 0, torch.float64),
                                                (6, 5, 0, 5, torch.float32), (5, 1, 1, 3, torch.float64),
                                                (4, 2, 3, 3, torch.float64)], start=9081):  # fmt: skip
        forget = torch.rand(T, H, generator=_generator(seed), dtype=dtype)  # (T, H) in (0, 1)
        cases.append(Case((forget, k, t), label=f"T={T}, H={H}, k={k}, t={t}, {str(dtype)[6:]}"))
    return cases


def _count_cases() -> list[Case]:
    return [Case((D, H), label=f"nn.LSTM({D}, {H})") for D, H in [(7, 3), (1000, 1), (2, 512), (33, 33)]]


def _lstm_parameters(input_size: int, hidden_size: int) -> int:
    return sum(p.numel() for p in nn.LSTM(input_size, hidden_size).parameters())


EXERCISES = (
    HiddenExercise(1, ("my_lstm_step",), _judge_step, _step_cases, references=(lstm_step,)),
    HiddenExercise(2, ("scalar_mix",), numbers_judge(_scalar_mix), _mix_cases),
    HiddenExercise(3, ("my_cell_gradient",), numbers_judge(cell_path_gradient), _cell_cases),
    HiddenExercise(4, ("lstm_parameters",), numbers_judge(_lstm_parameters), _count_cases),
)
