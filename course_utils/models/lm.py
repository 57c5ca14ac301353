"""Batching, evaluation and sampling written once for every language model.

A language model here is any ``torch.nn.Module`` with ``model(idx, targets=None) -> (logits, loss)``:
``idx`` (B, T) input ids, ``logits`` (B, T, V) unnormalised log-probabilities of the next token.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from course_utils.language.text_pipeline import Vocab, tokenize
from course_utils.validation import CourseInputError, check_int, check_positive

IGNORE_INDEX = -100  # targets at padded positions; they count neither in the loss nor in perplexity

_MAX_LOGITS = 2**23  # evaluate() keeps B * T * V under this many numbers per forward pass


def encode_sentences(vocab: Vocab, sentences, *, unknown: str = "error") -> list[list[int]]:
    """Ids of each sentence (a list of words, without <s> and </s>)."""
    if isinstance(sentences, str):
        raise CourseInputError("sentences must be a list of sentences (lists of words); use split_sentences(text)")
    return [vocab.encode(sentence, unknown=unknown) for sentence in sentences]


def lm_example(ids: Sequence[int], vocab: Vocab) -> tuple[list[int], list[int]]:
    """Inputs ``[<s>, w1..wn]`` and targets ``[w1..wn, </s>]`` of one encoded sentence."""
    ids = list(ids)
    framing = {vocab.pad_id, vocab.bos_id, vocab.eos_id} & set(ids)
    if framing:
        names = ", ".join(vocab.itos[i] for i in sorted(framing))
        raise CourseInputError(f"a sentence must not contain {names}: give the words only; <s> and </s> are added here")
    return [vocab.bos_id] + ids, ids + [vocab.eos_id]


def make_batch(id_lists: Sequence[Sequence[int]], vocab: Vocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad a list of encoded sentences into ``(idx, targets)``, both LongTensors (B, T)."""
    if not id_lists:
        raise CourseInputError("make_batch needs at least one sentence")
    examples = [lm_example(ids, vocab) for ids in id_lists]
    length = max(len(inputs) for inputs, _ in examples)
    idx = torch.tensor([x + [vocab.pad_id] * (length - len(x)) for x, _ in examples])  # (B, T)
    targets = torch.tensor([y + [IGNORE_INDEX] * (length - len(y)) for _, y in examples])  # (B, T)
    return idx, targets


def epoch_batches(count: int, *, batch_size: int, seed: int) -> Callable[[int], list[int]]:
    """A function ``step -> indices of the items in that batch``: epochs of a fresh seeded shuffle each.

    The same seed and step give the same batch; only the current epoch's order is kept in memory.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    seed = check_int("seed", seed)
    per_epoch = math.ceil(count / batch_size)
    orders: dict[int, list[int]] = {}

    def chosen(step: int) -> list[int]:
        step = check_int("step", step, minimum=0)
        epoch, position = divmod(step, per_epoch)
        if epoch not in orders:
            orders.clear()
            generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
            orders[epoch] = torch.randperm(count, generator=generator).tolist()
        return orders[epoch][position * batch_size : (position + 1) * batch_size]

    return chosen


def batch_stream(
    id_lists: Sequence[Sequence[int]], vocab: Vocab, *, batch_size: int, seed: int
) -> Callable[[int], tuple[torch.Tensor, torch.Tensor]]:
    """A function ``step -> (idx, targets)``: epochs of shuffled batches, the same for the same seed and step."""
    id_lists = [list(ids) for ids in id_lists]
    if not id_lists:
        raise CourseInputError("batch_stream needs at least one sentence")
    chosen = epoch_batches(len(id_lists), batch_size=batch_size, seed=seed)

    def get_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        return make_batch([id_lists[i] for i in chosen(step)], vocab)

    return get_batch


def target_log_probs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Log-probability of each target under softmax(logits); 0 at ignored positions, -inf for impossible targets."""
    keep = targets != IGNORE_INDEX  # (B, T)
    safe = torch.where(keep, targets, 0)  # (B, T)
    norm = torch.logsumexp(logits, dim=-1)  # (B, T)
    chosen = logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)  # (B, T)
    logp = torch.where(torch.isneginf(chosen), -math.inf, chosen - norm)  # (B, T); a row of all -inf gives -inf
    return torch.where(keep, logp, 0.0)  # (B, T)


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats) over non-ignored targets; ``inf`` when a target has probability 0."""
    keep = targets != IGNORE_INDEX  # (B, T)
    return -target_log_probs(logits, targets).sum() / keep.sum()


@dataclass(frozen=True)
class LMScore:
    """Total negative log-likelihood (nats) over ``tokens`` predictions, and what follows from it."""

    nll: float
    tokens: int

    @property
    def mean_nll(self) -> float:
        return self.nll / self.tokens

    @property
    def perplexity(self) -> float:
        return math.exp(self.mean_nll) if self.mean_nll < 700 else math.inf

    def __str__(self) -> str:
        return f"{self.tokens} tokens, {self.mean_nll:.4f} nats/token, perplexity {self.perplexity:.3f}"


def as_id_lists(vocab: Vocab, sentences) -> list[list[int]]:
    """Encoded sentences from sentences given as lists of words or as lists of ids."""
    sentences = [] if isinstance(sentences, str) else list(sentences)
    if not sentences:
        raise CourseInputError("give at least one sentence (a list of words or of ids)")
    if any(isinstance(s, str) for s in sentences):
        raise CourseInputError(
            "each sentence must be a list of words (or of ids), not a string; use split_sentences(text)"
        )
    if all(all(isinstance(w, str) for w in s) for s in sentences):
        return encode_sentences(vocab, sentences)
    if any(isinstance(i, (str, float, bool)) for ids in sentences for i in ids):
        raise CourseInputError("a sentence must be all words (strings) or all ids (integers), not a mix")
    id_lists = [[int(i) for i in ids] for ids in sentences]
    if any(ids and (min(ids) < 0 or max(ids) >= len(vocab)) for ids in id_lists):
        raise CourseInputError(f"ids must lie in [0, {len(vocab) - 1}] (the vocabulary's size is {len(vocab)})")
    return id_lists


def _model_device(model: torch.nn.Module) -> torch.device:
    """Where the model's weights (or buffers) live; CPU for a model with neither."""
    tensor = next(itertools.chain(model.parameters(), model.buffers()), None)
    return torch.device("cpu") if tensor is None else tensor.device


