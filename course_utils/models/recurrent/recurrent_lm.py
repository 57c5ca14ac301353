"""Recurrent language models: the RNN LM, a bidirectional masked-word LSTM, and ELMo.

The RNN LM of the slides, for a sentence read one word at a time:

    e_t = E x_t                                   the word's embedding
    h_t = σ(W_h h_{t-1} + W_e e_t + b_1)          the recurrent layer (an RNN, GRU or LSTM cell)
    ŷ_t = softmax(U h_t + b_2)                     the distribution of the next word

``RecurrentLM`` follows the course's LM interface, ``model(idx, targets) -> (logits, loss)``, so
``course_utils.models.lm`` evaluates it and samples from it (until ``</s>``). Its recurrent layer is the
library's (``nn.RNN``, ``nn.GRU``, ``nn.LSTM``) or the scratch loop of ``course_utils.models.recurrent.rnn``.

``MaskedBiLSTM`` predicts each word from both sides of it without ever reading it, and ``ElmoLM``
is a forward and a backward stacked LSTM LM whose layers ``ScalarMix`` mixes for a downstream task
(``ElmoClassifier``). These read whole sentences, ``[<s>, w1..wn, </s>]``, padded on the right.
"""

from __future__ import annotations

import copy
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.lm import IGNORE_INDEX, batch_stream, make_batch
from course_utils.models.classic.window_mlm import as_words
from course_utils.models.classic.neural_lm import EMBEDDING_INIT_STD, check_ids, seeded
from course_utils.models.recurrent.rnn import ScratchLSTM, ScratchRNN
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.validation import CourseInputError, check_choice, check_int

Tensor = torch.Tensor

CELLS = ("rnn", "gru", "lstm")
IMPLS = ("library", "scratch")
LIBRARY_CELLS = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
SCRATCH_CELLS = {"rnn": ScratchRNN, "lstm": ScratchLSTM}


def check_sequences(idx, vocab_size: int, max_len: int) -> Tensor:
    """``idx`` must be a non-empty (B, T) LongTensor of ids with T ≤ ``max_len``."""
    check_ids("idx", idx, vocab_size, ndim=2)
    if idx.shape[0] == 0 or idx.shape[1] == 0:
        raise CourseInputError(
            f"idx is empty (shape {list(idx.shape)}): give at least one sequence of at least one token"
        )
    if idx.shape[1] > max_len:
        raise CourseInputError(
            f"this model reads at most max_len={max_len} tokens per sequence; idx has {idx.shape[1]}. "
            "Split the text into shorter pieces (e.g. one sentence each), or build the model with a larger max_len."
        )
    return idx


def sequence_loss(logits: Tensor, targets, vocab_size: int) -> Tensor:
    """Mean cross-entropy of ``logits`` (B, T, V) over the ``targets`` (B, T) that are not ``IGNORE_INDEX``."""
    check_ids("targets", targets, vocab_size, ndim=2, allow_ignore=True)
    if targets.shape != logits.shape[:2]:
        raise CourseInputError(
            f"targets must have the shape of idx {list(logits.shape[:2])}; got {list(targets.shape)}"
        )
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)  # mean over kept


def _embedding(vocab_size: int, embed_dim: int) -> nn.Embedding:
    """A token embedding started small (N(0, 0.1²)): from N(0, 1) the trained vectors stay mostly noise."""
    embedding = nn.Embedding(vocab_size, embed_dim)  # (V, d)
    nn.init.normal_(embedding.weight, std=EMBEDDING_INIT_STD)
    return embedding


# ---------------------------------------------------------------- the RNN / GRU / LSTM language model


