"""The adapter under every generation strategy: next-token scores of any course LM, step after step.

A course LM is any module with ``model(idx) -> (logits, loss)``, ``idx`` (B, T), ``logits`` (B, T, V)
(n-gram models, the fixed-window FFNNs, the RNN/GRU/LSTM models, ``CourseGPT``). A *prefix* is a list
of ids the model reads first, normally ``[<s>] + words`` (``encode_prompt``); every strategy returns a
``Generation`` with the generated ids only (``</s>`` included when it was produced). A ``Decoder`` keeps
what a model needs between steps: ``CourseGPT``'s KV cache, or the sequence a recurrent model re-reads.
"""

from __future__ import annotations

import inspect
import math
from typing import Callable
from dataclasses import dataclass, field

import torch

from course_utils.models.lm import _model_device
from course_utils.validation import CourseInputError, check_int


@dataclass
class Generation:
    """What a strategy produced after ``prefix``.

    ``ids``: the generated ids (``</s>`` last when the model produced it); ``logprob``: the model's own
    (unwarped) log-probability of ``ids`` given ``prefix``, in nats; ``score``: what the strategy ranked by
    (the beam's normalised score; ``logprob`` otherwise); ``hypotheses``: for beams, every finished
    hypothesis kept, best first, as ``(ids, score)``.
    """

    prefix: list[int]
    ids: list[int]
    logprob: float
    score: float
    ended: bool
    hypotheses: list[tuple[list[int], float]] = field(default_factory=list)

    @property
    def sequence(self) -> list[int]:
        """Prefix and generated ids together, as ``generate()`` returns them."""
        return self.prefix + self.ids

    @property
    def content(self) -> list[int]:
        """The generated ids without the final ``</s>``: the words written."""
        return self.ids[:-1] if self.ended else self.ids


def encode_prompt(vocab, words=()) -> list[int]:
    """The prefix ``[<s>] + ids of words`` (words: a list of words)."""
    if isinstance(words, str):
        words = words.split()
    return [vocab.bos_id] + vocab.encode(list(words))


def eos_id_of(model) -> int:
    """The model's ``</s>`` id: from a Hugging Face config, else the course vocabulary's."""
    if getattr(model, "make_decoder", None) is not None:  # TableLM, SourceConditioned
        return int(model.eos_id)
    hf = getattr(model, "hf", None)
    if hf is not None and getattr(hf.config, "eos_token_id", None) is not None:
        return int(hf.config.eos_token_id)
    vocab = getattr(model, "vocab", None)
    if vocab is None:
        from course_utils.language.vocab import course_vocab

        vocab = course_vocab()
    return int(vocab.eos_id)


# ---------------------------------------------------------------- the adapter: next-token scores of any LM


def check_prefix(model, prefix_ids) -> list[int]:
    if isinstance(prefix_ids, torch.Tensor):
        prefix_ids = prefix_ids.flatten().tolist()
    if isinstance(prefix_ids, (str, bytes)) or not hasattr(prefix_ids, "__iter__"):
        raise CourseInputError(f"prefix_ids must be a list of ids, got {prefix_ids!r}")
    ids = [check_int("a prefix id", i, minimum=0) for i in prefix_ids]
    if not ids:
        raise CourseInputError("prefix_ids must hold at least one id (normally <s>: use encode_prompt(vocab, words))")
    size = getattr(model, "vocab_size", None)
    if size is not None and max(ids) >= size:
        raise CourseInputError(f"prefix ids must lie in [0, {size - 1}], got {max(ids)}")
    return ids


def check_room(model, prefix_len: int, max_new_tokens: int) -> None:
    limit = getattr(model, "max_len", None)
    if limit is not None and getattr(model, "context_size", None) is None and prefix_len + max_new_tokens > limit:
        raise CourseInputError(
            f"this model reads at most max_len={limit} tokens: the prefix ({prefix_len}) plus max_new_tokens "
            f"({max_new_tokens}) is too long"
        )


