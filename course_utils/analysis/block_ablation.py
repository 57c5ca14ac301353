"""The transformer block's building blocks, measured: residual connections, LayerNorm and where it goes, warm-up,
dropout.

    LayerNorm(x) = γ ⊙ (x − mean(x)) / √(var(x) + ε) + β     over the C features of one position
    residual      x ← x + Sublayer(x)                        the sublayer learns a change to x, not a new x
    pre-LN block  x ← x + Attn(LN(x));  x ← x + MLP(LN(x))   GPT-2 and the course's models
    post-LN block x ← LN(x + Attn(x));  x ← LN(x + MLP(x))   Vaswani et al. (2017)
    dropout       in training, each value → 0 with probability p, else value / (1 − p); in eval mode, unchanged

``AblatedBlock`` is the course's ``ScratchBlock`` with the residuals and the LayerNorms switchable; ``deep_lm`` stacks
six of them into a small GPT; ``train_variant`` trains one on the course language and measures it against the oracle.
``train_on_few_sentences`` trains a 2-block GPT with dropout ``p`` on a small slice of the training split, long enough
to memorise it, and measures how far training and validation perplexity drift apart.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from course_utils.language import corpus
from course_utils.language.grammar import CourseLanguage
from course_utils.language.vocab import course_vocab, train_ids
from course_utils.models import lm
from course_utils.models.classic.neural_lm import seeded
from course_utils.models.transformer.transformer_lm import ScratchBlock, ScratchGPT
from course_utils.training import NonFiniteLossError, train
from course_utils.validation import check_choice, check_int

Tensor = torch.Tensor
LAYER_NORMS = ("pre", "post", "none")
VALID_SENTENCES = 500  # validation sentences each variant is scored on


class AblatedBlock(ScratchBlock):
    """``ScratchBlock`` with its residual connections on or off and its LayerNorms before ("pre"), after ("post") or
    nowhere ("none"). (B, T, C) → (B, T, C), and the attention weights (B, H, T, T)."""

    def __init__(self, n_embd: int, n_head: int, *, residual: bool = True, layer_norm: str = "pre"):
        super().__init__(n_embd, n_head)
        self.residual, self.layer_norm = bool(residual), check_choice("layer_norm", layer_norm, LAYER_NORMS)

    def before(self, x: Tensor, norm: nn.LayerNorm) -> Tensor:
        """A sublayer's input: LN(x) in a pre-LN block, x otherwise."""
        return norm(x) if self.layer_norm == "pre" else x

    def after(self, x: Tensor, out: Tensor, norm: nn.LayerNorm) -> Tensor:
        """A sublayer's output ``out`` joined to its input ``x``: x + out (or out
        alone), then LN in a post-LN block."""
        out = x + out if self.residual else out
        return norm(out) if self.layer_norm == "post" else out

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        # (B, T, C), (B, H, T, T)
        attended, weights = self.attend(self.before(x, self.ln_1))
        x = self.after(x, attended, self.ln_1)  # (B, T, C)
        x = self.after(x, self.mlp(self.before(x, self.ln_2)), self.ln_2)  # (B, T, C)
        return x, weights


def deep_lm(*, residual: bool = True, layer_norm: str = "pre", n_layer: int = 6, n_embd: int = 32, n_head: int = 4,
            seed: int = 0) -> ScratchGPT:  # fmt: skip
    """A GPT of ``n_layer`` ``AblatedBlock``s over the course vocabulary (the final LayerNorm only with LayerNorms)."""
    model = ScratchGPT(len(course_vocab()), n_layer=1, n_embd=n_embd, n_head=n_head, max_len=64, seed=seed)
    with seeded(seed + 1):
        model.blocks = nn.ModuleList(AblatedBlock(n_embd, n_head, residual=residual, layer_norm=layer_norm)
                                     for _ in range(n_layer))  # fmt: skip
    if layer_norm != "pre":  # post-LN blocks end on a LayerNorm already; "none" has none at all
        model.ln_f = nn.Identity()
    return model


def first_layer_gradient(model: ScratchGPT, *, batch_size: int = 64, seed: int = 0) -> float:
    """‖∂L/∂W‖ of the first block's attention weights W^{QKV}, at the model's current weights, on one batch."""
    return at_start(model, batch_size=batch_size, seed=seed)["first_layer_gradient"]


