"""Beam search of width k, as ``generate(num_beams=k)`` does it, written to be read.

Keep the k best running hypotheses; each step, extend every one by every word, and look at the 2k best
continuations by their sum of log-probabilities. One that ends (``</s>``, or the last allowed step) becomes a
finished hypothesis if it ranks among the first k; the best k of the others are the next beams. Finished
hypotheses are ranked by a length-normalised score, sum / divisor(|Y|):

    "none"  divisor 1                         (the canonical beam search)
    "mean"  |Y|                               (eq. 13.16's (1/t) Σ log P)
    "hf"    |Y| ** α                          (``generate()``; its default α = 1)
    "gnmt"  ((5 + |Y|) / 6) ** α              (Wu et al. 2016)

``beam_variants`` holds the same loop with the hooks the widgets and the sampler need (a trace of every
step, drawn candidates); the tests check that both agree, and that they agree with ``generate()``.
"""

from __future__ import annotations

import torch

from course_utils.models.generation.decoders import Generation, check_prefix, check_room, decoder_for, eos_id_of
from course_utils.models.generation.decoders import step_logprobs
from course_utils.validation import CourseInputError, check_choice, check_int, check_number
from course_utils.reference import course_reference

NORMALISATIONS = ("none", "mean", "hf", "gnmt")
EARLY_STOPPING = (True, False, "never")


@course_reference
def length_divisor(normalisation: str, length_penalty: float, length: int) -> float:
    """What a finished hypothesis's summed log-probability is divided by (``length`` generated tokens)."""
    if normalisation == "none":
        return 1.0
    if normalisation == "mean":  # eq. 13.16: (1/t) Σ log P
        return float(length)
    if normalisation == "hf":  # generate(): sum / |Y|^α
        return float(length) ** length_penalty
    return ((5.0 + length) / 6.0) ** length_penalty  # GNMT (Wu et al. 2016)


def check_beam_args(model, prefix_ids, width, max_new_tokens, length_penalty, normalisation, early_stopping, eos_id):
    """The arguments of a beam search, checked: (prefix, width, max_new_tokens, length_penalty, normalisation, eos)."""
    prefix = check_prefix(model, prefix_ids)
    width = check_int("width", width, minimum=1)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    length_penalty = check_number("length_penalty", length_penalty)
    normalisation = check_choice("normalisation", normalisation, NORMALISATIONS)
    if early_stopping not in EARLY_STOPPING or not isinstance(early_stopping, (bool, str)):
        raise CourseInputError(f"early_stopping must be True, False or 'never'; got {early_stopping!r}")
    check_room(model, len(prefix), max_new_tokens)
    eos = eos_id_of(model) if eos_id is None else check_int("eos_id", eos_id, minimum=0)
    return prefix, width, max_new_tokens, length_penalty, normalisation, eos


def beam_search(
    model,
    prefix_ids,
    *,
    width: int = 4,
    max_new_tokens: int = 50,
    length_penalty: float = 1.0,
    normalisation: str = "hf",
    early_stopping=False,
    eos_id: int | None = None,
) -> Generation:
    """The best hypothesis of a width-k beam search after ``prefix_ids``
    (``generate(num_beams=k)``'s semantics).

    Once k hypotheses have finished, ``early_stopping=True`` stops at once; ``False``
    stops when the best running beam, scored at the current length, cannot beat the
    worst finished one (``generate()``'s rule); ``"never"`` scores it at its most
    favourable reachable length (the canonical rule).
    """
    stop = early_stopping
    args = (width, max_new_tokens, length_penalty, normalisation, stop, eos_id)
    checked = check_beam_args(model, prefix_ids, *args)
    prefix, width, max_new_tokens, length_penalty, normalisation, eos = checked

    def divisor(length: int) -> float:
        return length_divisor(normalisation, length_penalty, length)

    decoder = decoder_for(model)
    logits = decoder.start(prefix)  # (1, V): one running beam, the prefix itself
    # the running beams' generated ids; their sums of log P (B,)
    beams, sums = [[]], torch.zeros(1)
    # (score, ids, sum) of the ended hypotheses kept, best first, at most k
    finished = []
    for length in range(1, max_new_tokens + 1):
        # (B*V,): every beam, every next word
        totals = (sums[:, None] + step_logprobs(decoder, logits)).flatten()
        # the 2k best continuations, best first
        best = torch.topk(totals, min(2 * width, totals.numel()))
        parents, tokens, kept = [], [], []
        for rank, (total, index) in enumerate(zip(best.values, best.indices.tolist())):
            beam, token = divmod(index, logits.shape[-1])
            if token == eos or length == max_new_tokens:  # this hypothesis ends here
                if rank < width:  # generate()'s rule: only the first k may finish
                    score = float(total / divisor(length))
                    finished.append((score, beams[beam] + [token], float(total)))
            elif len(parents) < width:  # the best k that go on are the next beams
                parents.append(beam), tokens.append(token), kept.append(total)
        finished = sorted(finished, key=lambda hypothesis: -hypothesis[0])[:width]
        if not parents or (early_stopping is True and len(finished) == width):
            break
        beams = [beams[p] + [t] for p, t in zip(parents, tokens)]
        sums = torch.stack(kept)  # (B,)
        # can the best running beam still beat the worst finished hypothesis?
        if len(finished) == width:
            never = early_stopping == "never"
            reachable = (length, max_new_tokens) if never else (length,)
            if float(sums[0] / max(divisor(n) for n in reachable)) <= finished[-1][0]:
                break
        # (B, V): each new beam reads its last word
        logits = decoder.step(parents, tokens)
    score, ids, total = finished[0]
    hypotheses = [(h_ids, h_score) for h_score, h_ids, _ in finished]
    return Generation(prefix, ids, total, score, ids[-1] == eos, hypotheses)
