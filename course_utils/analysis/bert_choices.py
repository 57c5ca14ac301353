"""Notebook 09's BERT, three choices measured against the oracle: the WordPiece vocabulary's size, the masking rate,
and fresh sentences instead of the training split.

Each run pretrains ``bert_mlm``'s shape (2 layers x 64, whole-word masking, AdamW, cosine, clipping) from random
weights and scores it on the 500 masked test items of notebook 09 (``masked_items(test, 500, seed=1)``), told the
hidden word's piece count, as the oracle is:

    masked NLL ÷ oracle = exp(mean model NLL − mean oracle NLL), over all items, one-piece items, multi-piece items

The runs take minutes each, so their results live in a small JSON file beside the checkpoints; the command:

    OMP_NUM_THREADS=1 python -m course_utils.analysis.bert_choices --write             # every run, about 30 minutes
    OMP_NUM_THREADS=1 python -m course_utils.analysis.bert_choices --write --only "vocabulary 600"

``independence_cost`` needs no training: it scores the oracle's own per-mask piece marginals the way ``WordScorer``
scores a BERT (one factor per ``[MASK]``), which is what a perfect masked LM would score under that scoring.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import time
from collections import Counter
from functools import lru_cache
from typing import Sequence

import torch

from course_utils.language import corpus
from course_utils.language.stream import stream_language  # the training language, exact (held-out rules out)
from course_utils.models.bert import bert_mlm as bm
from course_utils.models.bert.bert_finetuning import SentimentBERT, review_accuracy, review_batches, review_tensors
from course_utils.models.bert.wordpiece import COURSE_VOCAB_SIZE, split_share, train_wordpiece
from course_utils.training import train
from course_utils.analysis.stored_runs import load_runs, save_run
from course_utils.validation import CourseInputError
from course_utils.language.vocab import course_vocab
from course_utils.models.recurrent.recurrent_lm import predict_masked_words
from course_utils.analysis.seed_spread import Spread, spread, verdict
from course_utils.zoo import load
from course_utils.zoo import bert_checkpoints as bzoo
from course_utils.zoo.bert_checkpoints import BERT_SHAPE, CHECKPOINT_DIR, RECIPES, masked_batches
from course_utils.zoo import lm_checkpoints as lm_zoo
from course_utils.zoo.lm_checkpoints import checkpoint_dir as lm_checkpoint_dir, train_model

RESULTS_FILE = CHECKPOINT_DIR / "bert_choices.json"
COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.bert_choices --write"
ITEMS, ITEM_SEED = 500, 1  # notebook 09's masked test items
GENERAL_ITEMS, FEW_LABELS = 200, 100  # section 5.1's general column: the first 200 items; section 5.2's few labels
WHOLE_WORDS = 2000  # asked of the trainer, more than it can use: it stops when every word is one entry
CHOSEN_SIZE = COURSE_VOCAB_SIZE  # the size the curve chose (notebook 09), the shipped tokenizer's: later runs use it
_BASE = {"steps": 4000, **{key: RECIPES["bert_mlm"][key] for key in ("batch_size", "lr", "seed", "clip_grad_norm")}}


def _recipe(vocab_size: int, data: str = "train", probability: float = 0.15, steps: int = 4000) -> dict:
    """A run: the vocabulary size asked of the trainer, the data, the masking rate, the steps; the rest is
    ``bert_mlm``'s recipe."""
    return {"vocab_size": vocab_size, "data": data, "probability": probability, **_BASE, "steps": steps}


RUNS = {
    "vocabulary 600": _recipe(600),
    "vocabulary 800": _recipe(800),
    "vocabulary 1000": _recipe(1000),
    "every word whole": _recipe(WHOLE_WORDS),
    "masking 40 %": _recipe(CHOSEN_SIZE, probability=0.40),
    "the stream": _recipe(CHOSEN_SIZE, "stream"),
    "the split, 8,000 steps": _recipe(CHOSEN_SIZE, steps=8000),
    "the stream, 8,000 steps": _recipe(CHOSEN_SIZE, "stream", steps=8000),
    "the stream, 8,000 steps, 40 %": _recipe(CHOSEN_SIZE, "stream", 0.40, steps=8000),
}


