"""Measuring the seq2seq lecture's claims: quality by length, alignment error, the passive, the bottleneck, cost.

Every function takes trained ``Seq2Seq`` models (the shipped ones from ``translation_checkpoints``)
and the sets of ``course_utils.language.parallel``, and returns plain numbers for a table.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from course_utils.language import lexicon, parallel
from course_utils.language.text_pipeline import Vocab
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.recurrent import seq2seq as s2s
from course_utils.evaluation import translation_metrics as metrics
from course_utils.zoo.translation_checkpoints import scores, vocabularies
from course_utils.models.transformer.transformer_translation import TransformerTranslator
from course_utils.validation import CourseInputError

Tensor = torch.Tensor


WITHIN_BUCKETS = ((3, 6), (7, 10), (11, 14))  # the test split's lengths, all within the training lengths


def length_sets(limit: int | None = None) -> dict[str, list]:
    """The test sets by source length: three buckets within the training lengths, then each long bucket."""
    test = parallel.load("test")
    sets = {f"{low}–{high}": [p for p in test if low <= len(p.source) <= high] for low, high in WITHIN_BUCKETS}
    for low, high in parallel.LONG_BUCKETS:
        sets[f"{low}–{high}"] = parallel.load(f"test_long_{low}_{high}")
    return {name: pairs[:limit] for name, pairs in sets.items()}


def length_table(models: dict, limit: int | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """model label -> bucket -> ``scores`` (BLEU, exact match, token accuracy, output and reference lengths): Bahdanau
    et al.'s Fig. 2, measured."""
    sets = length_sets(limit)
    return {label: {bucket: scores(model, pairs) for bucket, pairs in sets.items()} for label, model in models.items()}


def held_out_pairs() -> tuple[int, int]:
    """(held out, all): the (verb, object noun) pairs the lexicon allows, and how many of them training never shows."""
    nouns = {kind: [noun.singular for noun in group] for kind, group in lexicon.NOUNS.items()}
    nouns["drink"] = list(lexicon.DRINKS)
    pairs = {(verb.base, noun) for verb in lexicon.VERBS for kind in verb.objects for noun in nouns[kind]}
    return sum(map(parallel.is_held_out, pairs)), len(pairs)


def attention_aer(model: s2s.Seq2Seq, pairs) -> float:
    """Corpus AER of the attention's argmax (reading the reference target) against the true alignments."""
    source_vocab, target_vocab = vocabularies()
    predicted = [metrics.argmax_alignment(s2s.forced_attention(model, source_vocab, target_vocab, p)) for p in pairs]
    return metrics.corpus_aer(predicted, [p.alignment for p in pairs])


def alignment_offsets(model: s2s.Seq2Seq, pairs) -> dict[int, float]:
    """How far the attention's argmax lands from the true source word: offset -> share of target words."""
    source_vocab, target_vocab = vocabularies()
    counts: dict[int, int] = {}
    for pair in pairs:
        truth = {t: s for s, t in pair.alignment}
        for s, t in metrics.argmax_alignment(s2s.forced_attention(model, source_vocab, target_vocab, pair)):
            counts[s - truth[t]] = counts.get(s - truth[t], 0) + 1
    total = sum(counts.values())
    return {offset: n / total for offset, n in sorted(counts.items())}


def voice_table(models: dict, limit: int | None = None) -> dict[str, dict[str, float]]:
    """model label -> {"active": exact match, "passive": exact match} on the same events in both voices."""
    items = parallel.load("voice")[:limit]
    return {label: {voice: scores(model, [item[voice] for item in items])["exact_match"] for voice in ("active", "passive")}
            for label, model in models.items()}  # fmt: skip


def source_gradient_norms(model: s2s.Seq2Seq, source_vocab: Vocab, target_vocab: Vocab, pairs) -> Tensor:
    """‖∂L/∂x_j‖ for each source word's embedding, averaged over ``pairs`` of one source length: (S,)."""
    lengths = {len(p.source) for p in pairs}
    if len(lengths) != 1:
        raise CourseInputError(f"the pairs must share one source length, got {sorted(lengths)}")
    batch = s2s.make_batch(list(pairs), source_vocab, target_vocab)
    embedded = []  # the source embeddings (B, S, E) of this forward pass, made a leaf to take the gradient at

    def as_leaf(module, inputs, output: Tensor) -> Tensor:
        embedded.append(output.detach().requires_grad_(True))
        return embedded[-1]

    hook = model.source_embed.register_forward_hook(as_leaf)
    try:
        logits, _ = model(batch)  # (B, T, V)
    finally:
        hook.remove()
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.target_out.reshape(-1),
                           ignore_index=IGNORE_INDEX, reduction="sum")  # fmt: skip
    (gradient,) = torch.autograd.grad(loss, embedded[0])  # (B, S, E)
    return gradient.norm(dim=-1).mean(dim=0)  # (S,)


