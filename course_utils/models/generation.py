"""Generation strategies written from their definitions, for every course language model.

A course LM is any module with ``model(idx) -> (logits, loss)``, ``idx`` (B, T), ``logits`` (B, T, V)
(n-gram models, the fixed-window FFNNs, the RNN/GRU/LSTM models, ``CourseGPT``). A *prefix* is a list
of ids the model reads first, normally ``[<s>] + words`` (``encode_prompt``); every strategy returns a
``Generation`` with the generated ids only (``</s>`` included when it was produced).

- ``greedy``: the most probable token each step.
- ``beam_search``: width-k beam search with Hugging Face ``generate()``'s semantics, and a choice of the
  score finished hypotheses are ranked by (``normalisation``).
- ``warp``: temperature → top-k → top-p, in ``generate()``'s order; ``sample``: ancestral sampling
  ("random walk") from the warped distribution; ``beam_sample``: beam search whose candidates are drawn.

Checked token for token against ``generate()`` on the shipped ``gpt_lm`` (tests/test_generation.py).
Nothing here copies Hugging Face code: the semantics were read there and written again.
"""

from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F
import transformers
from packaging.version import Version

from course_utils.models.lm import _model_device
from course_utils.validation import CourseInputError, check_choice, check_int, check_number

NORMALISATIONS = ("none", "mean", "hf", "gnmt")
EARLY_STOPPING = (True, False, "never")
# transformers 5.24 changed beam sampling: the drawn candidates are sorted by score before they are considered
# (``_get_top_k_continuations``); up to 5.23 they are considered in the order drawn. ``beam_sample`` follows the
# installed release, so that it matches ``generate()`` on either side of the change.
SORTS_DRAWN_BEAMS = Version(transformers.__version__).release >= (5, 24)


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


def _check_prefix(model, prefix_ids) -> list[int]:
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


def _check_room(model, prefix_len: int, max_new_tokens: int) -> None:
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
    return decoder_for(model, use_cache=False).start(_check_prefix(model, prefix_ids))[0]


def next_logprobs(model, prefix_ids) -> torch.Tensor:
    """The model's float32 next-token log-probabilities (V,) after ``prefix_ids`` (any course LM)."""
    decoder = decoder_for(model, use_cache=False)
    return step_logprobs(decoder, decoder.start(_check_prefix(model, prefix_ids)))[0]


def batch_next_logprobs(model, sequences) -> torch.Tensor:
    """Next-token log-probabilities (B, V) after each of B equally long id sequences (e.g. beams)."""
    rows = [_check_prefix(model, s) for s in sequences]
    if len({len(r) for r in rows}) != 1:
        raise CourseInputError("batch_next_logprobs needs sequences of one length")
    decoder = decoder_for(model, use_cache=False)
    if type(decoder) is Decoder:  # one batched call
        return torch.log_softmax(decoder._logits(rows), dim=-1)
    return torch.cat([step_logprobs(decoder, decoder_for(model, use_cache=False).start(r)) for r in rows])


# ---------------------------------------------------------------- warpers


def _check_warp_args(temperature, top_k, top_p) -> tuple[float, int, float]:
    temperature = check_number("temperature", temperature)
    if temperature < 0:
        raise CourseInputError(f"temperature must be >= 0 (0 means greedy), got {temperature}")
    top_k = check_int("top_k", top_k, minimum=0)
    top_p = check_number("top_p", top_p)
    if not 0 < top_p <= 1:
        raise CourseInputError(f"top_p must lie in (0, 1] (1 keeps every token), got {top_p}")
    return temperature, top_k, top_p


def _warp_scores(scores: torch.Tensor, temperature: float, top_k: int, top_p: float, keep: int = 1) -> torch.Tensor:
    """Warped scores (..., V): removed tokens at -inf; the others are ``scores / T`` (no renormalisation).

    Top-k and top-p always keep the ``keep`` best tokens (2 in ``beam_sample``: one besides </s>).
    """
    if temperature == 0:  # the limit T → 0: all mass on the (first) most probable token
        best = F.one_hot(scores.argmax(-1), scores.shape[-1]).bool()  # (..., V)
        return torch.where(best, 0.0, -math.inf).to(scores.dtype)
    if temperature != 1.0:
        warped = scores / temperature  # (..., V)
        if not torch.isfinite(warped[torch.isfinite(scores)]).all():  # tiny T overflowed: shift the max to 0 first
            warped = (scores - scores.amax(-1, keepdim=True)) / temperature
        scores = warped
    vocab = scores.shape[-1]
    top_k = max(top_k, keep) if top_k else 0
    if 0 < top_k < vocab:  # keep every token scoring at least the k-th best (ties at the border are kept)
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1:]  # (..., 1)
        scores = scores.masked_fill(scores < kth, -math.inf)
    if top_p < 1.0:  # nucleus: the most probable tokens until their mass reaches p, the crossing one included
        order = torch.argsort(scores, dim=-1, descending=True, stable=True)  # (..., V)
        probs = torch.softmax(scores, dim=-1).gather(-1, order)  # (..., V), sorted descending
        mass_before = torch.cumsum(probs, dim=-1) - probs  # (..., V): the mass of the better tokens
        drop_sorted = mass_before >= top_p
        drop_sorted[..., :keep] = False  # the best token (or `keep`) is always kept
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # back to vocabulary order
        scores = scores.masked_fill(drop, -math.inf)
    return scores


