"""A decoder-only (GPT-style) transformer language model: the library's GPT-2, then the same written from scratch.

One block of GPT-2 (pre-LayerNorm, Radford et al. 2019), for a sequence x of shape (B, T, C):

    x = x + MultiHead(LN(x))      causal self-attention: position t reads positions ≤ t only
    x = x + MLP(LN(x))            MLP(h) = W_2 GELU(W_1 h + b_1) + b_2, with 4C hidden units

The input is token embedding + learned position embedding; after the last block a final LayerNorm and
the output layer, which shares its weights with the token embedding (tied), give the logits.

``CourseGPT`` wraps ``transformers.GPT2LMHeadModel`` (``model.hf.generate(...)`` works on it) and
``ScratchGPT`` is the same computation in plain torch, using the course's
``scaled_dot_product_attention``; ``ScratchGPT.from_hf`` copies the weights, so the two can be compared.
Both follow the course's LM contract ``model(idx, targets=None) -> (logits, loss)``.
"""

from __future__ import annotations

import collections
import copy
import math
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.language import lexicon as lx
from course_utils.language.text_pipeline import Vocab
from course_utils.models.transformer.attention import causal_mask, scaled_dot_product_attention
from course_utils.models.classic.neural_lm import check_ids, seeded
from course_utils.models.recurrent.recurrent_lm import check_sequences, sequence_loss
from course_utils.validation import CourseInputError, check_dropout, check_heads, check_int

Tensor = torch.Tensor

ATTENTION = "eager"  # the only implementation that returns attention weights (sdpa returns an empty tuple)


# ---------------------------------------------------------------- the library model


def _gpt2_config(vocab_size, bos_id, eos_id, pad_id, *, n_layer, n_embd, n_head, n_positions, dropout):
    """A ``GPT2Config`` from plain numbers (the course's special ids, not GPT-2's 50256)."""
    from transformers import GPT2Config

    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id), ("pad_id", pad_id)):
        check_int(name, value, minimum=0, maximum=vocab_size - 1)
    n_embd, n_head = check_heads("n_embd", n_embd, "n_head", n_head)
    dropout = check_dropout(dropout)
    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=check_int("n_positions", n_positions, minimum=1),
        n_embd=n_embd,
        n_layer=check_int("n_layer", n_layer, minimum=1),
        n_head=n_head,
        resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=dropout,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
    )
    config._attn_implementation = ATTENTION  # not kept by save_pretrained: set again when building
    return config


def gpt2_config(vocab: Vocab, *, n_layer: int, n_embd: int, n_head: int, n_positions: int = 128, dropout: float = 0.0):
    """A ``GPT2Config`` for ``vocab``: its size and its <s>, </s>, <pad> ids; eager attention."""
    return _gpt2_config(len(vocab), vocab.bos_id, vocab.eos_id, vocab.pad_id, n_layer=n_layer, n_embd=n_embd,
                        n_head=n_head, n_positions=n_positions, dropout=dropout)  # fmt: skip


def _no_padding_mask(idx: Tensor) -> Tensor:
    """An all-ones attention mask (B, T): no key is hidden beyond what the causal mask hides.

    Sentences are right-padded with <pad> and their targets there are IGNORE_INDEX. Causal attention means
    a real position reads only positions before it, never the padding after it, so no padding mask is
    needed: the logits of the real positions are those of the unpadded sentence. (Passing the mask
    explicitly also keeps the library from warning that ``input_ids`` may be padded.)
    """
    return torch.ones_like(idx)  # (B, T)


