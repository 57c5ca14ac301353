"""The transformer translator of notebook 08: scratch layers against torch's, the KV-cache decoder against the
batched one, masks, and the claims measured on the shipped checkpoint."""

from __future__ import annotations


import pytest
import torch

from course_utils.models.transformer import positional
from course_utils.models.transformer.attention import MultiHeadAttention
from torch import nn

from course_utils.checkpoints import verify_checkpoint
from course_utils.language import parallel
from course_utils.models.recurrent import seq2seq as s2s
from course_utils.models.transformer import transformer_translation as tt
from course_utils.zoo import load
from course_utils.zoo.transformer_checkpoints import (
    TRAINING,
    TRANSFORMER_DIR,
    TRANSLATION_RECIPES,
    translation_checkpoint_config,
)
from course_utils.analysis.translation_analysis import head_aer, layer_mean_aer
from course_utils.analysis import translation_analysis as analysis
from course_utils.zoo import translation_checkpoints as zoo
from course_utils.zoo.translation_checkpoints import vocabularies
from course_utils.validation import CourseInputError

D, HEADS, FFN = 16, 4, 24


from model_support import step_loop  # noqa: E402


def tiny_model(translation_vocabs, *, seed=0, layers=2, dtype=torch.float64):
    torch.manual_seed(seed)
    source_vocab, target_vocab = translation_vocabs
    model = tt.TransformerTranslator(len(source_vocab), len(target_vocab), layers=layers, d_model=D, heads=HEADS,
                                     ffn_dim=FFN, pad_id=target_vocab.pad_id, bos_id=target_vocab.stoi["<s>"],
                                     eos_id=target_vocab.stoi["</s>"])  # fmt: skip
    return model.to(dtype).eval()


def copy_attention(mine, theirs: nn.MultiheadAttention) -> None:
    """Torch's packed in-projection, split into the three scratch projections (``MultiHeadAttention.from_torch``)."""
    mine.load_state_dict(MultiHeadAttention.from_torch(theirs).state_dict())


def copy_common(mine, theirs, norms) -> None:
    """Feed-forward and layer norms (``norms``: how many) from a torch layer."""
    with torch.no_grad():
        mine.ffn.up.load_state_dict(theirs.linear1.state_dict())
        mine.ffn.down.load_state_dict(theirs.linear2.state_dict())
        for i in range(1, norms + 1):
            getattr(mine, f"norm{i}").load_state_dict(getattr(theirs, f"norm{i}").state_dict())


def torch_layers(dtype, seed=1):
    """Torch's pre-LN encoder and decoder layers with random (not default) weights, in eval mode."""
    torch.manual_seed(seed)
    options = dict(d_model=D, nhead=HEADS, dim_feedforward=FFN, dropout=0.0, batch_first=True, norm_first=True)
    encoder, decoder = nn.TransformerEncoderLayer(**options), nn.TransformerDecoderLayer(**options)
    with torch.no_grad():
        for layer in (encoder, decoder):
            for p in layer.parameters():
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if p.dim() == 1 and p.shape[0] == D else 0.0))
    return encoder.to(dtype).eval(), decoder.to(dtype).eval()


def random_inputs(dtype, seed=2):
    """y (B, T, D), memory (B, S, D) and a source mask (B, S) with padding in every row but the first."""
    g = torch.Generator().manual_seed(seed)
    B, T, S = 3, 5, 7
    y, memory = torch.randn(B, T, D, generator=g, dtype=dtype), torch.randn(B, S, D, generator=g, dtype=dtype)
    mask = torch.arange(S)[None, :] < torch.tensor([7, 4, 1])[:, None]  # (B, S)
    return y, memory, mask


