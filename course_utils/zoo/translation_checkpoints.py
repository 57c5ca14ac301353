"""The translation models of notebook 07: their recipes, builders and loaders (``zoo.load`` and the zoo's command).

    python -m course_utils.zoo --notebook 07     # every model -> data/checkpoints/07/
    python -m course_utils.zoo dot_128           # only some

Every model has the same recipe (AdamW, cosine schedule, clipping, the same batches and steps); only the
attention and the hidden size differ. Each checkpoint is safetensors weights + config.json (the model's
arguments, the recipe, the training time, the validation scores) + a sha256 manifest.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache, partial
from pathlib import Path

import torch

from course_utils.checkpoints import load_checkpoint, save_checkpoint
from course_utils.language import parallel
from course_utils.language.text_pipeline import Vocab
from course_utils.models.recurrent import seq2seq as s2s
from course_utils.evaluation import translation_metrics as metrics
from course_utils.training import train
from course_utils.validation import CourseInputError
from course_utils.zoo.lm_checkpoints import CHECKPOINT_ROOT, COMMAND

TRANSLATION_DIR = CHECKPOINT_ROOT / "07"
TRAINING = {"steps": 2000, "batch_size": 64, "lr": 3e-3, "seed": 0, "clip_grad_norm": 1.0}
LABELS = {None: "no attention", "additive": "additive", "dot": "dot", "general": "general"}
HIDDEN_SIZES = (32, 64, 128, 256)  # the bottleneck sweep; 128 is the main comparison's size


def _name(attention: str | None, hidden: int) -> str:
    return f"{attention or 'none'}_{hidden}"


RECIPES = {_name(attention, 128): {"attention": attention, "embed_dim": 64, "hidden_dim": 128}
           for attention in LABELS}  # fmt: skip
RECIPES.update({_name(attention, hidden): {"attention": attention, "embed_dim": 64, "hidden_dim": hidden}
                for attention in (None, "dot") for hidden in HIDDEN_SIZES if hidden != 128})  # fmt: skip


def model_name(attention: str | None = None, hidden: int = 128) -> str:
    """The checkpoint name of a model: ``model_name("dot", 64) == "dot_64"``."""
    name = _name(attention, hidden)
    if name not in RECIPES:
        raise CourseInputError(f"no shipped model with attention={attention!r} and hidden={hidden}; "
                               f"the models are {', '.join(RECIPES)}")  # fmt: skip
    return name


@lru_cache(maxsize=1)
def vocabularies() -> tuple[Vocab, Vocab]:
    """The source and target vocabularies: every word the translatable fragment can produce (fixed ids)."""
    source, target = parallel.vocabularies()
    return Vocab(source), Vocab(target)


def build_model(config: dict) -> s2s.Seq2Seq:
    """A fresh (untrained) model with ``config`` ("attention", "embed_dim", "hidden_dim")."""
    source_vocab, target_vocab = vocabularies()
    return s2s.Seq2Seq(len(source_vocab), len(target_vocab), pad_id=target_vocab.pad_id,
                       bos_id=target_vocab.stoi["<s>"], eos_id=target_vocab.stoi["</s>"], **config)  # fmt: skip


def train_model(name: str, *, steps: int | None = None, progress: bool = True, seed: int | None = None
                ) -> tuple[s2s.Seq2Seq, object]:  # fmt: skip
    """Train model ``name`` by the recipe (``steps`` and ``seed`` override it; the seed sets the initial weights and
    the batch order); return (model, history)."""
    if name not in RECIPES:
        raise CourseInputError(f"unknown model {name!r}; the models are {', '.join(RECIPES)}")
    training = TRAINING if seed is None else {**TRAINING, "seed": seed}
    torch.manual_seed(training["seed"])
    model = build_model(RECIPES[name])
    return model, train_on_passages(model, training, name=name, steps=steps, progress=progress)


def train_on_passages(model, training: dict, *, name: str, steps: int | None = None, progress: bool = True):
    """Train any translator on the training passages by ``training``'s recipe (``steps`` overrides it); the history."""
    source_vocab, target_vocab = vocabularies()
    batches = s2s.batch_stream(parallel.load("train"), source_vocab, target_vocab,
                               batch_size=training["batch_size"], seed=training["seed"])  # fmt: skip
    return train(model, batches, steps=steps or training["steps"], lr=training["lr"], schedule="cosine",
                 clip_grad_norm=training["clip_grad_norm"], progress=progress, description=name)  # fmt: skip


SCORE_NAMES = ("bleu", "exact_match", "token_accuracy")


def scores(model: s2s.Seq2Seq, pairs) -> dict[str, float]:
    """BLEU (0–100), exact match and token accuracy of greedy translations of ``pairs``, and the mean length in
    tokens of the translations ("output_length") and of the references ("reference_length")."""
    source_vocab, target_vocab = vocabularies()
    hypotheses = s2s.translate_words(model, source_vocab, target_vocab, [p.source for p in pairs])
    references = [p.target for p in pairs]
    return {"bleu": metrics.bleu(hypotheses, references).score,
            "exact_match": metrics.exact_match(hypotheses, references),
            "token_accuracy": metrics.token_accuracy(hypotheses, references),
            "output_length": sum(map(len, hypotheses)) / len(hypotheses),
            "reference_length": sum(map(len, references)) / len(references)}  # fmt: skip


def build_checkpoint(name: str, directory: Path | None = None) -> dict:
    """Train ``name`` and save it; return its config (with time and validation scores)."""
    start = time.perf_counter()
    model, history = train_model(name)
    saved = trained_record(model, history, RECIPES[name], TRAINING, time.perf_counter() - start)
    save_checkpoint(model, Path(directory or TRANSLATION_DIR) / name, saved)
    return saved


def trained_record(model, history, model_config: dict, training: dict, seconds: float) -> dict:
    """A translator's config.json: its arguments, the recipe, time, threads and validation scores."""
    valid = scores(model, parallel.load("valid"))
    return {"model": model_config, "recipe": training, "train_seconds": round(seconds, 1),
            "final_train_loss": history.final_loss, "torch_threads": torch.get_num_threads(),
            **{f"valid_{key}": valid[key] for key in SCORE_NAMES}}  # fmt: skip


def _load_translator(name: str, directory: Path | str | None = None) -> s2s.Seq2Seq:
    """A shipped translation model, in eval mode; its checksums are verified first."""
    if name not in RECIPES:
        raise CourseInputError(f"unknown model {name!r}; the models are {', '.join(RECIPES)}")
    path = Path(directory or TRANSLATION_DIR) / name
    if not path.is_dir():
        raise CourseInputError(f"{path} is missing; make it with `{COMMAND} {name}`")
    model, _ = load_checkpoint(path, lambda saved: build_model(saved["model"]))
    return model


def checkpoint_config(name: str, directory: Path | str | None = None) -> dict:
    """The saved config of a shipped model: recipe, training time, validation scores."""
    return json.loads((Path(directory or TRANSLATION_DIR) / name / "config.json").read_text(encoding="utf-8"))


# name -> a function that trains and saves it into a folder (None: data/checkpoints/07/), and one that loads it
BUILDERS = {name: partial(build_checkpoint, name) for name in RECIPES}
LOADERS = {name: partial(_load_translator, name) for name in RECIPES}
