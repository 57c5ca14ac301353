"""The encoder-decoder: scratch attention against torch's kernel, the per-step decoder against the batched one."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from course_utils.language import parallel
from course_utils.models.recurrent import seq2seq as s2s
from course_utils.models.recurrent.rnn import gru_step
from course_utils.analysis.translation_analysis import source_gradient_norms
from course_utils.training import train
from course_utils.validation import CourseInputError
from model_support import step_loop

KINDS = [None, "additive", "dot", "general"]


def tiny_model(translation_vocabs, attention, *, seed=0, hidden=16):
    torch.manual_seed(seed)
    source_vocab, target_vocab = translation_vocabs
    return s2s.Seq2Seq(len(source_vocab), len(target_vocab), embed_dim=8, hidden_dim=hidden, attention=attention,
                       pad_id=target_vocab.pad_id, bos_id=target_vocab.stoi["<s>"],
                       eos_id=target_vocab.stoi["</s>"]).eval()  # fmt: skip


def random_attention_inputs(dtype=torch.float32, seed=0):
    """Queries (B, T, H), keys (B, S, H) and a mask (B, S) with padding in every row but the first."""
    g = torch.Generator().manual_seed(seed)
    B, T, S, H = 3, 5, 7, 6
    queries = torch.randn(B, T, H, generator=g, dtype=dtype)
    keys = torch.randn(B, S, H, generator=g, dtype=dtype)
    lengths = torch.tensor([7, 4, 1])
    mask = torch.arange(S)[None, :] < lengths[:, None]  # (B, S)
    return queries, keys, mask


def step_by_step(model, batch):
    """Log-probabilities (B, T, V) of the scratch per-step loop under teacher forcing, and the weights."""
    return step_loop(model, batch)[:2]


# --- attention, from scratch ----------------------------------------------------------------------


def test_scratch_dot_attention_equals_torch_sdpa_with_scale_one_and_the_same_mask():
    queries, keys, mask = random_attention_inputs()
    context, _ = s2s.attend(queries @ keys.transpose(1, 2), keys, mask)
    library = F.scaled_dot_product_attention(queries, keys, keys, attn_mask=mask[:, None, :], scale=1.0)
    assert (context - library).abs().max() <= 1e-6
    assert (context - s2s.library_dot_attention(queries, keys, mask)).abs().max() <= 1e-6
    module_context, _ = s2s.Attention("dot", 6)(queries, keys, mask)
    assert torch.equal(module_context, context)
    # the default scale 1/sqrt(d) would differ: the parity is about scale=1
    default = F.scaled_dot_product_attention(queries, keys, keys, attn_mask=mask[:, None, :])
    assert (context - default).abs().max() > 1e-2


@pytest.mark.parametrize("kind", s2s.ATTENTION_KINDS)
def test_padding_gets_zero_weight_and_padded_states_change_nothing(kind):
    torch.manual_seed(1)
    attention = s2s.Attention(kind, 6)
    queries, keys, mask = random_attention_inputs(seed=2)
    context, weights = attention(queries, keys, mask)
    assert torch.all(weights.masked_select(~mask[:, None, :].expand_as(weights)) == 0.0)
    assert torch.allclose(weights.sum(dim=-1), torch.ones(weights.shape[:2]), atol=1e-6)
    assert torch.all(weights[2, :, 0] == 1.0)  # a one-word source: all the weight on it
    garbage = torch.where(mask[:, :, None], keys, 1e3 * torch.randn_like(keys))  # (B, S, H)
    context2, weights2 = attention(queries, garbage, mask)
    assert torch.equal(weights, weights2) and torch.equal(context, context2)


def test_attention_weights_follow_the_decoder_state():
    """Dot attention: the query picks the key it points at."""
    keys = torch.eye(4)[None] * 10  # (1, 4, 4)
    queries = torch.eye(4)[None][:, [2, 0]]  # (1, 2, 4): query 0 points at key 2, query 1 at key 0
    _, weights = s2s.Attention("dot", 4)(queries, keys, torch.ones(1, 4, dtype=torch.bool))
    assert weights.argmax(dim=-1).tolist() == [[2, 0]]


# --- the scratch step loop against the batched forward -------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_per_step_loop_equals_forward_in_float32_and_float64(translation_vocabs, padded_pairs, kind):
    model = tiny_model(translation_vocabs, kind)
    with torch.no_grad():
        logits, _, forward_weights = model(padded_pairs, return_attention=True)
        loop, loop_weights = step_by_step(model, padded_pairs)
        assert loop.shape == logits.shape
        assert (loop - torch.log_softmax(logits, dim=-1)).abs().max() <= 1e-5
        if kind is None:
            assert forward_weights is None and loop_weights is None
        else:
            assert (loop_weights - forward_weights).abs().max() <= 1e-6
        model.double()
        logits64, _ = model(padded_pairs)
        loop64, _ = step_by_step(model, padded_pairs)
    assert loop64.dtype == torch.float64
    assert (loop64 - torch.log_softmax(logits64, dim=-1)).abs().max() <= 1e-10


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_sentence_gets_the_same_logits_alone_and_in_a_padded_batch(translation_vocabs, held_out_pairs, kind):
    model = tiny_model(translation_vocabs, kind)
    short = min(held_out_pairs[:50], key=lambda p: len(p.source))
    long = max(held_out_pairs[:50], key=lambda p: len(p.source))
    with torch.no_grad():
        alone, _ = model(s2s.make_batch([short], *translation_vocabs))
        together, _ = model(s2s.make_batch([long, short], *translation_vocabs))
    assert (together[1, : alone.shape[1]] - alone[0]).abs().max() <= 1e-5


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_forward_without_weights_equals_forward_with_weights(translation_vocabs, padded_pairs, kind):
    """Dot and general take torch's fused SDPA kernel when no weights are asked for."""
    model = tiny_model(translation_vocabs, kind)
    with torch.no_grad():
        fast, fast_loss = model(padded_pairs, padded_pairs.target_out)
        slow, slow_loss, _ = model(padded_pairs, padded_pairs.target_out, return_attention=True)
    assert (fast - slow).abs().max() <= 1e-5
    assert abs(float(fast_loss) - float(slow_loss)) <= 1e-5


