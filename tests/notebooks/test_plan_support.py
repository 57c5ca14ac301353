"""tests/plan_support.py reads the cells a lecture plan shows, as the projection test uses them."""

from __future__ import annotations

from pathlib import Path

from plan_support import plan_prompts, shown_prompts

ROOT = Path(__file__).resolve().parents[2]
PLAN = """
## 05 · RNNs

### Lecture plan

| min | project | cells | how |
|---|---|---|---|
| 0–6 | 1. A heading \\| with a pipe | [4]–[6] | live |
| 6–9 | 2. Another · `Demo` | [9], [6] | stored |
| 9–75 | 3. The last | [12] | live |

**Skip:** [20]–[22].
"""


def test_rows_ranges_and_repeats():
    assert plan_prompts(PLAN) == [4, 5, 6, 9, 12]
    assert shown_prompts("05_rnn", PLAN) == [4, 5, 6, 9, 12]
    assert shown_prompts("06_lstm", PLAN) is None


def test_every_notebook_has_a_plan_that_shows_cells():
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        prompts = shown_prompts(path.stem)
        assert prompts and all(n >= 1 for n in prompts), path.stem
