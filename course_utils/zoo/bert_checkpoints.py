"""Notebook 09's tokenizer and BERTs: their recipes, builders and loaders (``zoo.load`` and the zoo's command).

    python -m course_utils.zoo --notebook 09     # everything -> data/checkpoints/09/
    python -m course_utils.zoo bert_mlm          # only some (a model needs those it starts from)

- ``tokenizer``: WordPiece, 1,000 entries, trained on the training split (``wordpiece``; the size chosen from a measured
  curve, ``analysis.bert_choices``).
- ``bert_mlm``: the tiny BERT (2 layers × 64), pretrained by whole-word masked-language modelling on 8,000 batches of
  fresh sentences (``language.stream``): 1.084× the oracle's masked NLL on notebook 09's 500 test items (the BiLSTM of
  notebook 05: 1.096×). ``analysis.bert_choices`` measured the choices: the same recipe reached 1.067× with another
  training of the tokenizer, 1.088× on 8,000 batches of the training split, 1.124× on 4,000.
- ``bert_reviews``: ``bert_mlm`` after LM fine-tuning on the reviews (masked LM on reviews only).
- ``bert_sentiment``: ``bert_reviews`` after task fine-tuning on the review labels (``bert_finetuning``).
- ``bert_sentiment_scratch``: the same classifier and recipe from random weights: what pretraining buys.
- ``bert_deep``: 6 layers instead of 2, pretrained on the split for about 3 CPU-minutes, for the layer-by-layer
  study. (Given those 3 minutes and the first, 600-entry vocabulary, 2 layers × 64 reached the best masked NLL: 1.30×
  the oracle's on 400 test items, against 1.52× for 4 layers; deeper models are better per step but slower per step,
  as for notebook 08's GPT.)

Each is a Hugging Face directory (``model.safetensors``, ``config.json``, ``tokenizer.json`` …, loadable by
``from_pretrained`` offline) plus the course's ``training.json`` (recipe, seconds, threads, validation score)
and a sha256 ``manifest.sha256`` over every file, checked before loading.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache, partial
from pathlib import Path
from typing import Callable

import torch

from course_utils.checkpoints import verify_checkpoint, write_manifest
from course_utils.language import corpus
from course_utils.models.bert import bert_mlm
from course_utils.models.bert.bert_finetuning import SentimentBERT, review_accuracy, review_batches, review_tensors
from course_utils.zoo.lm_checkpoints import CHECKPOINT_ROOT, COMMAND
from course_utils.models.bert.wordpiece import COURSE_VOCAB_SIZE, load_tokenizer, train_wordpiece
from course_utils.training import train
from course_utils.validation import CourseInputError

CHECKPOINT_DIR = CHECKPOINT_ROOT / "09"
TRAINING_FILE = "training.json"
VALID_ITEMS = 300  # masked items from the validation split for the recorded score

BERT_SHAPE = {"layers": 2, "hidden": 64, "heads": 4, "max_len": 64}
RECIPES = {
    "tokenizer": {"vocab_size": COURSE_VOCAB_SIZE},
    "bert_mlm": {"start": None, "data": "stream", "masking": "whole_word", "probability": 0.15, "steps": 8000,
                 "batch_size": 128, "lr": 4e-3, "seed": 0, "clip_grad_norm": 1.0, **BERT_SHAPE},
    "bert_reviews": {"start": "bert_mlm", "data": "reviews_train", "masking": "whole_word", "steps": 100, "batch_size": 64, "lr": 2e-4,
                     "seed": 0, "clip_grad_norm": 1.0},
    "bert_sentiment": {"start": "bert_reviews", "data": "reviews_train", "steps": 1000, "batch_size": 32, "lr": 1e-3,
                       "seed": 0, "clip_grad_norm": 1.0},
    "bert_sentiment_scratch": {"start": None, "data": "reviews_train", "steps": 1000, "batch_size": 32, "lr": 1e-3,
                               "seed": 0, "clip_grad_norm": 1.0, **BERT_SHAPE},
    "bert_deep": {"start": None, "data": "train", "masking": "whole_word", "steps": 1400, "batch_size": 128, "lr": 3e-3,
                  "seed": 0, "clip_grad_norm": 1.0, **{**BERT_SHAPE, "layers": 6}},
}  # fmt: skip
MASKED_LMS = ("bert_mlm", "bert_reviews", "bert_deep")
SENTIMENT_MODELS = ("bert_sentiment", "bert_sentiment_scratch")  # fine-tuned from bert_reviews; from random weights


def _recipe(name: str) -> dict:
    if name not in RECIPES:
        raise CourseInputError(f"unknown checkpoint {name!r}; the checkpoints are {', '.join(RECIPES)}")
    return RECIPES[name]


def checkpoint_dir(name: str, directory: Path | str | None = None) -> Path:
    """Where the shipped ``name`` lives (``directory`` overrides data/checkpoints/09/)."""
    _recipe(name)
    return Path(CHECKPOINT_DIR if directory is None else directory) / name


def _existing(name: str, directory) -> Path:
    path = checkpoint_dir(name, directory)
    if not path.is_dir():
        raise CourseInputError(f"{path} is missing; make it with `{COMMAND} {name}`")
    verify_checkpoint(path)
    return path


def training_record(name: str, directory: Path | str | None = None) -> dict:
    """The course's ``training.json`` of a shipped checkpoint: recipe, train_seconds, torch_threads, scores."""
    return json.loads((_existing(name, directory) / TRAINING_FILE).read_text(encoding="utf-8"))


