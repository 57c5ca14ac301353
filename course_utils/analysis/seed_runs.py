"""Runs of one recipe over several seeds, stored and read back: the runs' names, a score's spread and the noise
rule's verdict, a table of spreads, one printed comparison, and the command line that measures and stores them.

Seed 0 is the shipped model (or the notebook's own run); seeds 1 and 2 are the same recipe with another seed. The
stored file is the analysis wing's stored-runs format (``stored_runs``); its rows keep their scores under
``"scores"``. The modules of notebooks 07 and 08 (``translation_seeds``, ``transformer_seeds``) use it.
"""

from __future__ import annotations

import argparse

from course_utils.analysis.seed_spread import WITHIN_NOISE, Spread, spread, verdict
from course_utils.analysis.stored_runs import save_run

SEEDS = (0, 1, 2)


def run_name(model: str, seed: int) -> str:
    """The stored run of ``model`` trained with ``seed``: ``"dot_128 seed 1"``."""
    return f"{model} seed {seed}"


def stored_spread(results: dict, name: str, metric: str, seeds=SEEDS) -> Spread:
    """``metric`` (a key of the rows' "scores") of ``name`` over its stored seeds, from any stored-runs file whose
    runs are named by ``run_name``."""
    return spread(results["runs"][run_name(name, seed)]["scores"][metric] for seed in seeds)


def stored_comparison(results: dict, a: str, b: str, metric: str, *, higher_is_better: bool = True,
                      labels: tuple[str, str] | None = None):  # fmt: skip
    """(spread of a, spread of b, the noise rule's verdict in their names, or in ``labels``) for ``metric``."""
    first, second = stored_spread(results, a, metric), stored_spread(results, b, metric)
    return first, second, verdict(first, second, labels or (a, b), higher_is_better=higher_is_better)


def beyond_noise(results: dict, a: str, b: str, metrics: dict[str, str], *, higher_is_better: bool = True,
                 labels: tuple[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """The noise rule's verdict on ``a`` against ``b`` for each metric (row label -> metric) whose gap exceeds the
    spread, in the order of ``metrics``; the metrics within noise are left out."""
    said = {label: stored_comparison(results, a, b, metric, higher_is_better=higher_is_better, labels=labels)[2]
            for label, metric in metrics.items()}  # fmt: skip
    return {label: verdict for label, verdict in said.items() if verdict != WITHIN_NOISE}


def paired_difference(results: dict, a: str, b: str, metric: str, seeds=SEEDS) -> Spread:
    """``metric`` of ``a`` minus that of ``b``, seed by seed (each seed's ``a`` against the same seed's ``b``)."""
    first, second = stored_spread(results, a, metric, seeds), stored_spread(results, b, metric, seeds)
    return spread(x - y for x, y in zip(first.values, second.values))


def spread_table(results: dict, names: dict[str, str], metrics: dict[str, str], *, digits: int = 3,
                 scale: float = 1.0, header: bool = True, width: int | None = None,
                 by_run: bool = False, label_width: int | None = None) -> str:  # fmt: skip
    """A table, one row per metric (row label -> metric) and one column per run (column label -> name), or with
    ``by_run`` one row per run and one column per metric: each cell the mean over the stored seeds and
    (lowest–highest), the values times ``scale`` (100 for percentages). ``width`` fixes the columns' width, so that
    tables printed one under the other line up; ``label_width`` the row labels' (by default at least 14)."""

    def cell(name: str, metric: str) -> str:
        values = stored_spread(results, name, metric)
        return f"{scale * values.mean:.{digits}f} ({scale * values.low:.{digits}f}–{scale * values.high:.{digits}f})"

    rows, columns = (names, metrics) if by_run else (metrics, names)
    grid = {row: [cell(*((key, column_key) if by_run else (column_key, key))) for column_key in columns.values()]
            for row, key in rows.items()}  # fmt: skip
    width = width or max(len(text) for text in [*columns, *(text for cells in grid.values() for text in cells)]) + 2
    label_width = label_width or max(14, max(map(len, rows)) + 2)
    lines = [" " * label_width + "".join(f"{label:>{width}}" for label in columns)] if header else []
    lines += [f"{row:{label_width}}" + "".join(f"{text:>{width}}" for text in cells) for row, cells in grid.items()]
    return "\n".join(lines)


def short(values: Spread, digits: int = 3) -> str:
    """``mean (low–high)``: ``Spread.format`` without the count of seeds, for a line that says it once."""
    return f"{values.mean:.{digits}f} ({values.low:.{digits}f}–{values.high:.{digits}f})"


def comparison_line(results: dict, a: str, b: str, metric: str, *, higher_is_better: bool = True,
                    labels: tuple[str, str] | None = None, digits: int = 3, count: bool = True) -> str:  # fmt: skip
    """One printed comparison: ``a mean (low–high, 3 seeds) | b mean (…) → verdict``; without ``count``, no
    "3 seeds" (``short``)."""
    labels = labels or (a, b)
    first, second, said = stored_comparison(results, a, b, metric, higher_is_better=higher_is_better, labels=labels)
    text = (lambda values: values.format(digits)) if count else (lambda values: short(values, digits))
    return f"{labels[0]} {text(first)} | {labels[1]} {text(second)} → {said}"


def measure_all(names, seeds, measure_run, *, results_file, command: str, order, write: bool) -> None:
    """Measure ``measure_run(name, seed)`` for every name and seed; with ``write``, store each row as soon as it is
    measured (a long run that fails keeps the others)."""
    for name in names:
        for seed in seeds:
            row = measure_run(name, seed)
            print(f"{run_name(name, seed):36} {row['scores']}  ({row['train_seconds']} s)", flush=True)
            if write:
                save_run(results_file, command, order, run_name(name, seed), row)


def seed_command(argv: list[str] | None, *, description: str, results_file, command: str, names, order,
                 measure_run) -> None:  # fmt: skip
    """The command line of a seed-runs module: ``--write``, ``--only NAME…``, ``--seeds S…``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write", action="store_true", help=f"write {results_file.name} beside the checkpoints")
    parser.add_argument("--only", nargs="*", default=list(names), help="the runs to measure (the rest are kept)")
    parser.add_argument("--seeds", nargs="*", type=int, default=list(SEEDS), help="the seeds to measure")
    args = parser.parse_args(argv)
    measure_all(args.only, args.seeds, measure_run, results_file=results_file, command=command, order=order,
                write=args.write)  # fmt: skip