# --- the layers against torch's ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
def test_scratch_decoder_layer_equals_torch_pre_ln_decoder_layer(dtype, tolerance):
    _, theirs = torch_layers(dtype)
    mine = tt.DecoderLayer.from_torch(theirs).eval()
    y, memory, mask = random_inputs(dtype)
    T = y.shape[1]
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=dtype)  # (T, T): -inf above the diagonal
    expected = theirs(y, memory, tgt_mask=causal, memory_key_padding_mask=~mask, tgt_is_causal=True)
    got, _, cross = mine(y, mine.cross_attention.keys_values(memory), mask)
    assert (got - expected).abs().max() <= tolerance
    h = theirs.norm1(y)
    after_self = y + theirs.self_attn(h, h, h, attn_mask=causal, need_weights=False)[0]  # (B, T, D)
    _, library_weights = theirs.multihead_attn(theirs.norm2(after_self), memory, memory, key_padding_mask=~mask,
                                               average_attn_weights=False)  # (B, H, T, S)  # fmt: skip
    assert cross.shape == (3, HEADS, T, 7)
    assert (cross - library_weights).abs().max() <= tolerance


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
def test_scratch_encoder_layer_equals_torch_pre_ln_encoder_layer(dtype, tolerance):
    theirs, _ = torch_layers(dtype)
    mine = tt.EncoderLayer(D, HEADS, FFN, 0.0).to(dtype).eval()
    copy_attention(mine.self_attention, theirs.self_attn)
    copy_common(mine, theirs, 2)
    _, x, mask = random_inputs(dtype)
    expected = theirs(x, src_key_padding_mask=~mask)  # parameters need grad here: torch's fast path stays off
    got, weights = mine(x, mask)
    assert (got - expected).abs().max() <= tolerance  # every position, padding rows included
    assert weights.shape == (3, HEADS, 7, 7) and torch.all(weights[2, :, :, 1:] == 0)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_the_whole_model_equals_torch_nn_transformer_with_the_same_weights(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs)
    library = nn.Transformer(d_model=D, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FFN,
                             dropout=0.0, batch_first=True, norm_first=True).double().eval()  # fmt: skip
    for mine, theirs in zip(model.encoder_layers, library.encoder.layers):
        copy_attention(mine.self_attention, theirs.self_attn)
        copy_common(mine, theirs, 2)
    for mine, theirs in zip(model.decoder_layers, library.decoder.layers):
        copy_attention(mine.self_attention, theirs.self_attn)
        copy_attention(mine.cross_attention, theirs.multihead_attn)
        copy_common(mine, theirs, 3)
    library.encoder.norm.load_state_dict(model.encoder_norm.state_dict())
    library.decoder.norm.load_state_dict(model.decoder_norm.state_dict())
    source, target = padded_pairs.source, padded_pairs.target_in
    T = target.shape[1]
    embed = lambda embedding, ids: model._embed(embedding, ids)  # noqa: E731
    states = library(embed(model.source_embed, source), embed(model.target_embed, target),
                     tgt_mask=nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64),
                     src_key_padding_mask=source == model.pad_id, memory_key_padding_mask=source == model.pad_id,
                     tgt_is_causal=True)  # fmt: skip
    logits, _ = model(padded_pairs)
    assert (logits - model.out(states)).abs().max() <= 1e-12


def test_the_positions_extend_to_any_offset():
    table = positional.sinusoidal_positions(50, 8)
    assert torch.equal(positional.sinusoidal_positions(10, 8, offset=40), table[40:])


# --- the model: shapes, the step-by-step decoder, masks ---------------------------------------------


def test_shapes_of_logits_loss_and_cross_attention(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs)
    B, T = padded_pairs.target_in.shape
    S = padded_pairs.source.shape[1]
    logits, loss, weights = model(padded_pairs, padded_pairs.target_out, return_attention=True)
    assert logits.shape == (B, T, len(translation_vocabs[1])) and loss.dim() == 0 and weights.shape == (B, T, S)
    cross = model.cross_attention(padded_pairs)
    assert cross.shape == (2, B, HEADS, T, S)
    assert torch.allclose(cross.sum(-1), torch.ones((), dtype=cross.dtype))
    assert torch.equal(weights, cross[-1].mean(dim=1))
    lengths = (padded_pairs.source != model.pad_id).sum(1)
    for b, length in enumerate(lengths.tolist()):
        assert torch.all(cross[:, b, :, :, length:] == 0)  # no weight on padding