def test_the_loss_ignores_padding(translation_vocabs, held_out_pairs):
    """A padded batch's loss is the token-weighted mean of each sentence's own loss."""
    model = tiny_model(translation_vocabs, "additive")
    pairs = [held_out_pairs[0], held_out_pairs[1], held_out_pairs[2]]

    def loss_of(batch_pairs):
        batch = s2s.make_batch(batch_pairs, *translation_vocabs)
        return float(model(batch, batch.target_out)[1])

    with torch.no_grad():
        together, alone = loss_of(pairs), [loss_of([p]) for p in pairs]
    tokens = [len(p.target) + 1 for p in pairs]  # + </s>
    expected = sum(loss * n for loss, n in zip(alone, tokens)) / sum(tokens)
    assert together == pytest.approx(expected, abs=1e-5)


def test_scratch_gru_step_equals_torch_gru_cell():
    torch.manual_seed(3)
    cell = torch.nn.GRUCell(5, 7)
    x, h = torch.randn(4, 5), torch.randn(4, 7)
    ours = gru_step(x, h, (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))
    assert (ours - cell(x, h)).abs().max() <= 1e-6


def test_make_batch_adds_bos_and_eos_and_pads(translation_vocabs, held_out_pairs):
    source_vocab, target_vocab = translation_vocabs
    pairs = [held_out_pairs[0], held_out_pairs[1]]
    batch = s2s.make_batch(pairs, source_vocab, target_vocab)
    for b, pair in enumerate(pairs):
        M = len(pair.target)
        assert [source_vocab.itos[i] for i in batch.source[b, : len(pair.source)]] == list(pair.source)
        assert torch.all(batch.source[b, len(pair.source) :] == source_vocab.pad_id)
        assert batch.target_in[b, 0] == target_vocab.stoi["<s>"]
        assert [target_vocab.itos[i] for i in batch.target_in[b, 1 : M + 1]] == list(pair.target)
        assert [target_vocab.itos[i] for i in batch.target_out[b, :M]] == list(pair.target)
        assert batch.target_out[b, M] == target_vocab.stoi["</s>"]
        assert torch.all(batch.target_out[b, M + 1 :] == s2s.IGNORE_INDEX)


