"""Notebook 07's headline comparisons over three seeds: the four translators at hidden size 128 (no attention, dot,
general, additive) and the bottleneck sweep (no attention and dot at 32, 64 and 256), each trained again with seeds
1 and 2 by the zoo's own recipe; seed 0 is the shipped checkpoint.

Each run is scored as notebook 07 scores the shipped models: BLEU and exact match on the whole test split and in
each length bucket, exact match on the 500 events of each voice and on the unseen combinations, and the alignment
error rate (AER) of the attention on the test split. The runs take minutes each, so their results live in a small
JSON file beside the checkpoints; the command:

    OMP_NUM_THREADS=1 python -m course_utils.analysis.translation_seeds --write              # every run, ~30 minutes
    OMP_NUM_THREADS=1 python -m course_utils.analysis.translation_seeds --write --only dot_128

Read the spreads with ``seed_runs.stored_comparison`` (``seed_spread``'s rule): a gap counts only where it exceeds the larger
range.
"""

from __future__ import annotations

import time

import torch

from course_utils.analysis import translation_analysis as analysis
from course_utils.analysis.seed_runs import SEEDS, run_name, seed_command, stored_comparison
from course_utils.analysis.stored_runs import load_runs
from course_utils.language import parallel
from course_utils.validation import CourseInputError
from course_utils.zoo import translation_checkpoints as zoo

RESULTS_FILE = zoo.TRANSLATION_DIR / "translation_seeds.json"
COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.translation_seeds --write"
MAIN = tuple(zoo.model_name(kind, 128) for kind in zoo.LABELS)  # none_128, additive_128, dot_128, general_128
SWEEP = tuple(zoo.model_name(kind, hidden) for kind in (None, "dot") for hidden in zoo.HIDDEN_SIZES if hidden != 128)
MODELS = MAIN + SWEEP


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


def bleu_not_beaten(results: dict, names: dict[str, str], buckets, baseline: str = "none_128") -> list[tuple]:
    """The (label, bucket) pairs where the model ``names[label]`` does not beat ``baseline`` in the bucket's BLEU by
    more than the seeds' spread (the noise rule), in the order of ``names`` and ``buckets``."""
    return [(label, bucket) for label, name in names.items() for bucket in buckets
            if stored_comparison(results, name, baseline, f"bleu {bucket}", labels=(label, "none"))[2]
            != f"{label} better"]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    seed_command(argv, description=__doc__.split("\n")[0], results_file=RESULTS_FILE, command=COMMAND, names=MODELS,
                 order=ORDER, measure_run=measure)  # fmt: skip


if __name__ == "__main__":
    main()
