"""Notebook 08's attention from scratch: the slide's numbers, parity with the library, masks, positions, blocks."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course_utils import CourseInputError
from course_utils.models.transformer import attention as att
from course_utils.models.transformer.encoder_block import EncoderBlock, bert_layer_by_hand, bert_layer_matrices
from course_utils.models.transformer.positional import PositionLM, cropped_batches, shift_matrix, sinusoidal_positions
from course_utils.slides.slide_attention import FIXES, SelfAttention, run_slide_code, slide_source

TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-12}


def test_thinking_machines_gives_the_slides_numbers():
    v = att.thinking_machines()
    assert len(v["q1"]) == 64 and math.sqrt(len(v["k1"])) == 8
    scores = torch.stack([v["q1"] @ v["k1"], v["q1"] @ v["k2"]])
    assert scores.tolist() == [112.0, 96.0]
    assert (scores / 8).tolist() == [14.0, 12.0]
    weights = torch.softmax(scores / 8, dim=0)
    assert [round(w, 2) for w in weights.tolist()] == [0.88, 0.12]
    out, w = att.scaled_dot_product_attention(
        v["q1"][None], torch.stack([v["k1"], v["k2"]]), torch.stack([v["v1"], v["v2"]])
    )
    assert torch.allclose(w[0], weights) and torch.allclose(out[0], weights[0] * v["v1"] + weights[1] * v["v2"])


@pytest.mark.parametrize("text", ["", "a, b", "2*0", "1*-3", "nan"])
def test_parse_runs_refuses_bad_text(text):
    with pytest.raises(CourseInputError):
        att.parse_runs(text)


def test_masks_and_the_boolean_convention_trap():
    assert att.causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    pad = att.padding_mask([3, 1])
    assert pad.tolist() == [[True, True, True], [True, False, False]]
    assert att.library_key_padding_mask(pad).tolist() == [[False, False, False], [False, True, True]]
    torch.manual_seed(0)
    library = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = torch.randn(2, 3, 8)
    right, _ = library(x, x, x, key_padding_mask=att.library_key_padding_mask(pad))
    wrong, wrong_weights = library(x, x, x, key_padding_mask=pad)  # SDPA's convention given to nn.MultiheadAttention
    scratch, _ = att.MultiHeadAttention.from_torch(library)(x, x, x, pad[:, None, None, :])
    assert (right - scratch).abs().max() <= 1e-6
    assert torch.isnan(wrong[0]).all(), "row 0 has no padding: the flipped mask ignores every key"
    assert (wrong_weights[1, :, 0] == 0).all() and (wrong_weights[1, :, 1:] > 0).all(), "row 1 reads only its padding"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_multi_head_attention_matches_the_library_and_sdpa(dtype):
    torch.manual_seed(1)
    library = nn.MultiheadAttention(32, 4, batch_first=True).to(dtype).eval()
    scratch = att.MultiHeadAttention.from_torch(library)
    x = torch.randn(3, 7, 32, dtype=dtype)
    pad = att.padding_mask([7, 4, 2])
    with torch.no_grad():
        out, weights = library(x, x, x, key_padding_mask=~pad, average_attn_weights=False)
        mine, my_weights = scratch(x, x, x, pad[:, None, None, :])
        fused = att.library_attention(scratch, x, x, x, pad[:, None, None, :])
        causal, _ = library(x, x, x, attn_mask=~att.causal_mask(7))
        my_causal, _ = scratch(x, x, x, att.causal_mask(7))
    for a, b in ((out, mine), (weights, my_weights), (fused, mine), (causal, my_causal)):
        assert (a - b).abs().max() <= TOLERANCE[dtype]


def test_a_fully_masked_query_gets_zero_weights_not_nan():
    weights = att.attention_weights(torch.randn(1, 2, 4), torch.randn(1, 3, 4), torch.zeros(1, 2, 3, dtype=torch.bool))
    assert torch.equal(weights, torch.zeros(1, 2, 3))


def test_multi_head_attention_refuses_bad_shapes():
    with pytest.raises(CourseInputError, match="multiple of heads"):
        att.MultiHeadAttention(10, 3)
    with pytest.raises(CourseInputError, match="same size d_k"):
        att.attention_weights(torch.randn(2, 4), torch.randn(2, 5))
    with pytest.raises(CourseInputError, match=r"must be \(B, T, 8\)"):
        att.MultiHeadAttention(8, 2)(torch.randn(2, 8), torch.randn(2, 8), torch.randn(2, 8))


def test_forward_is_keys_values_then_attend():
    """Notebook 08 prints ``forward``; the translator's KV cache calls its two halves. Both give the same."""
    torch.manual_seed(0)
    mha = att.MultiHeadAttention(8, 2)
    query, memory = torch.randn(3, 4, 8), torch.randn(3, 5, 8)
    mask = torch.rand(3, 1, 4, 5) > 0.3
    out, weights = mha(query, memory, memory, mask)
    halves, halves_weights = mha.attend(query, mha.keys_values(memory), mask)
    assert torch.allclose(out, halves, atol=1e-6) and torch.allclose(weights, halves_weights, atol=1e-6)