def at_start(model: ScratchGPT, *, batch_size: int = 64, seed: int = 0) -> dict[str, float]:
    """The model before a step, on one batch: its loss, ‖∂L/∂W^{QKV}‖ of the first block, and the mean standard
    deviation of the signal that enters blocks 2 to n (the residual stream, or without residuals the previous
    sub-layer's output alone): a LayerNorm divides by it, so its backward pass multiplies gradients by about 1/it."""
    idx, targets = lm.batch_stream(train_ids(), course_vocab(), batch_size=batch_size, seed=seed)(1)
    scales: list[float] = []
    hooks = [block.register_forward_pre_hook(lambda module, inputs: scales.append(inputs[0].std().item()))
             for block in model.blocks[1:]]  # fmt: skip
    model.zero_grad(set_to_none=True)
    try:
        loss = model(idx, targets)[1]
    finally:
        for hook in hooks:
            hook.remove()
    loss.backward()
    gradient = model.blocks[0].qkv.weight.grad.norm().item()
    model.zero_grad(set_to_none=True)
    return {"initial_loss": loss.item(), "first_layer_gradient": gradient, "block_input_std": sum(scales) / len(scales)}


def oracle_perplexity(sentences: list[list[str]]) -> float:
    """The true perplexity of ``sentences`` (the language without its held-out compositions, as the split)."""
    return math.exp(corpus.oracle_entropy(CourseLanguage(include_held_out=False), sentences)[0])


def oracle_valid_perplexity() -> float:
    """The true perplexity of the validation sentences the variants are scored on."""
    return oracle_perplexity(corpus.load_split("valid")[:VALID_SENTENCES])


def train_variant(*, residual: bool = True, layer_norm: str = "pre", warmup_steps: int = 0, steps: int = 400,
                  lr: float = 3e-3, batch_size: int = 64, seed: int = 0) -> dict:  # fmt: skip
    """Train one variant of ``deep_lm`` and measure it: ``at_start`` before training, and the validation perplexity
    ÷ the oracle's after ``steps`` (None when the loss became NaN or infinite)."""
    model = deep_lm(residual=residual, layer_norm=layer_norm, seed=seed)
    start = at_start(model, batch_size=batch_size, seed=seed)
    batches = lm.batch_stream(train_ids(), course_vocab(), batch_size=batch_size, seed=seed)
    try:
        train(model, batches, steps=steps, lr=lr, warmup_steps=warmup_steps, clip_grad_norm=1.0, progress=False)
    except NonFiniteLossError:
        return {**start, "valid_ratio": None}
    score = lm.evaluate(model, course_vocab(), corpus.load_split("valid")[:VALID_SENTENCES])
    return {**start, "valid_ratio": score.perplexity / oracle_valid_perplexity()}


def variants(steps: int) -> dict[str, dict]:
    """The ablation's variants, name -> ``train_variant``'s arguments; the warm-up lasts a quarter of ``steps``."""
    return {"pre-LN + residuals (GPT-2)": {}, "no LayerNorm": {"layer_norm": "none"},
            "no residuals": {"residual": False}, "post-LN (the paper)": {"layer_norm": "post"},
            "post-LN + warm-up": {"layer_norm": "post", "warmup_steps": steps // 4}}  # fmt: skip


def train_on_few_sentences(dropout: float, *, sentences: int = 1000, steps: int = 600, lr: float = 3e-3,
                           batch_size: int = 64, seed: int = 0) -> dict:  # fmt: skip
    """Train a 2 × 64 ``ScratchGPT`` with ``dropout`` (masks drawn with ``seed``) on the first ``sentences`` training
    sentences for ``steps`` steps (600 × 64 is 38 passes over 1,000), then score it in eval mode: perplexity ÷ the
    oracle's on those training sentences and on the validation sentences, and ``gap``, validation ÷ training
    perplexity."""
    ids = train_ids()[: check_int("sentences", sentences, minimum=1)]
    model = ScratchGPT(len(course_vocab()), n_layer=2, n_embd=64, n_head=4, max_len=64, dropout=dropout, seed=seed)
    with seeded(seed + 2):  # the dropout masks: drawn with the seed, the same in a notebook as in a fresh process
        train(model, lm.batch_stream(ids, course_vocab(), batch_size=batch_size, seed=seed), steps=steps, lr=lr,
              clip_grad_norm=1.0, progress=False)  # fmt: skip
    model.eval()
    seen, valid = corpus.load_split("train")[:sentences], corpus.load_split("valid")[:VALID_SENTENCES]
    train_ppl = lm.evaluate(model, course_vocab(), seen).perplexity
    valid_ppl = lm.evaluate(model, course_vocab(), valid).perplexity
    return {"train_ratio": train_ppl / oracle_perplexity(seen), "valid_ratio": valid_ppl / oracle_perplexity(valid),
            "gap": valid_ppl / train_ppl}  # fmt: skip
