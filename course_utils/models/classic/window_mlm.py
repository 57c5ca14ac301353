"""Masked-word prediction with a fixed window, the lecture's "masked language modelling with a DNN".

    P(w_i | w_1, ..., w_{i-1}, w_{i+1}, ..., w_n)  ≈  P(w_i | the ``width`` words on each side of w_i)

P(with | he ate the cake <mask> the fork): the net reads the words around the ``<mask>`` and its
last layer gives a distribution over the vocabulary. ``WindowMaskedLM`` combines the 2·width
context embeddings in one of two ways, which show the lecture's three limitations:

- ``combine="concat"``: one block of first-layer weights per window slot. It knows the order,
  but each parameter is specific to one position (``position_weights``): what it learns about
  "cake" two words back teaches it nothing about "cake" one word back.
- ``combine="bag"``: the embeddings are summed, so one weight matrix serves every slot, and the
  order is lost: any shuffle of the window gives the same prediction.
- Both read a fixed number of words: a word outside the window cannot change the prediction
  (no variable-length input).

Windows are padded at the sentence edges with ``<s>`` (left) and ``</s>`` (right), then with
``<pad>``, whose embedding is fixed at zero (so the bag ignores it). Example: width 3, the first
word of "the cat sat ." reads ``[<pad>, <pad>, <s>]`` and ``[cat, sat, .]``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.basics.activations import get_activation
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.classic.neural_lm import check_ids, seeded
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.validation import CourseInputError, check_choice, check_int

Tensor = torch.Tensor

COMBINE_MODES = ("concat", "bag")


class WindowMaskedLM(nn.Module):
    """A feed-forward masked-word predictor: ``width`` words each side → embeddings → hidden layer → V.

    ``forward(windows, targets=None) -> (logits, loss)``: ``windows`` (B, 2·width) holds the left
    context then the right context (``masked_examples`` builds them); ``targets`` (B,) the hidden words.
    """

    def __init__(
        self,
        vocab_size: int,
        width: int,
        *,
        combine: str = "concat",
        embed_dim: int = 32,
        hidden_dim: int = 128,
        activation: str = "tanh",
        pad_id: int = 0,
        seed: int = 0,
    ):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.width = check_int("width", width, minimum=1)
        self.combine = check_choice("combine", combine, COMBINE_MODES)
        self.activation = get_activation(activation).name
        pad_id = check_int("pad_id", pad_id, minimum=0, maximum=self.vocab_size - 1)
        embed_dim = check_int("embed_dim", embed_dim, minimum=1)
        hidden_dim = check_int("hidden_dim", hidden_dim, minimum=1)
        n_inputs = 2 * self.width * embed_dim if combine == "concat" else embed_dim
        with seeded(seed):
            self.embedding = nn.Embedding(self.vocab_size, embed_dim, padding_idx=pad_id)  # (V, d), pad row 0
            self.hidden = nn.Linear(n_inputs, hidden_dim)  # (H, 2w·d) for concat, (H, d) for bag
            self.output = nn.Linear(hidden_dim, self.vocab_size)  # (V, H)

    def forward(self, windows: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        check_ids("windows", windows, self.vocab_size, ndim=2)
        if windows.shape[1] != 2 * self.width:
            raise CourseInputError(
                f"this model reads {self.width} words on each side, so windows must be (B, {2 * self.width}); "
                f"got {list(windows.shape)}"
            )
        e = self.embedding(windows)  # (B, 2w, d)
        x = e.flatten(1) if self.combine == "concat" else e.sum(dim=1)  # (B, 2w·d) or (B, d)
        h = get_activation(self.activation).library(self.hidden(x))  # (B, H)
        logits = self.output(h)  # (B, V)
        if targets is None:
            return logits, None
        check_ids("targets", targets, self.vocab_size, ndim=1, allow_ignore=True)
        if len(targets) != len(windows):
            raise CourseInputError(f"targets must hold one word per window ({len(windows)}); got {len(targets)}")
        return logits, F.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX)

    def position_weights(self) -> Tensor:
        """The concat model's first-layer weights, one block per window slot: (2·width, H, d)."""
        if self.combine != "concat":
            raise CourseInputError("the bag model has no per-position weights: one matrix serves every slot")
        d = self.embedding.embedding_dim
        return self.hidden.weight.view(-1, 2 * self.width, d).transpose(0, 1)  # (2w, H, d)


def sentence_spans(ids: Sequence[int], vocab: Vocab, width: int) -> Tensor:
    """One row per word of the sentence: the word at the centre, ``width`` padded ids each side: (n, 2·width+1)."""
    pads = [vocab.pad_id] * (width - 1)
    padded = torch.tensor(pads + [vocab.bos_id, *ids, vocab.eos_id] + pads, dtype=torch.long)  # (n + 2w,)
    return padded.unfold(0, 2 * width + 1, 1)  # (n, 2w+1): row i is centred on word i


def split_spans(spans: Tensor, width: int) -> tuple[Tensor, Tensor]:
    """Spans (M, 2w+1) → windows without the centre (M, 2w) and the centre words (M,)."""
    return torch.cat([spans[:, :width], spans[:, width + 1 :]], dim=1), spans[:, width]


