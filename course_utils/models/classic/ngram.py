"""Counting language models: N-grams with no smoothing, add-k smoothing, or interpolated Kneser-Ney.

An N-gram model predicts the next word from the previous N-1 words only:
P(w | h) with h the last N-1 words, each sentence read as ``<s>`` x (N-1), w1 .. wn, ``</s>``.

- ``"none"`` (maximum likelihood): P(w | h) = c(h w) / c(h). Unseen n-grams get 0, and a context never
  seen in training has no defined distribution: its row is all zeros (the sparsity problem).
- ``"add-k"``: P(w | h) = (c(h w) + k) / (c(h) + k |S|), with S the words that can follow (all but
  ``<pad>``, ``<s>``, ``<mask>``). An unseen context gives the uniform distribution.
- ``"interpolated-kn"`` (Kneser & Ney 1995; Chen & Goodman 1998): subtract a discount D from every seen
  count and give the freed mass to the (N-1)-gram distribution, recursively, down to the uniform one:
  P(w | h) = max(a(h w) - D, 0) / a(h) + D |{w: a(h w) > 0}| / a(h) * P(w | h without its first word).
  a = raw counts at the top order; below it, continuation counts |{v: c(v h w) > 0}| (how many different
  words precede h w), except for n-grams that start with ``<s>`` (nothing precedes them: raw counts).
  An unseen context passes all its mass down.

The model follows the course's LM interface, ``model(idx, targets) -> (logits, loss)``, with float64
log-probabilities as logits (``-inf`` where the probability is 0).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import torch

from course_utils.models.lm import as_id_lists, lm_example, lm_loss
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError, check_choice, check_int, check_positive

SMOOTHINGS = ("add-k", "interpolated-kn", "none")

_CACHE_NUMBERS = 2**23  # cached probability rows hold at most this many float64 numbers (64 MB)


def _group_by_context(ngrams: Counter) -> dict[tuple, dict[int, int]]:
    """{(h..., w): c} -> {h: {w: c}}."""
    table: dict[tuple, dict[int, int]] = defaultdict(dict)
    for ngram, count in ngrams.items():
        table[ngram[:-1]][ngram[-1]] = count
    return dict(table)


class NGramLM(torch.nn.Module):
    """An N-gram language model estimated by counting (``order`` = N: 1 unigram, 2 bigram, 3 trigram ...)."""

    def __init__(self, vocab: Vocab, order: int, *, smoothing: str = "add-k", k: float = 1.0, discount: float = 0.75):
        super().__init__()
        if not isinstance(vocab, Vocab):
            raise CourseInputError(
                f"vocab must be a course_utils.language.text_pipeline.Vocab, got {type(vocab).__name__}"
            )
        self.vocab = vocab
        self.order = check_int("order", order, minimum=1, maximum=10)
        self.smoothing = check_choice("smoothing", smoothing, SMOOTHINGS)
        self.k = check_positive("k", k)
        self.discount = check_positive("discount", discount)
        if self.discount > 1:
            raise CourseInputError(f"discount must be in (0, 1] so no seen count turns negative, got {self.discount}")
        self.vocab_size = len(vocab)
        self.context_size = self.order - 1
        support = np.ones(self.vocab_size, dtype=bool)  # (V,) the tokens that can be predicted
        support[[vocab.pad_id, vocab.bos_id, vocab.mask_id]] = False
        self._support = support
        self._uniform = support / support.sum()  # (V,)
        self._counts: dict[int, dict[tuple, dict[int, int]]] = {}  # order n -> {context: {word: count}}
        self._kn_counts: dict[int, dict[tuple, dict[int, int]]] = {}  # order n -> the counts KN uses
        self._rows: dict[tuple, np.ndarray] = {}

    def extra_repr(self) -> str:
        return f"order={self.order}, smoothing={self.smoothing!r}, vocab_size={self.vocab_size}"

    # ----- counting -----

    def fit(self, sentences) -> "NGramLM":
        """Count the n-grams (orders 1..N) of encoded sentences (or sentences of words); returns ``self``."""
        bos, n_max = self.vocab.bos_id, self.order
        stream: list[int] = []
        for ids in as_id_lists(self.vocab, sentences):
            if self.vocab.mask_id in ids:
                raise CourseInputError("a training sentence must not contain <mask>: it is never a target")
            _, targets = lm_example(ids, self.vocab)
            stream += [bos] * (n_max - 1) + targets  # a window ending at a target never crosses a sentence
        ngrams = {n: Counter(zip(*(stream[i:] for i in range(n)))) for n in range(1, n_max + 1)}
        for counter in ngrams.values():
            for ngram in [g for g in counter if g[-1] == bos]:  # windows ending in the padding are not events
                del counter[ngram]
        self._counts = {n: _group_by_context(counter) for n, counter in ngrams.items()}
        self._kn_counts = {n: _group_by_context(self._continuation(ngrams, n)) for n in range(1, n_max)}
        self._kn_counts[n_max] = self._counts[n_max]
        self._rows = {}
        return self

    def _continuation(self, ngrams: dict[int, Counter], n: int) -> Counter:
        """For each n-gram, how many different words precede it (raw counts for n-grams starting with <s>)."""
        preceded = Counter(ngram[1:] for ngram in ngrams[n + 1])
        for ngram, count in ngrams[n].items():
            if ngram[0] == self.vocab.bos_id:
                preceded[ngram] = count
        return preceded

    def _check_fitted(self) -> None:
        if not self._counts:
            raise CourseInputError("this model has counted nothing yet: call model.fit(training_sentences) first")

    def _ids(self, tokens) -> tuple[int, ...]:
        """Ids of a sequence of words or ids."""
        if isinstance(tokens, str):
            raise CourseInputError(f"give a list of words, e.g. {tokens.split()!r}, not a string")
        tokens = tokens.tolist() if hasattr(tokens, "tolist") else list(tokens)
        if all(isinstance(t, str) for t in tokens):
            return tuple(self.vocab.encode(tokens))
        return tuple(as_id_lists(self.vocab, [tokens])[0])

    def count(self, ngram) -> int:
        """How often the last word of ``ngram`` (words or ids) followed the words before it in training."""
        self._check_fitted()
        ngram = self._ids(ngram)
        if not 1 <= len(ngram) <= self.order:
            raise CourseInputError(
                f"this {self.order}-gram model counted n-grams of 1 to {self.order} words; got {len(ngram)}"
            )
        return self._counts[len(ngram)].get(ngram[:-1], {}).get(ngram[-1], 0)

    def context_count(self, context) -> int:
        """c(h): how often the words ``context`` were followed by any token in training."""
        self._check_fitted()
        context = self._ids(context)
        if len(context) >= self.order:
            raise CourseInputError(
                f"a context of this {self.order}-gram model has at most {self.order - 1} words; got {len(context)}"
            )
        return sum(self._counts[len(context) + 1].get(context, {}).values())

    @property
    def counts(self) -> dict[int, Counter]:
        """Order n -> Counter of n-grams (tuples of words), e.g. ``model.counts[2].most_common(5)``."""
        self._check_fitted()
        words = self.vocab.itos
        return {
            n: Counter({tuple(words[i] for i in h + (w,)): c for h, row in table.items() for w, c in row.items()})
            for n, table in self._counts.items()
        }

    # ----- probabilities -----

    def _row(self, context: tuple[int, ...]) -> np.ndarray:
        """P(. | context) as a read-only float64 array (V,), cached."""
        row = self._rows.get(context)
        if row is None:
            row = self._compute_row(context)
            row.flags.writeable = False
            if len(self._rows) * self.vocab_size >= _CACHE_NUMBERS:
                self._rows.clear()
            self._rows[context] = row
        return row

    def _compute_row(self, context: tuple[int, ...]) -> np.ndarray:
        """P(. | context) at order len(context) + 1, from the counts."""
        if self.smoothing == "interpolated-kn":
            return self._kneser_ney_row(context)
        seen = self._counts[len(context) + 1].get(context)
        if self.smoothing == "add-k":
            row = self._support * self.k  # (V,)
            if seen:
                row[list(seen)] += np.fromiter(seen.values(), dtype=np.float64, count=len(seen))
            return row / row.sum()  # (V,) (c(h w) + k) / (c(h) + k |S|)
        row = np.zeros(self.vocab_size)  # (V,) maximum likelihood; stays 0 for an unseen context
        if seen:
            counts = np.fromiter(seen.values(), dtype=np.float64, count=len(seen))
            row[list(seen)] = counts / counts.sum()
        return row

    def _kneser_ney_row(self, context: tuple[int, ...]) -> np.ndarray:
        """Interpolated Kneser-Ney P(. | context), recursing on the context without its first word."""
        lower = self._row(context[1:]) if context else self._uniform  # (V,)
        seen = self._kn_counts[len(context) + 1].get(context)
        if not seen:
            return lower  # an unseen context hands all its mass to the shorter one
        counts = np.fromiter(seen.values(), dtype=np.float64, count=len(seen))
        total, d = counts.sum(), self.discount
        row = lower * (d * len(counts) / total)  # (V,) the mass the discounts freed
        row[list(seen)] += (counts - d) / total  # counts >= 1 >= d
        return row

    def _context_of(self, context) -> tuple[int, ...]:
        """The last N-1 ids of ``context``; a shorter one is read as a sentence start (<s> on the left)."""
        ids = self._ids(context)
        ids = ids[max(0, len(ids) - self.context_size) :] if self.context_size else ()
        return (self.vocab.bos_id,) * (self.context_size - len(ids)) + ids

    def distribution(self, context=()) -> torch.Tensor:
        """P(next token | context) as a float64 tensor (V,); ``context`` is words or ids."""
        self._check_fitted()
        return torch.from_numpy(self._row(self._context_of(context)).copy())  # (V,)

    def prob(self, word, context=()) -> float:
        """P(word | context); ``word`` is a word or an id, ``context`` words or ids."""
        self._check_fitted()
        (word_id,) = self._ids([word])
        return float(self._row(self._context_of(context))[word_id])

    def _log_rows(self, contexts: list[tuple[int, ...]]) -> torch.Tensor:
        """log P(. | context) for each context, (len(contexts), V); each distinct context is computed once."""
        where: dict[tuple[int, ...], int] = {}
        for context in contexts:
            where.setdefault(context, len(where))
        table = np.stack([self._row(c) for c in where]) if where else np.zeros((0, self.vocab_size))  # (U, V)
        rows = torch.tensor([where[c] for c in contexts], dtype=torch.long)  # (len(contexts),)
        return torch.from_numpy(table).log()[rows]  # (len(contexts), V)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        """Log-probabilities (B, T, V) of the token after each position, and the mean cross-entropy."""
        self._check_fitted()
        if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.dtype != torch.long:
            raise CourseInputError(f"idx must be a LongTensor (B, T), got {getattr(idx, 'shape', type(idx))}")
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.vocab_size):
            raise CourseInputError(f"ids must lie in [0, {self.vocab_size - 1}]")
        batch, steps = idx.shape
        bos = torch.full((batch, self.context_size), self.vocab.bos_id, dtype=torch.long)  # (B, N-1)
        padded = torch.cat([bos, idx.cpu()], dim=1)  # (B, N-1+T)
        contexts = [tuple(row[t + 1 : t + self.order]) for row in padded.tolist() for t in range(steps)]  # B*T of them
        logits = self._log_rows(contexts).view(batch, steps, self.vocab_size).to(idx.device)  # (B, T, V)
        if targets is None:
            return logits, None
        if not isinstance(targets, torch.Tensor) or targets.shape != idx.shape:
            shape = getattr(targets, "shape", None)
            raise CourseInputError(f"targets must have the shape of idx {tuple(idx.shape)}, got {shape}")
        return logits, lm_loss(logits, targets.to(idx.device))


def rare_context_share(model: NGramLM, sentences, times: int) -> float:
    """The share of the tokens of ``sentences`` (each read with the model's padding, as the model reads it) whose
    context, the N-1 words before, the model counted fewer than ``times`` times in training: c(h) < ``times``."""
    order, seen = model.order, []
    for words in sentences:
        tokens = ["<s>"] * (order - 1) + list(words) + ["</s>"]
        seen += [model.context_count(tokens[t - order + 1 : t]) for t in range(order - 1, len(tokens))]
    return sum(c < times for c in seen) / len(seen)