def _save(directory: Path, hf_object, tokenizer, record: dict) -> dict:
    """``save_pretrained`` the model (or nothing) and the tokenizer, then the record and the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    if hf_object is not None:
        hf_object.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    (directory / TRAINING_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    names = sorted(p.name for p in directory.iterdir() if p.is_file() and p.name != "manifest.sha256")
    write_manifest(directory, names)
    return record


# ---------------------------------------------------------------- loading


@lru_cache(maxsize=4)
def _cached_tokenizer(path: str):
    return load_tokenizer(path)


def _load_tokenizer(directory: Path | str | None = None):
    """The shipped WordPiece tokenizer (a ``BertTokenizerFast``), loaded offline."""
    return _cached_tokenizer(str(_existing("tokenizer", directory)))


def _load_bert(name: str, directory: Path | str | None = None) -> bert_mlm.CourseBERT:
    """A shipped masked-LM BERT (``bert_mlm`` or ``bert_reviews``) as a ``CourseBERT``, in eval mode."""
    from transformers import BertForMaskedLM

    if name not in MASKED_LMS:
        raise CourseInputError(f"{name!r} is not a masked LM; the masked LMs are {', '.join(MASKED_LMS)}")
    path = _existing(name, directory)
    model = bert_mlm.CourseBERT.__new__(bert_mlm.CourseBERT)
    torch.nn.Module.__init__(model)
    model.hf = BertForMaskedLM.from_pretrained(path, local_files_only=True, attn_implementation=bert_mlm.ATTENTION)
    model.pad_id = model.hf.config.pad_token_id
    return model.eval()


def _load_sentiment(name: str, directory: Path | str | None = None) -> SentimentBERT:
    """A shipped sentiment classifier (``bert_sentiment`` or, without pretraining, ``bert_sentiment_scratch``)."""
    from transformers import BertForSequenceClassification

    if name not in SENTIMENT_MODELS:
        raise CourseInputError(f"{name!r} is not a sentiment model; they are {', '.join(SENTIMENT_MODELS)}")
    path = _existing(name, directory)
    model = SentimentBERT.__new__(SentimentBERT)
    torch.nn.Module.__init__(model)
    model.hf = BertForSequenceClassification.from_pretrained(path, local_files_only=True, attn_implementation="eager")
    model.pad_id = model.hf.config.pad_token_id
    return model.eval()


# ---------------------------------------------------------------- training


def _sentences(data: str) -> list[list[str]]:
    return (
        corpus.load_split(data) if data in ("train", "valid", "test") else [r["words"] for r in corpus.load_eval(data)]
    )


def masked_batches(recipe: dict, tokenizer):
    """A masked-LM recipe's batches: whole-word masking (rate ``"probability"``, default 15 %) on fresh sentences
    (``"data": "stream"``) or on a fixed set of sentences; or the library's token masking."""
    size, seed, probability = recipe["batch_size"], recipe["seed"], recipe.get("probability", 0.15)
    if recipe["data"] == "stream":
        return bert_mlm.stream_whole_word_batches(tokenizer, batch_size=size, seed=seed, probability=probability)
    sentences = _sentences(recipe["data"])
    if recipe["masking"] == "whole_word":
        return bert_mlm.whole_word_batches(sentences, tokenizer, batch_size=size, seed=seed, probability=probability)
    return bert_mlm.mlm_batches(bert_mlm.encode_sentences(tokenizer, sentences), tokenizer, batch_size=size, seed=seed)


def train_masked_lm(
    name: str = "bert_mlm", *, steps: int | None = None, seed: int | None = None, tokenizer=None, start=None,
    progress: bool = True,
):  # fmt: skip
    """Train the masked LM ``name`` by its recipe (``steps``, ``seed`` override it); return (model, history).

    ``bert_mlm`` starts from random weights; ``bert_reviews`` from ``start`` (default: the shipped ``bert_mlm``).
    """
    recipe = _recipe(name) if seed is None else {**_recipe(name), "seed": seed}  # another draw of the same recipe
    if name not in MASKED_LMS:
        raise CourseInputError(f"{name!r} is not a masked LM; the masked LMs are {', '.join(MASKED_LMS)}")
    tokenizer = tokenizer or _load_tokenizer()
    if recipe["start"] is None:
        config = bert_mlm.bert_config(tokenizer, **{k: recipe[k] for k in ("layers", "hidden", "heads", "max_len")})
        model = bert_mlm.CourseBERT(config, seed=recipe["seed"])
    else:
        model = start or _load_bert(recipe["start"])
    batches = masked_batches(recipe, tokenizer)
    history = train(model, batches, steps=steps or recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe["clip_grad_norm"], progress=progress, description=name)  # fmt: skip
    return model, history