def masked_examples(id_lists: Sequence[Sequence[int]], vocab: Vocab, width: int) -> tuple[Tensor, Tensor]:
    """One example per word of every sentence: windows (M, 2·width) and the hidden words (M,)."""
    width = check_int("width", width, minimum=1)
    id_lists = [ids.tolist() if isinstance(ids, torch.Tensor) else list(ids) for ids in id_lists]
    if not all(isinstance(i, int) and not isinstance(i, bool) for ids in id_lists for i in ids):
        raise CourseInputError("id_lists must hold lists of integer token ids (vocab.encode(words) makes them)")
    spans = [sentence_spans(ids, vocab, width) for ids in id_lists if ids]
    if not spans:
        raise CourseInputError("masked_examples needs at least one non-empty sentence of token ids")
    windows, targets = split_spans(torch.cat(spans), width)  # (M, 2w), (M,)
    check_ids("the sentences' ids", targets, len(vocab), ndim=1)
    return windows, targets


def as_words(words) -> list[str]:
    """A sentence as a list of words; a string is split on whitespace."""
    if isinstance(words, str):
        return words.split()
    if not isinstance(words, (list, tuple)) or not all(isinstance(w, str) for w in words):
        raise CourseInputError(f"a sentence must be a list of words (strings) or one string; got {words!r}")
    return list(words)


def masked_window(tokens, position: int, width: int, vocab: Vocab) -> Tensor:
    """The window (2·width,) around ``tokens[position]``; that word itself is hidden, so it may be ``<mask>``."""
    tokens = as_words(tokens)
    if not tokens:
        raise CourseInputError("the sentence is empty: there is no word to mask")
    position = check_int("position", position, minimum=0, maximum=len(tokens) - 1)
    width = check_int("width", width, minimum=1)
    context = tokens[:position] + tokens[position + 1 :]
    if MASK in context:
        raise CourseInputError(f"only the word at position {position} can be masked; the context holds another {MASK}")
    ids = vocab.encode(tokens[:position] + [MASK] + tokens[position + 1 :], unknown="error")
    windows, _ = split_spans(sentence_spans(ids, vocab, width)[position : position + 1], width)  # (1, 2w)
    return windows[0]  # (2w,)


@torch.no_grad()
def predict_masked(model: WindowMaskedLM, vocab: Vocab, words) -> Tensor:
    """P(word at the one ``<mask>`` | its window): float64 probabilities (V,)."""
    words = as_words(words)
    if len(vocab) != model.vocab_size:
        raise CourseInputError(
            f"the vocabulary has {len(vocab)} words but the model {model.vocab_size}: not its vocabulary"
        )
    positions = [i for i, word in enumerate(words) if word == MASK]
    if len(positions) != 1:
        raise CourseInputError(
            f"put exactly one {MASK} where the hidden word goes, e.g. 'he ate the cake {MASK} the fork'; "
            f"found {len(positions)} in {' '.join(words)!r}"
        )
    window = masked_window(words, positions[0], model.width, vocab)  # (2w,)
    device = model.embedding.weight.device
    logits, _ = model.eval()(window.unsqueeze(0).to(device))  # (1, V)
    return torch.softmax(logits[0].double(), dim=-1).cpu()  # (V,)


def allowed_mass_at_mask(model: WindowMaskedLM, vocab: Vocab, items: Sequence[dict], *, suffix=(".",)) -> float:
    """Mean probability at the ``<mask>`` on each item's ``allowed`` words; the sentence is prefix, mask, suffix."""
    if not items:
        raise CourseInputError("items is empty: give evaluation items with a 'prefix' and 'allowed' words")
    total = 0.0
    for item in items:
        probs = predict_masked(model, vocab, [*item["prefix"], MASK, *suffix])  # (V,)
        total += sum(probs[vocab.stoi[word]].item() for word in item["allowed"])
    return total / len(items)


@torch.no_grad()
def slot_similarity(model: WindowMaskedLM) -> Tensor:
    """How alike one word's effect on the hidden layer is in two window slots: (2·width, 2·width).

    Word v in slot p adds ``position_weights()[p] @ E[v]`` to the hidden layer's input. Entry (p, q) is the
    cosine similarity of that vector for slots p and q, averaged over every word with a non-zero embedding
    (``<pad>``'s is fixed at 0). Near 0: what the model learned about a word in one slot does not carry over.
    """
    blocks = model.position_weights()  # (2w, H, d)
    embeddings = model.embedding.weight  # (V, d)
    embeddings = embeddings[embeddings.norm(dim=-1) > 0]  # (V', d): without <pad>
    effects = torch.einsum("phd,vd->pvh", blocks, embeddings)  # (2w, V', H): word v in slot p
    return F.cosine_similarity(effects[:, None], effects[None, :], dim=-1).mean(-1)  # (2w, 2w)


def example_batches(
    x: Tensor, targets: Tensor, *, batch_size: int, seed: int = 0
) -> Callable[[int], tuple[Tensor, Tensor]]:
    """``step -> (x, targets)``: ``batch_size`` rows drawn at random, the same rows for the same step and seed."""
    if len(x) != len(targets) or len(x) == 0:
        raise CourseInputError(
            f"x and targets must hold the same, non-zero number of rows; got {len(x)} and {len(targets)}"
        )
    batch_size = check_int("batch_size", batch_size, minimum=1)
    seed = check_int("seed", seed, minimum=0)

    def batch(step: int) -> tuple[Tensor, Tensor]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        rows = torch.randint(len(x), (batch_size,), generator=generator)  # (batch_size,)
        return x[rows], targets[rows]

    return batch
