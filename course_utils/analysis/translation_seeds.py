"""Notebook 07's headline comparisons over three seeds: the four translators at hidden size 128 (no attention, dot,
general, additive) and the bottleneck sweep (no attention and dot at 32, 64 and 256), each trained again with seeds
1 and 2 by the zoo's own recipe; seed 0 is the shipped checkpoint.

Each run is scored as notebook 07 scores the shipped models: BLEU and exact match on the whole test split and in
each length bucket, exact match on the 500 events of each voice and on the unseen combinations, and the alignment
error rate (AER) of the attention on the test split. The runs take minutes each, so their results live in a small
JSON file beside the checkpoints; the command:

    OMP_NUM_THREADS=1 python -m course_utils.analysis.translation_seeds --write              # every run, ~30 minutes
    OMP_NUM_THREADS=1 python -m course_utils.analysis.translation_seeds --write --only dot_128

Read the spreads with ``stored_comparison`` (``seed_spread``'s rule): a gap counts only where it exceeds the larger
range.
"""

from __future__ import annotations

import argparse
import time

import torch

from course_utils.analysis import translation_analysis as analysis
from course_utils.analysis.seed_spread import Spread, spread, verdict
from course_utils.analysis.stored_runs import load_runs, save_run
from course_utils.language import parallel
from course_utils.validation import CourseInputError
from course_utils.zoo import translation_checkpoints as zoo

RESULTS_FILE = zoo.TRANSLATION_DIR / "translation_seeds.json"
COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.translation_seeds --write"
SEEDS = (0, 1, 2)  # 0: the shipped checkpoint (the recipe's seed); 1 and 2 trained again
MAIN = tuple(zoo.model_name(kind, 128) for kind in zoo.LABELS)  # none_128, additive_128, dot_128, general_128
SWEEP = tuple(zoo.model_name(kind, hidden) for kind in (None, "dot") for hidden in zoo.HIDDEN_SIZES if hidden != 128)
MODELS = MAIN + SWEEP


def run_name(model: str, seed: int) -> str:
    """The stored run of ``model`` trained with ``seed``: ``"dot_128 seed 1"``."""
    return f"{model} seed {seed}"


ORDER = tuple(run_name(model, seed) for model in MODELS for seed in SEEDS)


def _model(name: str, seed: int) -> tuple[torch.nn.Module, float | None]:
    """The shipped checkpoint for seed 0 (no training time), else ``name`` trained with ``seed``, and its seconds."""
    if name not in MODELS:
        raise CourseInputError(f"unknown model {name!r}; the models are {', '.join(MODELS)}")
    if seed == zoo.TRAINING["seed"]:
        return zoo.LOADERS[name](), None
    start = time.perf_counter()
    model, _ = zoo.train_model(name, seed=seed, progress=False)
    return model.eval(), round(time.perf_counter() - start, 1)


def scores(model, *, aer: bool) -> dict[str, float]:
    """Notebook 07's numbers for one model: test BLEU and exact match (all and by length bucket), each voice, the
    unseen combinations, and (``aer``) the attention's AER on the test split."""
    test = parallel.load("test")
    row = {f"test {key}": value for key, value in zoo.scores(model, test).items() if key in ("bleu", "exact_match")}
    for bucket, values in analysis.length_table({"model": model})["model"].items():
        row.update({f"{key} {bucket}": values[key] for key in ("bleu", "exact_match")})
    row.update(analysis.voice_table({"model": model})["model"])
    row["unseen"] = zoo.scores(model, parallel.load("test_unseen"))["exact_match"]
    if aer:
        row["aer"] = analysis.attention_aer(model, test)
    return {key: round(value, 4) for key, value in row.items()}