# The headline comparison of notebook 09 (its BERT against notebook 05's BiLSTM), drawn again: each shipped recipe
# with other seeds (weights, batches, masks), scored as the notebook's table scores it. Seed 0 is the shipped model.
SEEDS = (0, 1, 2)
SEED_MODELS = ("bert_mlm", "masked_bilstm")
SEED_RUNS = {f"{model}, seed {seed}": (model, seed) for model in SEED_MODELS for seed in SEEDS}


def _run(name: str) -> dict:
    if name not in RUNS:
        raise CourseInputError(f"unknown run {name!r}; the runs are {', '.join(map(repr, RUNS))}")
    return RUNS[name]


@lru_cache(maxsize=1)
def test_items() -> list[dict]:
    """Notebook 09's 500 masked test items."""
    return bm.masked_items(corpus.load_split("test"), ITEMS, seed=ITEM_SEED)


@lru_cache(maxsize=8)
def tokenizer_of(vocab_size: int):
    """A WordPiece tokenizer trained on the training split with ``vocab_size`` entries (at most)."""
    return train_wordpiece(corpus.load_split("train"), vocab_size)


def ratios_by_pieces(model_nlls: Sequence[float], oracle_nlls: Sequence[float], pieces: Sequence[int]) -> dict:
    """Masked NLL ÷ oracle over all items, the one-piece items and the multi-piece items (None where there are none)."""

    def ratio(keep) -> float | None:
        chosen = [i for i, k in enumerate(pieces) if keep(k)]
        return bm.nll_ratio([model_nlls[i] for i in chosen], [oracle_nlls[i] for i in chosen]) if chosen else None

    return {"all": ratio(lambda k: True), "one piece": ratio(lambda k: k == 1), "multi-piece": ratio(lambda k: k > 1),
            "multi-piece items": sum(k > 1 for k in pieces)}  # fmt: skip


def _piece_marginal_scores(distribution: dict[str, float], tokenizer, word: str) -> float:
    """NLL of ``word`` when each of its k pieces is scored by the oracle's marginal at its own mask, the product
    renormalised over the words of k pieces: ``WordScorer``'s scoring, given perfect per-mask predictions."""
    k = bm.piece_count(tokenizer, word)
    given_k = bm.given_piece_count(distribution, tokenizer, k)  # {word: P(word | context, k pieces)}
    spelled = {w: tokenizer.tokenize(w) for w in given_k}
    marginals = [Counter() for _ in range(k)]  # per mask: P(piece at mask j)
    for w, p in given_k.items():
        for j, piece in enumerate(spelled[w]):
            marginals[j][piece] += p
    scores = {w: math.prod(marginals[j][piece] for j, piece in enumerate(spelled[w])) for w in given_k}
    return -math.log(scores[word] / sum(scores.values()))


def split_word_items(tokenizer, sentences: Sequence[Sequence[str]], n: int, *, seed: int = 0) -> list[dict]:
    """``n`` cloze items whose hidden word the tokenizer splits into two or more pieces: the first ``n`` such
    positions of the sentences in a seeded random order."""
    rng = random.Random(seed)
    order = list(range(len(sentences)))
    rng.shuffle(order)
    items = []
    for row in order:
        words = list(sentences[row])
        split = [i for i, word in enumerate(words) if bm.piece_count(tokenizer, word) > 1]
        if split:
            items.append({"words": words, "position": rng.choice(split)})
            if len(items) == n:
                return items
    raise CourseInputError(f"only {len(items)} sentences hide a split word; asked for {n}")


def independence_cost(tokenizer, items: Sequence[dict] | None = None) -> dict:
    """What scoring a k-piece word by one factor per mask costs a model that knows the true per-mask marginals:
    masked NLL ÷ oracle of that scoring, on the multi-piece items (1.0 on one-piece items by construction)."""
    lang, items = stream_language(), test_items() if items is None else items
    model, oracle, pieces = [], [], []
    for item in items:
        words, i = item["words"], item["position"]
        distribution = lang.masked_distribution(words[:i], words[i + 1 :])
        k = bm.piece_count(tokenizer, words[i])
        oracle.append(-math.log(bm.given_piece_count(distribution, tokenizer, k)[words[i]]))
        model.append(_piece_marginal_scores(distribution, tokenizer, words[i]))
        pieces.append(k)
    return ratios_by_pieces(model, oracle, pieces)


