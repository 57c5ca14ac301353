"""Greedy decoding and ancestral sampling ("random walk"), with the warpers that reshape P first.

- ``warp``: temperature → top-k → top-p, in ``generate()``'s order;
- ``greedy``: the most probable token each step; ``sample``: one draw each step from the warped distribution;
  ``sample_many``: n samples side by side.

Checked token for token against ``generate()`` on the shipped ``gpt_lm`` (tests/models/generation/test_generation.py).
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F

from course_utils.models.generation.decoders import (
    Generation,
    check_prefix,
    check_room,
    decoder_for,
    eos_id_of,
    step_logprobs,
)
from course_utils.validation import CourseInputError, check_int, check_number
from course_utils.reference import course_reference

# ---------------------------------------------------------------- warpers


def check_warp_args(temperature, top_k, top_p) -> tuple[float, int, float]:
    temperature = check_number("temperature", temperature)
    if temperature < 0:
        raise CourseInputError(f"temperature must be >= 0 (0 means greedy), got {temperature}")
    top_k = check_int("top_k", top_k, minimum=0)
    top_p = check_number("top_p", top_p)
    if not 0 < top_p <= 1:
        raise CourseInputError(f"top_p must lie in (0, 1] (1 keeps every token), got {top_p}")
    return temperature, top_k, top_p


@course_reference
def warped_scores(
    scores: torch.Tensor,
    temperature: float,
    top_k: int,
    top_p: float,
    keep: int = 1,
) -> torch.Tensor:
    """Warped scores (..., V): removed tokens at -inf; the others are ``scores / T``
    (no renormalisation).

    Top-k and top-p always keep the ``keep`` best tokens (2 in ``beam_sample``: one
    besides </s>).
    """
    if temperature == 0:  # the limit T → 0: all mass on the (first) most probable token
        best = F.one_hot(scores.argmax(-1), scores.shape[-1]).bool()  # (..., V)
        return torch.where(best, 0.0, -math.inf).to(scores.dtype)
    if temperature != 1.0:
        warped = scores / temperature  # (..., V)
        # tiny T overflowed: shift the max to 0 first
        if not torch.isfinite(warped[torch.isfinite(scores)]).all():
            warped = (scores - scores.amax(-1, keepdim=True)) / temperature
        scores = warped
    vocab = scores.shape[-1]
    top_k = max(top_k, keep) if top_k else 0
    # top-k: keep every token scoring at least the k-th best (ties at the border too)
    if 0 < top_k < vocab:
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1:]  # (..., 1)
        scores = scores.masked_fill(scores < kth, -math.inf)
    # nucleus: the best tokens until their mass reaches p, the crossing one included
    if top_p < 1.0:
        order = torch.argsort(scores, dim=-1, descending=True, stable=True)  # (..., V)
        # (..., V), sorted descending
        probs = torch.softmax(scores, dim=-1).gather(-1, order)
        # (..., V): the mass of the better tokens
        mass_before = torch.cumsum(probs, dim=-1) - probs
        drop_sorted = mass_before >= top_p
        drop_sorted[..., :keep] = False  # the best token (or `keep`) is always kept
        # back to vocabulary order
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        scores = scores.masked_fill(drop, -math.inf)
    return scores


@course_reference
def warp(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """The warped next-token log-probabilities (..., V): temperature → top-k → top-p (``generate()``'s order).

    ``temperature`` ≥ 0 (0: greedy, all mass on the argmax; a tiny T never overflows); ``top_k`` = 0 keeps
    every token; ``top_p`` in (0, 1]: keep the most probable tokens until their mass reaches p, the token
    that crosses p included. Filtered tokens get -inf.
    """
    temperature, top_k, top_p = check_warp_args(temperature, top_k, top_p)
    if not isinstance(logits, torch.Tensor) or logits.dim() < 1:
        raise CourseInputError("logits must be a tensor (..., V)")
    return torch.log_softmax(warped_scores(logits.float(), temperature, top_k, top_p), dim=-1)


def hf_warpers(*, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0):
    """Hugging Face's own warpers for the same settings, in ``generate()``'s order (for parity checks).

    Call the result as ``warpers(input_ids (1, T), logits (1, V))``; a warper at its neutral value is left out.
    """
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    temperature, top_k, top_p = check_warp_args(temperature, top_k, top_p)
    warpers = LogitsProcessorList()
    if temperature != 1.0:
        warpers.append(TemperatureLogitsWarper(temperature))
    if top_k:
        warpers.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p))
    return warpers


# ---------------------------------------------------------------- greedy and ancestral sampling


def _check_walk(model, prefix_ids, max_new_tokens, eos_id) -> tuple[list[int], int, int]:
    """The prefix, ``max_new_tokens`` and the id that ends a walk, checked (``CourseInputError`` when wrong)."""
    prefix = check_prefix(model, prefix_ids)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_room(model, len(prefix), max_new_tokens)
    return prefix, max_new_tokens, eos_id_of(model) if eos_id is None else check_int("eos_id", eos_id, minimum=0)


def _walk(
    model,
    prefix_ids,
    max_new_tokens,
    choose: Callable[[torch.Tensor], int],
    eos_id,
    use_cache: bool = True,
) -> Generation:
    """One sequence, one token at a time: ``choose(logits (V,)) -> id``."""
    prefix, max_new_tokens, eos = _check_walk(model, prefix_ids, max_new_tokens, eos_id)
    decoder = decoder_for(model, use_cache=use_cache)
    logits = decoder.start(prefix)[0]  # (V,)
    ids, logprob = [], 0.0
    while True:
        token = choose(logits)
        ids.append(token)
        logprob += float(step_logprobs(decoder, logits.double())[token])
        if token == eos or len(ids) == max_new_tokens:
            break
        logits = decoder.step([0], [token])[0]  # (V,)
    return Generation(prefix, ids, logprob, logprob, ids[-1] == eos)


def greedy(
    model,
    prefix_ids,
    max_new_tokens: int = 50,
    *,
    eos_id: int | None = None,
    use_cache: bool = True,
) -> Generation:
    """The most probable next token each step (the first one on a tie), until </s> or
    ``max_new_tokens``.

    ``use_cache=False`` makes ``CourseGPT`` re-read the whole sequence each step (to
    time the KV cache).
    """

    def choose(logits: torch.Tensor) -> int:
        return int(logits.argmax())

    return _walk(model, prefix_ids, max_new_tokens, choose, eos_id, use_cache)


def sample(
    model,
    prefix_ids,
    *,
    max_new_tokens: int = 50,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
    eos_id: int | None = None,
) -> Generation:
    """Ancestral sampling ("random walk") from the warped distribution, until </s> or
    ``max_new_tokens``.

    Each token is one ``torch.multinomial(softmax(warped logits), 1)`` draw on float32
    probabilities of shape (1, V), from ``generator`` (or torch's global RNG when None).
    That is the draw ``generate()`` makes, so ``torch.manual_seed(s); sample(...)``
    gives ``generate(do_sample=True, ...)``'s tokens after ``torch.manual_seed(s)``
    (checked in the tests), as long as nothing else draws from the global RNG.
    """
    temperature, top_k, top_p = check_warp_args(temperature, top_k, top_p)

    def choose(logits: torch.Tensor) -> int:
        warped = warped_scores(logits[None], temperature, top_k, top_p)  # (1, V)
        probs = torch.softmax(warped, dim=-1)  # (1, V)
        return int(torch.multinomial(probs, 1, generator=generator)[0, 0])

    return _walk(model, prefix_ids, max_new_tokens, choose, eos_id)


def sample_many(model, prefix_ids, n: int, *, max_new_tokens: int = 50, temperature: float = 1.0, top_k: int = 0,
                top_p: float = 1.0, generator: torch.Generator | None = None,
                eos_id: int | None = None) -> list[Generation]:  # fmt: skip
    """``n`` samples after one prefix, drawn side by side: one model call a step serves all of them.

    The same random walk as ``sample``, faster, with another random stream: each step makes one
    ``torch.multinomial`` draw on probabilities of shape (n, V), for every sequence, ended or not (an ended one
    is fed ``</s>`` and its draws are dropped). That is what ``generate(do_sample=True, num_return_sequences=n)``
    does, so after the same ``torch.manual_seed`` both give the same ``n`` sequences (checked in the tests).
    """
    temperature, top_k, top_p = check_warp_args(temperature, top_k, top_p)
    n = check_int("n", n, minimum=1)
    prefix, max_new_tokens, eos = _check_walk(model, prefix_ids, max_new_tokens, eos_id)
    decoder = decoder_for(model)
    logits = decoder.start(prefix).expand(n, -1)  # (n, V): every sequence starts from the prefix
    parents = [0] * n  # the first step copies the prefix's row (and its cache) n times
    ids: list[list[int]] = [[] for _ in range(n)]
    logprobs = [0.0] * n
    for step in range(max_new_tokens):
        probs = torch.softmax(warped_scores(logits, temperature, top_k, top_p), dim=-1)  # (n, V)
        tokens = torch.multinomial(probs, 1, generator=generator)[:, 0].tolist()  # (n,)
        own = step_logprobs(decoder, logits.double())  # (n, V), unwarped
        for row, token in enumerate(tokens):
            if not (ids[row] and ids[row][-1] == eos):
                ids[row].append(token)
                logprobs[row] += float(own[row, token])
        if step == max_new_tokens - 1 or all(row[-1] == eos for row in ids):
            break
        logits = decoder.step(parents, [row[-1] for row in ids])  # (n, V)
        parents = list(range(n))
    return [Generation(prefix, row, logprob, logprob, row[-1] == eos) for row, logprob in zip(ids, logprobs)]