class RecurrentLM(nn.Module):
    """An RNN, GRU or LSTM language model: embedding → ``num_layers`` recurrent layers → U h + b over V.

    ``forward(idx, targets=None) -> (logits, loss)``: ``logits[:, t]`` scores the word after
    ``idx[:, :t+1]`` (causal: the recurrence only reads the past). ``impl="scratch"`` runs the
    lecture's loop (``course_utils.models.recurrent.rnn``) instead of the library kernel, stacked too; there is no
    scratch GRU. Under the same seed both implementations start from the same weights.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        cell: str = "rnn",
        impl: str = "library",
        embed_dim: int = 64,
        hidden_dim: int = 128,
        num_layers: int = 1,
        max_len: int = 128,
        seed: int = 0,
    ):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.cell = check_choice("cell", cell, CELLS)
        self.impl = check_choice("impl", impl, IMPLS)
        if impl == "scratch" and cell not in SCRATCH_CELLS:
            raise CourseInputError(
                f"there is no scratch {cell.upper()} in the course: use impl='library' for cell={cell!r}"
            )
        embed_dim = check_int("embed_dim", embed_dim, minimum=1)
        hidden_dim = check_int("hidden_dim", hidden_dim, minimum=1)
        self.num_layers = check_int("num_layers", num_layers, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.seed = seed
        with seeded(seed):
            self.embedding = _embedding(self.vocab_size, embed_dim)  # E: (V, d)
            if impl == "library":
                self.recurrent = LIBRARY_CELLS[cell](embed_dim, hidden_dim, num_layers, batch_first=True)
            else:  # the same draws as the library module: the same seed gives the same weights
                sizes = [embed_dim] + [hidden_dim] * (num_layers - 1)
                self.recurrent = nn.ModuleList(SCRATCH_CELLS[cell](size, hidden_dim) for size in sizes)
            self.output = nn.Linear(hidden_dim, self.vocab_size)  # U: (V, H), b_2: (V,)

    def config(self) -> dict:
        """The constructor's arguments, as plain values for a checkpoint's config.json."""
        return {
            "vocab_size": self.vocab_size,
            "cell": self.cell,
            "impl": self.impl,
            "embed_dim": self.embedding.embedding_dim,
            "hidden_dim": self.output.in_features,
            "num_layers": self.num_layers,
            "max_len": self.max_len,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config: dict) -> "RecurrentLM":
        """Build a model from ``config()``'s dict (the ``build_model`` for ``load_checkpoint``)."""
        return cls(**config)

    def hidden_states(self, idx: Tensor) -> Tensor:
        """The top recurrent layer's h_t at every position: (B, T) ids → (B, T, H)."""
        x = self.embedding(check_sequences(idx, self.vocab_size, self.max_len))  # (B, T, d)
        if self.impl == "library":
            return self.recurrent(x)[0]  # (B, T, H)
        for layer in self.recurrent:
            x = layer(x)[0]  # (B, T, H)
        return x

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        logits = self.output(self.hidden_states(idx))  # (B, T, V)
        return logits, None if targets is None else sequence_loss(logits, targets, self.vocab_size)

    def scratch_layers(self) -> list:
        """The recurrent layers as scratch modules: the model's own (scratch) or copies of the library's weights."""
        if self.cell not in SCRATCH_CELLS:
            raise CourseInputError(f"there is no scratch {self.cell.upper()} in the course (scratch cells: rnn, lstm)")
        if self.impl == "scratch":
            return list(self.recurrent)
        scratch = SCRATCH_CELLS[self.cell]
        return [scratch.from_torch(self.recurrent, layer) for layer in range(self.num_layers)]

    def as_scratch(self) -> "RecurrentLM":
        """A copy of this model that runs the scratch loop, with the same weights (for parity checks)."""
        twin = copy.deepcopy(self)
        twin.recurrent = nn.ModuleList(twin.scratch_layers())
        twin.impl = "scratch"
        return twin

    @torch.no_grad()
    def gates(self, idx: Tensor, *, layer: int = -1) -> dict[str, Tensor]:
        """An LSTM's gates and cell state at every position of ``idx``, from the scratch cell: dict of (B, T, H).

        Keys "input", "forget", "output", "candidate", "cell"; ``layer`` picks the layer (default: the top).
        """
        if self.cell != "lstm":
            raise CourseInputError(f"gates exist in an LSTM; this model's cell is {self.cell!r}")
        layers = self.scratch_layers()
        layer = check_int("layer", layer, minimum=-len(layers), maximum=len(layers) - 1) % len(layers)
        x = self.embedding(check_sequences(idx, self.vocab_size, self.max_len))  # (B, T, d)
        for below in layers[:layer]:
            x = below(x)[0]  # (B, T, H)
        return layers[layer](x, keep_gates=True)[2]


