"""Self-checks for notebook 10's exercises (generation strategies: top-p, one beam step, length normalisation).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: the nucleus of top-p filtering (the most probable tokens
until their mass reaches p, the token that crosses p kept, Hugging Face's rule); one step of beam search, judged
by a brute force over all k·V continuations (beams grow by the *sum* of log-probabilities); and the normalised
score of a finished hypothesis: ``"mean"`` (eq. 13.16, (1/t) Σ log P), ``"hf"`` (sum / |Y|^α, ``generate()``'s
``length_penalty``) and ``"gnmt"`` (sum / ((5 + |Y|) / 6)^α, Wu et al. 2016).
"""

from __future__ import annotations

import math

import torch

from course_utils.exercises.answers import as_tensors, one_number, shown, shown_lists
from course_utils.exercises import NOT_A_NUMBER, answer_of, close, never_raises, numeric_answer, verdict
from course_utils.models.generation import length_divisor, warp

Tensor = torch.Tensor


def _vector(answer, what: str) -> tuple[Tensor | None, str | None]:
    """``answer`` as a tensor (float64, or int64 for whole numbers), from a tensor, a list or a NumPy array."""
    parts, why = as_tensors(answer, 1, what, floats=False)
    return (None, why) if why else (parts[0].double() if parts[0].is_floating_point() else parts[0], None)


# ---------------------------------------------------------------- exercise: top-p (nucleus) filtering


def _top_p_reference(probs: Tensor, p: float) -> Tensor:
    """The renormalised nucleus (V,) in float64: ``warp``'s top-p on log(probs)."""
    return warp(probs.log(), top_p=p).exp().double()


def _top_p_cases() -> list[tuple[Tensor, float, str]]:
    """(probs (V,) float64, p, what the case tests); none has ties at the border except the tie cases."""
    t = lambda *values: torch.tensor(values, dtype=torch.float64)  # noqa: E731
    cases = [
        (t(0.5, 0.3, 0.15, 0.05), 0.6, "the token that crosses p (0.3, the mass going from 0.5 to 0.8) is kept"),
        (t(0.05, 0.15, 0.5, 0.3), 0.6, "the same distribution in another order: sort by probability first"),
        (
            t(0.5, 0.25, 0.125, 0.125),
            0.75,
            "the top two reach p = 0.75 exactly: stopping there or, as rounding "
            "may have it, keeping a third token are both accepted",
        ),
        (t(0.1, 0.6, 0.2, 0.1), 1.0, "p = 1 keeps every token"),
        (t(0.1, 0.6, 0.2, 0.1), 1e-9, "a tiny p keeps the top token only"),
        (t(0.3, 0.3, 0.2, 0.2), 0.5, "two tied tokens on top: both are needed to reach p"),
        (t(0.25, 0.25, 0.25, 0.25), 0.6, "four ties: any three of them (mass 0.75 reaches p)"),
    ]
    g = torch.Generator().manual_seed(10)
    for vocab, p in ((10, 0.9), (50, 0.95), (50, 0.5), (200, 0.3)):
        probs = torch.softmax(2 * torch.randn(vocab, generator=g, dtype=torch.float64), dim=0)
        cases.append((probs, p, f"a random distribution over {vocab} tokens, p = {p}"))
    return cases


def _top_p_variants(probs: Tensor, p: float) -> dict[str, Tensor]:
    """The nucleus (V,) as the usual mistakes compute it, each named by its hint (the first that fits is shown)."""
    order = torch.argsort(probs, descending=True, stable=True)
    ranked = probs[order]  # (V,) descending
    cum = ranked.cumsum(0)

    def back(keep_sorted: Tensor, renormalise: bool = True) -> Tensor:
        keep = torch.zeros_like(keep_sorted).scatter(0, order, keep_sorted)  # vocabulary order
        kept = probs * keep
        return kept / kept.sum() if renormalise and kept.sum() > 0 else kept

    reference = _top_p_reference(probs, p)
    in_vocab_order = probs.cumsum(0) - probs < p
    return {
        "the kept probabilities must be renormalised: divide them by their sum, so that they add up to 1":
            probs * (reference > 0),
        "the token that crosses p is kept too (Hugging Face's rule): keep a token while the mass of the "
        "better tokens *before* it is still below p, i.e. cumsum - probs < p":
            back(cum < p),
        "the token that crosses p is kept too: keep a token while the mass of the better tokens before it is "
        "still below p (cumsum - probs < p), not while the mass including it is ≤ p":
            back(cum <= p),
        "sort the probabilities in descending order first (torch.sort(probs, descending=True)): the nucleus "
        "is the most probable tokens, not the first ones in vocabulary order":
            probs * in_vocab_order / (probs * in_vocab_order).sum(),
        "return the distribution in the vocabulary's order (V,): put the sorted values back where they came "
        "from, e.g. torch.zeros_like(probs).scatter(0, order, kept_sorted)":
            torch.sort(reference, descending=True).values,
    }  # fmt: skip


