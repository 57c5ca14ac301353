"""Notebook 08's seed runs: the runs' names, the position summary by hand, the stored file's shape.

The claims the stored results support are asserted in ``tests/claims/test_data_claims.py``.
"""

from __future__ import annotations

import pytest
import torch

from course_utils import CourseInputError
from course_utils.analysis import transformer_seeds as tseeds
from course_utils.analysis.seed_runs import run_name


def test_the_runs_are_the_notebooks_comparisons():
    assert set(tseeds.ABLATIONS) == {f"ablation: {name}" for name in tseeds.block_ablation.variants(150)}
    assert tseeds.ABLATIONS["ablation: post-LN + warm-up"]["warmup_steps"] == tseeds.ABLATION_STEPS // 4
    assert tseeds.POSITION_RUNS == ("positions_learned", "positions_sinusoidal", "positions_none")
    assert tseeds.ORDER[0] == run_name("ablation: pre-LN + residuals (GPT-2)", 0)


def test_the_position_summary_by_hand():
    excess = torch.arange(30, dtype=torch.float64)  # position t has excess t
    summary = tseeds.position_summary(excess)  # seen 0..7, next 8..12, beyond 13..23, unseen 8..23
    assert summary == {"seen": 3.5, "next 5": 10.0, "beyond": 18.0, "unseen": 15.5}


def test_the_oracle_is_its_own_floor():
    oracle = tseeds.OracleLM(tseeds.CourseLanguage(include_held_out=False), tseeds.course_vocab())
    assert tseeds.excess_by_position(oracle).abs().max().item() < 1e-9


def test_an_unknown_run_is_refused():
    with pytest.raises(CourseInputError, match="unknown run"):
        tseeds.measure("ablation: no attention", 1)
