"""Generation timed: our greedy and beam search against ``generate()``, and the KV cache's time per token."""

from __future__ import annotations

import time
from typing import Callable

import torch

from course_utils.models.generation import beam_search, greedy
from course_utils.models.generation.decoders import check_prefix, check_room
from course_utils.models.lm import _model_device
from course_utils.validation import CourseInputError, check_int


def best_time(fn: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` runs of ``fn()``, in seconds."""
    times = []
    for _ in range(check_int("repeats", repeats, minimum=1)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def time_generation(model, prefix_ids, *, max_new_tokens: int = 40, width: int = 4, repeats: int = 3) -> dict:
    """Seconds (best of ``repeats``) of this module's greedy and beam search and of ``model.hf.generate()``.

    Returns ``{"greedy": (ours, hf, ratio), "beam": (ours, hf, ratio)}``, ratio = ours / hf. ``CourseGPT`` only.
    """
    if getattr(model, "hf", None) is None:
        raise CourseInputError("time_generation compares with Hugging Face generate(): give a CourseGPT")
    prefix = check_prefix(model, prefix_ids)
    repeats = check_int("repeats", repeats, minimum=1)
    idx = torch.tensor([prefix], device=_model_device(model))

    def best(fn) -> float:
        return best_time(fn, repeats)

    hf_kwargs = {"attention_mask": torch.ones_like(idx), "max_new_tokens": max_new_tokens, "do_sample": False}
    with torch.no_grad():
        ours_g = best(lambda: greedy(model, prefix, max_new_tokens))
        hf_g = best(lambda: model.hf.generate(idx, num_beams=1, **hf_kwargs))
        ours_b = best(lambda: beam_search(model, prefix, width=width, max_new_tokens=max_new_tokens))
        hf_b = best(lambda: model.hf.generate(idx, num_beams=width, **hf_kwargs))
    return {"greedy": (ours_g, hf_g, ours_g / hf_g), "beam": (ours_b, hf_b, ours_b / hf_b)}


def time_per_token(model, prefix_ids, lengths=(8, 16, 32, 64), *, repeats: int = 3) -> dict:
    """Seconds per generated token of ``generate()`` with and without ``use_cache``, for each length.

    Returns ``{length: (with_cache, without_cache)}``. The model must not stop early: </s> is forbidden
    (``min_new_tokens``). ``CourseGPT`` only.
    """
    if getattr(model, "hf", None) is None:
        raise CourseInputError("time_per_token times Hugging Face generate(): give a CourseGPT")
    prefix = check_prefix(model, prefix_ids)
    idx = torch.tensor([prefix], device=_model_device(model))
    out = {}
    with torch.no_grad():
        for n in lengths:
            n = check_int("length", n, minimum=1)
            check_room(model, len(prefix), n)
            row = []
            for cache in (True, False):
                seconds = best_time(lambda: model.hf.generate(idx, attention_mask=torch.ones_like(idx), max_new_tokens=n,
                                                              min_new_tokens=n, do_sample=False, use_cache=cache),
                                    repeats)  # fmt: skip
                row.append(seconds / n)
            out[n] = tuple(row)
    return out