class Decoder:
    """Next-token logits for a batch of equally long sequences, step after step.

    ``start(prefix)`` → logits (1, V) after the prefix; ``step(parents, tokens)`` → logits (B, V) after
    appending ``tokens[b]`` to sequence ``parents[b]`` of the previous call. ``CourseGPT`` keeps a KV cache
    (reordered by ``parents``, as ``generate()`` does); other models re-read the sequences (a fixed-window
    model only its last N ids).
    """

    def __init__(self, model, *, use_cache: bool = True):
        self.model, self.device = model, _model_device(model)
        self.hf = getattr(model, "hf", None) if use_cache else None
        self.cache_name = cache_argument(self.hf) if self.hf is not None else None
        self.window = getattr(model, "context_size", None)
        self.rows: list[list[int]] = []
        self.cache = None

    @torch.no_grad()
    def _logits(self, rows: list[list[int]]) -> torch.Tensor:
        if self.window is not None:  # n-gram / FFNN: the last N ids decide (shorter rows are read after <s> padding)
            rows = [r[-max(1, self.window) :] for r in rows]
        idx = torch.tensor(rows, device=self.device)  # (B, T)
        logits, _ = self.model(idx)  # (B, T, V)
        return logits[:, -1].float().cpu()  # (B, V)

    @torch.no_grad()
    def start(self, prefix: list[int]) -> torch.Tensor:
        self.rows = [list(prefix)]
        if self.hf is None:
            return self._logits(self.rows)  # (1, V)
        idx = torch.tensor(self.rows, device=self.device)  # (1, T)
        out = self.hf(input_ids=idx, attention_mask=torch.ones_like(idx), use_cache=True)
        self.cache = out[self.cache_name]
        return out.logits[:, -1].float().cpu()  # (1, V)

    @torch.no_grad()
    def step(self, parents: list[int], tokens: list[int]) -> torch.Tensor:
        self.rows = [self.rows[p] + [t] for p, t in zip(parents, tokens)]
        if self.hf is None:
            return self._logits(self.rows)  # (B, V)
        self.cache.reorder_cache(torch.tensor(parents, device=self.device))
        idx = torch.tensor([[t] for t in tokens], device=self.device)  # (B, 1)
        mask = torch.ones(len(tokens), len(self.rows[0]), dtype=torch.long, device=self.device)  # (B, T)
        out = self.hf(input_ids=idx, attention_mask=mask, use_cache=True, **{self.cache_name: self.cache})
        self.cache = out[self.cache_name]
        return out.logits[:, -1].float().cpu()  # (B, V)


def cache_argument(hf_model) -> str:
    """The name under which this transformers release passes the KV cache in and out of a model call.

    ``cache`` from transformers 5.24 on (``past_key_values`` still works there, with a deprecation warning);
    ``past_key_values`` before.
    """
    return "cache" if "cache" in inspect.signature(hf_model.forward).parameters else "past_key_values"


class TableDecoder(Decoder):
    """``Decoder`` for a ``TableLM``: its log-probabilities, as given (they need not sum to 1)."""

    returns_logprobs = True

    def __init__(self, table: "TableLM"):
        self.model, self.hf, self.rows = table, None, []  # no cache: start/step re-read the rows

    def _logits(self, rows: list[list[int]]) -> torch.Tensor:
        return torch.stack([self.model.logprobs(row) for row in rows])  # (B, V)


class TableLM:
    """A next-word table as a course LM for these strategies: ``lm(words after <s>) -> {word: probability}``.

    ``words``: the vocabulary, ``<s>`` first and ``</s>`` included (e.g. the slide's tree: <s>, yes, ok,
    </s>). The probabilities are used as they are: a node whose numbers sum to .9 (the book's yes node)
    keeps .9, nothing is renormalised. Unlisted words get probability 0.
    """

    def __init__(self, lm: Callable, words, *, bos: str = "<s>", eos: str = "</s>"):
        self.lm, self.itos = lm, list(words)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        if bos not in self.stoi or eos not in self.stoi:
            raise CourseInputError(f"the vocabulary must hold {bos} and {eos}, got {self.itos}")
        self.bos_id, self.eos_id, self.vocab_size = self.stoi[bos], self.stoi[eos], len(self.itos)

    def logprobs(self, ids: list[int]) -> torch.Tensor:
        """log P(· | ids) (V,), -inf for words the table leaves out."""
        words = tuple(self.itos[i] for i in ids if i != self.bos_id)
        table = self.lm(words)
        out = torch.full((self.vocab_size,), -math.inf)
        for word, p in table.items():
            if p > 0:
                out[self.stoi[word]] = math.log(p)
        return out

    def encode(self, words) -> list[int]:
        return [self.stoi[w] for w in words]

    def decode(self, ids) -> list[str]:
        return [self.itos[i] for i in ids]

    def make_decoder(self, use_cache: bool = True) -> Decoder:
        return TableDecoder(self)