def measure(name: str, seed: int) -> dict:
    """One row: the model, the seed, where it came from, training seconds and threads, and its scores."""
    model, seconds = _model(name, seed)
    return {"model": name, "seed": seed, "source": "shipped checkpoint" if seconds is None else "trained again",
            "train_seconds": seconds, "torch_threads": torch.get_num_threads(),
            "scores": scores(model, aer=zoo.RECIPES[name]["attention"] is not None)}  # fmt: skip


def load_results() -> dict:
    """The stored results: {"command": ..., "runs": {run name: row}}."""
    return load_runs(RESULTS_FILE, COMMAND)


def stored_spread(results: dict, name: str, metric: str, seeds=SEEDS) -> Spread:
    """``metric`` (a key of the rows' "scores") of ``name`` over its stored seeds, from any stored-runs file whose
    runs are named by ``run_name``."""
    return spread(results["runs"][run_name(name, seed)]["scores"][metric] for seed in seeds)


def stored_comparison(results: dict, a: str, b: str, metric: str, *, higher_is_better: bool = True,
                      labels: tuple[str, str] | None = None):  # fmt: skip
    """(spread of a, spread of b, the noise rule's verdict in their names, or in ``labels``) for ``metric``."""
    first, second = stored_spread(results, a, metric), stored_spread(results, b, metric)
    return first, second, verdict(first, second, labels or (a, b), higher_is_better=higher_is_better)


def paired_difference(results: dict, a: str, b: str, metric: str, seeds=SEEDS) -> Spread:
    """``metric`` of ``a`` minus that of ``b``, seed by seed (each seed's ``a`` against the same seed's ``b``)."""
    first, second = stored_spread(results, a, metric, seeds), stored_spread(results, b, metric, seeds)
    return spread(x - y for x, y in zip(first.values, second.values))


def spread_table(results: dict, names: dict[str, str], metrics: dict[str, str], *, digits: int = 3,
                 scale: float = 1.0, header: bool = True, width: int | None = None,
                 by_run: bool = False) -> str:  # fmt: skip
    """A table, one row per metric (row label -> metric) and one column per run (column label -> name), or with
    ``by_run`` one row per run and one column per metric: each cell the mean over the stored seeds and
    (lowest–highest), the values times ``scale`` (100 for percentages). ``width`` fixes the columns' width, so that
    tables printed one under the other line up."""

    def cell(name: str, metric: str) -> str:
        values = stored_spread(results, name, metric)
        return f"{scale * values.mean:.{digits}f} ({scale * values.low:.{digits}f}–{scale * values.high:.{digits}f})"

    rows, columns = (names, metrics) if by_run else (metrics, names)
    grid = {row: [cell(*((key, column_key) if by_run else (column_key, key))) for column_key in columns.values()]
            for row, key in rows.items()}  # fmt: skip
    width = width or max(len(text) for text in [*columns, *(text for cells in grid.values() for text in cells)]) + 2
    label_width = max(14, max(map(len, rows)) + 2)
    lines = [" " * label_width + "".join(f"{label:>{width}}" for label in columns)] if header else []
    lines += [f"{row:{label_width}}" + "".join(f"{text:>{width}}" for text in cells) for row, cells in grid.items()]
    return "\n".join(lines)


def comparison_line(results: dict, a: str, b: str, metric: str, *, higher_is_better: bool = True,
                    labels: tuple[str, str] | None = None, digits: int = 3) -> str:  # fmt: skip
    """One printed comparison: ``a mean (low–high, 3 seeds) | b mean (…) → verdict``."""
    labels = labels or (a, b)
    first, second, said = stored_comparison(results, a, b, metric, higher_is_better=higher_is_better, labels=labels)
    return f"{labels[0]} {first.format(digits)} | {labels[1]} {second.format(digits)} → {said}"


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


def main(argv: list[str] | None = None) -> None:
    seed_command(argv, description=__doc__.split("\n")[0], results_file=RESULTS_FILE, command=COMMAND, names=MODELS,
                 order=ORDER, measure_run=measure)  # fmt: skip


if __name__ == "__main__":
    main()
