"""The self-checks of notebook 10: each passes right answers, fails wrong and unfinished ones, never raises."""

import math

import numpy as np
import pytest
import torch
from exercise_contract import contract_tests, solution_text

from course_utils.exercises.generation import (
    LONG,
    SHORT,
    check_beam_step,
    check_length_normalised_score,
    check_top_p,
)
from course_utils.models.generation import length_divisor, warp

CHECKS = (check_top_p, check_beam_step, check_length_normalised_score)


# ----- the reference solutions (the notebook's <details> blocks show these) -----


def top_p(probs, p):
    ranked, order = torch.sort(probs, descending=True)  # (V,) most probable first
    mass_before = torch.cumsum(ranked, dim=0) - ranked  # the mass of the better tokens
    keep_sorted = mass_before < p  # the token crossing p is kept
    keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)  # back to vocabulary order
    kept = probs * keep
    return kept / kept.sum()


def beam_step(beam_logprobs, next_logprobs, width):
    totals = beam_logprobs[:, None] + next_logprobs  # (k, V): log-probabilities add
    best = torch.topk(totals.flatten(), width)  # the width best of all k·V
    V = next_logprobs.shape[1]
    return best.indices // V, best.indices % V, best.values  # beam, token, total


def score(logprobs, kind, alpha):
    t, total = len(logprobs), float(logprobs.sum())
    if kind == "mean":
        return total / t  # eq. 13.16
    if kind == "hf":
        return total / t**alpha  # generate()'s length_penalty
    return total / ((5 + t) / 6) ** alpha  # GNMT


SOLUTIONS = [(check_top_p, top_p), (check_beam_step, beam_step), (check_length_normalised_score, score)]


# ----- answers to the top-p exercise -----


def nucleus(probs, p, *, rule="before<p", renormalise=True, sort=True, scatter=True):
    """Top-p with one knob turned: the usual mistakes."""
    ranked, order = torch.sort(probs, descending=True) if sort else (probs, torch.arange(len(probs)))
    cum = torch.cumsum(ranked, dim=0)
    rules = {"before<p": cum - ranked < p, "cum<p": cum < p, "cum<=p": cum <= p, "before<=p": cum - ranked <= p}
    keep_sorted = rules[rule]
    kept_sorted = ranked * keep_sorted
    if renormalise:
        kept_sorted = kept_sorted / kept_sorted.sum()
    if not scatter:
        return kept_sorted
    return torch.zeros_like(probs).scatter(0, order, kept_sorted)


def top_p_in_loops(probs, p):
    """Plain Python, ties broken by the last index first (another tie-break than torch's)."""
    values = probs.tolist()
    ranked = sorted(range(len(values)), key=lambda i: (-values[i], -i))
    out, mass = [0.0] * len(values), 0.0
    for i in ranked:
        if mass >= p:
            break
        out[i] = values[i]
        mass += values[i]
    return [v / sum(out) for v in out]


def top_p_via_warp(probs, p):
    return warp(probs.log(), top_p=p).exp()


def top_p_float32_numpy(probs, p):
    probs = probs.float().numpy()
    order = np.argsort(-probs, kind="stable")
    keep = np.zeros_like(probs, dtype=bool)
    keep[order[(np.cumsum(probs[order]) - probs[order]) < p]] = True
    kept = np.where(keep, probs, 0)
    return torch.from_numpy(kept / kept.sum())


# ----- answers to the beam-step exercise -----


def beam_step_in_loops(beam_logprobs, next_logprobs, width):
    """Brute force, ascending order, as lists."""
    k, V = next_logprobs.shape
    all_ = sorted((float(beam_logprobs[b] + next_logprobs[b, w]), b, w) for b in range(k) for w in range(V))
    best = all_[-width:]
    return [b for _, b, _ in best], [w for _, _, w in best], [s for s, _, _ in best]


def beam_step_with(beam_logprobs, next_logprobs, width, *, add=True, largest=True, per_beam=False, divide_by=None):
    k, V = next_logprobs.shape
    totals = (beam_logprobs[:, None] if add else 0) + next_logprobs
    if per_beam:  # each beam's best token, then the best of those (repeated to fill the width)
        values, tokens = totals.max(dim=1)
        order = torch.argsort(values, descending=True).repeat(width)[:width]
        return order, tokens[order], values[order]
    best = torch.topk(totals.flatten(), width, largest=largest)
    V_ = divide_by or V
    return best.indices // V_, best.indices % V_, best.values