def test_batch_stream_is_deterministic_and_covers_an_epoch(translation_vocabs, held_out_pairs):
    pairs = held_out_pairs[:50]
    stream, again = (s2s.batch_stream(pairs, *translation_vocabs, batch_size=16, seed=7) for _ in range(2))
    assert all(torch.equal(stream(i)[0].source, again(i)[0].source) for i in range(5))
    epoch = torch.cat([stream(i)[0].source[:, 0] for i in range(4)])  # 16 + 16 + 16 + 2
    assert epoch.shape == (50,)
    first_words = sorted(translation_vocabs[0].stoi[p.source[0]] for p in pairs)
    assert sorted(epoch.tolist()) == first_words
    assert not torch.equal(stream(0)[0].source, stream(4)[0].source)  # a new epoch, a new order


# --- decoding --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [None, "dot"], ids=str)
def test_greedy_returns_lists_and_stops_at_max_len(translation_vocabs, padded_pairs, kind):
    model = tiny_model(translation_vocabs, kind)
    with torch.no_grad():
        model.out.bias[model.eos_id] = -1e4  # never ends by itself
    ids, matrices = model.greedy(padded_pairs.source, max_len=6)
    assert isinstance(ids, list) and all(isinstance(row, list) and len(row) == 6 for row in ids)
    assert all(isinstance(i, int) for row in ids for i in row)
    lengths = (padded_pairs.source != model.pad_id).sum(dim=1).tolist()
    if kind is None:
        assert matrices == [None] * 4
    else:
        assert [tuple(m.shape) for m in matrices] == [(6, n) for n in lengths]
        assert all(torch.allclose(m.sum(dim=1), torch.ones(6)) for m in matrices)


def test_greedy_stops_at_the_end_of_sentence_mark(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs, "dot")
    with torch.no_grad():
        model.out.bias[model.eos_id] = 1e4  # ends at once
    ids, matrices = model.greedy(padded_pairs.source, max_len=6)
    assert ids == [[]] * 4
    assert all(m.shape[0] == 1 for m in matrices)  # the weights of the step that wrote </s>


def test_greedy_equals_the_argmax_of_the_step_loop(translation_vocabs, padded_pairs):
    """Feeding greedy's own output back under teacher forcing gives the same argmax at every step."""
    model = tiny_model(translation_vocabs, "general")
    ids, _ = model.greedy(padded_pairs.source[:1], max_len=5)
    tokens = [model.bos_id] + ids[0]
    batch = s2s.Seq2SeqBatch(padded_pairs.source[:1], torch.tensor([tokens[:-1]]), torch.tensor([tokens[1:]]))
    with torch.no_grad():
        logits, _ = model(batch)
    assert logits.argmax(dim=-1)[0].tolist() == ids[0][: len(tokens) - 1]


def test_decoder_state_select_reorders_and_repeats_rows(translation_vocabs, padded_pairs):
    model = tiny_model(translation_vocabs, "dot")
    with torch.no_grad():
        state = model.start(padded_pairs.source)
    index = torch.tensor([2, 0, 0])
    chosen = state.select(index)
    assert torch.equal(chosen.hidden, state.hidden[index]) and torch.equal(chosen.memory, state.memory[index])
    assert torch.equal(chosen.mask, state.mask[index])
    with torch.no_grad():  # a step on the selected rows equals the same rows of a full step
        full, _, _ = model.step(state, torch.full((4,), model.bos_id))
        part, _, _ = model.step(chosen, torch.full((3,), model.bos_id))
    assert (part - full[index]).abs().max() <= 1e-6