def train_sentiment(name: str = "bert_sentiment", *, steps: int | None = None, seed: int | None = None,
                    tokenizer=None, start=None, progress: bool = True):  # fmt: skip
    """Fine-tune the ``SentimentBERT`` ``name`` (from ``start``, default its recipe's; ``seed`` overrides the
    recipe's); return (model, history)."""
    if name not in SENTIMENT_MODELS:
        raise CourseInputError(f"{name!r} is not a sentiment model; they are {', '.join(SENTIMENT_MODELS)}")
    recipe = _recipe(name) if seed is None else {**_recipe(name), "seed": seed}
    tokenizer = tokenizer or _load_tokenizer()
    if recipe["start"] is None:
        config = bert_mlm.bert_config(tokenizer, **{k: recipe[k] for k in ("layers", "hidden", "heads", "max_len")})
        model = SentimentBERT(config, seed=recipe["seed"])
    else:
        model = SentimentBERT.from_masked_lm(start or _load_bert(recipe["start"]), seed=recipe["seed"])
    x, labels = review_tensors(tokenizer, corpus.load_eval(recipe["data"]))
    batches = review_batches(x, labels, batch_size=recipe["batch_size"], seed=recipe["seed"])
    history = train(model, batches, steps=steps or recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe["clip_grad_norm"], progress=progress, description=name)  # fmt: skip
    return model, history


def valid_masked_ratio(model: bert_mlm.CourseBERT, tokenizer, data: str = "valid") -> float:
    """exp(masked NLL − the oracle's) on ``VALID_ITEMS`` masked words of ``data`` (validation sentences or reviews)."""
    from course_utils.language.grammar import CourseLanguage

    lang = CourseLanguage(include_held_out=False)
    items = bert_mlm.masked_items(_sentences(data), VALID_ITEMS, seed=0)
    scorer = bert_mlm.WordScorer(model, tokenizer, sorted(lang.vocabulary))
    oracle = bert_mlm.oracle_scores(lang, items, tokenizer)  # told the piece count, as the model is
    return bert_mlm.nll_ratio(bert_mlm.bert_scores(scorer, items)[0], oracle[0])


def _timed(make: Callable[[], tuple]) -> tuple:
    start = time.perf_counter()
    model, history = make()
    return model, history, round(time.perf_counter() - start, 1)


def build_tokenizer(directory: Path | str | None = None) -> dict:
    recipe = _recipe("tokenizer")
    start = time.perf_counter()
    tokenizer = train_wordpiece(corpus.load_split("train"), recipe["vocab_size"])
    record = {"recipe": recipe, "train_seconds": round(time.perf_counter() - start, 1)}
    _cached_tokenizer.cache_clear()
    return _save(checkpoint_dir("tokenizer", directory), None, tokenizer, record)


def build_masked_lm(name: str, directory: Path | str | None = None) -> dict:
    tokenizer = _load_tokenizer(directory)
    start = None if _recipe(name)["start"] is None else _load_bert(_recipe(name)["start"], directory)
    model, history, seconds = _timed(lambda: train_masked_lm(name, tokenizer=tokenizer, start=start, progress=False))
    record = {"recipe": _recipe(name), "train_seconds": seconds, "torch_threads": torch.get_num_threads(),
              "final_train_loss": history.final_loss,
              "valid_masked_ratio": valid_masked_ratio(model, tokenizer),
              "reviews_valid_masked_ratio": valid_masked_ratio(model, tokenizer, "reviews_valid")}  # fmt: skip
    return _save(checkpoint_dir(name, directory), model.hf, tokenizer, record)


def build_sentiment(name: str, directory: Path | str | None = None) -> dict:
    tokenizer = _load_tokenizer(directory)
    start = None if _recipe(name)["start"] is None else _load_bert(_recipe(name)["start"], directory)
    model, history, seconds = _timed(lambda: train_sentiment(name, tokenizer=tokenizer, start=start, progress=False))
    accuracy = review_accuracy(model, tokenizer, corpus.load_eval("reviews_valid"))
    record = {"recipe": _recipe(name), "train_seconds": seconds, "torch_threads": torch.get_num_threads(),
              "final_train_loss": history.final_loss, "valid_accuracy": dict(zip(("all", "plain", "but/not"), accuracy))}  # fmt: skip
    return _save(checkpoint_dir(name, directory), model.hf, tokenizer, record)


# name -> a function that trains and saves it into a folder (None: data/checkpoints/09/), in dependency order
BUILDERS: dict[str, Callable[[Path | None], dict]] = {
    "tokenizer": build_tokenizer,
    **{name: partial(build_masked_lm, name) for name in MASKED_LMS},
    **{name: partial(build_sentiment, name) for name in SENTIMENT_MODELS},
}
# name -> a function that loads it from a folder (None: data/checkpoints/09/)
LOADERS: dict[str, Callable[[Path | None], object]] = {
    "tokenizer": _load_tokenizer,
    **{name: partial(_load_bert, name) for name in MASKED_LMS},
    **{name: partial(_load_sentiment, name) for name in SENTIMENT_MODELS},
}
