"""Subject–verb agreement measured on any LM: P(right form) against P(wrong form), by number of attractors.

An agreement item (``corpus.load_eval("agreement")``) is a prefix ending just before the verb, the verb
form that agrees with the subject (``correct``), the one that does not (``wrong``), the subject's
number and the number of attractors: nouns of the other number between the subject and the verb.
"""

from __future__ import annotations

import collections

import numpy as np
import torch

from course_utils.language.text_pipeline import Vocab
from course_utils.models import lm
from course_utils.validation import CourseInputError, check_choice, check_int

NUMBERS = {"singular": "sg", "plural": "pl"}  # a subject's number -> its code in the items
_BATCH = 256  # prefixes scored at once


def check_items(items, vocab: Vocab) -> list[dict]:
    """``items`` must be agreement items (prefix, correct, wrong, attractors, number) over ``vocab``'s words."""
    if not isinstance(items, list) or not items:
        raise CourseInputError("items must be a non-empty list of agreement items, e.g. corpus.load_eval('agreement')")
    for item in items:
        if not isinstance(item, dict) or not {"prefix", "correct", "wrong", "attractors", "number"} <= set(item):
            raise CourseInputError(
                f"an agreement item is a dict with prefix, correct, wrong, attractors, number; got {item!r:.80}"
            )
        words = [*item["prefix"], item["correct"], item["wrong"]]
        unknown = [w for w in words if w not in vocab.stoi]
        if unknown:
            raise CourseInputError(f"an agreement item holds words outside the vocabulary: {unknown[:3]}")
        check_choice("an item's number", item["number"], list(NUMBERS.values()))
        check_int("an item's attractors", item["attractors"], minimum=0)
    return items


@torch.no_grad()
def form_probs(model, vocab: Vocab, items: list[dict]) -> np.ndarray:
    """P(correct form) and P(wrong form) after each item's prefix: (N, 2), float64.

    Prefixes of the same length are scored together, so there is no padding and every model of
    the LM interface gives exactly ``lm.next_token_probs(model, vocab, prefix)``.
    """
    probs = np.zeros((len(items), 2))
    by_length = collections.defaultdict(list)
    for i, item in enumerate(items):
        by_length[len(item["prefix"])].append(i)
    device = lm._model_device(model)  # CPU for a model without weights (an n-gram counts)
    for rows in by_length.values():
        for start in range(0, len(rows), _BATCH):
            chunk = rows[start : start + _BATCH]
            prefixes = [[vocab.bos_id, *vocab.encode(items[i]["prefix"])] for i in chunk]
            idx = torch.tensor(prefixes, device=device)  # (B, L+1)
            logits, _ = model(idx)  # (B, L+1, V)
            last = torch.softmax(logits[:, -1].double(), dim=-1).cpu()  # (B, V): the word after the whole prefix
            forms = torch.tensor([[vocab.stoi[items[i][key]] for key in ("correct", "wrong")] for i in chunk])  # (B, 2)
            probs[chunk] = last.gather(1, forms).numpy()
    return probs


def accuracy_by_attractors(probs: np.ndarray, items: list[dict]) -> dict[int, float]:
    """Per number of attractors: the share of items with P(correct) > P(wrong), from ``form_probs``'s (N, 2)."""
    hits: dict[int, list[bool]] = collections.defaultdict(list)
    for (right, wrong), item in zip(probs, items):
        hits[item["attractors"]].append(bool(right > wrong))
    return {count: sum(h) / len(h) for count, h in sorted(hits.items())}
