"""More data or a bigger model? Notebook 08's GPT trained four ways, each judged on the test split against the oracle.

    2 x 64,  the 60,000-sentence split, 4,500 steps    the shipped gpt_lm (the fair row beside notebooks 04-06)
    2 x 64,  fresh sentences (the stream), 4,500 steps  the same budget, no sentence seen twice
    2 x 64,  fresh sentences, 9,000 steps              the shipped gpt_stream
    4 x 256, the split, 4,500 steps                    23 times the parameters, the same data

A run with a shipped checkpoint is read from it (its recipe, its training time); the others are trained here. The
results live in a small JSON file beside the checkpoints; the command that writes it:

    OMP_NUM_THREADS=1 python -m course_utils.analysis.data_or_model --write     # about 40 minutes on one thread
    OMP_NUM_THREADS=1 python -m course_utils.analysis.data_or_model --write --retrain   # the shipped ones too

Each run also stores its first steps' training losses, so that a short run (``short_run``) can show the table was
made by this code: the same recipe, trained again for those steps, gives the same losses.
"""

from __future__ import annotations

import argparse
import math
import time
from functools import lru_cache
from pathlib import Path

import torch

from course_utils.checkpoints import load_checkpoint
from course_utils.language import corpus
from course_utils.language.grammar import CourseLanguage
from course_utils.language.vocab import course_vocab
from course_utils.models import lm
from course_utils.models.transformer.transformer_lm import CourseGPT
from course_utils.training import train
from course_utils.analysis.stored_runs import load_runs, save_run
from course_utils.validation import CourseInputError, check_int
from course_utils.zoo.lm_checkpoints import lm_batches
from course_utils.zoo.transformer_checkpoints import CHECKPOINT_DIR, LM_RECIPES, checkpoint_dir

RESULTS_FILE = CHECKPOINT_DIR / "data_or_model.json"
COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.data_or_model --write"
SHORT_STEPS = 20  # the first steps' losses each run stores, for ``short_run``
_BIG_MODEL = {"n_layer": 4, "n_embd": 256, "n_head": 4, "max_len": 128, "dropout": 0.0}
_SPLIT, _STREAM = LM_RECIPES["gpt_lm"], LM_RECIPES["gpt_stream"]

# run name -> (model arguments, recipe, the shipped checkpoint that holds it or None)
RUNS = {
    "2x64 split 4500": (*_SPLIT, "gpt_lm"),
    "2x64 stream 4500": (_STREAM[0], {**_STREAM[1], "steps": 4500}, None),
    "2x64 stream 9000": (*_STREAM, "gpt_stream"),
    "4x256 split 4500": (_BIG_MODEL, {**_SPLIT[1], "lr": 1e-3}, None),
}


def _run(name: str) -> tuple[dict, dict, str | None]:
    if name not in RUNS:
        raise CourseInputError(f"unknown run {name!r}; the runs are {', '.join(map(repr, RUNS))}")
    return RUNS[name]


def build(name: str) -> CourseGPT:
    """The untrained GPT of run ``name``, seeded by its recipe."""
    config, recipe, _ = _run(name)
    return CourseGPT.for_vocab(course_vocab(), seed=recipe["seed"], **config)


def train_run(name: str, *, steps: int | None = None, device=None, progress: bool = False):
    """Train run ``name`` by its recipe, on ``device`` (``steps`` overrides the recipe's, and the cosine schedule
    then spans those steps); return (the model, back on the CPU, and its history)."""
    _, recipe, _ = _run(name)
    model = build(name)
    history = train(model, lm_batches(recipe), steps=steps or recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe["clip_grad_norm"], device=device, progress=progress, description=name)  # fmt: skip
    return model.cpu(), history


@lru_cache(maxsize=1)
def oracle_test_perplexity() -> float:
    """The true perplexity of the test split, from the language it was drawn from."""
    return math.exp(corpus.oracle_entropy(CourseLanguage(include_held_out=False), corpus.load_split("test"))[0])