def test_scaling_keeps_the_softmax_from_saturating():
    rows = {d: (att.scaling_effect(d, scaled=False), att.scaling_effect(d)) for d in (4, 64, 1024)}
    for d, (raw, scaled) in rows.items():
        assert abs(raw["score_std"] / math.sqrt(d) - 1) < 0.1 and abs(scaled["score_std"] - 1) < 0.1
    assert rows[1024][0]["entropy"] < 0.2 < 2.0 < rows[1024][1]["entropy"]
    assert rows[1024][0]["grad_norm"] < 0.25 * rows[1024][1]["grad_norm"]


def test_the_slide_code_fails_once_per_bug_then_runs():
    x = torch.randn(2, 5, 8)
    errors = [run_slide_code(i, x).error for i in range(len(FIXES) + 1)]
    assert errors[0].startswith("ModuleNotFoundError") and "super" not in slide_source(0)
    assert "before Module.__init__()" in errors[1]
    assert "dropout" in errors[2] and "positional argument" in errors[3]
    assert errors[4].startswith("RuntimeError") and "Softmax" in errors[5]
    assert errors[6:] == [None, None, None]
    no_dim = run_slide_code(6, x)
    assert any("Implicit dimension" in w for w in no_dim.warnings)
    torch.manual_seed(0)
    fixed = SelfAttention(8).eval()
    with torch.no_grad():
        reference = F.scaled_dot_product_attention(fixed.Q(x), fixed.K(x), fixed.V(x))
    assert (run_slide_code(len(FIXES), x).output - reference).abs().max() <= 1e-6
    assert (run_slide_code(len(FIXES) - 1, x).output - reference).abs().max() > 1e-3  # without 1/√d_k


def test_slide_softmax_without_dim_normalises_over_the_batch():
    x = torch.randn(1, 4, 8)
    torch.manual_seed(0)
    out = run_slide_code(6, x).output
    model = SelfAttention(8).eval()
    torch.manual_seed(0)
    model = SelfAttention(8).eval()
    with torch.no_grad():
        all_ones = torch.ones(1, 4, 4) @ model.V(x)  # softmax over a batch of one: every weight is 1
    assert torch.allclose(out, all_ones, atol=1e-5)


def test_sinusoids_follow_the_formula_and_shift_linearly():
    pe = sinusoidal_positions(50, 16)
    pos, i = 7, 3
    assert pe[pos, 2 * i].item() == pytest.approx(math.sin(pos / 10000 ** (2 * i / 16)), abs=1e-15)
    assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(pos / 10000 ** (2 * i / 16)), abs=1e-15)
    for k in (1, 4, 13):
        assert (pe[: 50 - k] @ shift_matrix(k, 16) - pe[k:]).abs().max() <= 1e-12
    with pytest.raises(CourseInputError, match="even"):
        sinusoidal_positions(3, 5)


