"""The feed-forward (Bengio) language model, in the slides' steps.

    P(w_t | w_1..w_{t-1}) ≈ P(w_t | w_{t-N+1}..w_{t-1})          (the Markov assumption)

    e = [E w_{t-N+1}; ...; E w_{t-1}]     N embeddings (one-hot × E), concatenated: (1, N·d)
    h = g(W e + b)                        the hidden layer
    ŷ = softmax(U h)                      a distribution over the V vocabulary words

``FeedForwardLM`` follows the course's LM interface, ``model(idx, targets) -> (logits, loss)``,
with logits for every position at once (pad + unfold, no loop over positions);
``bengio_forward_scratch`` is the same forward pass written out step by step, for parity checks.
``seeded`` and ``check_ids`` are shared with the masked-word and sentiment models.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.basics.activations import get_activation
from course_utils.models.basics.feedforward import softmax
from course_utils.models.lm import IGNORE_INDEX
from course_utils.validation import CourseInputError, check_int

Tensor = torch.Tensor


@contextmanager
def seeded(seed: int):
    """Layers built inside start from torch's default init drawn with ``seed``; the global RNG is left as it was."""
    seed = check_int("seed", seed, minimum=0, maximum=2**63 - 1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def check_ids(name: str, ids, vocab_size: int, *, ndim: int, allow_ignore: bool = False) -> Tensor:
    """Return ``ids`` if it is a LongTensor with ``ndim`` dims and every id in [0, vocab_size)."""
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long:
        kind = f"a {ids.dtype} tensor" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise CourseInputError(f"{name} must be a LongTensor of token ids, e.g. torch.tensor([[2, 7, 9]]); got {kind}")
    if ids.ndim != ndim:
        raise CourseInputError(f"{name} must have {ndim} dimension(s); got shape {list(ids.shape)}")
    valid = (ids >= 0) & (ids < vocab_size)
    if allow_ignore:
        valid |= ids == IGNORE_INDEX
    if not bool(valid.all()):
        bad = ids[~valid][:5].tolist()
        extra = f" or {IGNORE_INDEX} (ignored)" if allow_ignore else ""
        raise CourseInputError(f"{name} holds ids outside 0..{vocab_size - 1}{extra}: {bad}")
    return ids


EMBEDDING_INIT_STD = 0.1


class FeedForwardLM(nn.Module):
    """Bengio's feed-forward LM: N context embeddings concatenated → hidden layer → softmax over V.

    ``forward(idx, targets=None) -> (logits, loss)``: ``logits[:, t]`` scores the word after
    ``idx[:, t]`` from the window ``idx[:, t-N+1 : t+1]``; positions before 0 read as ``bos_id``.
    The output layer is U h with no bias, as on the slides.
    """

    def __init__(
        self,
        vocab_size: int,
        context_size: int,
        *,
        embed_dim: int = 32,
        hidden_dim: int = 128,
        bos_id: int = 2,
        activation: str = "tanh",
        seed: int = 0,
    ):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.context_size = check_int("context_size", context_size, minimum=1)
        self.bos_id = check_int("bos_id", bos_id, minimum=0, maximum=self.vocab_size - 1)
        self.activation = get_activation(activation).name
        embed_dim = check_int("embed_dim", embed_dim, minimum=1)
        hidden_dim = check_int("hidden_dim", hidden_dim, minimum=1)
        with seeded(seed):
            self.embedding = nn.Embedding(self.vocab_size, embed_dim)  # E: (V, d)
            # Small initial embeddings: from nn.Embedding's N(0, 1) the trained vectors stay mostly noise
            # (rows of norm ~8 move by ~2), and a picture of them shows no word classes.
            nn.init.normal_(self.embedding.weight, std=EMBEDDING_INIT_STD)
            self.hidden = nn.Linear(self.context_size * embed_dim, hidden_dim)  # W: (H, N·d), b: (H,)
            self.output = nn.Linear(hidden_dim, self.vocab_size, bias=False)  # U: (V, H)
        self.seed = seed

    def config(self) -> dict:
        """The constructor's arguments, as plain values for a checkpoint's config.json."""
        return {
            "vocab_size": self.vocab_size,
            "context_size": self.context_size,
            "embed_dim": self.embedding.embedding_dim,
            "hidden_dim": self.hidden.out_features,
            "bos_id": self.bos_id,
            "activation": self.activation,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config: dict) -> "FeedForwardLM":
        """Build a model from ``config()``'s dict (the ``build_model`` for ``load_checkpoint``)."""
        return cls(**config)

    def context_windows(self, idx: Tensor) -> Tensor:
        """The N ids each position reads, oldest first: (B, T) → (B, T, N), left-padded with ``bos_id``."""
        padded = F.pad(idx, (self.context_size - 1, 0), value=self.bos_id)  # (B, T+N-1)
        return padded.unfold(1, self.context_size, 1)  # (B, T, N): row t is padded[t : t+N]

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        check_ids("idx", idx, self.vocab_size, ndim=2)
        windows = self.context_windows(idx)  # (B, T, N)
        e = self.embedding(windows).flatten(2)  # (B, T, N·d): the N embeddings concatenated
        h = get_activation(self.activation).library(self.hidden(e))  # (B, T, H)
        logits = self.output(h)  # (B, T, V)
        if targets is None:
            return logits, None
        check_ids("targets", targets, self.vocab_size, ndim=2, allow_ignore=True)
        if targets.shape != idx.shape:
            raise CourseInputError(f"targets must have the shape of idx {list(idx.shape)}; got {list(targets.shape)}")
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX)  # mean over kept
        return logits, loss


def bengio_forward_scratch(model: FeedForwardLM, window_ids: Tensor) -> Tensor:
    """P(next word | window) from the slides' steps, with the model's own E, W, b, U: (B, N) ids → (B, V) probs.

    One window (N,) gives one distribution (V,).
    """
    if isinstance(window_ids, torch.Tensor) and window_ids.ndim == 1:
        return bengio_forward_scratch(model, window_ids.unsqueeze(0))[0]  # (V,)
    window_ids = check_ids("window_ids", window_ids, model.vocab_size, ndim=2)
    if window_ids.shape[1] != model.context_size:
        raise CourseInputError(
            f"this model reads the previous N={model.context_size} words; window_ids has {window_ids.shape[1]} per row"
        )
    E = model.embedding.weight  # (V, d)
    W, b = model.hidden.weight, model.hidden.bias  # (H, N·d), (H,)
    U = model.output.weight  # (V, H)
    one_hot = F.one_hot(window_ids, model.vocab_size).to(E.dtype)  # (B, N, V): 1. one-hot vectors ...
    projection = one_hot @ E  # (B, N, d): ... times E gives the N embeddings
    e = projection.flatten(1)  # (B, N·d): concatenated
    h = get_activation(model.activation).function(e @ W.T + b)  # (B, H): 2. W e + b, 3. activation
    z = h @ U.T  # (B, V): 4. multiply by U
    return softmax(z)  # (B, V): 5. softmax