def test_ratio(model: torch.nn.Module) -> float:
    """The model's perplexity on the test split ÷ the oracle's."""
    return lm.evaluate(model, course_vocab(), corpus.load_split("test")).perplexity / oracle_test_perplexity()


def first_losses(name: str, steps: int = SHORT_STEPS) -> list[float]:
    """The training losses of run ``name``'s first ``steps`` steps: its recipe's model, batches and clipping, at its
    starting learning rate (a fingerprint of the run, cheap enough to train again)."""
    _, recipe, _ = _run(name)
    history = train(build(name), lm_batches(recipe), steps=steps, lr=recipe["lr"],
                    clip_grad_norm=recipe["clip_grad_norm"], progress=False)  # fmt: skip
    return history.losses


def measure(name: str, *, retrain: bool = False) -> dict:
    """One row: the run's shape, data, steps, training seconds and test perplexity ÷ the oracle's."""
    config, recipe, shipped = _run(name)
    if shipped and not retrain:
        model, saved = load_checkpoint(checkpoint_dir(shipped), lambda saved: CourseGPT.from_config(saved["model"]))
        seconds, threads, source = saved["train_seconds"], saved["torch_threads"], f"the shipped {shipped}"
    else:
        start = time.perf_counter()
        model, _ = train_run(name)
        seconds, threads, source = round(time.perf_counter() - start, 1), torch.get_num_threads(), "trained by COMMAND"
    parameters = sum(p.numel() for p in model.parameters())
    return {"layers": config["n_layer"], "width": config["n_embd"], "parameters": parameters,
            "data": recipe.get("data", "train"), "steps": recipe["steps"], "batch_size": recipe["batch_size"],
            "lr": recipe["lr"], "train_seconds": seconds, "torch_threads": threads, "source": source,
            "test_ratio": round(test_ratio(model.eval()), 4), "first_losses": [round(x, 4) for x in first_losses(name)]}  # fmt: skip


def load_results(path: Path | str = RESULTS_FILE) -> dict:
    """The shipped results: {"command": ..., "runs": {name: row}}."""
    return load_runs(Path(path), COMMAND)


def short_run(name: str = "4x256 split 4500", steps: int = SHORT_STEPS) -> dict:
    """Train run ``name`` again for its first ``steps`` steps; return its losses beside the shipped ones."""
    steps = check_int("steps", steps, minimum=1, maximum=SHORT_STEPS)
    _run(name)
    shipped = load_results()["runs"][name]["first_losses"][:steps]
    return {"run": name, "steps": steps, "shipped": shipped, "again": first_losses(name, steps)}


def time_steps(name: str, device, steps: int = 20, warmup: int = 3) -> float:
    """Seconds per training step of run ``name`` on ``device`` (after ``warmup`` steps; synchronised on a GPU)."""
    model = build(name)
    _, recipe, _ = _run(name)
    device = torch.device(device)
    batches = lm_batches(recipe)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    train(model, batches, steps=warmup, lr=recipe["lr"], device=device, progress=False)
    sync()
    start = time.perf_counter()
    train(model, batches, steps=steps, lr=recipe["lr"], device=device, progress=False)
    sync()
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS_FILE.name} beside the checkpoints")
    parser.add_argument("--retrain", action="store_true", help="train the shipped runs again instead of reading them")
    parser.add_argument("--only", nargs="*", default=list(RUNS), help="the runs to measure (the rest are kept)")
    args = parser.parse_args(argv)
    for name in args.only:
        row = measure(name, retrain=args.retrain)
        print(f"{name:18} test ppl ÷ oracle {row['test_ratio']:.4f}  ({row['train_seconds']:.0f} s, {row['source']})")
        if args.write:  # after each run: a long one that fails keeps the others
            save_run(RESULTS_FILE, COMMAND, RUNS, name, row)


if __name__ == "__main__":
    main()