# ---------------------------------------------------------------- whole sentences, read in both directions


def whole_sentences(idx: Tensor, targets: Tensor, pad_id: int) -> Tensor:
    """An LM batch (``[<s>, w1..wn]``, ``[w1..wn, </s>]``) as whole sentences ``[<s>, w1..wn, </s>]``: (B, T+1)."""
    return torch.cat([idx[:, :1], targets.masked_fill(targets == IGNORE_INDEX, pad_id)], dim=1)  # (B, T+1)


def frame_sentences(id_lists: Sequence[Sequence[int]], vocab: Vocab) -> Tensor:
    """Encoded sentences as whole framed sentences ``[<s>, w1..wn, </s>]``, right-padded: (B, T)."""
    return whole_sentences(*make_batch(id_lists, vocab), vocab.pad_id)  # (B, T)


def sequence_lengths(idx: Tensor, pad_id: int) -> Tensor:
    """The number of tokens before each row's padding (B,); padding must come only at the end of a row."""
    real = idx != pad_id  # (B, T)
    lengths = real.sum(dim=1)  # (B,)
    positions = torch.arange(idx.shape[1], device=idx.device)  # (T,)
    if not torch.equal(real, positions < lengths[:, None]):
        raise CourseInputError(f"padding (id {pad_id}) may only come at the end of a row, after the sentence")
    if not bool((lengths > 0).all()):
        raise CourseInputError("a row holds only padding: every row needs at least one token")
    return lengths