def test_attention_without_positions_is_permutation_equivariant():
    torch.manual_seed(0)
    block = EncoderBlock(16, 4, 32).eval()
    x, order = torch.randn(1, 6, 16), torch.randperm(6)
    with torch.no_grad():
        assert (block(x)[:, order] - block(x[:, order])).abs().max() <= 1e-5
        with_pe = x + sinusoidal_positions(6, 16).float()
        shuffled = x[:, order] + sinusoidal_positions(6, 16).float()
        assert (block(with_pe)[:, order] - block(shuffled)).abs().max() > 1e-2


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_block_matches_the_library_layer(dtype, norm_first):
    torch.manual_seed(2)
    library = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation="gelu", batch_first=True,
                                         norm_first=norm_first).to(dtype).eval()  # fmt: skip
    block = EncoderBlock.from_torch(library).eval()
    x, pad = torch.randn(3, 6, 32, dtype=dtype), att.padding_mask([6, 3, 1])
    with torch.no_grad():
        diff = (library(x, src_key_padding_mask=~pad) - block(x, pad[:, None, None, :]))[pad]
    assert diff.abs().max() <= 10 * TOLERANCE[dtype]
    with pytest.raises(CourseInputError, match="gelu"):
        EncoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parity
def test_bert_layer_recomputed_by_hand(dtype):
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, attn_implementation="eager")  # fmt: skip
    torch.manual_seed(0)
    model = BertModel(config).to(dtype).eval()
    ids = torch.randint(5, 40, (2, 6))
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2])
    with torch.no_grad():
        states = model(ids, attention_mask=mask, output_hidden_states=True).hidden_states
        for layer, before, after in zip(model.encoder.layer, states, states[1:]):
            mine = bert_layer_by_hand(layer, before, mask.bool())
            assert (mine - after)[mask.bool()].abs().max() <= 10 * TOLERANCE[dtype]
    names = [name for name, _ in bert_layer_matrices(model.encoder.layer[0])]
    assert names[:2] == ["attention.self.query.weight", "attention.self.query.bias"] and len(names) == 16


def test_position_lm_contract_and_cropped_batches():
    from course_utils.language.vocab import course_vocab, train_ids

    vocab = course_vocab()
    for positions in ("learned", "sinusoidal", "none"):
        model = PositionLM(len(vocab), positions=positions, d_model=16, heads=2, layers=1, d_ff=32, max_len=20)
        idx, targets = cropped_batches(train_ids()[:50], vocab, length=5, batch_size=8, seed=0)(0)
        assert idx.shape[1] <= 5 and targets.shape == idx.shape
        logits, loss = model(idx, targets)
        assert logits.shape == (*idx.shape, len(vocab)) and torch.isfinite(loss)
    with pytest.raises(CourseInputError, match="max_len"):
        model(torch.zeros(1, 21, dtype=torch.long))


def test_shipped_position_models_learned_and_none_extrapolate_better_than_sinusoids():
    from course_utils.language import corpus
    from course_utils.language.grammar import CourseLanguage
    from course_utils.models import lm
    from course_utils.language.vocab import course_vocab
    from course_utils.evaluation.lm_probes import OracleLM
    from course_utils.models.transformer.positional import POSITIONS, nll_by_position
    from course_utils import zoo
    from course_utils.zoo.transformer_checkpoints import POSITION_LENGTH

    vocab = course_vocab()
    idx, targets = lm.make_batch(
        lm.encode_sentences(vocab, [s for s in corpus.load_split("test") if len(s) >= 14]), vocab
    )
    oracle = nll_by_position(OracleLM(CourseLanguage(include_held_out=False), vocab), idx, targets)
    excess = {kind: nll_by_position(zoo.load(f"positions_{kind}"), idx, targets) - oracle for kind in POSITIONS}
    seen = {kind: float(e[:POSITION_LENGTH].mean()) for kind, e in excess.items()}
    beyond = {kind: float(e[POSITION_LENGTH:24].mean()) for kind, e in excess.items()}
    assert all(value < 0.25 for value in seen.values()), seen
    assert all(beyond[kind] > seen[kind] + 0.2 for kind in POSITIONS), (seen, beyond)
    assert beyond["sinusoidal"] > max(beyond["learned"], beyond["none"]) + 0.5, beyond