class CourseGPT(nn.Module):
    """Hugging Face's ``GPT2LMHeadModel`` behind the course's LM contract.

    ``forward(idx, targets=None) -> (logits, loss)``: ``logits[:, t]`` scores the token after
    ``idx[:, :t+1]``. ``self.hf`` is the library model itself (``model.hf.generate(...)``).
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        bos_id: int,
        eos_id: int,
        pad_id: int,
        n_layer: int = 2,
        n_embd: int = 64,
        n_head: int = 4,
        max_len: int = 128,
        dropout: float = 0.0,
        seed: int = 0,
    ):
        super().__init__()
        from transformers import GPT2LMHeadModel

        config = _gpt2_config(vocab_size, bos_id, eos_id, pad_id, n_layer=n_layer, n_embd=n_embd, n_head=n_head,
                              n_positions=max_len, dropout=dropout)  # fmt: skip
        self.vocab_size, self.max_len = config.vocab_size, config.n_positions
        self.seed = check_int("seed", seed, minimum=0)
        with seeded(self.seed):  # _from_config changes the config it is given: hand it a copy
            self.hf = GPT2LMHeadModel._from_config(copy.deepcopy(config), attn_implementation=ATTENTION)

    @classmethod
    def for_vocab(cls, vocab: Vocab, **kwargs) -> "CourseGPT":
        """A model over ``vocab``, with its special ids; ``kwargs`` as in the constructor."""
        return cls(len(vocab), bos_id=vocab.bos_id, eos_id=vocab.eos_id, pad_id=vocab.pad_id, **kwargs)

    def config(self) -> dict:
        """The constructor's arguments, as plain values for a checkpoint's config.json."""
        c = self.hf.config
        return {"vocab_size": c.vocab_size, "bos_id": c.bos_token_id, "eos_id": c.eos_token_id,
                "pad_id": c.pad_token_id, "n_layer": c.n_layer, "n_embd": c.n_embd, "n_head": c.n_head,
                "max_len": c.n_positions, "dropout": c.resid_pdrop, "seed": self.seed}  # fmt: skip

    @classmethod
    def from_config(cls, config: dict) -> "CourseGPT":
        """Build a model from ``config()``'s dict (the ``build_model`` for ``load_checkpoint``)."""
        return cls(**config)

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        idx = check_sequences(idx, self.vocab_size, self.max_len)  # (B, T)
        logits = self.hf(input_ids=idx, attention_mask=_no_padding_mask(idx), use_cache=False).logits  # (B, T, V)
        return logits, None if targets is None else sequence_loss(logits, targets, self.vocab_size)

    def attentions(self, idx: Tensor) -> list[Tensor]:
        """Each layer's attention weights for ``idx`` (B, T): a list of L tensors (B, H, T, T)."""
        idx = check_sequences(idx, self.vocab_size, self.max_len)  # (B, T)
        found = self.hf(input_ids=idx, attention_mask=_no_padding_mask(idx), use_cache=False,
                        output_attentions=True).attentions  # fmt: skip
        if not found:  # sdpa returns () without a word
            raise CourseInputError(
                "this model returned no attention weights: build it with attn_implementation='eager'"
            )
        return list(found)


# ---------------------------------------------------------------- the same model from scratch