def reverse_each(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse the first ``lengths[b]`` steps of each row b, padding left in place: (B, T, ...) → (B, T, ...)."""
    positions = torch.arange(x.shape[1], device=x.device)  # (T,)
    index = torch.where(positions < lengths[:, None], lengths[:, None] - 1 - positions, positions)  # (B, T)
    index = index.view(*index.shape, *[1] * (x.ndim - 2)).expand_as(x)  # (B, T, ...)
    return x.gather(1, index)


class ProjectedLSTM(nn.Module):
    """One LSTM layer whose outputs are projected back to the embedding width: (B, T, d) → (B, T, d)."""

    def __init__(self, embed_dim: int, hidden_dim: int):
        super().__init__()
        self.lstm = nn.LSTM(embed_dim, hidden_dim, batch_first=True)
        self.projection = nn.Linear(hidden_dim, embed_dim)  # (d, H)

    def forward(self, x: Tensor) -> Tensor:
        return self.projection(self.lstm(x)[0])  # (B, T, d)


def _run_layers(layers: nn.ModuleList, x: Tensor) -> list[Tensor]:
    """Each layer's outputs, the first reading ``x`` (B, T, d): a list of (B, T, d)."""
    outputs = []
    for layer in layers:
        x = layer(x)  # (B, T, d)
        outputs.append(x)
    return outputs


def _right_to_left(layers: nn.ModuleList, x: Tensor, lengths: Tensor) -> list[Tensor]:
    """Each layer's outputs reading every row from its last token back: position t has read steps t..end."""
    return [reverse_each(h, lengths) for h in _run_layers(layers, reverse_each(x, lengths))]  # (B, T, d) each


class _SentenceModel(nn.Module):
    """What ``MaskedBiLSTM`` and ``ElmoLM`` share: their checked arguments, ``config()`` and ``from_config``."""

    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers, max_len, pad_id, seed):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.embed_dim = check_int("embed_dim", embed_dim, minimum=1)
        self.hidden_dim = check_int("hidden_dim", hidden_dim, minimum=1)
        self.num_layers = check_int("num_layers", num_layers, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.pad_id = check_int("pad_id", pad_id, minimum=0, maximum=self.vocab_size - 1)
        self.seed = check_int("seed", seed, minimum=0)

    def config(self) -> dict:
        """The constructor's arguments, as plain values for a checkpoint's config.json."""
        names = ("vocab_size", "embed_dim", "hidden_dim", "num_layers", "max_len", "pad_id", "seed")
        return {name: getattr(self, name) for name in names}

    @classmethod
    def from_config(cls, config: dict):
        """Build a model from ``config()``'s dict (the ``build_model`` for ``load_checkpoint``)."""
        return cls(**config)

    def lengths(self, idx: Tensor) -> Tensor:
        """Check ``idx`` (B, T), right-padded sentences; return each row's length before the padding (B,)."""
        return sequence_lengths(check_sequences(idx, self.vocab_size, self.max_len), self.pad_id)


class MaskedBiLSTM(_SentenceModel):
    """Masked-word prediction with a bidirectional LSTM: word t from the words before it and the words after it.

    ``forward(idx, targets=None) -> (logits, loss)``: ``idx`` (B, T) holds whole sentences
    ``[<s>, w1..wn, </s>]`` (``frame_sentences``). ``logits[:, t]`` comes from the forward LSTM's
    state at t-1 (it has read ``idx[:, :t]``) and the backward LSTM's state at t+1 (it has read
    ``idx[:, t+1:]``), concatenated: the word at t is never read, so every word is predicted at once.
    ``targets`` holds the words to predict and ``IGNORE_INDEX`` elsewhere (``masked_batches``).
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        embed_dim: int = 64,
        hidden_dim: int = 128,
        num_layers: int = 1,
        max_len: int = 128,
        pad_id: int = 0,
        seed: int = 0,
    ):
        super().__init__(vocab_size, embed_dim, hidden_dim, num_layers, max_len, pad_id, seed)
        with seeded(seed):
            self.embedding = _embedding(self.vocab_size, embed_dim)  # (V, d)
            self.left_to_right = nn.LSTM(embed_dim, hidden_dim, num_layers, batch_first=True)
            self.right_to_left = nn.LSTM(embed_dim, hidden_dim, num_layers, batch_first=True)
            self.output = nn.Linear(2 * hidden_dim, self.vocab_size)  # (V, 2H)

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        lengths = self.lengths(idx)  # (B,)
        e = self.embedding(idx)  # (B, T, d)
        left = self.left_to_right(e)[0]  # (B, T, H): left[:, t] has read idx[:, :t+1]
        right = reverse_each(self.right_to_left(reverse_each(e, lengths))[0], lengths)  # (B, T, H): read idx[:, t:]
        before = F.pad(left[:, :-1], (0, 0, 1, 0))  # (B, T, H): before[:, t] = left[:, t-1], zeros at t = 0
        after = F.pad(right[:, 1:], (0, 0, 0, 1))  # (B, T, H): after[:, t] = right[:, t+1] ...
        after = after * (torch.arange(idx.shape[1], device=idx.device) + 1 < lengths[:, None]).unsqueeze(-1)  # ... or 0
        logits = self.output(torch.cat([before, after], dim=-1))  # (B, T, V)
        return logits, None if targets is None else sequence_loss(logits, targets, self.vocab_size)


def masked_batches(
    id_lists: Sequence[Sequence[int]], vocab: Vocab, *, batch_size: int, seed: int
) -> Callable[[int], tuple[Tensor, Tensor]]:
    """``step -> (idx, targets)`` for ``MaskedBiLSTM``: whole sentences, and every word as a target."""
    lm_batches = batch_stream(id_lists, vocab, batch_size=batch_size, seed=seed)
    framing = torch.tensor([vocab.pad_id, vocab.bos_id, vocab.eos_id])  # (3,)

    def batch(step: int) -> tuple[Tensor, Tensor]:
        idx = whole_sentences(*lm_batches(step), vocab.pad_id)  # (B, T)
        return idx, idx.masked_fill(torch.isin(idx, framing), IGNORE_INDEX)  # (B, T), (B, T)

    return batch


@torch.no_grad()
def predict_masked_words(model: MaskedBiLSTM, vocab: Vocab, words) -> Tensor:
    """P(word at the one ``<mask>`` | every other word of the sentence): float64 probabilities (V,)."""
    words = as_words(words)
    if len(vocab) != model.vocab_size:
        raise CourseInputError(
            f"the vocabulary has {len(vocab)} words but the model {model.vocab_size}: not its vocabulary"
        )
    if words.count(MASK) != 1:
        example = f"'he ate the cake {MASK} the fork .'"
        raise CourseInputError(f"put exactly one {MASK} where the hidden word goes, e.g. {example}; "
                               f"found {words.count(MASK)} in {' '.join(words)!r}")  # fmt: skip
    position = words.index(MASK) + 1  # after <s>
    ids = [vocab.bos_id] + vocab.encode(words, unknown="error") + [vocab.eos_id]
    device = model.embedding.weight.device
    logits, _ = model.eval()(torch.tensor([ids], device=device))  # (1, n+2, V)
    return torch.softmax(logits[0, position].double(), dim=-1).cpu()  # (V,)


# ---------------------------------------------------------------- ELMo


class ElmoLM(_SentenceModel):
    """ELMo's biLM: a forward and a backward stacked LSTM LM sharing the token embedding and the softmax.

    Each LSTM layer's output is projected to ``embed_dim`` by a linear layer (ELMo projects its
    4096-unit LSTMs down to 512), so every layer of ``layers(idx)`` has width 2·embed_dim: layer 0 is the token embedding twice,
    layer l is [forward state ; backward state] of LSTM layer l at each token.

    ``forward(idx, targets=None) -> (logits, loss)`` takes LM batches (``idx`` = ``[<s>, w1..wn]``,
    ``targets`` = ``[w1..wn, </s>]``); ``logits`` are the forward LM's (causal: it is a course LM).
    The loss is the mean of two losses: the forward LM's on ``targets``, and the backward LM's,
    which reads the whole sentence ``[<s>, w1..wn, </s>]`` from the right and predicts each token
    from the ones after it (wn from </s>, ..., <s> from w1..wn </s>).
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        embed_dim: int = 64,
        hidden_dim: int = 128,
        num_layers: int = 2,
        max_len: int = 128,
        pad_id: int = 0,
        seed: int = 0,
    ):
        super().__init__(vocab_size, embed_dim, hidden_dim, num_layers, max_len, pad_id, seed)

        def stack() -> nn.ModuleList:
            return nn.ModuleList(ProjectedLSTM(embed_dim, hidden_dim) for _ in range(num_layers))

        with seeded(seed):
            self.embedding = _embedding(self.vocab_size, embed_dim)  # (V, d)
            self.forward_layers = stack()
            self.backward_layers = stack()
            self.output = nn.Linear(embed_dim, self.vocab_size)  # (V, d): one softmax for both directions

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        check_sequences(idx, self.vocab_size, self.max_len)
        logits = self.output(_run_layers(self.forward_layers, self.embedding(idx))[-1])  # (B, T, V)
        if targets is None:
            return logits, None
        forward_loss = sequence_loss(logits, targets, self.vocab_size)
        sentences = whole_sentences(idx, targets, self.pad_id)  # (B, T+1)
        lengths = sequence_lengths(sentences, self.pad_id)  # (B,)
        backward = _right_to_left(self.backward_layers, self.embedding(sentences), lengths)[-1]  # (B, T+1, d)
        backward_logits = self.output(backward[:, 1:])  # (B, T, V): position t+1, having read t+1.., predicts t
        backward_targets = sentences[:, :-1].masked_fill(sentences[:, :-1] == self.pad_id, IGNORE_INDEX)  # (B, T)
        return logits, (forward_loss + sequence_loss(backward_logits, backward_targets, self.vocab_size)) / 2

    def layers(self, idx: Tensor) -> Tensor:
        """Every layer's representation of every token of right-padded ``idx`` (B, T): (L+1, B, T, 2·d)."""
        lengths = self.lengths(idx)  # (B,)
        e = self.embedding(idx)  # (B, T, d)
        forward = _run_layers(self.forward_layers, e)  # L × (B, T, d): position t has read idx[:, :t+1]
        backward = _right_to_left(self.backward_layers, e, lengths)  # L × (B, T, d): position t has read idx[:, t:]
        mixed = [torch.cat([e, e], dim=-1)] + [torch.cat(pair, dim=-1) for pair in zip(forward, backward)]
        return torch.stack(mixed)  # (L+1, B, T, 2d)