def pretrain(name: str, *, steps: int | None = None, progress: bool = False):
    """Pretrain run ``name``'s BERT from random weights; return (model, tokenizer)."""
    run = _run(name)
    tokenizer = tokenizer_of(run["vocab_size"])
    config = bm.bert_config(tokenizer, **{k: BERT_SHAPE[k] for k in ("layers", "hidden", "heads", "max_len")})
    model = bm.CourseBERT(config, seed=run["seed"])
    batches = masked_batches({**run, "masking": "whole_word"}, tokenizer)  # whole words, at the run's rate
    train(model, batches, steps=steps or run["steps"], lr=run["lr"], schedule="cosine",
          clip_grad_norm=run["clip_grad_norm"], progress=progress, description=name)  # fmt: skip
    return model.eval(), tokenizer


def score(model, tokenizer, items: Sequence[dict] | None = None) -> dict:
    """The model's masked NLL ÷ oracle on ``items`` (default: notebook 09's 500), by piece count."""
    lang, items = stream_language(), test_items() if items is None else items
    scorer = bm.WordScorer(model, tokenizer, sorted(lang.vocabulary))
    nlls = bm.bert_scores(scorer, items)[0]
    oracle = bm.oracle_scores(lang, items, tokenizer)[0]
    return ratios_by_pieces(
        nlls, oracle, [bm.piece_count(tokenizer, item["words"][item["position"]]) for item in items]
    )


def measure(name: str) -> dict:
    """One row: the run's recipe, vocabulary, split shares, training seconds and scores."""
    start = time.perf_counter()
    model, tokenizer = pretrain(name)
    seconds = round(time.perf_counter() - start, 1)
    distinct, running = split_share(tokenizer, corpus.load_split("train"))
    return {**_run(name), "entries": len(tokenizer), "split": {"running": running, "distinct": distinct},
            "train_seconds": seconds, "torch_threads": torch.get_num_threads(),
            "test": _rounded(score(model, tokenizer))}  # fmt: skip


def _rounded(scores: dict) -> dict:
    return {key: (round(value, 4) if isinstance(value, float) else value) for key, value in scores.items()}


def _seed_model(model_name: str, seed: int):
    """(model, training seconds) of ``model_name``'s shipped recipe drawn with ``seed``: the shipped one for seed 0."""
    if seed == 0:
        record = (bzoo.training_record(model_name) if model_name == "bert_mlm" else
                  json.loads((lm_checkpoint_dir(model_name) / "config.json").read_text(encoding="utf-8")))  # fmt: skip
        return load(model_name), record["train_seconds"]
    start = time.perf_counter()
    if model_name == "bert_mlm":
        model = bzoo.train_masked_lm(model_name, seed=seed, tokenizer=load("tokenizer"), progress=False)[0]
    else:
        model = train_model(model_name, seed=seed, progress=False)[0]
    return model.eval(), round(time.perf_counter() - start, 1)


def score_word_model(model, tokenizer, items: Sequence[dict] | None = None) -> dict:
    """A word-level masked model (notebook 05's BiLSTM) told the piece count, as notebook 09's table scores it."""
    lang, items = stream_language(), test_items() if items is None else items
    distribution = bm.word_model_distribution(predict_masked_words, model, course_vocab(), sorted(lang.vocabulary))
    nlls = bm.hinted_scores(distribution, items, tokenizer)[0]
    oracle = bm.oracle_scores(lang, items, tokenizer)[0]
    return ratios_by_pieces(
        nlls, oracle, [bm.piece_count(tokenizer, item["words"][item["position"]]) for item in items]
    )


def review_items() -> list[dict]:
    """Notebook 09's 500 masked items of the test reviews (section 5.1)."""
    return bm.masked_items([review["words"] for review in corpus.load_eval("reviews_test")], ITEMS, seed=2)


@torch.no_grad()
def lm_fine_tuning_scores(model, tokenizer) -> dict:
    """Section 5.1's two columns: masked NLL ÷ oracle on the test reviews' items and on the first 200 of section
    4.1's items."""
    lang = stream_language()
    ratios = {}
    for column, chosen in (("reviews", review_items()), ("general", test_items()[:GENERAL_ITEMS])):
        nlls = bm.bert_scores(bm.WordScorer(model, tokenizer, sorted(lang.vocabulary)), chosen)[0]
        ratios[column] = round(bm.nll_ratio(nlls, bm.oracle_scores(lang, chosen, tokenizer)[0]), 4)
    return ratios