def gradient_by_distance(model: s2s.Seq2Seq, length: int = 12, limit: int = 200) -> list[float]:
    """Mean ‖∂L/∂x_j‖ of each source word, for test passages of ``length`` words; index 0 is the last word."""
    pairs = [p for p in parallel.load("test") if len(p.source) == length][:limit]
    if not pairs:
        raise CourseInputError(f"no test passage has {length} words")
    source_vocab, target_vocab = vocabularies()
    norms = source_gradient_norms(model, source_vocab, target_vocab, pairs)  # (S,)
    return norms.flip(0).tolist()


def train_step_seconds(model: s2s.Seq2Seq, steps: int = 20, batch_size: int = 64) -> float:
    """Median wall time of one training step (forward, backward, AdamW) on training batches."""
    source_vocab, target_vocab = vocabularies()
    batches = s2s.batch_stream(parallel.load("train"), source_vocab, target_vocab, batch_size=batch_size, seed=1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.0)  # lr 0: the shipped weights are left as they are
    model.train()
    times = []
    for step in range(steps + 2):
        batch, targets = batches(step)
        start = time.perf_counter()
        _, loss = model(batch, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    model.eval()
    return statistics.median(times[2:])  # the first steps warm up


def decoding_speed(model: s2s.Seq2Seq, pairs, batch_size: int = 256) -> float:
    """Greedy decoding throughput in target tokens per second (the ``</s>`` counted)."""
    source_vocab, target_vocab = vocabularies()
    sources = [p.source for p in pairs]
    start = time.perf_counter()
    outputs = s2s.translate_words(model, source_vocab, target_vocab, sources, batch_size=batch_size)
    seconds = time.perf_counter() - start
    return sum(len(o) + 1 for o in outputs) / seconds


# ---------------------------------------------------------------- a transformer's alignment by layer and head


def forced_cross_attention(model: TransformerTranslator, pair) -> Tensor:
    """The cross-attention (L, H, M, S) while the model reads the reference target; row t predicts word t."""
    source_vocab, target_vocab = vocabularies()
    weights = model.cross_attention(s2s.make_batch([pair], source_vocab, target_vocab))  # (L, 1, H, T, S)
    return weights[:, 0, :, : len(pair.target)]  # (L, H, M, S)


def _argmax_links(weights: Tensor, pairs) -> list[set]:
    """Argmax links of (B, T, S) weights, each pair's rows cut to its target length and columns to its source."""
    return [metrics.argmax_alignment(weights[b, : len(p.target), : len(p.source)]) for b, p in enumerate(pairs)]


@torch.no_grad()
def head_aer(model: TransformerTranslator, pairs, *, batch_size: int = 256) -> Tensor:
    """Corpus AER of each decoder layer's and head's cross-attention argmax (reading the reference target)
    against the true alignments: (L, H). ``translation_analysis.attention_aer`` for the RNN, per head."""
    pairs = list(pairs)
    if not pairs:
        raise CourseInputError("head_aer needs at least one pair")
    source_vocab, target_vocab = vocabularies()
    model.eval()
    L, H = len(model.decoder_layers), model.heads
    predicted = [[[] for _ in range(H)] for _ in range(L)]
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        weights = model.cross_attention(s2s.make_batch(chunk, source_vocab, target_vocab))  # (L, B, H, T, S)
        for layer in range(L):
            for head in range(H):
                predicted[layer][head] += _argmax_links(weights[layer, :, head], chunk)
    truths = [p.alignment for p in pairs]
    return torch.tensor([[metrics.corpus_aer(links, truths) for links in by_head] for by_head in predicted])  # (L, H)


@torch.no_grad()
def layer_mean_aer(model: TransformerTranslator, pairs, *, batch_size: int = 256) -> Tensor:
    """Corpus AER of each decoder layer's head-averaged cross-attention: (L,). The last entry is the AER
    of the weights that ``forward(..., return_attention=True)`` and ``greedy`` report."""
    pairs = list(pairs)
    if not pairs:
        raise CourseInputError("layer_mean_aer needs at least one pair")
    source_vocab, target_vocab = vocabularies()
    model.eval()
    predicted = [[] for _ in model.decoder_layers]
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        weights = model.cross_attention(s2s.make_batch(chunk, source_vocab, target_vocab)).mean(dim=2)  # (L, B, T, S)
        for layer, layer_weights in enumerate(weights):
            predicted[layer] += _argmax_links(layer_weights, chunk)
    truths = [p.alignment for p in pairs]
    return torch.tensor([metrics.corpus_aer(links, truths) for links in predicted])