TIE_TOLERANCE = 1e-6  # a mass this close to p is a tie: float rounding (a library's softmax, float32) decides it


def _same_nucleus(answer: Tensor, probs: Tensor, p: float) -> bool:
    """The answer is a nucleus: the most probable tokens (any of tied ones), renormalised, as many as it takes for
    the mass before the last kept one to be below p. A token whose mass before it lies within ``TIE_TOLERANCE`` of
    p may be kept or dropped (Hugging Face's warper keeps it or not as its float64 rounding falls)."""
    if answer.shape != probs.shape or not torch.isfinite(answer).all():
        return False
    ranked = torch.sort(probs, descending=True).values  # (V,)
    before = ranked.cumsum(0) - ranked  # (V,): the mass of the better tokens
    fewest, most = max(1, int((before < p - TIE_TOLERANCE).sum())), int((before < p + TIE_TOLERANCE).sum())
    kept = answer > 0
    if not fewest <= int(kept.sum()) <= max(most, fewest):
        return False
    if not bool(kept.all()) and float(probs[kept].min()) < float(probs[~kept].max()) - 1e-12:
        return False  # a dropped token more probable than a kept one
    nucleus = probs * kept / (probs * kept).sum()  # (V,)
    return torch.allclose(answer, nucleus, rtol=1e-5, atol=1e-6)


@never_raises
def check_top_p(fn) -> bool:
    """Exercise: ``fn(probs, p) -> (V,)``: top-p (nucleus) filtering of one next-token distribution.

    probs (V,) float64 sums to 1; p in (0, 1]. Keep the most probable tokens until their mass reaches p
    (the token that crosses p is kept, Hugging Face's rule), set the others to 0 and renormalise, in the
    vocabulary's order. Checked on hand-made distributions (p = 1, a tiny p, ties: any tied token may be the one
    kept, and a mass that reaches p exactly may keep the next token or not) and random ones.
    """
    cases = _top_p_cases()
    for probs, p, about in cases:
        answer, why = answer_of(fn, (probs.clone(), p), "probs is a (V,) tensor, p a float; "
                                "torch.sort(probs, descending=True) gives (values, order)")  # fmt: skip
        if why:
            return verdict(False, why)
        answer, why = _vector(answer, "the filtered distribution (V,)")
        if why:
            return verdict(False, why)
        if answer.dtype == torch.bool:
            return verdict(False, "that is which tokens are kept; return the distribution itself: the kept "
                                  "probabilities renormalised, 0 elsewhere")  # fmt: skip
        answer = answer.double()
        expected = _top_p_reference(probs, p)
        if answer.shape != expected.shape:
            return verdict(False, f"return one probability per token: shape (V,) = {tuple(expected.shape)}, "
                                  f"got {tuple(answer.shape)}")  # fmt: skip
        if _same_nucleus(answer, probs, p):
            continue
        hint = next((name for name, variant in _top_p_variants(probs, p).items()
                     if torch.allclose(answer, variant, rtol=1e-5, atol=1e-6)), None)  # fmt: skip
        if hint is None and torch.allclose(answer.sum(), torch.ones((), dtype=torch.float64), atol=1e-6):
            hint = ("keep the most probable tokens until their mass reaches p (the one that crosses p included), "
                    "0 for the others, then renormalise")  # fmt: skip
        elif hint is None:
            total = shown(1.0, float(answer.sum()), 4, "g")[1]
            hint = f"the result must sum to 1 (yours sums to {total}): renormalise the kept mass"
        example = ""
        want, got = shown_lists(expected.tolist(), answer.tolist())
        if len(probs) <= 4:
            example = (
                f" For probs = {[round(v, 3) for v in probs.tolist()]}, p = {p:g} the nucleus is {want}, yours {got}."
            )
        return verdict(False, f"not the nucleus yet ({about}).{example} Hint: {hint}")
    return verdict(True, f"your top-p keeps the right nucleus on {len(cases)} distributions: the crossing token "
                         "is kept, p = 1 keeps all, a tiny p keeps the top token, ties are handled")  # fmt: skip