class ScalarMix(nn.Module):
    """ELMo's task-specific mix of layers: γ Σ_j s_j layer_j, with s = softmax(w) and w, γ learned."""

    def __init__(self, n_layers: int):
        super().__init__()
        self.n_layers = check_int("n_layers", n_layers, minimum=1)
        self.w = nn.Parameter(torch.zeros(self.n_layers))  # (L+1,): softmax(0) starts every layer equal
        self.gamma = nn.Parameter(torch.ones(()))  # (): the scale γ

    def forward(self, layers: Tensor) -> Tensor:
        """(L+1, ..., D) layers → (..., D) mix."""
        if not isinstance(layers, torch.Tensor) or layers.ndim < 2 or layers.shape[0] != self.n_layers:
            shape = list(layers.shape) if isinstance(layers, torch.Tensor) else type(layers).__name__
            raise CourseInputError(f"layers must be a tensor ({self.n_layers}, ...); got {shape}")
        s = torch.softmax(self.w, dim=0)  # (L+1,)
        return self.gamma * torch.tensordot(s, layers, dims=1)  # (..., D)

    def weights(self) -> Tensor:
        """The layer weights s = softmax(w) (L+1,), summing to 1; detached, for tables and plots."""
        return torch.softmax(self.w.detach(), dim=0)  # (L+1,)


