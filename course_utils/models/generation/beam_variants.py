"""Beam search with its hooks: a trace of every step (for the beam widget), and beam sampling.

``beam.beam_search`` is the loop written to be read; ``traced_beam_search`` runs the same search
through ``_beams``, recording each step's beams and 2k candidates, and ``beam_sample`` draws the candidates
instead of taking the best. The tests check ``traced_beam_search`` against ``beam_search`` and both against
``generate()``. Nothing here copies Hugging Face code: the semantics were read there and written again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import transformers
from packaging.version import Version

from course_utils.models.generation.beam import check_beam_args, length_divisor
from course_utils.models.generation.decoders import Generation, decoder_for, step_logprobs
from course_utils.models.generation.sampling import check_warp_args, warped_scores

# transformers 5.24 changed beam sampling: the drawn candidates are sorted by score before they are considered
# (``_get_top_k_continuations``); up to 5.23 they are considered in the order drawn. ``beam_sample`` follows the
# installed release, so that it matches ``generate()`` on either side of the change.
SORTS_DRAWN_BEAMS = Version(transformers.__version__).release >= (5, 24)


@dataclass
class Candidate:
    """One continuation a beam step considered: beam ``parent`` (its index in that step's ``beams``) + ``token``.

    ``total``: the running sum of log-probabilities with it; ``status``: "running" (one of the next k
    beams), "finished" (a complete hypothesis, entered in the finished list), "dropped" (ended, but ranked
    below k: ``generate()`` does not keep it), "pruned" (did not end, and was not among the best k);
    ``score``: the normalised score of a finished hypothesis, else None.
    """

    parent: int
    token: int
    total: float
    status: str
    score: float | None = None


@dataclass
class BeamStep:
    """What one beam step saw: the running ``beams`` (their generated ids and running ``totals``) and the 2k
    ``candidates`` (those with a possible total: the first step's idle copies and -inf ones are left out).
    A beam whose total is below -1e8 is such an idle copy: ``live`` lists the others."""

    beams: list[list[int]]
    totals: list[float]
    candidates: list[Candidate]
    stopped: bool = False  # the search ended after this step

    @property
    def live(self) -> list[int]:
        return [i for i, total in enumerate(self.totals) if total > -1e8]


def _beams(
    model,
    prefix_ids,
    *,
    width,
    max_new_tokens,
    length_penalty,
    normalisation,
    early_stopping,
    eos_id,
    pick: Callable[[torch.Tensor, int], torch.Tensor],
    adjust: Callable[[torch.Tensor], torch.Tensor],
    trace: list | None = None,
    sums_are_logprobs: bool = False,
):
    """The beam search loop shared by ``traced_beam_search`` and ``beam_sample``.

    ``adjust(logprobs (B, V)) -> scores (B, V)`` added to the running sums; ``pick(totals (B*V,), n) -> n
    candidate indices`` in the order they are considered (best first for beam search). ``trace``: a list
    to which one ``BeamStep`` per step is appended (for drawing the search tree). ``sums_are_logprobs``: the
    running sums are the model's log-probabilities (no warping), so the winner's needs no second pass.
    """
    prefix, width, max_new_tokens, length_penalty, normalisation, eos = check_beam_args(
        model, prefix_ids, width, max_new_tokens, length_penalty, normalisation, early_stopping, eos_id)  # fmt: skip

    def divisor(length: int) -> float:
        return length_divisor(normalisation, length_penalty, length)

    decoder = decoder_for(model)
    logits = decoder.start(prefix).expand(width, -1)  # (k, V): k copies of the prefix, as generate() starts
    running_ids: list[list[int]] = [[] for _ in range(width)]  # the generated ids of each running beam
    running = torch.full((width,), -1e9)  # (k,) float32: each beam's raw sum of (adjusted) log-probabilities;
    running[0] = 0.0  # the copies start at -1e9, so the first step draws from one copy only
    finished: list[tuple[float, list[int], float]] = []  # (normalised score, ids, sum), best first, at most k
    can_improve = True
    for step in range(max_new_tokens):
        length = step + 1  # generated tokens after this step
        vocab = logits.shape[-1]
        totals = (running[:, None] + adjust(step_logprobs(decoder, logits))).flatten()  # (B*V,)
        chosen = pick(totals, min(2 * width, totals.numel())).tolist()  # 2k candidates: k can continue after </s>
        next_ids, next_scores, parents, tokens = [], [], [], []
        new_finished, seen = [], []
        for rank, index in enumerate(chosen):
            beam, token = divmod(index, vocab)
            ids = running_ids[beam] + [token]
            if token == eos or length == max_new_tokens:  # the hypothesis ends here
                if rank < width:  # only the top k candidates may become final (generate()'s rule)
                    new_finished.append((float(totals[index] / divisor(length)), ids, float(totals[index])))
                seen.append(
                    Candidate(
                        beam,
                        token,
                        float(totals[index]),
                        "finished" if rank < width else "dropped",
                        float(totals[index] / divisor(length)) if rank < width else None,
                    )
                )
            else:
                next_ids.append(ids), next_scores.append(totals[index]), parents.append(beam), tokens.append(token)
                seen.append(Candidate(beam, token, float(totals[index]), "pruned"))
        full = len(finished) == width
        if can_improve and not (full and early_stopping is True):
            finished = sorted(finished + new_finished, key=lambda s: -s[0])[:width]
        # the next running beams: the best k candidates that did not end, ranked by their raw sums
        order = sorted(range(len(next_ids)), key=lambda i: -float(next_scores[i]))[:width]
        if trace is not None:
            _record(trace, running_ids if step else running_ids[:1], running.tolist(), seen, order, finished)
        if not order or (early_stopping is True and len(finished) == width):
            break
        running_ids = [next_ids[i] for i in order]
        running = torch.stack([next_scores[i] for i in order])  # (B,)
        if len(finished) == width:  # can a running beam still beat the worst finished one?
            if early_stopping == "never":  # the best case: the most favourable length still reachable
                best = max(divisor(length), divisor(max_new_tokens))
            else:  # generate()'s heuristic for False (and True): the current length
                best = divisor(length)
            can_improve = can_improve and float(running[0] / best) > finished[-1][0]
        if not can_improve:
            break
        if trace is not None:
            trace[-1].stopped = False
        rows = [parents[i] if step else 0 for i in order]  # the decoder holds one copy of the prefix
        logits = decoder.step(rows, [tokens[i] for i in order])  # (B, V)
    score, ids, total = finished[0]
    logprob = total if sums_are_logprobs else sequence_logprob(model, prefix, ids)
    return Generation(prefix, ids, logprob, score, ids[-1] == eos, [(i, s) for s, i, _ in finished])


def _record(
    trace: list, beams: list[list[int]], totals: list[float], seen: list[Candidate], order: list[int], finished
) -> None:
    """Append this step to ``trace``: mark the continuing candidates, and finished ones that were later bumped."""
    survivors = [c for c in seen if c.status == "pruned"]
    for i in order:
        survivors[i].status = "running"
    possible = [c for c in seen if c.total > -1e8]  # not the first step's idle copies (at -1e9), nor -inf
    kept = {(tuple(ids), round(score, 9)) for score, ids, _ in finished}
    for c in possible:
        if c.status == "finished" and (tuple(beams[c.parent] + [c.token]), round(c.score, 9)) not in kept:
            c.status = "dropped"  # it entered, but the k finished hypotheses kept were better
    trace.append(BeamStep([list(b) for b in beams], totals[: len(beams)], possible, stopped=True))


def sequence_logprob(model, prefix: list[int], ids: list[int]) -> float:
    """log P(ids | prefix) under the model, in nats."""
    decoder = decoder_for(model)
    logits = decoder.start(prefix)[0]
    total = 0.0
    for n, token in enumerate(ids):
        total += float(step_logprobs(decoder, logits.double())[token])
        if n + 1 < len(ids):
            logits = decoder.step([0], [token])[0]
    return total


def traced_beam_search(model, prefix_ids, *, width: int = 4, max_new_tokens: int = 50, length_penalty: float = 1.0,
                       normalisation: str = "hf", early_stopping=False, eos_id: int | None = None,
                       trace: list | None = None) -> Generation:  # fmt: skip
    """``beam.beam_search`` (same arguments, same result), run through ``_beams`` so that ``trace``, a list, receives
    one ``BeamStep`` per step: the beams, the 2k candidates, and what became of each. The beam widget draws it."""
    return _beams(model, prefix_ids, width=width, max_new_tokens=max_new_tokens, length_penalty=length_penalty,
                  normalisation=normalisation, early_stopping=early_stopping, eos_id=eos_id,
                  pick=lambda totals, n: torch.topk(totals, n).indices, adjust=lambda logprobs: logprobs,
                  trace=trace, sums_are_logprobs=True)  # fmt: skip


def beam_sample(model, prefix_ids, *, width: int = 4, max_new_tokens: int = 50, temperature: float = 1.0,
                top_k: int = 0, top_p: float = 1.0, length_penalty: float = 1.0, normalisation: str = "hf",
                early_stopping=False, generator: torch.Generator | None = None,
                eos_id: int | None = None) -> Generation:  # fmt: skip
    """The slide's "Combine beam and random walk": beam search whose 2k candidates are drawn, not taken best first.

    Semantics (those of ``generate(num_beams=k, do_sample=True)``): each beam's log-probabilities are
    warped (``warp``'s order, applied to the log-probabilities, not renormalised: at temperature T a beam
    accumulates Σ log P / T; top-k and top-p keep at least 2 tokens, so a beam can go on past </s>); the 2k candidates are drawn *without replacement* from all beams' continuations
    at once, with probability ∝ exp(beam's sum + warped score), by ``torch.multinomial`` (``generator``, or
    the global RNG). They are considered in the order drawn (from transformers 5.24 on, ``generate()`` sorts
    them by score first, and so does this function there: ``SORTS_DRAWN_BEAMS``): the first k may finish, the
    rest only continue; the next beams are the k best-scoring survivors. Scores, normalisation and stopping as ``beam_search``.
    When fewer than 2k continuations have non-zero probability, torch's multinomial completes the draw with
    zero-probability ones (score -inf), exactly as in ``generate()``; they rank last.
    """
    temperature, top_k, top_p = check_warp_args(temperature, top_k, top_p)

    def pick(totals: torch.Tensor, n: int) -> torch.Tensor:
        probs = torch.softmax(totals[None], dim=-1)  # (1, B*V)
        try:  # fewer than n possible candidates: torch fills the draw with impossible ones, as generate() gets
            drawn = torch.multinomial(probs, n, generator=generator)[0]  # (n,)
        except RuntimeError:  # a torch that refuses: the possible ones as drawn, the rest best first
            return torch.topk(totals, n).indices
        if SORTS_DRAWN_BEAMS:
            drawn = drawn[totals[drawn].sort(descending=True).indices]  # (n,) best first, as generate() does
        return drawn

    return _beams(model, prefix_ids, width=width, max_new_tokens=max_new_tokens, length_penalty=length_penalty,
                  normalisation=normalisation, early_stopping=early_stopping, eos_id=eos_id, pick=pick,
                  adjust=lambda logprobs: warped_scores(logprobs, temperature, top_k, top_p, keep=2))  # fmt: skip
