"""Seed runs read back from a stored file: spreads and the noise rule's verdicts, one printed comparison, and
storing each run as it is measured (``course_utils.analysis.seed_runs``)."""

from __future__ import annotations

import json

from course_utils.analysis import seed_runs as sr
from course_utils.analysis.seed_spread import WITHIN_NOISE


def fake_results(values: dict[str, list[float]]) -> dict:
    """A stored-runs dict with one metric, "bleu", per model and seed."""
    return {"command": "made by hand", "runs": {sr.run_name(model, seed): {"scores": {"bleu": value}}
                                                 for model, row in values.items() for seed, value in enumerate(row)}}  # fmt: skip


def test_a_stored_comparison_follows_the_noise_rule():
    results = fake_results({"a": [60.0, 61.0, 62.0], "b": [50.0, 50.5, 51.0], "c": [61.5, 58.0, 63.0]})
    spread_a, spread_b, verdict = sr.stored_comparison(results, "a", "b", "bleu")
    assert (spread_a.mean, spread_a.range, spread_b.mean) == (61.0, 2.0, 50.5) and verdict == "a better"
    assert sr.stored_comparison(results, "a", "b", "bleu", higher_is_better=False)[2] == "b better"
    assert sr.stored_comparison(results, "a", "c", "bleu")[2] == WITHIN_NOISE  # gap 0.17 < range 5


def test_a_comparison_line_prints_both_spreads_and_the_verdict():
    results = fake_results({"a": [1.0, 2.0, 3.0], "b": [5.0, 6.0, 7.0]})
    line = sr.comparison_line(results, "a", "b", "bleu", higher_is_better=False, labels=("A", "B"), digits=2)
    assert line == "A 2.00 (1.00–3.00, 3 seeds) | B 6.00 (5.00–7.00, 3 seeds) → A better"
    short = sr.comparison_line(results, "a", "b", "bleu", labels=("A", "B"), digits=1, count=False)
    assert short == "A 2.0 (1.0–3.0) | B 6.0 (5.0–7.0) → B better"


def test_beyond_noise_keeps_only_the_metrics_whose_gap_exceeds_the_spread():
    runs = {sr.run_name(model, seed): {"scores": {"x": x, "y": y}}
            for model, values in (("a", ((1.0, 10.0), (2.0, 11.0), (3.0, 12.0))),
                                  ("b", ((5.0, 10.5), (6.0, 11.5), (7.0, 12.5))))
            for seed, (x, y) in enumerate(values)}  # fmt: skip
    found = sr.beyond_noise({"runs": runs}, "a", "b", {"X": "x", "Y": "y"}, labels=("A", "B"))
    assert found == {"X": "B better"}  # y: gap 0.5 within the range 2
    assert sr.beyond_noise({"runs": runs}, "a", "b", {"X": "x"}, higher_is_better=False) == {"X": "a better"}


def test_a_spread_table_takes_a_narrower_label_column():
    results = fake_results({"a": [1.0, 2.0, 3.0], "b": [5.0, 6.0, 7.0]})
    wide = sr.spread_table(results, {"A": "a", "B": "b"}, {"bleu": "bleu"}, digits=1)
    narrow = sr.spread_table(results, {"A": "a", "B": "b"}, {"bleu": "bleu"}, digits=1, label_width=5)
    assert narrow.splitlines()[1] == "bleu " + wide.splitlines()[1][14:]
    assert narrow.splitlines()[1].split() == ["bleu", "2.0", "(1.0–3.0)", "6.0", "(5.0–7.0)"]


def test_measure_all_stores_each_run_as_it_goes(tmp_path):
    path = tmp_path / "runs.json"
    order = [sr.run_name(name, seed) for name in ("x", "y") for seed in (0, 1)]
    measured = lambda name, seed: {"train_seconds": None, "scores": {"bleu": 10 * seed}}  # noqa: E731
    sr.measure_all(["y", "x"], [1, 0], measured, results_file=path, command="cmd", order=order, write=True)
    stored = json.loads(path.read_text())
    assert stored["command"] == "cmd" and list(stored["runs"]) == order
    assert stored["runs"]["x seed 1"]["scores"]["bleu"] == 10
