"""attention_cost: Table 1's counts by hand, the crossover, the timed layers (shapes, parity, causality),
well-formed timing rows, training throughput, bad input. No speed is asserted: speed is a benchmark
(benchmarks/transformer_bench.py)."""

import pytest
import torch
from torch import nn

from course_utils import CourseInputError
from course_utils.analysis.attention_cost import (
    CausalSelfAttention,
    LSTMCellLoop,
    comparison_models,
    layer_flops,
    measured_crossover,
    parameter_count,
    time_layers,
    training_throughput,
)
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.recurrent.recurrent_lm import RecurrentLM


# ---------------------------------------------------------------- the counts


def test_layer_flops_by_hand():
    f = layer_flops(2, 3)  # n = 2, d = 3
    assert f["attention_projections"] == 4 * 2 * 9 == 72  # Q, K, V, O: four (n, d) @ (d, d)
    assert f["attention_scores"] == f["attention_mix"] == 2 * 2 * 3 == 12  # Q Kᵀ: (n, d) @ (d, n); A V: (n, n) @ (n, d)
    assert f["attention"] == 72 + 12 + 12
    assert f["lstm_input"] == f["lstm_recurrent"] == 4 * 2 * 9  # 4 gates × (d, d) per step, n steps
    assert f["lstm"] == 144
    assert (f["attention_steps"], f["lstm_steps"], f["attention_path"], f["lstm_path"]) == (1, 2, 1, 2)
    assert (f["crossover_n"], f["table1_crossover_n"]) == (6, 3)


def test_the_crossover_is_where_the_counts_meet():
    d = 16
    at = layer_flops(2 * d, d)
    assert at["crossover_n"] == 2 * d and at["attention"] == at["lstm"]
    below, above = layer_flops(2 * d - 1, d), layer_flops(2 * d + 1, d)
    assert below["attention"] < below["lstm"] and above["attention"] > above["lstm"]
    table1 = layer_flops(d, d)  # Table 1's orders: n²·d = n·d² at n = d
    assert table1["attention_scores"] == table1["n"] * d * d


@pytest.mark.parametrize("n, d", [(0, 4), (4, 0), (2.5, 4), (True, 4), ("8", 4)])
def test_layer_flops_rejects_bad_sizes(n, d):
    with pytest.raises(CourseInputError):
        layer_flops(n, d)


# ---------------------------------------------------------------- the layers


def test_the_cell_loop_computes_what_the_fused_lstm_computes():
    torch.manual_seed(0)
    for batch_first in (True, False):
        lstm = nn.LSTM(6, 6, batch_first=batch_first)
        x = torch.randn(3, 5, 6)  # (B, T, d) or (T, B, d)
        torch.testing.assert_close(LSTMCellLoop(lstm)(x), lstm(x)[0], atol=1e-6, rtol=1e-5)


def test_the_cell_loop_needs_one_plain_layer():
    for bad in (nn.LSTM(4, 4, num_layers=2), nn.LSTM(4, 4, bidirectional=True), nn.GRU(4, 4), "lstm"):
        with pytest.raises(CourseInputError):
            LSTMCellLoop(bad)