def _check_vocab(model: torch.nn.Module, vocab: Vocab) -> None:
    """The model must predict over this vocabulary."""
    size = getattr(model, "vocab_size", None)
    if size is not None and size != len(vocab):
        raise CourseInputError(
            f"the model predicts {size} token types but the vocabulary has {len(vocab)}: they must match"
        )


@torch.no_grad()
def evaluate(model: torch.nn.Module, vocab: Vocab, sentences, *, batch_size: int = 256, device=None) -> LMScore:
    """Total and mean negative log-likelihood and perplexity of ``model`` on sentences (</s> included)."""
    batch_size = check_int("batch_size", batch_size, minimum=1)
    _check_vocab(model, vocab)
    id_lists = sorted(as_id_lists(vocab, sentences), key=len)  # similar lengths share a batch: less padding
    if device is not None:
        model.to(device)
    device = _model_device(model)
    was_training = model.training
    model.eval()
    nll, tokens, start = 0.0, 0, 0
    try:
        while start < len(id_lists):
            longest = len(id_lists[min(start + batch_size, len(id_lists)) - 1]) + 1
            size = max(1, min(batch_size, _MAX_LOGITS // (longest * len(vocab))))
            idx, targets = make_batch(id_lists[start : start + size], vocab)  # (B, T), (B, T)
            logits, _ = model(idx.to(device))  # (B, T, V)
            logp = target_log_probs(logits.double(), targets.to(device))  # (B, T)
            nll -= logp.sum().item()
            tokens += int((targets != IGNORE_INDEX).sum())
            start += size
    finally:
        model.train(was_training)
    return LMScore(nll=nll, tokens=tokens)


def _probabilities(logits: torch.Tensor) -> torch.Tensor:
    """softmax of a float64 row (V,); all zeros when every logit is -inf (an unseen context, unsmoothed)."""
    norm = torch.logsumexp(logits, dim=-1)
    return torch.zeros_like(logits) if torch.isneginf(norm) else torch.exp(logits - norm)  # (V,)


def _context_ids(model, vocab: Vocab, context, from_sentence_start: bool, unknown: str) -> list[int]:
    """The input ids for predicting the word after ``context`` (a list of words, or a string to tokenize)."""
    words = tokenize(context) if isinstance(context, str) else list(context)
    ids = vocab.encode(words, unknown=unknown)
    if from_sentence_start:
        return [vocab.bos_id] + ids
    needed = getattr(model, "context_size", None)
    if needed is not None and len(ids) < needed:
        raise CourseInputError(
            f"this model reads the previous N={needed} words; got {len(ids)}: {words}. "
            "Give more words, or use from_sentence_start=True to read the context as the start of a sentence."
        )
    if not ids:
        raise CourseInputError(
            "an empty context only makes sense at the start of a sentence: use from_sentence_start=True"
        )
    return ids


@torch.no_grad()
def next_token_probs(
    model, vocab: Vocab, context, *, from_sentence_start: bool = True, unknown: str = "error"
) -> torch.Tensor:
    """The model's float64 probabilities (V,) of the next token after ``context``."""
    _check_vocab(model, vocab)
    ids = _context_ids(model, vocab, context, from_sentence_start, unknown)
    idx = torch.tensor([ids], device=_model_device(model))  # (1, T)
    logits, _ = model(idx)  # (1, T, V)
    return _probabilities(logits[0, -1].double().cpu())  # (V,)


@torch.no_grad()
def token_logprobs(model, vocab: Vocab, sentence, *, unknown: str = "error") -> list[float]:
    """Natural-log probability of each word of ``sentence`` and of the closing </s>, given what precedes it."""
    _check_vocab(model, vocab)
    words = tokenize(sentence) if isinstance(sentence, str) else list(sentence)
    idx, targets = make_batch([vocab.encode(words, unknown=unknown)], vocab)  # (1, T), (1, T)
    logits, _ = model(idx.to(_model_device(model)))  # (1, T, V)
    return target_log_probs(logits.double().cpu(), targets)[0].tolist()


@torch.no_grad()
def generate(
    model, vocab: Vocab, *, prefix=(), max_tokens: int = 40, temperature: float = 1.0, seed: int = 0
) -> list[str]:
    """Sample a sentence: ``prefix`` plus up to ``max_tokens`` words, stopping at </s> (left out).

    ``temperature=0`` picks the most likely word each time. <pad>, <s> and <mask> are never sampled. Each word is
    drawn by ``draw``, the course's own inverse-CDF sampler fed by Python's ``random.Random(seed)``: the same
    sentence on every machine and every release of torch (whose ``multinomial`` stream changed in 2.7).
    """
    max_tokens = check_int("max_tokens", max_tokens, minimum=1)
    temperature = check_positive("temperature", temperature, allow_zero=True)
    _check_vocab(model, vocab)
    words = tokenize(prefix) if isinstance(prefix, str) else list(prefix)
    ids = [vocab.bos_id] + vocab.encode(words)
    rng = random.Random(check_int("seed", seed))
    was_training = model.training
    model.eval()
    try:
        for _ in range(max_tokens):
            token = _next_token(model, vocab, ids, temperature, rng)
            if token == vocab.eos_id:
                break
            ids.append(token)
    finally:
        model.train(was_training)
    return vocab.decode(ids[1:])


def draw(probs: Sequence[float], rng: random.Random) -> int:
    """One index drawn with probability ``probs[i]``: u ~ U[0, 1), the first i whose cumulative sum exceeds u·total.

    Indices of probability 0 are never drawn (their cumulative sum does not rise past the previous one).
    """
    cumulative = list(itertools.accumulate(float(p) for p in probs))
    if not cumulative or not cumulative[-1] > 0:
        raise CourseInputError("draw needs at least one positive probability")
    index = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    return min(index, max(i for i, p in enumerate(probs) if p > 0))  # u·total rounded up to the total: the last


def _next_token(model, vocab: Vocab, ids: list[int], temperature: float, rng: random.Random) -> int:
    """Sample (or, at temperature 0, pick) the token after ``ids``."""
    logits, _ = model(torch.tensor([ids], device=_model_device(model)))  # (1, T, V)
    logits = logits[0, -1].double().cpu().clone()  # (V,)
    logits[[vocab.pad_id, vocab.bos_id, vocab.mask_id]] = -math.inf
    if torch.isneginf(logits).all():
        raise CourseInputError(
            f"the model gives probability 0 to every word after {vocab.decode(ids)}: that context never "
            "occurred in training and the model is not smoothed"
        )
    if temperature == 0:
        return int(logits.argmax())
    return draw(_probabilities(logits / temperature).tolist(), rng)


def top_k(probs: torch.Tensor, vocab: Vocab, k: int) -> list[tuple[str, float]]:
    """The ``k`` most probable tokens as ``(word, probability)``, most probable first (ties: smaller id)."""
    k = check_int("k", k, minimum=1)
    if probs.dim() != 1 or len(probs) != len(vocab):
        raise CourseInputError(
            f"probs must be one vector of {len(vocab)} probabilities, got shape {tuple(probs.shape)}"
        )
    values = probs.tolist()
    order = sorted(range(len(vocab)), key=lambda i: (-values[i], i))[:k]
    return [(vocab.itos[i], values[i]) for i in order]