# ---------------------------------------------------------------- exercise: one step of beam search

# (k beams, V tokens, width, seed, what the case tests)
_BEAM_CASES = [
    (1, 6, 3, 0, "the first step: one beam, its 3 best tokens"),
    (3, 7, 3, 1, "3 beams of 7 tokens"),
    (4, 10, 4, 2, "4 beams of 10 tokens"),
    (2, 6, 5, 3, "a width larger than the number of beams"),
    (3, 4, 12, 4, "width = k·V: every continuation"),
    (3, 8, 3, 5, "one beam far ahead of the others: all the best continuations extend it"),
    (3, 3, 4, 6, "tied totals: any of the tied continuations may be chosen"),
]


def _beam_case(k: int, vocab: int, width: int, seed: int) -> tuple[Tensor, Tensor]:
    """beam_logprobs (k,) and next_logprobs (k, V), float64."""
    g = torch.Generator().manual_seed(seed)
    if seed == 6:  # ties: equal beams, and the same two-valued row for each
        row = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64).log()
        return torch.full((k,), -1.0, dtype=torch.float64), row.expand(k, vocab).clone()
    beams = -0.5 - torch.rand(k, generator=g, dtype=torch.float64) * 3  # (k,): the prefixes' log-probabilities
    if seed == 5:
        beams = torch.tensor([-1.0, -20.0, -25.0], dtype=torch.float64)
    nexts = torch.log_softmax(torch.randn(k, vocab, generator=g, dtype=torch.float64) * 2, dim=-1)  # (k, V)
    return beams, nexts


def _beam_answer(answer, width: int) -> tuple[tuple[Tensor, Tensor, Tensor] | None, str | None]:
    if not isinstance(answer, (tuple, list)) or len(answer) != 3:
        return None, f"return three tensors (beam_index, token, total), each (width,); got {type(answer).__name__}"
    parts = []
    for name, part in zip(("beam_index", "token", "total"), answer):
        part, why = _vector(part, name)
        if why:
            return None, why
        part = part.flatten() if part.numel() == width else part
        if part.shape != (width,):
            return None, f"{name} must have shape (width,) = ({width},); got {tuple(part.shape)}"
        parts.append(part)
    beam, token, total = parts
    for name, part in (("beam_index", beam), ("token", token)):
        if part.is_floating_point() and not torch.equal(part, part.round()):
            return None, (f"{name} must hold whole numbers (indices); got {part.tolist()[:4]}… Hint: the "
                          "returns are (beam_index, token, total), in this order")  # fmt: skip
    return (beam.long(), token.long(), total.double()), None


def _beam_hint(beam: Tensor, token: Tensor, total: Tensor, beams: Tensor, nexts: Tensor, width: int) -> str:
    """Name the mistake of a wrong beam step."""
    k, vocab = nexts.shape
    in_range = bool(((beam >= 0) & (beam < k) & (token >= 0) & (token < vocab)).all())
    flat = (beams[:, None] + nexts).flatten()  # (k*V,)
    best = torch.sort(torch.topk(flat, width).values).values
    if not in_range:
        if (bool(((token >= 0) & (token < k) & (beam >= 0) & (beam < vocab)).all())
                and torch.allclose(total, beams[token] + nexts[token, beam], atol=1e-6)):  # fmt: skip
            return ("beam_index and token look swapped: return (beam_index, token, total) in this order, and from "
                    "a flat index i over the (k, V) totals, beam = i // V and token = i % V")  # fmt: skip
        return (f"beam indices lie in [0, k) = [0, {k}), tokens in [0, V) = [0, {vocab}): from a flat index i "
                "over the (k, V) totals, beam = i // V and token = i % V")  # fmt: skip
    own = beams[beam] + nexts[beam, token]  # (width,): the totals of the continuations named
    if torch.allclose(torch.sort(total).values, best, atol=1e-6):
        return (
            "the totals are right but they are not those of the (beam_index, token) pairs returned: from a flat "
            "index i over the (k, V) totals, beam = i // V and token = i % V (V = next_logprobs.shape[1])"
        )
    if torch.allclose(total, nexts[beam, token], atol=1e-6) and bool(beams[beam].abs().max() > 1e-6):
        return ("the total is the running sum: add each beam's log-probability so far, "
                "total = beam_logprobs[b] + next_logprobs[b, w]")  # fmt: skip
    if torch.allclose(total, own.exp(), atol=1e-9):
        return "keep everything in log space: the totals are sums of log-probabilities, not probabilities"
    if not torch.allclose(total, own, atol=1e-6):
        return "total[j] = beam_logprobs[beam_index[j]] + next_logprobs[beam_index[j], token[j]]"
    pairs = set(zip(beam.tolist(), token.tolist()))
    if len(pairs) < width:
        return "the continuations must be different (beam, token) pairs: take the top `width` of the k·V, each once"
    if torch.allclose(torch.sort(total).values, torch.sort(torch.topk(flat, width, largest=False).values).values):
        return "take the *largest* totals (log-probabilities: closer to 0 is more probable)"
    by_next = torch.sort(torch.topk(nexts.flatten(), width).indices).values
    if torch.equal(torch.sort(beam * vocab + token).values, by_next):
        return ("rank by the total, not by next_logprobs alone: total = beam_logprobs[b] + next_logprobs[b, w], "
                "so a beam far behind rarely survives")  # fmt: skip
    return ("not the `width` best of all k·V continuations: rank them jointly (flatten the (k, V) totals and take "
            "torch.topk), not the best of each beam")  # fmt: skip