def few_label_classifier(
    start,
    tokenizer,
    *,
    labels: int = FEW_LABELS,
    seed: int = 0,
):
    """Section 5.2's few-label run: ``start`` (a ``SentimentBERT``) fine-tuned on the
    first ``labels`` training reviews, 150 steps of 16; returns it."""
    x, y = review_tensors(tokenizer, corpus.load_eval("reviews_train")[:labels])
    batches = review_batches(x, y, batch_size=16, seed=seed)
    schedule = {"lr": 1e-3, "schedule": "cosine", "clip_grad_norm": 1.0}
    train(start, batches, steps=150, progress=False, **schedule)
    return start


def _accuracy(classifier, tokenizer) -> list[float]:
    """All, plain, but/not accuracy on the test reviews."""
    return [round(a, 4) for a in review_accuracy(classifier, tokenizer, corpus.load_eval("reviews_test"))]


def fine_tuning_row(pretrained, tokenizer, seed: int) -> dict:
    """Section 5 from one pretrained BERT with ``seed`` (0: the shipped models): LM fine-tuning on the reviews
    (section 5.1's ratios before and after), task fine-tuning from it and from random weights (section 5.2's
    accuracies), and the same two starts with 100 labels."""
    row = {"pretrained": lm_fine_tuning_scores(pretrained, tokenizer)}
    if seed == 0:
        reviews = load("bert_reviews")
        tuned, scratch = load("bert_sentiment"), load("bert_sentiment_scratch")
    else:
        reviews = bzoo.train_masked_lm("bert_reviews", seed=seed, tokenizer=tokenizer, start=copy.deepcopy(pretrained),
                                  progress=False)[0].eval()  # fmt: skip
        tuned = bzoo.train_sentiment("bert_sentiment", seed=seed, tokenizer=tokenizer, start=reviews, progress=False)[0]
        scratch = bzoo.train_sentiment("bert_sentiment_scratch", seed=seed, tokenizer=tokenizer, progress=False)[0]
    row["lm fine-tuned"] = lm_fine_tuning_scores(reviews, tokenizer)
    row["sentiment"] = {"fine-tuned": _accuracy(tuned, tokenizer), "no pretraining": _accuracy(scratch, tokenizer)}
    few = {"fine-tuned": SentimentBERT.from_masked_lm(reviews, seed=seed),
           "no pretraining": SentimentBERT(reviews.hf.config, seed=seed)}  # fmt: skip
    row["100 labels"] = {start: _accuracy(few_label_classifier(model, tokenizer, seed=seed), tokenizer)
                         for start, model in few.items()}  # fmt: skip
    return row


def measure_seed(name: str) -> dict:
    """One row of the seed runs: the model, the seed, training seconds and the scores of notebook 09's table (and,
    for a BERT, section 5's fine-tuning from it)."""
    if name not in SEED_RUNS:
        raise CourseInputError(f"unknown seed run {name!r}; they are {', '.join(map(repr, SEED_RUNS))}")
    model_name, seed = SEED_RUNS[name]
    model, seconds = _seed_model(model_name, seed)
    tokenizer = load("tokenizer")
    with torch.no_grad():
        scores = score(model, tokenizer) if model_name == "bert_mlm" else score_word_model(model, tokenizer)
    row = {"model": model_name, "seed": seed, "shipped": seed == 0, "train_seconds": seconds,
           "torch_threads": torch.get_num_threads(), "test": _rounded(scores)}  # fmt: skip
    if model_name == "bert_mlm":
        row["fine-tuning"] = fine_tuning_row(model, tokenizer, seed)
    return row


# ---------------------------------------------------------------- the tables notebook 09 prints

CHOICE_HEAD = (f"{'run':30} {'entries':>7} {'data':>6} {'steps':>6} {'mask':>5} {'words split':>11}"
               f" {'÷ oracle':>9} {'1 piece':>8} {'split (items)':>14}")  # fmt: skip


