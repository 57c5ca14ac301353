"""Hidden tests of notebook 10 (generation strategies): new distributions, beams, lengths and α, float32 too.

The top-p cases keep every cumulative mass at least 1e-4 away from p, so that the nucleus does not hinge on
rounding; the beam cases have no tied totals.
"""

from __future__ import annotations

import torch

from course_utils.models.generation.beam import length_divisor
from course_utils.models.generation.sampling import warp, warped_scores
from grading.spec import Case, HiddenExercise, Judged, compare_numbers, numbers_judge

NOTEBOOK = "10_generation_strategies"
MARGIN = 1e-4  # the least distance between p and the mass of the tokens before any token


def _nucleus(probs: torch.Tensor, p: float) -> torch.Tensor:
    """The renormalised nucleus (V,) in float64: the best tokens while the mass before them is below p."""
    probs = probs.double()
    ranked, order = torch.sort(probs, descending=True)  # (V,)
    keep = torch.zeros(len(probs), dtype=torch.bool).scatter(0, order, ranked.cumsum(0) - ranked < p)  # (V,)
    kept = probs * keep
    return kept / kept.sum()


def _distribution(seed: int, vocab: int, scale: float, dtype: torch.dtype) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.softmax(scale * torch.randn(vocab, generator=generator, dtype=torch.float64), dim=0).to(dtype)


def _top_p_cases() -> list[Case]:
    dominant = torch.tensor([0.03, 0.94, 0.02, 0.01], dtype=torch.float64)
    cases = [(_distribution(seed, vocab, scale, dtype), p) for seed, vocab, scale, p, dtype in [
        (9141, 8, 1.5, 0.7, torch.float64), (9142, 40, 2.0, 0.9, torch.float32), (9143, 5, 1.0, 1.0, torch.float64),
        (9144, 20, 1.0, 0.01, torch.float64), (9145, 300, 2.5, 0.5, torch.float64)]]  # fmt: skip
    cases.append((dominant, 0.9))
    for probs, p in cases:  # no cumulative mass within MARGIN of p: no tie at the border, whatever the rounding
        ranked = torch.sort(probs.double(), descending=True).values
        assert p == 1.0 or bool(((ranked.cumsum(0) - ranked - p).abs() > MARGIN).all()), (len(probs), p)
    return [Case((probs, p), label=f"V={len(probs)}, p={p}, {str(probs.dtype)[6:]}") for probs, p in cases]


def _beam_cases() -> list[Case]:
    cases = []
    for seed, (k, vocab, width, dtype) in enumerate([(1, 9, 4, torch.float64), (5, 6, 8, torch.float64),
                                                     (3, 10, 7, torch.float32), (4, 12, 1, torch.float64),
                                                     (2, 3, 6, torch.float64)], start=9151):  # fmt: skip
        generator = torch.Generator().manual_seed(seed)
        beams = -0.5 - 8 * torch.rand(k, generator=generator, dtype=torch.float64)  # (k,)
        nexts = torch.log_softmax(2 * torch.randn(k, vocab, generator=generator, dtype=torch.float64), dim=-1)  # (k, V)
        label = f"k={k}, V={vocab}, width={width}, {str(dtype)[6:]}"
        cases.append(Case((beams.to(dtype), nexts.to(dtype), width), label=label))
    return cases


def _judge_beam(answer, case: Case) -> Judged:
    """The width best (beam, token) continuations, in any order, with their totals."""
    beams, nexts, width = case.args
    totals = beams.double()[:, None] + nexts.double()  # (k, V)
    if not isinstance(answer, list | tuple) or len(answer) != 3:
        return Judged(False, f"return three things (beam_index, token, total); got {type(answer).__name__}")
    try:
        beam, token = (torch.as_tensor(part).reshape(-1) for part in answer[:2])
    except (TypeError, ValueError, RuntimeError) as error:
        return Judged(False, f"beam_index and token must be whole numbers ({error})")
    if beam.shape != (width,) or token.shape != (width,):
        return Judged(False, f"beam_index and token must be ({width},); got {tuple(beam.shape)}, {tuple(token.shape)}")
    if (
        beam.is_floating_point()
        and not torch.equal(beam, beam.round())
        or (token.is_floating_point() and not torch.equal(token, token.round()))
    ):
        return Judged(False, "beam_index and token must hold whole numbers (indices)")
    beam, token = beam.long(), token.long()
    k, vocab = totals.shape
    if bool(((beam < 0) | (beam >= k) | (token < 0) | (token >= vocab)).any()):
        return Judged(False, f"beam indices must lie in [0, {k}) and tokens in [0, {vocab})")
    if len(set(zip(beam.tolist(), token.tolist()))) < width:
        return Judged(False, "the same (beam, token) continuation is returned twice")
    judged = compare_numbers(answer[2], totals[beam, token])
    if not judged.passed:
        return Judged(False, f"the totals are not those of the continuations returned: {judged.message}")
    best = torch.topk(totals.flatten(), width).values  # (width,)
    if not torch.allclose(torch.sort(totals[beam, token], descending=True).values, best):
        return Judged(False, f"not the {width} best of the {k * vocab} continuations")
    return Judged(True, "right")


def _score_cases() -> list[Case]:
    cases = []
    for seed, (kind, alpha, length, dtype) in enumerate([("mean", 0.6, 5, torch.float64), ("hf", 0.8, 11, torch.float64),
                                                         ("gnmt", 1.3, 4, torch.float64), ("hf", 1.5, 1, torch.float64),
                                                         ("gnmt", 0.6, 9, torch.float32), ("mean", 2.0, 30, torch.float64)],
                                                        start=9161):  # fmt: skip
        logprobs = -4 * torch.rand(length, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)  # (t,)
        cases.append(Case((logprobs.to(dtype), kind, alpha), label=f'"{kind}", alpha={alpha}, t={length}'))
    return cases


def _normalised_score(logprobs, kind: str, alpha: float) -> float:
    return float(logprobs.double().sum()) / length_divisor(kind, alpha, len(logprobs))


EXERCISES = (
    HiddenExercise(1, ("top_p_filter",), numbers_judge(_nucleus), _top_p_cases, references=(warp, warped_scores)),
    HiddenExercise(2, ("beam_step",), _judge_beam, _beam_cases),
    HiddenExercise(
        3, ("normalised_score",), numbers_judge(_normalised_score), _score_cases, references=(length_divisor,)
    ),
)