def test_sdpa_and_multihead_attention_are_the_same_layer():
    torch.manual_seed(0)
    sdpa, mha = CausalSelfAttention(8, 2), CausalSelfAttention(8, 2, kind="mha")
    with torch.no_grad():
        mha.mha.in_proj_weight.copy_(sdpa.qkv.weight)
        mha.mha.in_proj_bias.copy_(sdpa.qkv.bias)
        mha.mha.out_proj.weight.copy_(sdpa.out.weight)
        mha.mha.out_proj.bias.copy_(sdpa.out.bias)
    x = torch.randn(2, 5, 8)  # (B, T, d)
    torch.testing.assert_close(sdpa(x), mha(x), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("kind", ["sdpa", "mha"])
def test_attention_is_causal(kind):
    torch.manual_seed(0)
    layer = CausalSelfAttention(8, 2, kind=kind).eval()
    x = torch.randn(1, 6, 8)  # (B, T, d)
    changed = x.clone()
    changed[:, 4:] += 1.0  # change the future of position 3
    torch.testing.assert_close(layer(x)[:, :4], layer(changed)[:, :4])
    assert not torch.allclose(layer(x)[:, 4:], layer(changed)[:, 4:])


def test_attention_rejects_bad_shapes():
    with pytest.raises(CourseInputError):
        CausalSelfAttention(6, 4)  # 6 does not split into 4 heads
    with pytest.raises(CourseInputError):
        CausalSelfAttention(8, 2, kind="flash")


# ---------------------------------------------------------------- timing rows


def test_time_layers_rows_are_well_formed():
    threads = torch.get_num_threads()
    rows = time_layers([3, 5], 8, batch=2, repeats=1, heads=2)
    assert [r["n"] for r in rows] == [3, 5]
    for row in rows:
        assert set(row) == {"n", "d", "batch", "attention_s", "lstm_s", "lstm_cell_s"}
        assert (row["d"], row["batch"]) == (8, 2)
        assert all(isinstance(row[k], float) and row[k] > 0 for k in ("attention_s", "lstm_s", "lstm_cell_s"))
    assert torch.get_num_threads() == threads  # the thread count comes back
    assert len(time_layers([4], 8, batch=1, repeats=1, heads=2, attention="mha", threads=None)) == 1


@pytest.mark.parametrize("kwargs", [
    {"lengths": []}, {"lengths": [4, 4]}, {"lengths": "16"}, {"lengths": [0]}, {"d": 6},
    {"batch": 0}, {"repeats": 0}, {"threads": 0}, {"attention": "flash"},
])  # fmt: skip
def test_time_layers_rejects_bad_input(kwargs):
    arguments = {"lengths": [4], "d": 8, "batch": 1, "repeats": 1, **kwargs}
    with pytest.raises(CourseInputError):
        time_layers(arguments.pop("lengths"), arguments.pop("d"), **arguments)


def test_measured_crossover():
    row = lambda n, a, b: {"n": n, "attention_s": a, "lstm_s": b}  # noqa: E731
    assert measured_crossover([row(16, 1, 2), row(32, 3, 2), row(64, 9, 4)]) == 32
    assert measured_crossover([row(64, 9, 4), row(16, 3, 2), row(32, 1, 2)]) == 64  # a dip at 32: from 64 on only
    assert measured_crossover([row(16, 1, 2), row(32, 1, 2)]) is None
    assert measured_crossover([row(16, 3, 2)], slower="lstm_s", faster="attention_s") is None
    with pytest.raises(CourseInputError):
        measured_crossover([])
    with pytest.raises(CourseInputError):
        measured_crossover([{"n": 4, "attention_s": 1.0}])


# ---------------------------------------------------------------- training throughput


def _fake_batches(step):
    """Two sentences of ids < 20, the second padded: (idx, targets) of (2, 6)."""
    generator = torch.Generator().manual_seed(step)
    idx = torch.randint(1, 20, (2, 6), generator=generator)  # (B, T)
    targets = torch.roll(idx, -1, dims=1)
    targets[1, 4:] = IGNORE_INDEX  # (B, T): 10 predicted tokens
    return idx, targets


def test_training_throughput_times_every_model_and_trains_it():
    models = {cell: RecurrentLM(20, cell=cell, embed_dim=4, hidden_dim=8) for cell in ("rnn", "lstm")}
    before = models["lstm"].output.weight.clone()
    speed = training_throughput(models, _fake_batches, steps=2, warmup=1)
    assert set(speed) == {"rnn", "lstm"} and all(v > 0 for v in speed.values())
    assert not torch.equal(before, models["lstm"].output.weight)  # an AdamW step was taken


@pytest.mark.parametrize("models, batches, kwargs", [
    ({}, _fake_batches, {}), ([RecurrentLM(20)], _fake_batches, {}), ({"a": "model"}, _fake_batches, {}),
    ({"a": RecurrentLM(20)}, None, {}), ({"a": RecurrentLM(20)}, _fake_batches, {"steps": 0}),
    ({"a": RecurrentLM(20)}, _fake_batches, {"lr": 0}), ({"a": RecurrentLM(20)}, _fake_batches, {"warmup": -1}),
])  # fmt: skip
def test_training_throughput_rejects_bad_input(models, batches, kwargs):
    with pytest.raises(CourseInputError):
        training_throughput(models, batches, **kwargs)


def test_parameter_count():
    assert parameter_count(nn.Linear(3, 2)) == 3 * 2 + 2
    with pytest.raises(CourseInputError):
        parameter_count("model")


def test_comparison_models_are_of_similar_size(vocab):
    models = comparison_models(vocab, attentions=["eager", "sdpa"])
    assert list(models) == ["LSTM LM", "GPT LM (eager attention)", "GPT LM (sdpa attention)"]
    sizes = {label: parameter_count(model) for label, model in models.items()}
    assert sizes["LSTM LM"] == 217_058  # notebook 06's LSTM: embedding 64, hidden 128
    assert 0.8 < sizes["GPT LM (eager attention)"] / sizes["LSTM LM"] < 1.2
    idx = torch.tensor([[vocab.bos_id, 5, 6]])  # (1, 3)
    logits = [model(idx)[0] for model in models.values()]  # (1, 3, V) each
    assert all(x.shape == (1, 3, len(vocab)) for x in logits)
    torch.testing.assert_close(logits[1], logits[2], atol=1e-5, rtol=1e-4)  # the same GPT, two attention kernels
    for bad in ("eager", [], ["flash"]):
        with pytest.raises(CourseInputError):
            comparison_models(vocab, attentions=bad)
    with pytest.raises(CourseInputError):
        comparison_models(["a", "b"])