class ScratchBlock(nn.Module):
    """One pre-LayerNorm block: x + MultiHead(LN(x)), then x + MLP(LN(x)). (B, T, C) → (B, T, C)."""

    def __init__(self, n_embd: int, n_head: int, *, dropout: float = 0.0, eps: float = 1e-5):
        super().__init__()
        self.n_embd, self.n_head = check_int("n_embd", n_embd, minimum=1), check_int("n_head", n_head, minimum=1)
        if n_embd % n_head:
            raise CourseInputError(f"n_embd={n_embd} must split evenly into n_head={n_head} heads")
        self.ln_1 = nn.LayerNorm(n_embd, eps=eps)
        self.qkv = nn.Linear(n_embd, 3 * n_embd)  # W^Q, W^K, W^V of every head, side by side
        self.out = nn.Linear(n_embd, n_embd)  # W^O
        self.ln_2 = nn.LayerNorm(n_embd, eps=eps)
        self.fc = nn.Linear(n_embd, 4 * n_embd)  # W_1
        self.proj = nn.Linear(4 * n_embd, n_embd)  # W_2
        self.dropout = nn.Dropout(dropout)

    def heads(self, x: Tensor) -> Tensor:
        """Split the channels into heads: (B, T, C) → (B, H, T, C/H)."""
        B, T, C = x.shape
        return x.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, d_k)

    def attend(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Causal multi-head self-attention of ``x`` (B, T, C): output (B, T, C) and weights (B, H, T, T)."""
        B, T, C = x.shape
        q, k, v = (self.heads(part) for part in self.qkv(x).split(C, dim=-1))  # (B, H, T, d_k) each
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device))  # (B, H, T, d_k)
        if self.training and self.dropout.p > 0:  # GPT-2 drops attention weights, not outputs
            out = self.dropout(weights) @ v  # (B, H, T, d_k)
        out = out.transpose(1, 2).reshape(B, T, C)  # (B, T, C): the heads concatenated
        return self.dropout(self.out(out)), weights  # (B, T, C)

    def mlp(self, x: Tensor) -> Tensor:
        """W_2 GELU(W_1 x + b_1) + b_2 with GPT-2's tanh approximation of GELU: (B, T, C) → (B, T, C)."""
        return self.dropout(self.proj(F.gelu(self.fc(x), approximate="tanh")))  # (B, T, C)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        attended, weights = self.attend(self.ln_1(x))  # (B, T, C), (B, H, T, T)
        x = x + attended  # (B, T, C)
        x = x + self.mlp(self.ln_2(x))  # (B, T, C)
        return x, weights

    @classmethod
    @torch.no_grad()
    def from_hf(cls, block) -> "ScratchBlock":
        """A copy of a ``transformers`` ``GPT2Block``'s weights (its ``Conv1D`` stores W as (in, out))."""
        attn = block.attn
        n_embd = block.ln_1.normalized_shape[0]
        scratch = cls(n_embd, attn.num_heads, dropout=attn.attn_dropout.p, eps=block.ln_1.eps)
        scratch.to(block.ln_1.weight.dtype)
        scratch.ln_1.load_state_dict(block.ln_1.state_dict())
        scratch.ln_2.load_state_dict(block.ln_2.state_dict())
        for mine, theirs in ((scratch.qkv, attn.c_attn), (scratch.out, attn.c_proj),
                             (scratch.fc, block.mlp.c_fc), (scratch.proj, block.mlp.c_proj)):  # fmt: skip
            mine.weight.copy_(theirs.weight.T)  # Conv1D (in, out) → Linear (out, in)
            mine.bias.copy_(theirs.bias)
        return scratch


class ScratchGPT(nn.Module):
    """GPT-2 in plain torch: token + position embeddings → blocks → LayerNorm → tied output layer.

    ``forward(idx, targets=None) -> (logits, loss)``, like ``CourseGPT``.
    """

    def __init__(
        self, vocab_size: int, *, n_layer: int = 2, n_embd: int = 64, n_head: int = 4, max_len: int = 128,
        dropout: float = 0.0, eps: float = 1e-5, seed: int = 0,
    ):  # fmt: skip
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.max_len = check_int("max_len", max_len, minimum=1)
        dropout = check_dropout(dropout)
        with seeded(check_int("seed", seed, minimum=0)):
            self.token_embedding = nn.Embedding(self.vocab_size, n_embd)  # (V, C); also the output layer
            self.position_embedding = nn.Embedding(self.max_len, n_embd)  # (max_len, C)
            self.blocks = nn.ModuleList(ScratchBlock(n_embd, n_head, dropout=dropout, eps=eps)
                                        for _ in range(check_int("n_layer", n_layer, minimum=1)))  # fmt: skip
            self.ln_f = nn.LayerNorm(n_embd, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def run(self, idx: Tensor) -> tuple[Tensor, list[Tensor]]:
        """The logits (B, T, V) and each block's attention weights (L tensors (B, H, T, T))."""
        idx = check_sequences(idx, self.vocab_size, self.max_len)  # (B, T)
        positions = torch.arange(idx.shape[1], device=idx.device)  # (T,)
        x = self.dropout(self.token_embedding(idx) + self.position_embedding(positions))  # (B, T, C)
        weights = []
        for block in self.blocks:
            x, w = block(x)  # (B, T, C), (B, H, T, T)
            weights.append(w)
        logits = F.linear(self.ln_f(x), self.token_embedding.weight)  # (B, T, V): tied, no bias
        return logits, weights

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        logits = self.run(idx)[0]  # (B, T, V)
        return logits, None if targets is None else sequence_loss(logits, targets, self.vocab_size)

    def attentions(self, idx: Tensor) -> list[Tensor]:
        """Each layer's attention weights for ``idx`` (B, T): a list of L tensors (B, H, T, T)."""
        return self.run(idx)[1]

    @classmethod
    @torch.no_grad()
    def from_hf(cls, model: CourseGPT) -> "ScratchGPT":
        """A scratch copy of a ``CourseGPT`` with the same weights (same dtype, eval mode)."""
        if not isinstance(model, CourseGPT):
            raise CourseInputError(f"from_hf copies a CourseGPT; got {type(model).__name__}")
        c, body = model.hf.config, model.hf.transformer
        scratch = cls(c.vocab_size, n_layer=c.n_layer, n_embd=c.n_embd, n_head=c.n_head, max_len=c.n_positions,
                      dropout=c.resid_pdrop, eps=c.layer_norm_epsilon)  # fmt: skip
        scratch.to(body.wte.weight.dtype)
        scratch.token_embedding.weight.copy_(body.wte.weight)
        scratch.position_embedding.weight.copy_(body.wpe.weight)
        scratch.blocks = nn.ModuleList(ScratchBlock.from_hf(block) for block in body.h)
        scratch.ln_f.load_state_dict(body.ln_f.state_dict())
        return scratch.to(body.wte.weight.device).train(model.training)


# ---------------------------------------------------------------- attention maps and what they show


@torch.no_grad()
def attention_maps(model: nn.Module, idx) -> Tensor:
    """Every head's attention weights for one sequence: (L, H, T, T), row t = how position t spreads its attention."""
    if not hasattr(model, "attentions"):
        raise CourseInputError(f"attention_maps needs a CourseGPT or a ScratchGPT; got {type(model).__name__}")
    if isinstance(idx, (list, tuple)):
        idx = torch.tensor(idx, dtype=torch.long)
    if isinstance(idx, Tensor) and idx.ndim == 1:
        idx = idx.unsqueeze(0)  # (1, T)
    check_ids("idx", idx, model.vocab_size, ndim=2)
    if idx.shape[0] != 1:
        raise CourseInputError(f"attention_maps reads one sequence (batch 1); idx has {idx.shape[0]} rows")
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        layers = model.attentions(idx.to(device))  # L × (1, H, T, T)
    finally:
        model.train(was_training)
    return torch.stack([w[0] for w in layers]).float().cpu()  # (L, H, T, T)


@lru_cache(maxsize=1)
def _noun_forms() -> frozenset[str]:
    """Every singular and plural form of the lexicon's countable nouns."""
    return frozenset(form for nouns in lx.NOUNS.values() for noun in nouns for form in (noun.singular, noun.plural))


def attractor_positions(prefix) -> list[int]:
    """Indices in an agreement ``prefix`` of the nouns after the subject (each follows "the")."""
    nouns = _noun_forms()
    return [j for j in range(2, len(prefix)) if prefix[j] in nouns and prefix[j - 1] == "the"]


def _item_maps(model, vocab: Vocab, item: dict) -> tuple[Tensor, int]:
    """Attention maps (L, H, T, T) of ``<s> + prefix``, and the position that predicts the verb."""
    ids = [vocab.bos_id] + vocab.encode(item["prefix"])
    return attention_maps(model, ids), len(ids) - 1


def subject_attention(model, vocab: Vocab, items: list[dict]) -> dict:
    """What the position predicting the verb attends to, per layer and head, over items with ≥ 1 attractor.

    ``prefix[1]`` is the subject (input position 2, after <s>); the attractors are the later nouns.
    Returns (L, H) tensors: "subject" (mass on the subject), "attractor_mean" (mass per attractor noun),
    "attractor_total"; "best_head" (layer, head) with the largest subject − attractor_mean; "items".
    """
    subject, per_attractor, total, used = 0.0, 0.0, 0.0, 0
    for item in items:
        attractors = attractor_positions(item["prefix"])
        if not attractors:  # no attractor: the position predicting the verb is the subject itself
            continue
        maps, query = _item_maps(model, vocab, item)  # (L, H, T, T)
        row = maps[:, :, query, :]  # (L, H, T)
        mass = row[:, :, [j + 1 for j in attractors]]  # (L, H, n_attractors); +1 for <s>
        subject = subject + row[:, :, 2]  # (L, H)
        per_attractor = per_attractor + mass.mean(-1)  # (L, H)
        total = total + mass.sum(-1)  # (L, H)
        used += 1
    if not used:
        raise CourseInputError("no item has an attractor noun: give agreement items with attractors >= 1")
    subject, per_attractor, total = subject / used, per_attractor / used, total / used  # (L, H) each
    best = int((subject - per_attractor).argmax())
    return {"subject": subject, "attractor_mean": per_attractor, "attractor_total": total,
            "best_head": divmod(best, subject.shape[1]), "items": used}  # fmt: skip


def subject_attention_by_distance(model, vocab: Vocab, items: list[dict], *, head=None) -> dict[int, float]:
    """Mean attention from the verb-predicting position to the subject, by their distance in tokens.

    ``head`` is (layer, head); by default the best subject head of ``subject_attention``.
    Items without attractors (distance 0: the subject predicts the verb itself) are left out.
    """
    items = [item for item in items if attractor_positions(item["prefix"])]
    if head is None:
        head = subject_attention(model, vocab, items)["best_head"]
    layer, h = head
    by_distance: dict[int, list[float]] = collections.defaultdict(list)
    for item in items:
        maps, query = _item_maps(model, vocab, item)  # (L, H, T, T)
        by_distance[query - 2].append(float(maps[layer, h, query, 2]))
    return {d: sum(v) / len(v) for d, v in sorted(by_distance.items())}


def distance_correlation(by_distance: dict[int, float]) -> float:
    """Pearson correlation of attention with distance (near 0: far words get attention like near ones)."""
    if len(by_distance) < 2:
        raise CourseInputError("need at least two distances to correlate")
    d = torch.tensor(list(by_distance), dtype=torch.float64)
    a = torch.tensor(list(by_distance.values()), dtype=torch.float64)
    d, a = d - d.mean(), a - a.mean()
    return float((d * a).sum() / math.sqrt(float((d * d).sum() * (a * a).sum()) or 1.0))


@torch.no_grad()
def without_head(model: CourseGPT | ScratchGPT, layer: int, head: int) -> ScratchGPT:
    """A scratch copy of ``model`` with one head's output removed: the head's d_k
    columns of W^O set to 0, so what it attends to no longer reaches the residual
    stream (``layer`` and ``head`` count from 0). ``model`` is unchanged.

    An ablation tests what attention weights only suggest: a head may look at the
    right word and still not matter."""
    if not isinstance(model, (CourseGPT, ScratchGPT)):
        got = type(model).__name__
        need = "without_head needs a CourseGPT or a ScratchGPT"
        raise CourseInputError(f"{need}; got {got}")
    if isinstance(model, CourseGPT):
        ablated = ScratchGPT.from_hf(model)
    else:
        ablated = copy.deepcopy(model)
    last = len(ablated.blocks) - 1
    block = ablated.blocks[check_int("layer", layer, minimum=0, maximum=last)]
    head = check_int("head", head, minimum=0, maximum=block.n_head - 1)
    d_k = block.n_embd // block.n_head
    # W^O (C, C): its input columns are the heads, side by side
    block.out.weight[:, head * d_k : (head + 1) * d_k] = 0
    return ablated.eval()