class TranslationDecoder(Decoder):
    """``Decoder`` for a translation model (07's ``Seq2Seq``, 08's ``TransformerTranslator``) and one source.

    The model's own ``start(source)``/``step(state, tokens)`` carry the state (the GRU's hidden state, or
    the transformer's KV cache); beams reorder it with ``state.select(parents)``. Its scores are
    log-probabilities already.
    """

    returns_logprobs = True

    def __init__(self, conditioned: "SourceConditioned"):
        self.model, self.conditioned = conditioned.model, conditioned
        self.device = _model_device(conditioned.model)
        self.state, self.rows = None, []

    @torch.no_grad()
    def _read(self, tokens: list[int]) -> torch.Tensor:
        logprobs, self.state, _ = self.model.step(self.state, torch.tensor(tokens, device=self.device))  # (B, V)
        return logprobs.float().cpu()

    @torch.no_grad()
    def start(self, prefix: list[int]) -> torch.Tensor:
        self.rows = [list(prefix)]
        source = torch.tensor([self.conditioned.source_ids], device=self.device)  # (1, S)
        self.state = self.model.start(source)
        for token in prefix:  # <s>, then any forced target words
            logprobs = self._read([token])  # (1, V)
        return logprobs

    @torch.no_grad()
    def step(self, parents: list[int], tokens: list[int]) -> torch.Tensor:
        self.rows = [self.rows[p] + [t] for p, t in zip(parents, tokens)]
        self.state = self.state.select(torch.tensor(parents, device=self.device))
        return self._read(tokens)  # (B, V)


class SourceConditioned:
    """A translation model with its source sentence fixed: the strategies then decode its target side.

    ``SourceConditioned(model, source_ids)``; the prefix is ``[model.bos_id]`` (``target_prefix``), the
    vocabulary the model's target vocabulary. ``generate(model=SourceConditioned(...), ...)`` works for
    every strategy here: greedy, beam search, sampling, beam sampling.
    """

    def __init__(self, model, source_ids):
        for name in ("start", "step", "bos_id", "eos_id"):
            if not hasattr(model, name):
                raise CourseInputError(
                    f"a translation model needs .{name} (07's Seq2Seq or 08's TransformerTranslator)"
                )
        ids = [check_int("a source id", i, minimum=0) for i in source_ids]
        if not ids:
            raise CourseInputError("the source sentence is empty: give at least one word")
        self.model, self.source_ids = model, ids
        self.eos_id, self.bos_id = int(model.eos_id), int(model.bos_id)
        self.vocab_size = model.out.out_features

    @property
    def target_prefix(self) -> list[int]:
        return [self.bos_id]

    def make_decoder(self, use_cache: bool = True) -> Decoder:
        return TranslationDecoder(self)


def decoder_for(model, *, use_cache: bool = True) -> Decoder:
    """The ``Decoder`` that feeds a strategy: the model's own (``make_decoder``) or the generic one."""
    make = getattr(model, "make_decoder", None)
    return make(use_cache) if make is not None else Decoder(model, use_cache=use_cache)


def step_logprobs(decoder: Decoder, logits: torch.Tensor) -> torch.Tensor:
    """Log-probabilities (B, V) from what a decoder returned (already log-probabilities for some)."""
    return logits if getattr(decoder, "returns_logprobs", False) else torch.log_softmax(logits, dim=-1)


def next_logits(model, prefix_ids) -> torch.Tensor:
    """The model's float32 next-token logits (V,) after ``prefix_ids`` (any course LM)."""
    return decoder_for(model, use_cache=False).start(check_prefix(model, prefix_ids))[0]


def next_logprobs(model, prefix_ids) -> torch.Tensor:
    """The model's float32 next-token log-probabilities (V,) after ``prefix_ids`` (any course LM)."""
    decoder = decoder_for(model, use_cache=False)
    return step_logprobs(decoder, decoder.start(check_prefix(model, prefix_ids)))[0]


def batch_next_logprobs(model, sequences) -> torch.Tensor:
    """Next-token log-probabilities (B, V) after each of B equally long id sequences (e.g. beams)."""
    rows = [check_prefix(model, s) for s in sequences]
    if len({len(r) for r in rows}) != 1:
        raise CourseInputError("batch_next_logprobs needs sequences of one length")
    decoder = decoder_for(model, use_cache=False)
    if type(decoder) is Decoder:  # one batched call
        return torch.log_softmax(decoder._logits(rows), dim=-1)
    return torch.cat([step_logprobs(decoder, decoder_for(model, use_cache=False).start(r)) for r in rows])