def beam_step_ranked_by_next(beam_logprobs, next_logprobs, width):
    V = next_logprobs.shape[1]
    index = torch.topk(next_logprobs.flatten(), width).indices
    beam, token = index // V, index % V
    return beam, token, beam_logprobs[beam] + next_logprobs[beam, token]


# ----- answers to the score exercise -----


def score_with(logprobs, kind, alpha, *, gnmt=lambda t, a: ((5 + t) / 6) ** a, hf=lambda t, a: t**a,
               mean=lambda t, a: t):  # fmt: skip
    t, total = len(logprobs), logprobs.sum()
    return total / {"mean": mean, "hf": hf, "gnmt": gnmt}[kind](t, alpha)


def top_p_transformers(probs, p):
    """Hugging Face's own warper on the log-probabilities: its float64 softmax puts the mass of the top two of
    (0.5, 0.25, 0.125, 0.125) a hair above 0.75, so at p = 0.75 it keeps a third token."""
    from transformers.generation.logits_process import TopPLogitsWarper

    logits = TopPLogitsWarper(top_p=p)(None, probs.log()[None])  # (1, V), -inf where dropped
    return torch.softmax(logits, dim=-1)[0]


def top_p_from_logits(probs, p):
    """From scratch on softmax(log probs), as a model's logits would come: the same rounding as the library."""
    return nucleus(torch.softmax(probs.log(), dim=-1), p, rule="before<=p")


RIGHT = [
    (check_top_p, top_p),
    (check_top_p, top_p_transformers),
    (check_top_p, top_p_from_logits),
    (check_top_p, lambda probs, p: nucleus(probs, p, rule="before<=p")),
    (check_top_p, top_p_in_loops),
    (check_top_p, top_p_via_warp),
    (check_top_p, top_p_float32_numpy),
    (check_beam_step, beam_step),
    (check_beam_step, beam_step_in_loops),
    (check_beam_step, lambda b, n, w: tuple(t.float() for t in beam_step(b, n, w))),
    (check_length_normalised_score, score),
    (check_length_normalised_score, score_with),  # a 0-d tensor
    (check_length_normalised_score, lambda lp, kind, a: float(lp.sum() / length_divisor(kind, a, len(lp)))),
]

WRONG = [
    (check_top_p, lambda probs, p: nucleus(probs, p, renormalise=False), "renormalised"),
    (check_top_p, lambda probs, p: nucleus(probs, p, rule="cum<p"), "the token that crosses p is kept"),
    (check_top_p, lambda probs, p: nucleus(probs, p, rule="cum<=p"), "the token that crosses p is kept"),
    (check_top_p, lambda probs, p: nucleus(probs, p, sort=False), "descending order first"),
    (check_top_p, lambda probs, p: nucleus(probs, p, scatter=False), "vocabulary's order"),
    (check_top_p, lambda probs, p: nucleus(probs, p) > 0, "return the distribution itself"),
    (check_top_p, lambda probs, p: nucleus(probs, p)[:-1], "shape (V,)"),
    (check_top_p, lambda probs, p: probs, "not the nucleus yet"),
    (check_top_p, lambda probs, p: "probs", "not a number"),
    (check_top_p, lambda probs, p: nucleus(probs, p) * 2, "must sum to 1"),
    (check_beam_step, beam_step_ranked_by_next, "not by next_logprobs alone"),
    (check_beam_step, lambda b, n, w: beam_step_with(b, n, w, add=False), "add each beam's log-probability"),
    (check_beam_step, lambda b, n, w: beam_step_with(b, n, w, largest=False), "*largest*"),
    (check_beam_step, lambda b, n, w: beam_step_with(b, n, w, per_beam=True), "different (beam, token) pairs"),
    (check_beam_step, lambda b, n, w: beam_step_with(b, n, w, divide_by=len(b)), "i // V"),
    (
        check_beam_step,
        lambda b, n, w: (beam_step(b, n, w)[1], beam_step(b, n, w)[0], beam_step(b, n, w)[2]),
        "swapped",
    ),
    (check_beam_step, lambda b, n, w: beam_step(b, n, w)[:2], "three tensors"),
    (check_beam_step, lambda b, n, w: (*beam_step(b, n, w)[:2], beam_step(b, n, w)[2].exp()), "log space"),
    (check_beam_step, lambda b, n, w: beam_step(b, n, w)[::-1], "whole numbers"),
    (check_length_normalised_score, lambda lp, kind, a: float(lp.sum()), "the score is normalised"),
    (
        check_length_normalised_score,
        lambda lp, kind, a: score_with(lp, kind, a, mean=lambda t, a: t**a),
        "alpha plays no part",
    ),
    (
        check_length_normalised_score,
        lambda lp, kind, a: score_with(lp, kind, a, hf=lambda t, a: t * a),
        "not by |Y| · alpha",
    ),
    (check_length_normalised_score, lambda lp, kind, a: score_with(lp, kind, a, hf=lambda t, a: t), "not by |Y|"),
    (
        check_length_normalised_score,
        lambda lp, kind, a: score_with(lp, kind, a, gnmt=lambda t, a: (5 + t) ** a),
        "divide 5 + |Y| by 6",
    ),
    (
        check_length_normalised_score,
        lambda lp, kind, a: score_with(lp, kind, a, gnmt=lambda t, a: (5 + t) / 6),
        "raise it to the power alpha",
    ),
    (check_length_normalised_score, lambda lp, kind, a: score_with(lp, kind, a, gnmt=lambda t, a: t**a), "that is hf"),
    (
        check_length_normalised_score,
        lambda lp, kind, a: float(lp.sum()) * length_divisor(kind, a, len(lp)),
        "do not multiply",
    ),
    (check_length_normalised_score, lambda lp, kind, a: lp / len(lp), "return one number"),
    (check_length_normalised_score, lambda lp, kind, a: lp.exp().sum() / len(lp), 'not the "mean" score yet'),
]


