"""Seed spreads of notebooks 04-06: their headline comparisons, each model retrained by its zoo recipe with other seeds.

Seed 0 is the shipped checkpoint (every recipe's seed). The other seeds retrain the same recipe
(``zoo.lm_checkpoints.build_checkpoint(name, seed=s)``) into ``build/lm_seeds/seed<s>/`` and score it as its
notebook scores the shipped one. The runs take seconds (classifiers) to minutes (language models), so their results
live in small JSON files beside the checkpoints (``lm_seeds.json`` in ``data/checkpoints/04/`` and ``05_06/``):

    OMP_NUM_THREADS=1 python -m course_utils.analysis.lm_seeds --write                  # every run, about 40 minutes
    OMP_NUM_THREADS=1 python -m course_utils.analysis.lm_seeds --write --only lstm_lm   # one model, all its seeds

Read the spreads with ``seed_spread`` (``spread``, ``verdict``): the rule is there, not here.
"""

from __future__ import annotations

import argparse
import json
import time
from functools import lru_cache
from pathlib import Path

import torch

from course_utils.analysis.seed_runs import run_name
from course_utils.analysis.seed_spread import Spread, spread
from course_utils.analysis.stored_runs import load_runs, save_run
from course_utils.evaluation.agreement import accuracy_by_attractors, form_probs
from course_utils.language import corpus
from course_utils.language.vocab import course_vocab
from course_utils.models import lm
from course_utils.models.classic.window_mlm import allowed_mass_at_mask, example_batches
from course_utils.training import train
from course_utils.validation import CourseInputError
from course_utils.zoo import lm_checkpoints as zoo

COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.lm_seeds --write"
CACHE = Path(__file__).resolve().parents[2] / "build" / "lm_seeds"  # the retrained models (not shipped)
FAST, SLOW = (0, 1, 2, 3, 4), (0, 1, 2)  # classifiers train in seconds: five seeds; the rest in minutes: three
SEEDS = {
    "sentiment_features": FAST,
    "sentiment_embeddings": FAST,
    "sentiment_pretrained": FAST,
    "few_reviews_random": FAST,  # notebook 04's 100-review classifiers (not zoo models: trained by few_reviews)
    "few_reviews_pretrained": FAST,
    "ffnn_n2": SLOW,
    "ffnn_n3": SLOW,
    "ffnn_n5": SLOW,
    "masked_concat_w2": SLOW,
    "masked_concat_w4": SLOW,
    "rnn_lm": SLOW,
    "gru_lm": SLOW,
    "lstm_lm": SLOW,
    "rnn_wide_lm": SLOW,
    "elmo_sentiment": SLOW,
    "lstm_wide_lm": SLOW,
}
FEW_REVIEWS = {"reviews": 100, "steps": 300, "batch_size": 32, "lr": 1e-2}  # notebook 04's scarce-label runs


def results_file(model: str) -> Path:
    """The stored file of ``model``'s runs: beside its notebook's checkpoints."""
    zoo_name = "sentiment_embeddings" if model.startswith("few_reviews") else model
    return zoo.checkpoint_dir(zoo_name).parent / "lm_seeds.json"


def _order() -> list[str]:
    return [run_name(model, seed) for model, seeds in SEEDS.items() for seed in seeds]


# ---------------------------------------------------------------- scores, as the notebooks compute them


@lru_cache(maxsize=1)
def _turns() -> torch.Tensor:
    """(N,) bool: the test reviews that turn ("but") or negate ("not")."""
    return torch.tensor([("but" in r["words"]) or ("not" in r["words"]) for r in corpus.load_eval("reviews_test")])


@torch.no_grad()
def review_accuracies(model: torch.nn.Module, kind: str) -> dict[str, float]:
    """A review classifier's test accuracy on all reviews, on plain ones, and on those with "but" or "not"."""
    x, labels = zoo.review_tensors("test", kind)
    right = model.eval()(x)[0].argmax(-1) == labels  # (N,)
    turns = _turns()
    return {"all": right.double().mean().item(), "plain": right[~turns].double().mean().item(),
            "but/not": right[turns].double().mean().item()}  # fmt: skip


def few_reviews(pretrained: bool, seed: int = 0) -> torch.nn.Module:
    """Notebook 04's embedding classifier trained on the first 100 training reviews only, from random embeddings or
    from the FFNN N=5's (rescaled, ``zoo.start_from_pretrained``); ``seed`` draws the weights and the batches."""
    x_train, y_train = zoo.review_tensors("train", "embeddings")
    n = FEW_REVIEWS["reviews"]
    torch.manual_seed(seed)
    classifier = zoo.build_model("embeddings", zoo.RECIPES["sentiment_embeddings"][1])
    if pretrained:
        zoo.start_from_pretrained(classifier, zoo.LOADERS["ffnn_n5"]())
    batches = example_batches(x_train[:n], y_train[:n], batch_size=FEW_REVIEWS["batch_size"], seed=seed)
    train(classifier, batches, steps=FEW_REVIEWS["steps"], lr=FEW_REVIEWS["lr"], progress=False)
    return classifier.eval()


