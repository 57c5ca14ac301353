"""Hidden tests of notebook 08 (transformer self-attention): new lengths, masks, dtypes and seeds."""

from __future__ import annotations

import torch

from course_utils.models.transformer.attention import attention_weights, causal_mask, scaled_dot_product_attention
from course_utils.models.transformer.positional import sinusoidal_positions
from grading.hidden.nb07 import parts_judge
from grading.spec import Case, HiddenExercise, Judged, numbers_judge

NOTEBOOK = "08_transformer_self_attention"


def _mask_cases() -> list[Case]:
    return [Case((length,), label=f"length={length}") for length in (3, 4, 12, 30)]


def _judge_mask(answer, case: Case) -> Judged:
    """A (T, T) boolean mask equal to the causal one; 1s and 0s, or an additive float mask, are not booleans."""
    expected = causal_mask(*case.args)  # (T, T)
    try:
        mask = answer if isinstance(answer, torch.Tensor) else torch.tensor(answer)
    except (TypeError, ValueError, RuntimeError):
        return Judged(False, f"return a (T, T) boolean tensor; got {type(answer).__name__}")
    if mask.shape != expected.shape:
        return Judged(False, f"expected shape {tuple(expected.shape)}, got {tuple(mask.shape)}")
    if mask.dtype != torch.bool:
        return Judged(False, f"the mask must be boolean (True = may attend); got dtype {mask.dtype}")
    wrong = int((mask != expected).sum())
    if wrong:
        return Judged(False, f"{wrong} of {mask.numel()} entries are wrong (row t may attend to the columns s ≤ t)")
    return Judged(True, "right")


def _head_mask(kind: str | None, length: int, generator: torch.Generator) -> torch.Tensor | None:
    """The (T, T) boolean mask of a case (True = may attend); every query keeps at least one key."""
    if kind == "causal":
        return causal_mask(length)
    if kind == "padding":  # the last key is padding, and so is the one before it for T > 3
        real = max(1, length - (2 if length > 3 else 1))
        return (torch.arange(length) < real).expand(length, length).clone()
    if kind == "random":  # not causal, not padding: some future keys allowed, some past ones blocked
        return (torch.rand(length, length, generator=generator) < 0.4) | torch.eye(length, dtype=torch.bool)
    return None


_HEAD_CASES = [  # (B, T, d_model, d_k, mask, dtype)
    (2, 5, 6, 3, None, torch.float64),
    (1, 4, 3, 5, "causal", torch.float32),
    (3, 6, 5, 4, "padding", torch.float64),
    (2, 7, 4, 3, "random", torch.float64),
    (1, 3, 2, 2, "padding", torch.float32),
    (4, 8, 6, 2, "random", torch.float64),
]


def _head_cases() -> list[Case]:
    cases = []
    for seed, (B, T, d_model, d_k, kind, dtype) in enumerate(_HEAD_CASES, start=9101):
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn(B, T, d_model, generator=generator, dtype=dtype)  # (B, T, d_model)
        weights = [torch.randn(d_model, d_k, generator=generator, dtype=dtype) for _ in range(3)]  # (d_model, d_k)
        mask = _head_mask(kind, T, generator)  # (T, T) or None
        args = (x, *weights) if mask is None else (x, *weights, mask)
        label = f"B={B}, T={T}, d_model={d_model}, d_k={d_k}, {kind or 'no'} mask, {str(dtype)[6:]}"
        cases.append(Case(args, label=label))
    return cases


def _attention_head(x, W_q, W_k, W_v, mask=None) -> tuple[torch.Tensor, torch.Tensor]:
    x, W_q, W_k, W_v = (t.double() for t in (x, W_q, W_k, W_v))
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask)  # (B, T, d_k), (B, T, T)


def _encoding_cases() -> list[Case]:
    return [Case((length, d_model), label=f"length={length}, d_model={d_model}")
            for length, d_model in [(3, 2), (7, 6), (1, 8), (40, 24), (16, 128)]]  # fmt: skip


EXERCISES = (
    HiddenExercise(1, ("causal_mask",), _judge_mask, _mask_cases, references=(causal_mask,)),
    HiddenExercise(
        2,
        ("attention_head",),
        parts_judge(_attention_head, ("output", "weights")),
        _head_cases,
        references=(scaled_dot_product_attention, attention_weights),
    ),
    # float32 rounding of pos / 10000^(2i/d) at positions up to 40 (the notebook's 1e-5)
    HiddenExercise(
        3,
        ("positional_encoding",),
        numbers_judge(sinusoidal_positions, rel=1e-5),
        _encoding_cases,
        references=(sinusoidal_positions,),
    ),
)