test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


@pytest.mark.parametrize("check, solution", SOLUTIONS)
def test_the_reference_solutions_pass(capsys, check, solution):
    assert check(solution) is True
    assert capsys.readouterr().out.startswith("✓")


def test_the_reference_solutions_agree_with_the_course_code():
    g = torch.Generator().manual_seed(0)
    for p in (0.1, 0.5, 0.9, 1.0):
        probs = torch.softmax(torch.randn(30, generator=g, dtype=torch.float64), 0)
        assert torch.allclose(top_p(probs, p), warp(probs.log(), top_p=p).exp().double(), atol=1e-6)
    beams, nexts = torch.tensor([0.0, -1.0]), torch.log_softmax(torch.randn(2, 5, generator=g), -1)
    beam, token, total = beam_step(beams, nexts, 3)
    flat = sorted((beams[:, None] + nexts).flatten().tolist(), reverse=True)
    assert total.tolist() == pytest.approx(flat[:3]) and torch.allclose(total, beams[beam] + nexts[beam, token])
    for kind in ("mean", "hf", "gnmt"):
        lp = torch.tensor(LONG)
        assert score(lp, kind, 0.6) == pytest.approx(float(lp.sum()) / length_divisor(kind, 0.6, len(lp)))


def test_the_short_and_the_long_hypothesis_are_ranked_differently(capsys):
    """The case the notebook shows: mean and hf prefer the long hypothesis, gnmt the short one (α = 0.6)."""
    short, long = torch.tensor(SHORT), torch.tensor(LONG)
    prefers_long = {kind: score(long, kind, 0.6) > score(short, kind, 0.6) for kind in ("mean", "hf", "gnmt")}
    assert prefers_long == {"mean": True, "hf": True, "gnmt": False}
    assert math.isclose(float(short.sum()), -2.5) and math.isclose(float(long.sum()), -5.0)
    assert check_length_normalised_score(score)
    out = capsys.readouterr().out
    assert "mean prefers the long one; hf prefers the long one; gnmt prefers the short one" in out


def test_the_notebooks_solutions_hold_the_reference_answers_and_the_docstrings_do_not():
    """The answers live in the notebook's <details> solutions; Shift-Tab on a check must not show them."""
    solutions = solution_text("10_generation_strategies")
    for answer, check in [
        ("mass_before = torch.cumsum(ranked, dim=0) - ranked", check_top_p),
        ("best = torch.topk(totals.flatten(), width)", check_beam_step),
        ("return total / ((5 + t) / 6) ** alpha", check_length_normalised_score),
    ]:
        assert answer in solutions, answer
        assert answer not in check.__doc__, check.__name__