def lm_scores(model: torch.nn.Module) -> dict:
    """A left-to-right LM's test perplexity and its agreement accuracy at 0..5 attractors (notebooks 04-06)."""
    vocab, agreement = course_vocab(), corpus.load_eval("agreement")
    accuracy = accuracy_by_attractors(form_probs(model, vocab, agreement), agreement)
    return {"perplexity": lm.evaluate(model, vocab, corpus.load_split("test")).perplexity,
            "agreement": [accuracy[n] for n in sorted(accuracy)]}  # fmt: skip


def masked_scores(model: torch.nn.Module) -> dict:
    """A window masked LM's validation NLL of the masked word and its mass on the verb's instruments (notebook 04)."""
    instruments = [item for item in corpus.load_eval("selection") if item["kind"] == "instrument"]
    return {**zoo.validation_score("masked", model),
            "instrument_mass": allowed_mass_at_mask(model, course_vocab(), instruments)}  # fmt: skip


def scores(model_name: str, model: torch.nn.Module) -> dict:
    """The scores its notebook reads for ``model_name``."""
    if model_name.startswith("few_reviews"):
        return review_accuracies(model, "embeddings")
    kind = zoo.ALL_RECIPES[model_name][0]
    if kind in ("ffnn", "recurrent"):
        return lm_scores(model)
    if kind == "masked":
        return masked_scores(model)
    return review_accuracies(model, kind)


# ---------------------------------------------------------------- runs


def trained(model_name: str, seed: int) -> tuple[torch.nn.Module, float]:
    """The model trained with ``seed`` (seed 0: the shipped checkpoint) and its training seconds."""
    if model_name.startswith("few_reviews"):
        start = time.perf_counter()
        model = few_reviews(model_name.endswith("pretrained"), seed)
        return model, time.perf_counter() - start
    directory = None if seed == zoo.ALL_RECIPES[model_name][2]["seed"] else CACHE / f"seed{seed}"
    if directory is not None and not zoo.checkpoint_dir(model_name, directory).is_dir():
        zoo.build_checkpoint(model_name, directory, seed=seed)
    config = json.loads((zoo.checkpoint_dir(model_name, directory) / "config.json").read_text(encoding="utf-8"))
    return zoo.LOADERS[model_name](directory), config["train_seconds"]


def measure(model_name: str, seed: int) -> dict:
    """One row: the model, the seed, the training seconds and the scores."""
    model, seconds = trained(model_name, seed)
    return {"model": model_name, "seed": seed, "train_seconds": round(seconds, 1),
            "torch_threads": torch.get_num_threads(), "test": scores(model_name, model)}  # fmt: skip


def load_results(model_name: str) -> dict:
    """The stored rows of ``model_name``, by seed: {seed: row}."""
    runs = load_runs(results_file(model_name), COMMAND)["runs"]
    rows = {row["seed"]: row for row in runs.values() if row["model"] == model_name}
    if not rows:
        raise CourseInputError(f"{results_file(model_name)} holds no run of {model_name}; make it with `{COMMAND}`")
    return rows


def seed_spread(model_name: str, score: str, index: int | None = None) -> Spread:
    """``score`` (``index``: which entry of a list score, e.g. the attractors) of ``model_name`` over its stored
    seeds, as a ``Spread``."""
    rows = load_results(model_name).values()
    return spread(row["test"][score] if index is None else row["test"][score][index] for row in rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="store the rows beside the checkpoints")
    parser.add_argument("--only", nargs="*", default=list(SEEDS), help="the models to measure (the rest are kept)")
    args = parser.parse_args(argv)
    for model_name in args.only:
        if model_name not in SEEDS:
            raise CourseInputError(f"unknown model {model_name!r}; the models are {', '.join(SEEDS)}")
        for seed in SEEDS[model_name]:
            row = measure(model_name, seed)
            print(f"{run_name(model_name, seed):28} {row['test']}  ({row['train_seconds']:.0f} s)", flush=True)
            if args.write:  # after each run: a long one that fails keeps the others
                save_run(results_file(model_name), COMMAND, _order(), run_name(model_name, seed), row)


if __name__ == "__main__":
    main()