def test_translate_words_and_forced_attention(translation_vocabs, held_out_pairs):
    model = tiny_model(translation_vocabs, "additive")
    sources = [p.source for p in held_out_pairs[:5]]
    words = s2s.translate_words(model, *translation_vocabs, sources, batch_size=2)
    assert len(words) == 5 and all(isinstance(w, tuple) for w in words)
    assert all(set(w) <= set(translation_vocabs[1].itos) for w in words)
    weights = s2s.forced_attention(model, *translation_vocabs, held_out_pairs[0])
    assert weights.shape == (len(held_out_pairs[0].target), len(held_out_pairs[0].source))
    assert torch.allclose(weights.sum(dim=1), torch.ones(len(held_out_pairs[0].target)))
    with pytest.raises(CourseInputError, match="no attention"):
        s2s.forced_attention(tiny_model(translation_vocabs, None), *translation_vocabs, held_out_pairs[0])


# --- bad input -------------------------------------------------------------------------------------


def test_an_unknown_attention_kind_raises(translation_vocabs):
    with pytest.raises(CourseInputError, match="attention"):
        tiny_model(translation_vocabs, "multiplicative")
    with pytest.raises(CourseInputError):
        s2s.Attention("cosine", 8)


def test_an_unknown_word_in_make_batch_names_the_word(translation_vocabs):
    bad = parallel.Pair(("the", "zebra", "runs", "."), ("ko",) * 4, ())
    with pytest.raises(CourseInputError, match="zebra"):
        s2s.make_batch([bad], *translation_vocabs)
    with pytest.raises(CourseInputError, match="at least one pair"):
        s2s.make_batch([], *translation_vocabs)


def test_an_empty_source_raises(translation_vocabs, held_out_pairs):
    model = tiny_model(translation_vocabs, "dot")
    empty = parallel.Pair((), held_out_pairs[0].target, ())
    with pytest.raises(CourseInputError, match="at least one word"):
        model(s2s.make_batch([held_out_pairs[0], empty], *translation_vocabs))
    with pytest.raises(CourseInputError, match="at least one word"):
        model.greedy(torch.zeros(1, 3, dtype=torch.long))


# --- training and gradients ------------------------------------------------------------------------


def test_a_tiny_model_learns_on_the_real_training_split(translation_vocabs):
    pairs = parallel.load("train")[:3000]
    model = tiny_model(translation_vocabs, "dot", hidden=32).train()
    batches = s2s.batch_stream(pairs, *translation_vocabs, batch_size=32, seed=0)
    history = train(model, batches, steps=150, lr=1e-2, progress=False)
    losses = history.losses
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert first > 5.0  # about log(601) at the start
    assert last < 0.65 * first, (first, last)


@pytest.mark.parametrize("kind", [None, "dot"], ids=str)
def test_source_gradient_norms_give_one_norm_per_source_word(translation_vocabs, held_out_pairs, kind):
    model = tiny_model(translation_vocabs, kind)
    length = len(held_out_pairs[0].source)
    same = [p for p in held_out_pairs if len(p.source) == length][:8]
    norms = source_gradient_norms(model, *translation_vocabs, same)
    assert norms.shape == (length,)
    assert torch.all(torch.isfinite(norms)) and torch.all(norms > 0)
    assert all(p.grad is None for p in model.parameters())  # measuring leaves the model's gradients alone
    other = next(p for p in held_out_pairs if len(p.source) != length)
    with pytest.raises(CourseInputError, match="one source length"):
        source_gradient_norms(model, *translation_vocabs, same + [other])