@never_raises
def check_beam_step(fn) -> bool:
    """Exercise: ``fn(beam_logprobs, next_logprobs, width) -> (beam_index, token, total)``: one step of beam search.

    beam_logprobs (k,): each running beam's log-probability so far; next_logprobs (k, V): each beam's
    next-token log-probabilities. Return the ``width`` best continuations (beam b, token w) of all k·V, ranked
    by total = beam_logprobs[b] + next_logprobs[b, w]: beam_index (width,), token (width,) and total (width,).
    Any order, and ties broken any way; checked against a brute force over all k·V continuations.
    """
    for k, vocab, width, seed, about in _BEAM_CASES:
        beams, nexts = _beam_case(k, vocab, width, seed)
        answer, why = answer_of(fn, (beams.clone(), nexts.clone(), width),
                                "beam_logprobs is (k,), next_logprobs (k, V), width an int; "
                                "beam_logprobs[:, None] + next_logprobs gives the (k, V) totals")  # fmt: skip
        if why:
            return verdict(False, why)
        answer, why = _beam_answer(answer, width)
        if why:
            return verdict(False, f"for k={k}, V={vocab}, width={width}: {why}")
        beam, token, total = answer
        flat = (beams[:, None] + nexts).flatten()  # (k*V,)
        best = torch.sort(torch.topk(flat, width).values).values
        in_range = bool(((beam >= 0) & (beam < k) & (token >= 0) & (token < vocab)).all())
        ok = (in_range and len(set(zip(beam.tolist(), token.tolist()))) == width
              and torch.allclose(total, beams[beam] + nexts[beam, token], atol=1e-6)
              and torch.allclose(torch.sort(total).values, best, atol=1e-6))  # fmt: skip
        if not ok:
            hint = _beam_hint(beam, token, total, beams, nexts, width)
            return verdict(False, f"not the best continuations yet ({about}; k={k}, V={vocab}, width={width}). "
                                  f"Hint: {hint}")  # fmt: skip
    return verdict(True, f"your beam step matches a brute force over all k·V continuations on {len(_BEAM_CASES)} "
                         "cases (one beam, width > k, width = k·V, ties)")  # fmt: skip


# ---------------------------------------------------------------- exercise: the length-normalised score

KINDS = ("mean", "hf", "gnmt")
# a short and a long hypothesis (sums -2.5 and -5.0, α = 0.6): mean and hf prefer the long one, gnmt the short
SHORT = (-1.0, -1.5)
LONG = (-0.5, -0.25, -1.0, -0.75, -0.5, -0.6, -0.9, -0.5)
_RANK_ALPHA = 0.6


def _score_reference(logprobs: Tensor, kind: str, alpha: float) -> float:
    """``beam_search``'s normalised score: sum of log P divided by the kind's divisor at |Y| = len(logprobs)."""
    return float(logprobs.sum()) / length_divisor(kind, alpha, len(logprobs))


def _score_cases() -> list[tuple[Tensor, str, float]]:
    g = torch.Generator().manual_seed(13)
    sequences = [torch.tensor(SHORT, dtype=torch.float64), torch.tensor(LONG, dtype=torch.float64),
                 torch.tensor([-2.0], dtype=torch.float64)]  # fmt: skip
    sequences += [-torch.rand(t, generator=g, dtype=torch.float64) * 3 for t in (3, 7, 20)]
    return [(s, kind, alpha) for kind in KINDS for alpha in (_RANK_ALPHA, 1.0, 2.0) for s in sequences]