def warp(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """The warped next-token log-probabilities (..., V): temperature → top-k → top-p (``generate()``'s order).

    ``temperature`` ≥ 0 (0: greedy, all mass on the argmax; a tiny T never overflows); ``top_k`` = 0 keeps
    every token; ``top_p`` in (0, 1]: keep the most probable tokens until their mass reaches p, the token
    that crosses p included. Filtered tokens get -inf.
    """
    temperature, top_k, top_p = _check_warp_args(temperature, top_k, top_p)
    if not isinstance(logits, torch.Tensor) or logits.dim() < 1:
        raise CourseInputError("logits must be a tensor (..., V)")
    return torch.log_softmax(_warp_scores(logits.float(), temperature, top_k, top_p), dim=-1)


def hf_warpers(*, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0):
    """Hugging Face's own warpers for the same settings, in ``generate()``'s order (for parity checks).

    Call the result as ``warpers(input_ids (1, T), logits (1, V))``; a warper at its neutral value is left out.
    """
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    temperature, top_k, top_p = _check_warp_args(temperature, top_k, top_p)
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
    prefix = _check_prefix(model, prefix_ids)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    _check_room(model, len(prefix), max_new_tokens)
    return prefix, max_new_tokens, eos_id_of(model) if eos_id is None else check_int("eos_id", eos_id, minimum=0)


def _walk(
    model, prefix_ids, max_new_tokens, choose: Callable[[torch.Tensor], int], eos_id, use_cache: bool = True
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
    model, prefix_ids, max_new_tokens: int = 50, *, eos_id: int | None = None, use_cache: bool = True
) -> Generation:
    """The most probable next token each step (the first one on a tie), until </s> or ``max_new_tokens``.

    ``use_cache=False`` makes ``CourseGPT`` re-read the whole sequence each step (to time the KV cache).
    """
    return _walk(model, prefix_ids, max_new_tokens, lambda logits: int(logits.argmax()), eos_id, use_cache)


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
    """Ancestral sampling ("random walk") from the warped distribution, until </s> or ``max_new_tokens``.

    Each token is one ``torch.multinomial(softmax(warped logits), 1)`` draw on float32 probabilities of
    shape (1, V), from ``generator`` (or torch's global RNG when None). That is the draw ``generate()``
    makes, so ``torch.manual_seed(s); sample(...)`` gives ``generate(do_sample=True, ...)``'s tokens after
    ``torch.manual_seed(s)`` (checked in the tests), as long as nothing else draws from the global RNG.
    """
    temperature, top_k, top_p = _check_warp_args(temperature, top_k, top_p)

    def choose(logits: torch.Tensor) -> int:
        probs = torch.softmax(_warp_scores(logits[None], temperature, top_k, top_p), dim=-1)  # (1, V)
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
    temperature, top_k, top_p = _check_warp_args(temperature, top_k, top_p)
    n = check_int("n", n, minimum=1)
    prefix, max_new_tokens, eos = _check_walk(model, prefix_ids, max_new_tokens, eos_id)
    decoder = decoder_for(model)
    logits = decoder.start(prefix).expand(n, -1)  # (n, V): every sequence starts from the prefix
    parents = [0] * n  # the first step copies the prefix's row (and its cache) n times
    ids: list[list[int]] = [[] for _ in range(n)]
    logprobs = [0.0] * n
    for step in range(max_new_tokens):
        probs = torch.softmax(_warp_scores(logits, temperature, top_k, top_p), dim=-1)  # (n, V)
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


# ---------------------------------------------------------------- beam search


def _divisor(normalisation: str, length_penalty: float, length: int) -> float:
    """What a finished hypothesis's summed log-probability is divided by (``length`` generated tokens)."""
    if normalisation == "none":
        return 1.0
    if normalisation == "mean":  # eq. 13.16: (1/t) Σ log P
        return float(length)
    if normalisation == "hf":  # generate(): sum / |Y|^α
        return float(length) ** length_penalty
    return ((5.0 + length) / 6.0) ** length_penalty  # GNMT (Wu et al. 2016)


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
    """The beam search loop shared by ``beam_search`` and ``beam_sample``.

    ``adjust(logprobs (B, V)) -> scores (B, V)`` added to the running sums; ``pick(totals (B*V,), n) -> n
    candidate indices`` in the order they are considered (best first for beam search). ``trace``: a list
    to which one ``BeamStep`` per step is appended (for drawing the search tree). ``sums_are_logprobs``: the
    running sums are the model's log-probabilities (no warping), so the winner's needs no second pass.
    """
    prefix = _check_prefix(model, prefix_ids)
    width = check_int("width", width, minimum=1)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    length_penalty = check_number("length_penalty", length_penalty)
    normalisation = check_choice("normalisation", normalisation, NORMALISATIONS)
    if early_stopping not in EARLY_STOPPING or not isinstance(early_stopping, (bool, str)):
        raise CourseInputError(f"early_stopping must be True, False or 'never'; got {early_stopping!r}")
    _check_room(model, len(prefix), max_new_tokens)
    eos = eos_id_of(model) if eos_id is None else check_int("eos_id", eos_id, minimum=0)

    def divisor(length: int) -> float:
        return _divisor(normalisation, length_penalty, length)

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
    logprob = total if sums_are_logprobs else _sequence_logprob(model, prefix, ids)
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


def _sequence_logprob(model, prefix: list[int], ids: list[int]) -> float:
    """log P(ids | prefix) under the model, in nats."""
    decoder = decoder_for(model)
    logits = decoder.start(prefix)[0]
    total = 0.0
    for n, token in enumerate(ids):
        total += float(step_logprobs(decoder, logits.double())[token])
        if n + 1 < len(ids):
            logits = decoder.step([0], [token])[0]
    return total


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
    trace: list | None = None,
) -> Generation:
    """Beam search of width k, with ``generate(num_beams=k)``'s semantics.

    Each step, every running beam's continuations are scored by the *raw* sum of log-probabilities and the
    best 2k candidates are considered, best first. A candidate that ends (</s>, or the last allowed step)
    becomes a finished hypothesis only if it ranks among the first k; the others continue, the best k of
    them being the next beams. Finished hypotheses (at most k, best kept) are ranked by
    ``sum / divisor(|Y|)``, |Y| = generated tokens including </s>, prompt excluded:

    - ``normalisation="none"``: divisor 1 (canonical beam search);
    - ``"mean"``: |Y| (eq. 13.16, (1/t) Σ log P);
    - ``"hf"``: |Y| ** length_penalty (``generate()``; its default α = 1.0);
    - ``"gnmt"``: ((5 + |Y|) / 6) ** length_penalty.

    Stopping, once k hypotheses are finished: ``early_stopping=True`` stops at once; ``False`` stops when
    the best running beam's sum, divided by the divisor at the *current* length, cannot beat the worst
    finished score (``generate()``'s heuristic); ``"never"`` uses the most favourable reachable length
    (the canonical rule). With ``normalisation="hf"`` this is ``generate(num_beams=width,
    length_penalty=..., early_stopping=..., do_sample=False)`` token for token. ``trace``: a list that
    receives one ``BeamStep`` per step (the beams, the 2k candidates, and what became of each).
    """
    return _beams(model, prefix_ids, width=width, max_new_tokens=max_new_tokens, length_penalty=length_penalty,
                  normalisation=normalisation, early_stopping=early_stopping, eos_id=eos_id,
                  pick=lambda totals, n: torch.topk(totals, n).indices, adjust=lambda logprobs: logprobs,
                  trace=trace, sums_are_logprobs=True)  # fmt: skip


def beam_sample(
    model,
    prefix_ids,
    *,
    width: int = 4,
    max_new_tokens: int = 50,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    length_penalty: float = 1.0,
    normalisation: str = "hf",
    early_stopping=False,
    generator: torch.Generator | None = None,
    eos_id: int | None = None,
) -> Generation:
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
    temperature, top_k, top_p = _check_warp_args(temperature, top_k, top_p)

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
                  adjust=lambda logprobs: _warp_scores(logprobs, temperature, top_k, top_p, keep=2))  # fmt: skip


# ---------------------------------------------------------------- timing


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
    prefix = _check_prefix(model, prefix_ids)
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
    prefix = _check_prefix(model, prefix_ids)
    idx = torch.tensor([prefix], device=_model_device(model))
    out = {}
    with torch.no_grad():
        for n in lengths:
            n = check_int("length", n, minimum=1)
            _check_room(model, len(prefix), n)
            row = []
            for cache in (True, False):
                seconds = best_time(lambda: model.hf.generate(idx, attention_mask=torch.ones_like(idx), max_new_tokens=n,
                                                              min_new_tokens=n, do_sample=False, use_cache=cache),
                                    repeats)  # fmt: skip
                row.append(seconds / n)
            out[n] = tuple(row)
    return out
