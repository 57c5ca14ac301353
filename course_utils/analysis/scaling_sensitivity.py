"""How far analysis and training choices move approach 3's E and a, against the seed spread (notebook 11, issue 44).

A fitted floor is only as good as the choices behind it. ``CHOICES`` varies one at a time, from the notebook's own
fit (Huber δ = 10⁻³, every training run, the 1-layer shape kept): the Huber δ, the runs fitted, the 1-layer shape;
and, as the yardstick, the same fit with one FLOP budget's runs swapped for their seed-1 or seed-2 twins. Each is
fitted under both countings (``scaling_counting``); ``sensitivity`` stores them in ``data/scaling/sensitivity.json``.

``lr_sweep`` reads the learning-rate runs (the rule ×⅓ and ×3 at three shapes on two budgets, ``scaling_runs``), and
``with_best_learning_rate`` refits with each swept run at its best rate: how far the untuned rule could move a.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from course_utils.analysis import scaling_counting as counting_
from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs
from course_utils.validation import CourseInputError, check_choice


@dataclass(frozen=True)
class Choice:
    """One way to fit approach 3: a Huber δ, the least and most steps a fitted run has, shapes left out, a seed
    swapped in."""

    label: str
    delta: float = 1e-3
    min_steps: int = 0
    max_steps: int | None = None
    without: tuple[tuple[int, int], ...] = ()
    seed: int = 0  # the seed of the runs of FLOP budget SPREAD_DIAGONAL (their twins replace the seed-0 runs)
    kind: str = "analysis"  # or "seed": the yardstick


CHOICES = (
    Choice("as fitted: δ = 1e-3, all runs"),
    Choice("Huber δ = 1e-2", delta=1e-2),
    Choice("least squares (δ = 10)", delta=10.0),
    Choice("runs of ≥ 1,000 steps", min_steps=1000),
    Choice("runs of ≥ 2,000 steps", min_steps=2000),
    Choice("runs of ≤ 16,000 steps", max_steps=16_000),
    Choice("without the 1-layer shape", without=((1, 16),)),
    Choice("seed 1 on one budget", seed=1, kind="seed"),
    Choice("seed 2 on one budget", seed=2, kind="seed"),
)


def _swapped(results: dict, seed: int) -> list[dict]:
    """The training runs with those of FLOP budget SPREAD_DIAGONAL replaced by their ``seed`` twins (where stored)."""
    chosen = laws.rows(results)
    if seed == 0:
        return chosen
    twins = {(row["n_layer"], row["n_embd"], row["steps"]): row for row in laws.rows(results, ("seeds",), seed=seed)}
    return [twins.get((row["n_layer"], row["n_embd"], row["steps"]), row) for row in chosen]


def chosen_runs(results: dict, choice: Choice) -> list[dict]:
    """The runs ``choice`` fits."""
    chosen = [row for row in _swapped(results, choice.seed)
              if choice.min_steps <= row["steps"] <= (choice.max_steps or row["steps"])
              and (row["n_layer"], row["n_embd"]) not in choice.without]  # fmt: skip
    if not chosen:
        raise CourseInputError(f"the choice {choice.label!r} leaves no run to fit")
    return chosen


def fit_row(results: dict, choice: Choice, counting: str) -> dict:
    """Approach 3 under ``choice`` and ``counting``: the law, E's error, a and tokens per parameter at the reference
    budget."""
    law = counting_.fit(chosen_runs(results, choice), counting, delta=choice.delta)
    reference = counting_.reference_flops(results, counting)
    return {"choice": choice.label, "kind": choice.kind, "counting": counting, **laws.law_row(law),
            "error": round(law.E - results["test_entropy"], 6), "a": round(counting_.exponent(law), 6),
            "tokens_per_parameter": round(float(counting_.tokens_per_parameter(law, reference)), 3)}  # fmt: skip


def sensitivity(results: dict, choices=CHOICES) -> dict:
    """Every choice under both countings: {"runs": the runs' fingerprint, "rows": [fit_row]}."""
    rows = [fit_row(results, choice, counting) for choice in choices for counting in counting_.COUNTINGS]
    return {"runs": laws.runs_fingerprint(results), "rows": rows}


def spread(rows: list[dict], counting: str, key: str = "error", kind: str = "analysis") -> float:
    """The range of ``key`` over the stored rows of ``kind`` ("analysis" or "seed", with the fit as made) under
    ``counting``."""
    check_choice("kind", kind, ("analysis", "seed"))
    values = [row[key] for row in rows if row["counting"] == counting and (row["kind"] == kind or
              row["choice"] == CHOICES[0].label)]  # fmt: skip
    return max(values) - min(values)


SENSITIVITY_FILE = scaling_runs.RESULTS_FILE.with_name("sensitivity.json")
SENSITIVITY_COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.scaling_sensitivity --write"


def load_sensitivity(path=SENSITIVITY_FILE) -> dict:
    """The stored table: {"command", "runs", "rows"}."""
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"{path} is missing; make it with `{SENSITIVITY_COMMAND}`")
    return json.loads(path.read_text(encoding="utf-8"))