def _score_variants(logprobs: Tensor, kind: str, alpha: float) -> dict[str, float]:
    """Scores as the usual mistakes compute them, each named by its hint (the first that fits is shown)."""
    total, t = float(logprobs.sum()), len(logprobs)
    return {
        "the score is normalised: divide the sum of log-probabilities by the kind's divisor "
        "(mean: t; hf: t ** alpha; gnmt: ((5 + t) / 6) ** alpha)": total,
        "mean is eq. 13.16, (1/t) Σ log P: the average log-probability, alpha plays no part":
            total / t ** alpha if kind == "mean" else math.nan,
        "hf divides by |Y| ** alpha (a power), not by |Y| · alpha": total / (t * alpha),
        "hf divides by |Y| ** alpha, not by |Y|": total / t if kind == "hf" else math.nan,
        "gnmt divides by ((5 + |Y|) / 6) ** alpha: divide 5 + |Y| by 6 before the power":
            total / (5 + t) ** alpha,
        "gnmt divides by ((5 + |Y|) / 6) ** alpha: raise it to the power alpha": total / ((5 + t) / 6),
        "gnmt divides by ((5 + |Y|) / 6) ** alpha, not by |Y| ** alpha (that is hf)":
            total / t ** alpha if kind == "gnmt" else math.nan,
        "divide by the divisor, do not multiply": total * length_divisor(kind, alpha, t),
        "the scores are in log space: sum the log-probabilities, do not exponentiate them":
            math.exp(total) / length_divisor(kind, alpha, t),
    }  # fmt: skip


@never_raises
def check_length_normalised_score(fn) -> bool:
    """Exercise: ``fn(logprobs, kind, alpha) -> float``: a finished hypothesis's length-normalised score.

    logprobs (t,): the log-probabilities log P(yᵢ | y<ᵢ, x) of its t generated tokens (</s> included);
    kind one of ``"mean"`` (eq. 13.16: (1/t) Σ log P; alpha unused), ``"hf"`` (Σ log P / t^α, Hugging Face's
    ``length_penalty``) and ``"gnmt"`` (Σ log P / ((5 + t) / 6)^α, Wu et al. 2016). Checked on sequences of 1 to
    20 tokens and α = 0.6, 1, 2, among them a short and a long hypothesis that the three rank differently.
    """
    cases = _score_cases()
    for logprobs, kind, alpha in cases:
        args = (logprobs.clone(), kind, alpha)
        answer, why = answer_of(fn, args, "logprobs is a (t,) tensor, kind a string, alpha a float; "
                                "logprobs.sum() and len(logprobs) are all you need")  # fmt: skip
        if why:
            return verdict(False, why)
        value, why = one_number(answer, finite=False)
        if value is not None and math.isnan(value):
            return verdict(False, f'for "{kind}" (t={len(logprobs)}, alpha={alpha:g}): {NOT_A_NUMBER}')
        if why:
            shape = f" of shape {tuple(answer.shape)}" if isinstance(answer, Tensor) else ""
            return verdict(False, f"return one number (the score); got {type(answer).__name__}{shape}. "
                                  "Hint: sum the log-probabilities, then divide")  # fmt: skip
        expected = _score_reference(logprobs, kind, alpha)
        if close(value, expected):
            continue
        hint = next((name for name, variant in _score_variants(logprobs, kind, alpha).items()
                     if close(value, variant)),
                    "mean: Σ log P / t; hf: Σ log P / t ** alpha; "
                    "gnmt: Σ log P / ((5 + t) / 6) ** alpha")  # fmt: skip
        want, got = shown(expected, value)
        return verdict(False, f'not the "{kind}" score yet (t={len(logprobs)}, alpha={alpha:g}: expected '
                              f"{want}, got {got}). Hint: {hint}")  # fmt: skip
    rankings = []
    for kind in KINDS:
        scores = [numeric_answer(fn, (torch.tensor(s, dtype=torch.float64), kind, _RANK_ALPHA))[0]
                  for s in (SHORT, LONG)]  # fmt: skip
        rankings.append(f"{kind} prefers the {'long' if scores[1] > scores[0] else 'short'} one")
    return verdict(
        True,
        f"your scores are right on {len(cases)} cases. On a short (2 tokens, Σ = -2.5) "
        f"and a long (8 tokens, Σ = -5.0) hypothesis, α = {_RANK_ALPHA}: {'; '.join(rankings)}",
    )