class ElmoClassifier(nn.Module):
    """A classifier on frozen ELMo: ``ScalarMix`` of its layers → mean over the tokens → a small feed-forward head.

    ``forward(x, targets=None) -> (logits (B, C), loss)``: ``x`` (B, T) right-padded token ids,
    framed as ELMo read them in training (``frame_sentences``); ``targets`` (B,) class ids.
    Only the mix and the head learn: ELMo's own weights never change.
    """

    def __init__(self, elmo: ElmoLM, n_classes: int, hidden: int = 32, *, seed: int = 0):
        super().__init__()
        if not isinstance(elmo, ElmoLM):
            raise CourseInputError(f"elmo must be an ElmoLM; got {type(elmo).__name__}")
        self.n_classes = check_int("n_classes", n_classes, minimum=2)
        hidden = check_int("hidden", hidden, minimum=1)
        self.elmo = elmo.requires_grad_(False).eval()
        width = 2 * elmo.embedding.embedding_dim
        with seeded(seed):
            self.mix = ScalarMix(elmo.num_layers + 1)
            self.head = nn.Sequential(nn.Linear(width, hidden), nn.Tanh(), nn.Linear(hidden, self.n_classes))

    def forward(self, x: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        with torch.no_grad():
            layers = self.elmo.layers(x)  # (L+1, B, T, 2d); checks x
        keep = (x != self.elmo.pad_id).unsqueeze(-1).to(layers.dtype)  # (B, T, 1)
        pooled = (self.mix(layers) * keep).sum(dim=1) / keep.sum(dim=1)  # (B, 2d): mean over real tokens
        logits = self.head(pooled)  # (B, C)
        if targets is None:
            return logits, None
        check_ids("targets", targets, self.n_classes, ndim=1)
        if len(targets) != len(x):
            raise CourseInputError(f"targets must hold one class per row of x ({len(x)}); got {len(targets)}")
        return logits, F.cross_entropy(logits, targets)