def test_the_kv_cache_decoder_equals_the_teacher_forced_forward(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs)
    logits, _, weights = model(padded_pairs, return_attention=True)
    log_probs, step_weights, state = step_loop(model, padded_pairs)
    assert (log_probs - torch.log_softmax(logits, -1)).abs().max() <= 1e-10
    assert (step_weights - weights).abs().max() <= 1e-10
    assert torch.equal(state.prefix, padded_pairs.target_in)
    assert state.past[0][0].shape == (4, HEADS, padded_pairs.target_in.shape[1], D // HEADS)


def test_select_reorders_every_cache(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs)
    state = model.start(padded_pairs.source)
    _, state, _ = model.step(state, padded_pairs.target_in[:, 0])
    index = torch.tensor([2, 2, 0])
    chosen = state.select(index)
    log_probs, _, _ = model.step(chosen, padded_pairs.target_in[index, 1])
    again, _, _ = model.step(state, padded_pairs.target_in[:, 1])
    assert (log_probs - again[index]).abs().max() <= 1e-12


def test_a_later_target_word_does_not_change_earlier_logits(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs)
    logits, _ = model(padded_pairs)
    changed = padded_pairs.target_in.clone()
    changed[:, 4] = (changed[:, 4] + 7) % len(translation_vocabs[1])
    new_logits, _ = model(padded_pairs._replace(target_in=changed))
    assert (new_logits[:, :4] - logits[:, :4]).abs().max() <= 1e-12
    assert (new_logits[:, 4:] - logits[:, 4:]).abs().max() > 1e-3


def test_source_padding_does_not_change_the_output(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs)
    logits, _ = model(padded_pairs)
    pad = torch.full((4, 5), model.pad_id, dtype=torch.long)
    longer = padded_pairs._replace(source=torch.cat([padded_pairs.source, pad], dim=1))
    new_logits, _ = model(longer)
    assert (new_logits - logits).abs().max() <= 1e-12
    real = int((padded_pairs.source[0] != model.pad_id).sum())
    alone, _ = model(s2s.Seq2SeqBatch(padded_pairs.source[:1, :real], *(t[:1] for t in padded_pairs[1:])))  # no padding
    assert (alone[0] - logits[0]).abs().max() <= 1e-12


def test_greedy_matches_a_hand_loop_and_translate_words_takes_the_model(translation_vocabs, held_out_pairs):
    model = tiny_model(translation_vocabs, dtype=torch.float32)
    source_vocab, target_vocab = translation_vocabs
    batch = s2s.make_batch(held_out_pairs[:3], *translation_vocabs)
    ids, weights = model.greedy(batch.source, max_len=6)
    assert len(ids) == 3 and all(len(row) <= 6 for row in ids)
    state, tokens = model.start(batch.source[:1]), torch.tensor([model.bos_id])
    hand = []
    for _ in range(6):
        log_probs, state, _ = model.step(state, tokens)
        tokens = log_probs.argmax(-1)
        if int(tokens) == model.eos_id:
            break
        hand.append(int(tokens))
    assert ids[0] == hand
    assert weights[0].shape[1] == len(held_out_pairs[0].source)
    words = s2s.translate_words(model, source_vocab, target_vocab, [p.source for p in held_out_pairs[:3]])
    assert all(isinstance(w, tuple) for w in words)


def test_bad_input_raises_course_errors(translation_vocabs):
    source_vocab, target_vocab = translation_vocabs
    with pytest.raises(CourseInputError, match="multiple of heads"):
        tt.TransformerTranslator(10, 10, d_model=30, heads=4)
    with pytest.raises(CourseInputError, match="layers"):
        tt.TransformerTranslator(10, 10, layers=0)
    with pytest.raises(CourseInputError, match="dropout"):
        tt.TransformerTranslator(10, 10, dropout=1.5)
    model = tiny_model(translation_vocabs)
    with pytest.raises(CourseInputError, match="at least one word"):
        model.start(torch.tensor([[5, 6], [0, 0]]))
    with pytest.raises(CourseInputError, match="batch, length"):
        model.start(torch.tensor([5, 6]))
    with pytest.raises(CourseInputError, match="unknown checkpoint"):
        load("transformer_9x9")
    with pytest.raises(CourseInputError, match="at least one pair"):
        head_aer(model, [])
    with pytest.raises(CourseInputError, match="max_len"):
        model.greedy(torch.tensor([[5, 6]]), max_len=0)


def test_head_aer_is_zero_for_attention_that_follows_the_true_alignment(translation_vocabs, held_out_pairs,
                                                                       monkeypatch):  # fmt: skip
    """The AER pipeline, checked on an oracle: weights put on the true source word score 0, and uniform ones high."""
    model = tiny_model(translation_vocabs, dtype=torch.float32)
    pairs = held_out_pairs[:20]

    def oracle(batch):
        L, B, T, S = 2, *batch.target_in.shape, batch.source.shape[1]
        weights = torch.zeros(L, B, HEADS, T, S)
        for b, pair in enumerate(pairs[:B]):
            for s, t in pair.alignment:
                weights[:, b, :2, t, s] = 1.0  # heads 0 and 1 follow the alignment
        weights[:, :, 2:] = 1.0 / S  # heads 2 and 3 spread evenly
        return weights

    monkeypatch.setattr(model, "cross_attention", oracle)
    aer = head_aer(model, pairs)
    assert aer.shape == (2, HEADS)
    assert torch.all(aer[:, :2] == 0) and torch.all(aer[:, 2:] > 0.5)


# --- claims on the shipped checkpoint (measured; see the module's numbers in notebook 08) -------------

SHIPPED = "transformer_2x128"


@pytest.fixture(scope="module")
def shipped():
    return load(SHIPPED)


@pytest.fixture(scope="module")
def buckets():
    return analysis.length_sets()


@pytest.fixture(scope="module")
def transformer_table(shipped, buckets):
    return {bucket: zoo.scores(shipped, pairs) for bucket, pairs in buckets.items()}


@pytest.fixture(scope="module")
def rnn_long_table(buckets):
    """dot_128 and additive_128 on the buckets beyond the training lengths."""
    long = list(buckets)[3:]
    return {name: {bucket: zoo.scores(load(name), buckets[bucket]) for bucket in long}
            for name in ("dot_128", "additive_128")}  # fmt: skip


def test_the_shipped_checkpoint_matches_its_manifest_and_recipe():
    verify_checkpoint(TRANSFORMER_DIR / SHIPPED)
    config = translation_checkpoint_config(SHIPPED)
    assert config["model"] == TRANSLATION_RECIPES[SHIPPED] and config["recipe"] == TRAINING
    assert config["torch_threads"] == 1 and config["valid_exact_match"] >= 0.99


@pytest.mark.slow
def test_within_the_training_lengths_the_transformer_is_nearly_perfect(transformer_table):
    for bucket in list(transformer_table)[:3]:  # measured: 0.998, 0.993, 0.990 exact match
        assert transformer_table[bucket]["exact_match"] >= 0.98
        assert transformer_table[bucket]["bleu"] >= 99


@pytest.mark.slow
def test_beyond_the_training_lengths_the_transformer_fails_like_the_rnns(transformer_table, rnn_long_table):
    long = list(rnn_long_table["dot_128"])
    for bucket in long:  # measured: 0.123, then 0 in every longer bucket
        assert transformer_table[bucket]["exact_match"] < 0.2
    assert all(transformer_table[bucket]["exact_match"] == 0 for bucket in long[1:])
    first = long[0]  # 15–21: fewer exact translations than either RNN (0.123 against 0.217 and 0.223) ...
    assert all(
        transformer_table[first]["exact_match"] < table[first]["exact_match"] for table in rnn_long_table.values()
    )
    for bucket in (
        long
    ):  # ... but a higher BLEU than dot attention in every long bucket (65.9/38.0/22.3/13.6 vs 61.9/32.7/19.2/12.5)
        assert transformer_table[bucket]["bleu"] > rnn_long_table["dot_128"][bucket]["bleu"]


@pytest.mark.slow
def test_on_long_sources_the_transformer_stops_near_the_longest_training_length(shipped, buckets):
    source_vocab, target_vocab = vocabularies()
    for bucket in list(buckets)[3:]:  # measured: 13.4–13.5 words on average in every long bucket
        outputs = s2s.translate_words(shipped, source_vocab, target_vocab, [p.source for p in buckets[bucket]])
        assert sum(map(len, outputs)) / len(outputs) < parallel.TRAIN_MAX_LENGTH + 1


@pytest.mark.slow
def test_cross_attention_heads_align_better_than_dot_attention_and_worse_than_additive(shipped, held_out_pairs):
    pairs = held_out_pairs[:500]
    aer = head_aer(shipped, pairs)  # (L, H); measured 0.12–0.30
    rnn = {name: analysis.attention_aer(load(name), pairs) for name in ("dot_128", "additive_128")}
    assert aer.shape == (2, 4)
    assert bool((aer < rnn["dot_128"]).all()) and bool((aer > rnn["additive_128"]).all())  # 0.381 and 0.006
    assert aer.min() <= 0.15 and aer.max() - aer.min() >= 0.1  # heads differ: the best ≈ 0.12, the worst ≈ 0.30
    assert layer_mean_aer(shipped, pairs)[-1] < rnn["dot_128"]