def choice_rows(choices: dict, names) -> str:
    """The stored runs ``names`` of ``choices`` (``load_results()``), one line each under ``CHOICE_HEAD``: the recipe,
    how much its tokenizer splits, and masked NLL ÷ oracle on the 500 items."""
    lines = []
    for name in names:
        run, test = choices["runs"][name], choices["runs"][name]["test"]
        split = "—" if test["multi-piece"] is None else f"{test['multi-piece']:.2f} ({test['multi-piece items']})"
        lines.append(f"{name:30} {run['entries']:7} {run['data']:>6} {run['steps']:6} {run['probability']:5.0%}"
                     f" {run['split']['running']:11.1%} {test['all']:9.3f} {test['one piece']:8.3f} {split:>14}")  # fmt: skip
    return "\n".join(lines)


def change(choices: dict, before: str, after: str, noise: float) -> str:
    """The ratio's change from run ``before`` to run ``after``, read against the seeds' range ``noise``."""
    gap = choices["runs"][after]["test"]["all"] - choices["runs"][before]["test"]["all"]
    return f"{gap:+.3f}, {'beyond' if abs(gap) > noise else 'within'} the seeds' range ({noise:.4f})"


EARLIER_CLASSIFIERS = {"hand features (04)": "sentiment_features", "bag of embeddings (04)": "sentiment_embeddings",
                       "bag, FFNN-LM embeddings (04)": "sentiment_pretrained",
                       "ELMo mix, frozen (06)": "elmo_sentiment"}  # fmt: skip


@torch.no_grad()
def earlier_accuracy(name: str, turning: torch.Tensor) -> tuple[float, float, float]:
    """Accuracy of a notebook 04/06 review classifier on the test reviews: all, plain, and the but/not ones
    (``turning``, a (reviews,) bool mask)."""
    x, labels = lm_zoo.review_tensors("test", lm_zoo.ALL_RECIPES[name][0])
    right = load(name)(x)[0].argmax(-1) == labels
    return right.double().mean().item(), right[~turning].double().mean().item(), right[turning].double().mean().item()


def fine_tuning_spread(*keys) -> Spread:
    """A section 5 measurement over the three pretraining seeds, each BERT fine-tuned with its own seed."""
    return spread(seed_values("bert_mlm", "fine-tuning", *keys))


def accuracy_spreads(labels: str) -> str:
    """Fine-tuned against no pretraining over seeds 0–2, on all test reviews and on the but/not ones (``labels``:
    "sentiment" or "100 labels"), two lines each."""
    lines = []
    for column, index in (("all", 0), ("but/not", 2)):
        tuned, scratch = (fine_tuning_spread(labels, start, index) for start in ("fine-tuned", "no pretraining"))
        judged = verdict(tuned, scratch, ("fine-tuned", "no pretraining"), higher_is_better=True)
        lines += [f"  {column:8} fine-tuned     {tuned.format()}",
                  f"  {'':8} no pretraining {scratch.format()}: {judged}"]  # fmt: skip
    return "\n".join(lines)


def seed_values(model: str, *keys, results: dict | None = None) -> list:
    """One stored value per seed of ``model``'s seed runs, found by ``keys`` in each row (names and list indices):
    ``seed_values("bert_mlm", "test", "all")``."""
    runs = (results or load_results())["runs"]
    values = []
    for name, (run_model, _) in SEED_RUNS.items():
        if run_model == model and name in runs:
            value = runs[name]
            for key in keys:
                value = value[key]
            values.append(value)
    return values


def seed_spreads(results: dict | None = None) -> dict:
    """{model: Spread of its masked NLL ÷ oracle on the 500 items over the stored seeds} for ``SEED_MODELS``."""
    return {model: spread(seed_values(model, "test", "all", results=results)) for model in SEED_MODELS}


def load_results() -> dict:
    """The shipped results: {"command": ..., "runs": {name: row}}."""
    return load_runs(RESULTS_FILE, COMMAND)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS_FILE.name} beside the checkpoints")
    parser.add_argument("--only", nargs="*", default=[*RUNS, *SEED_RUNS],
                        help="the runs to measure (the rest are kept)")  # fmt: skip
    args = parser.parse_args(argv)
    for name in args.only:
        row = measure_seed(name) if name in SEED_RUNS else measure(name)
        print(f"{name:18} {row.get('entries', '')}  {row['test']}  ({row['train_seconds']:.0f} s)", flush=True)
        if args.write:  # after each run: a long one that fails keeps the others
            save_run(RESULTS_FILE, COMMAND, [*RUNS, *SEED_RUNS], name, row)


if __name__ == "__main__":
    main()
