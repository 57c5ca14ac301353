"""The transformer models of notebook 08: their recipes, builders and loaders (``zoo.load`` and the zoo's command).

    python -m course_utils.zoo --notebook 08     # every model -> data/checkpoints/08/
    python -m course_utils.zoo gpt_lm            # only some

The models: ``gpt_lm`` (the GPT-style language model), ``gpt_stream`` (the same, trained on fresh sentences),
``transformer_2x128`` (the encoder–decoder translator,
recipe ``TRANSLATION_RECIPES``), and ``positions_learned`` / ``positions_sinusoidal`` / ``positions_none``
(small LMs trained on sentences cut to 8 tokens, for the positions-beyond-training experiment).

Each checkpoint is safetensors weights + config.json (the model's arguments, the recipe, the training
time, the threads it used and a validation score) + a sha256 manifest (``course_utils.checkpoints``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from functools import partial
from typing import Callable

import torch

from course_utils.checkpoints import CONFIG_FILE, load_checkpoint, save_checkpoint
from course_utils.language import corpus
from course_utils.models import lm
from course_utils.zoo.lm_checkpoints import CHECKPOINT_ROOT, COMMAND, lm_batches
from course_utils.language.vocab import course_vocab, train_ids
from course_utils.models.transformer.positional import POSITIONS, PositionLM, cropped_batches
from course_utils.models.transformer.transformer_lm import CourseGPT
from course_utils.models.transformer.transformer_translation import TransformerTranslator
from course_utils.zoo.translation_checkpoints import train_on_passages, trained_record, vocabularies
from course_utils.training import train
from course_utils.validation import CourseInputError

CHECKPOINT_DIR = CHECKPOINT_ROOT / "08"

# name: (model arguments, training recipe). The shape was chosen by validation perplexity among shapes given
# the same budget, about 2.5 CPU-minutes on one thread: 2 layers x 64 (3600 steps) reached 1.025x the oracle's
# perplexity; 3 x 64 (2700 steps) 1.030x, 4 x 64 (2300) 1.034x, 3 x 96 (1700) 1.037x. Deeper or wider
# models are better per step but slower per step, and in a CPU budget the steps win.
#
# ``gpt_stream`` is the same model trained on fresh sentences (``language.stream``, recipe ``"data": "stream"``)
# instead of the training split: none is seen twice, so it is not limited by the split's 60,000 sentences. On the
# test split: gpt_lm 1.0242x the oracle's perplexity; the stream recipe at 4,500 steps 1.0200x; gpt_stream (9,000
# steps, 496 s on one thread) 1.0145x.
LM_RECIPES = {
    "gpt_lm": ({"n_layer": 2, "n_embd": 64, "n_head": 4, "max_len": 128, "dropout": 0.0},
               {"steps": 4500, "batch_size": 64, "lr": 3e-3, "seed": 0, "clip_grad_norm": 1.0}),
    "gpt_stream": ({"n_layer": 2, "n_embd": 64, "n_head": 4, "max_len": 128, "dropout": 0.0},
                   {"steps": 9000, "batch_size": 64, "lr": 3e-3, "seed": 0, "clip_grad_norm": 1.0, "data": "stream"}),
}  # fmt: skip


def _lm_recipe(name: str) -> tuple[dict, dict]:
    if name not in LM_RECIPES:
        raise CourseInputError(f"unknown transformer LM {name!r}; the models are {', '.join(LM_RECIPES)}")
    return LM_RECIPES[name]


def checkpoint_dir(name: str, directory: Path | str | None = None) -> Path:
    """Where the shipped model ``name`` lives (``directory`` overrides data/checkpoints/08/)."""
    return Path(CHECKPOINT_DIR if directory is None else directory) / name


def build_lm(name: str, seed: int | None = None) -> CourseGPT:
    """A fresh (untrained) GPT of recipe ``name`` over the course vocabulary (``seed`` overrides the recipe's)."""
    config, recipe = _lm_recipe(name)
    return CourseGPT.for_vocab(course_vocab(), seed=recipe["seed"] if seed is None else seed, **config)


def train_lm(name: str = "gpt_lm", *, steps: int | None = None, progress: bool = True, seed: int | None = None):
    """Train the GPT ``name`` by its recipe (``steps`` and ``seed`` override the recipe's; the seed sets the initial
    weights and the batch order); return (model, history)."""
    config, recipe = _lm_recipe(name)
    recipe = recipe if seed is None else {**recipe, "seed": seed}
    model = build_lm(name, seed)
    batches = lm_batches(recipe)
    history = train(model, batches, steps=steps or recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe.get("clip_grad_norm"), progress=progress, description=name)  # fmt: skip
    return model, history


def valid_perplexity(model: torch.nn.Module) -> float:
    """The model's perplexity on the validation split."""
    return lm.evaluate(model, course_vocab(), corpus.load_split("valid")).perplexity


def build_lm_checkpoint(name: str, directory: Path | str | None = None) -> dict:
    """Train the GPT ``name`` by its recipe and save it; return its config (with time and score)."""
    config, recipe = _lm_recipe(name)
    start = time.perf_counter()
    model, history = train_lm(name, progress=False)
    seconds = time.perf_counter() - start
    saved = {"kind": "gpt", "model": model.config(), "recipe": recipe, "train_seconds": round(seconds, 1),
             "torch_threads": torch.get_num_threads(), "final_train_loss": history.final_loss,
             "valid_perplexity": valid_perplexity(model)}  # fmt: skip
    save_checkpoint(model, checkpoint_dir(name, directory), saved)
    return saved


def _existing_dir(name: str, directory) -> Path:
    _lm_recipe(name)
    path = checkpoint_dir(name, directory)
    if not path.is_dir():
        raise CourseInputError(f"{path} is missing; make it with `{COMMAND} {name}`")
    return path


def _load_lm(name: str, directory: Path | str | None = None) -> CourseGPT:
    """A shipped GPT language model, in eval mode; the checkpoint's checksums are verified first."""
    model, _ = load_checkpoint(_existing_dir(name, directory), lambda saved: CourseGPT.from_config(saved["model"]))
    return model.eval()


def lm_checkpoint_config(name: str = "gpt_lm", directory: Path | str | None = None) -> dict:
    """The config.json of a shipped GPT: model arguments, recipe, train_seconds, torch_threads, valid_perplexity."""
    return json.loads((_existing_dir(name, directory) / CONFIG_FILE).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- positions beyond the training lengths

POSITION_LENGTH = 8  # training sentences are cut to their first 8 tokens (<s> and seven words)
POSITION_MODEL = {"d_model": 64, "heads": 4, "layers": 2, "d_ff": 128, "max_len": 64}
POSITION_TRAINING = {"steps": 800, "batch_size": 64, "lr": 3e-3, "seed": 0, "clip_grad_norm": 1.0,
                     "length": POSITION_LENGTH}  # fmt: skip
POSITION_RECIPES = {f"positions_{kind}": {"positions": kind, **POSITION_MODEL} for kind in POSITIONS}


def train_position_lm(name: str, *, steps: int | None = None, progress: bool = True, seed: int | None = None):
    """Train the ``PositionLM`` ``name`` on sentences cut to ``POSITION_LENGTH`` tokens (``seed`` overrides the
    recipe's: initial weights and batch order); return (model, history)."""
    if name not in POSITION_RECIPES:
        raise CourseInputError(f"unknown position model {name!r}; the models are {', '.join(POSITION_RECIPES)}")
    recipe = POSITION_TRAINING if seed is None else {**POSITION_TRAINING, "seed": seed}
    model = PositionLM(len(course_vocab()), seed=recipe["seed"], **POSITION_RECIPES[name])
    batches = cropped_batches(train_ids(), course_vocab(), length=recipe["length"], batch_size=recipe["batch_size"],
                              seed=recipe["seed"])  # fmt: skip
    history = train(model, batches, steps=steps or recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe["clip_grad_norm"], progress=progress, description=name)  # fmt: skip
    return model, history


def build_position_checkpoint(name: str, directory: Path | str | None = None) -> dict:
    """Train the position model ``name`` by its recipe and save it; return its config."""
    start = time.perf_counter()
    model, history = train_position_lm(name)
    saved = {"model": model.config(), "recipe": POSITION_TRAINING, "train_seconds": round(time.perf_counter() - start, 1),
             "torch_threads": torch.get_num_threads(), "final_train_loss": history.final_loss}  # fmt: skip
    save_checkpoint(model, checkpoint_dir(name, directory), saved)
    return saved


def _load_position_lm(name: str, directory: Path | str | None = None) -> PositionLM:
    """The shipped ``PositionLM`` ``name`` (``positions_`` + "learned", "sinusoidal" or "none"), in eval mode."""
    if name not in POSITION_RECIPES:
        raise CourseInputError(f"unknown position model {name!r}; the models are {', '.join(POSITION_RECIPES)}")
    path = checkpoint_dir(name, directory)
    if not path.is_dir():
        raise CourseInputError(f"{path} is missing; make it with `{COMMAND} {name}`")
    model, _ = load_checkpoint(path, lambda saved: PositionLM(**saved["model"]))
    return model


# ---------------------------------------------------------------- the encoder-decoder translator

TRANSFORMER_DIR = CHECKPOINT_ROOT / "08"
# Notebook 07's recipe (the same 2,000 batches of 64, cosine schedule, clipping) with lr 1e-3 instead of 3e-3.
TRAINING = {"steps": 2000, "batch_size": 64, "lr": 1e-3, "seed": 0, "clip_grad_norm": 1.0}
TRANSLATION_RECIPES = {
    "transformer_2x128": {"layers": 2, "d_model": 128, "heads": 4, "ffn_dim": 256, "dropout": 0.0},
}


def _check_name(name: str) -> str:
    if name not in TRANSLATION_RECIPES:
        raise CourseInputError(f"unknown model {name!r}; the models are {', '.join(TRANSLATION_RECIPES)}")
    return name


def build_translator(config: dict) -> TransformerTranslator:
    """A fresh (untrained) transformer with ``config`` (layers, d_model, heads, ffn_dim, dropout)."""
    source_vocab, target_vocab = vocabularies()
    return TransformerTranslator(len(source_vocab), len(target_vocab), pad_id=target_vocab.pad_id,
                                 bos_id=target_vocab.stoi["<s>"], eos_id=target_vocab.stoi["</s>"], **config)  # fmt: skip


def train_translator(name: str, *, steps: int | None = None, progress: bool = True, seed: int | None = None
                     ) -> tuple[TransformerTranslator, object]:  # fmt: skip
    """Train recipe ``name`` on notebook 07's batches (``steps`` and ``seed`` override the recipe; the seed sets the
    initial weights and the batch order); return (model, history)."""
    training = TRAINING if seed is None else {**TRAINING, "seed": seed}
    torch.manual_seed(training["seed"])
    model = build_translator(TRANSLATION_RECIPES[_check_name(name)])
    return model, train_on_passages(model, training, name=name, steps=steps, progress=progress)


def build_translation_checkpoint(name: str, directory: Path | str | None = None) -> dict:
    """Train ``name`` and save it to ``data/checkpoints/08/<name>/``; return its config (time, validation scores)."""
    start = time.perf_counter()
    model, history = train_translator(name)
    saved = trained_record(model, history, TRANSLATION_RECIPES[name], TRAINING, time.perf_counter() - start)
    save_checkpoint(model, Path(directory or TRANSFORMER_DIR) / name, saved)
    return saved


def _load_translation_model(name: str, directory: Path | str | None = None) -> TransformerTranslator:
    """A shipped transformer translator, in eval mode; its checksums are verified first."""
    path = Path(directory or TRANSFORMER_DIR) / _check_name(name)
    if not path.is_dir():
        raise CourseInputError(f"{path} is missing; make it with `{COMMAND} {name}`")
    model, _ = load_checkpoint(path, lambda saved: build_translator(saved["model"]))
    return model


def translation_checkpoint_config(name: str, directory: Path | str | None = None) -> dict:
    """The saved config of a shipped transformer: recipe, training time, validation scores."""
    path = Path(directory or TRANSFORMER_DIR) / _check_name(name) / "config.json"
    return json.loads(path.read_text(encoding="utf-8"))


# name -> a function that trains and saves that model into a folder (None: data/checkpoints/08/), and one that loads it
BUILDERS: dict[str, Callable[[Path | None], dict]] = {
    **{name: partial(build_lm_checkpoint, name) for name in LM_RECIPES},
    **{name: partial(build_translation_checkpoint, name) for name in TRANSLATION_RECIPES},
    **{name: partial(build_position_checkpoint, name) for name in POSITION_RECIPES},
}
LOADERS: dict[str, Callable[[Path | None], torch.nn.Module]] = {
    **{name: partial(_load_lm, name) for name in LM_RECIPES},
    **{name: partial(_load_translation_model, name) for name in TRANSLATION_RECIPES},
    **{name: partial(_load_position_lm, name) for name in POSITION_RECIPES},
}
