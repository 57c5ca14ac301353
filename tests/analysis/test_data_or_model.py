"""More data or a bigger model (notebook 08): the runs' recipes, the stored results, the step timer.

The claims the results support are asserted in ``tests/claims/test_data_claims.py``.
"""

from __future__ import annotations

import pytest

from course_utils import CourseInputError
from course_utils.analysis import data_or_model as dm
from course_utils.zoo.transformer_checkpoints import LM_RECIPES


def test_the_runs_differ_from_the_shipped_recipes_only_where_they_say():
    assert dm.RUNS["2x64 split 4500"] == (*LM_RECIPES["gpt_lm"], "gpt_lm")
    assert dm.RUNS["2x64 stream 9000"] == (*LM_RECIPES["gpt_stream"], "gpt_stream")
    config, recipe, shipped = dm.RUNS["2x64 stream 4500"]
    assert shipped is None and config == LM_RECIPES["gpt_stream"][0]
    assert recipe == {**LM_RECIPES["gpt_stream"][1], "steps": 4500}
    config, recipe, shipped = dm.RUNS["4x256 split 4500"]
    assert (config["n_layer"], config["n_embd"], recipe["lr"], recipe.get("data", "train")) == (4, 256, 1e-3, "train")
    assert {k: v for k, v in recipe.items() if k != "lr"} == {
        k: v for k, v in LM_RECIPES["gpt_lm"][1].items() if k != "lr"
    }


def test_the_stored_results_hold_every_run_with_its_recipe():
    results = dm.load_results()
    assert results["command"] == dm.COMMAND and list(results["runs"]) == list(dm.RUNS)
    for name, row in results["runs"].items():
        config, recipe, shipped = dm.RUNS[name]
        assert (row["layers"], row["width"], row["steps"], row["lr"]) == (
            config["n_layer"], config["n_embd"], recipe["steps"], recipe["lr"])  # fmt: skip
        assert row["data"] == recipe.get("data", "train") and len(row["first_losses"]) == dm.SHORT_STEPS
        assert row["parameters"] == sum(p.numel() for p in dm.build(name).parameters())
        assert (row["source"] == f"the shipped {shipped}") if shipped else row["source"] == "trained by COMMAND"


def test_a_step_is_timed_and_bad_names_and_lengths_are_refused():
    assert dm.time_steps("2x64 split 4500", "cpu", steps=1, warmup=1) > 0
    with pytest.raises(CourseInputError, match="the runs are"):
        dm.build("8x512")
    with pytest.raises(CourseInputError):
        dm.short_run("2x64 split 4500", steps=dm.SHORT_STEPS + 1)