def sensitivity_table(rows: list[dict]) -> str:
    """The stored rows as a table, one line per choice: E − truth and a under each counting (≤ 88 characters)."""
    lines = [f"{'':29} {'Kaplan (non-emb. N)':>19}   {'Chinchilla (all N)':>19}",
             f"{'fitted to':29} {'E − true E':>10} {'a':>8}   {'E − true E':>10} {'a':>8}"]  # fmt: skip
    for choice in dict.fromkeys(row["choice"] for row in rows):
        own = {row["counting"]: row for row in rows if row["choice"] == choice}
        cells = "   ".join(f"{own[c]['error']:+10.4f} {own[c]['a']:8.2f}" for c in counting_.COUNTINGS)
        lines.append(f"{choice:29} {cells}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the learning-rate sweep

LR_ORDER = ("1/3", "1", "3")  # the factors on the rule, smallest first


def lr_sweep(results: dict) -> dict[tuple[int, int, int], dict[str, float]]:
    """{(n_layer, n_embd, steps): {"1/3": test loss, "1": ..., "3": ...}} for the swept shapes and budgets (the
    factor "1" is the grid's own run)."""
    sweep: dict[tuple[int, int, int], dict[str, float]] = {}
    for shape in scaling_runs.LR_SHAPES:
        for steps in scaling_runs.LR_BUDGETS:
            runs = [scaling_runs.Run(*shape, steps, lr_factor=factor) for factor in LR_ORDER]
            losses = {
                run.lr_factor: results["runs"][run.name]["test_loss"] for run in runs if run.name in results["runs"]
            }
            if len(losses) == len(LR_ORDER):
                sweep[(*shape, steps)] = losses
    if not sweep:
        raise CourseInputError("no learning-rate sweep is stored; train it with scaling_runs --only '* lr x*'")
    return sweep


def with_best_learning_rate(results: dict, counting: str) -> dict:
    """Approach 3 refitted with each swept run's loss at its best of the three rates: the law's row, its error and a."""
    best = {key: min(losses.values()) for key, losses in lr_sweep(results).items()}
    chosen = [{**row, "test_loss": best.get((row["n_layer"], row["n_embd"], row["steps"]), row["test_loss"])}
              for row in laws.rows(results)]  # fmt: skip
    law = counting_.fit(chosen, counting)
    return {**laws.law_row(law), "error": law.E - results["test_entropy"], "a": counting_.exponent(law)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {SENSITIVITY_FILE.name} beside the runs")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    table = sensitivity(scaling_runs.load_results())
    print(sensitivity_table(table["rows"]))
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.write:
        text = json.dumps({"command": SENSITIVITY_COMMAND, **table}, indent=1)
        text = re.sub(r"\{[^{}]*\}", lambda inner: json.dumps(json.loads(inner[0]), ensure_ascii=False), text)
        SENSITIVITY_FILE.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
