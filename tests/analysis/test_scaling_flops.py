"""The real training FLOPs of the scaling runs: the closed form against torch's FlopCounterMode on real steps, the
cheap batch lengths against the batches themselves, and the runs file with training_flops added."""

from __future__ import annotations

import json

import pytest

from course_utils.analysis import scaling_flops as sf
from course_utils.analysis import scaling_runs as sr
from course_utils.validation import CourseInputError


@pytest.mark.parametrize("shape", [(1, 16), (2, 64), (4, 128)])
def test_the_closed_form_counts_every_matmul_that_the_flop_counter_counts(shape):
    idx, targets = sr.stream_batch(0, 1)  # (64, T)
    counted = sf.counted_step_flops(*shape, idx, targets)
    assert sf.step_flops(*shape, *idx.shape) == counted  # exactly: every matmul, nothing else


def test_the_closed_form_follows_the_batch_and_the_length():
    idx, targets = sr.stream_batch(0, 2)
    idx, targets = idx[:5, :9], targets[:5, :9]  # (5, 9)
    assert sf.step_flops(2, 32, 5, 9) == sf.counted_step_flops(2, 32, idx, targets)


def test_the_flop_counter_misses_the_cpu_sdpa_kernel():
    """What counted_step_flops's docstring says: with SDPA on the CPU, exactly the attention matmuls go uncounted."""
    idx, targets = sr.stream_batch(0, 1)
    (batch, length), (n_layer, n_embd) = idx.shape, (2, 32)
    attention = 3 * n_layer * 4 * batch * length**2 * n_embd  # forward and backward of Q K^T and weights · V
    counted = sf.counted_step_flops(n_layer, n_embd, idx, targets, attention="sdpa")
    assert counted == sf.step_flops(n_layer, n_embd, batch, length) - attention


def test_the_cheap_lengths_are_the_batches_lengths():
    for seed in (0, 1):
        lengths = sf.batch_lengths(seed, 100)
        assert lengths == [sr.stream_batch(seed, step)[0].shape[1] for step in range(1, 101)]
    assert len(set(lengths)) > 1  # the lengths vary from batch to batch
    assert sf.batch_lengths(2, sf.LENGTH_BLOCK + 2)[-2:] == [
        sf.batch_length(2, step) for step in (sf.LENGTH_BLOCK + 1, sf.LENGTH_BLOCK + 2)
    ]  # across a cached block's end


def test_a_short_run_costs_the_counted_flops_of_its_batches():
    steps, seed = 20, 1
    batches = [sr.stream_batch(seed, step) for step in range(1, steps + 1)]
    assert len({idx.shape[1] for idx, _ in batches}) > 1
    counted = sum(sf.counted_step_flops(1, 16, idx, targets) for idx, targets in batches)
    assert sf.run_training_flops(1, 16, steps, seed) == pytest.approx(counted, rel=0.01)


def test_training_flops_are_added_to_every_row_and_nothing_else_changes(tmp_path):
    stored = sr.load_results()
    names = ["1x16 250 steps seed 0", "4x96 250 steps seed 1"]
    for name in names:  # as the rows were before the count was added
        stored["runs"][name] = {
            k: v for k, v in stored["runs"][name].items() if k not in ("training_flops", "positions")
        }
    path = tmp_path / "runs.json"
    text = sr._one_line_lists(json.dumps({**stored, "runs": {name: stored["runs"][name] for name in names}}, indent=1))
    path.write_text(text + "\n", encoding="utf-8")
    written = sf.add_training_flops(path)["runs"]
    for name in names:
        row = stored["runs"][name]
        expected = sf.run_training_flops(row["n_layer"], row["n_embd"], row["steps"], row["seed"])
        assert written[name]["training_flops"] == pytest.approx(expected, rel=1e-4)
        assert list(written[name]) == [*list(row)[: list(row).index("flops") + 1], "training_flops", "positions",
                                       *list(row)[list(row).index("flops") + 1 :]]  # fmt: skip
        assert written[name]["training_flops"] > row["flops"]  # the output layer and the attention on top of 6 N D
        assert written[name]["positions"] == 64 * sum(sf.batch_lengths(row["seed"], row["steps"])) > row["tokens"]
    again = path.read_text(encoding="utf-8")
    added = ('"training_flops"', '"positions"')
    assert "\n".join(line for line in again.splitlines() if not line.strip().startswith(added)) == text
    sf.add_training_flops(path)
    assert path.read_text(encoding="utf-8") == again  # a second pass changes nothing


@pytest.mark.parametrize(
    "call",
    [
        lambda: sf.step_flops(0, 16, 64, 10),
        lambda: sf.step_flops(1, 16, 64, 0),
        lambda: sf.step_flops(1, 16, 64, 10, vocab=0),
        lambda: sf.run_training_flops(1, 16, 0),
        lambda: sf.run_training_flops(1, 16, 10, seed=-1),
        lambda: sf.row_training_flops({"n_layer": 1, "n_embd": 16, "steps": 10, "seed": 0, "batch_size": 32}),
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(CourseInputError):
        call()


def test_a_missing_file_names_the_command(tmp_path):
    with pytest.raises(CourseInputError, match="scaling_runs"):
        sf.add_training_flops(tmp_path / "missing.json")
