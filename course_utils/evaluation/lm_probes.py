"""Measure any language model on the planted phenomena, beside the oracle's exact answer.

Every function takes a model with the LM interface (``course_utils.models.lm``) and the items of an
evaluation set (``course_utils.language.corpus.load_eval``). The oracle's answers come from
``oracle_probs``, so a table can always show how far a model is from the truth.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

import torch

from course_utils.models import lm
from course_utils.language.grammar import EOS, CourseLanguage
from course_utils.language.text_pipeline import Vocab


def oracle_probs(lang: CourseLanguage, vocab: Vocab, prefix) -> torch.Tensor:
    """The oracle's next-word distribution as a vector over ``vocab`` (V,), float64."""
    probs = torch.zeros(len(vocab), dtype=torch.float64)  # (V,)
    for word, p in lang.next_distribution(prefix).items():
        probs[vocab.eos_id if word == EOS else vocab.stoi[word]] = p
    return probs


def _mass(probs: torch.Tensor, vocab: Vocab, words) -> float:
    return float(sum(probs[vocab.stoi[w]] for w in words))


def agreement_accuracy(model, vocab: Vocab, items: list[dict]) -> dict[int, float]:
    """Per number of attractors: how often P(correct verb form) > P(wrong form) after the prefix."""
    hits: dict[int, list[bool]] = collections.defaultdict(list)
    for item in items:
        probs = lm.next_token_probs(model, vocab, item["prefix"])  # (V,)
        hits[item["attractors"]].append(bool(probs[vocab.stoi[item["correct"]]] > probs[vocab.stoi[item["wrong"]]]))
    return {count: sum(h) / len(h) for count, h in sorted(hits.items())}


def allowed_mass(model, vocab: Vocab, items: list[dict], *, among=None) -> float:
    """Mean probability a model puts on each item's ``allowed`` words after its ``prefix``.

    With ``among`` (a set of words), the mass is relative to the mass on those words:
    "of the probability given to nouns, how much went to nouns the verb can take?"
    """
    total = 0.0
    for item in items:
        probs = lm.next_token_probs(model, vocab, item["prefix"])  # (V,)
        mass = _mass(probs, vocab, item["allowed"])
        if among is not None:
            mass /= max(_mass(probs, vocab, among), 1e-300)
        total += mass
    return total / len(items)


def target_logprob(model, vocab: Vocab, items: list[dict]) -> float:
    """Mean natural-log probability of each item's ``target`` after its ``prefix``."""
    total = 0.0
    for item in items:
        probs = lm.next_token_probs(model, vocab, item["prefix"])  # (V,)
        total += float(torch.log(probs[vocab.stoi[item["target"]]]))
    return total / len(items)


def composition_table(models: dict, vocab: Vocab, items: list[dict]) -> dict[str, dict[str, float]]:
    """For each model: mean mass on the right participles, for held-out and for seen nouns."""
    table = {}
    for name, model in models.items():
        table[name] = {
            "held out": allowed_mass(model, vocab, [i for i in items if i["held_out"]]),
            "seen": allowed_mass(model, vocab, [i for i in items if not i["held_out"]]),
        }
    return table


class OracleLM(torch.nn.Module):
    """The oracle behind the LM interface: ``forward`` gives the exact log-probabilities.

    Slow (it walks the grammar in Python) but exact; for tables and widgets, not training.
    """

    def __init__(self, lang: CourseLanguage, vocab: Vocab):
        super().__init__()
        self.lang, self.vocab, self.vocab_size = lang, vocab, len(vocab)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        logits = torch.zeros((*idx.shape, self.vocab_size), dtype=torch.float64)  # (B, T, V); padding stays uniform
        for b, row in enumerate(idx.tolist()):
            words = [self.vocab.itos[i] for i in row[1:] if i != self.vocab.pad_id]
            for t in range(len(words) + 1):
                logits[b, t] = torch.log(oracle_probs(self.lang, self.vocab, words[:t]))
        loss = None if targets is None else lm.lm_loss(logits, targets)
        return logits, loss


# ---------------------------------------------------------------- one next-word distribution against the oracle's


@dataclass(frozen=True)
class Comparison:
    """How far a model's next-word distribution q is from the oracle's p."""

    p_top: float  # q of the oracle's most likely word
    tv: float  # total variation ½ Σ |p − q|
    kl: float  # KL(p ‖ q) in nats; inf when q = 0 where p > 0
    impossible: float  # Σ q over words with p = 0


def compare_to_oracle(q: np.ndarray, p: np.ndarray) -> Comparison:
    """Compare a model's probabilities ``q`` (V,) with the oracle's ``p`` (V,) (a panel's title gives the TV)."""
    possible = p > 0  # (V,)
    with np.errstate(divide="ignore"):  # log 0 = -inf: the KL is then inf
        kl = float(np.sum(p[possible] * (np.log(p[possible]) - np.log(q[possible]))))
    return Comparison(p_top=float(q[np.argmax(p)]), tv=0.5 * float(np.abs(p - q).sum()), kl=kl,
                      impossible=float(q[~possible].sum()))  # fmt: skip
