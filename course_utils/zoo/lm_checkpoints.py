"""The trained models of notebooks 04-06: their recipes, builders and loaders (``zoo.load`` and the zoo's command).

    python -m course_utils.zoo --notebook 04      # notebook 04's models -> data/checkpoints/04/
    python -m course_utils.zoo ffnn_n3            # only some
    python -m course_utils.zoo --notebook 05_06   # notebooks 05-06 -> data/checkpoints/05_06/

Each checkpoint is safetensors weights + config.json (the model's arguments, the recipe, the
training time and the validation score) + a sha256 manifest (``course_utils.checkpoints``).
N-gram models are not shipped: counting the training split takes seconds and gives the same
tables every time.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import torch

from course_utils.language import corpus, stream
from course_utils.models import lm
from course_utils.checkpoints import load_checkpoint, save_checkpoint
from course_utils.models.classic.window_mlm import WindowMaskedLM, example_batches, masked_examples
from course_utils.models.classic.neural_lm import FeedForwardLM
from course_utils.models.classic.ngram import NGramLM
from course_utils.models.classic.sentiment import (
    EmbeddingClassifier,
    FeatureClassifier,
    SentimentLexicon,
    feature_matrix,
    pad_batch,
)
from course_utils.language.vocab import course_vocab, train_ids
from course_utils.training import train
from course_utils.validation import CourseInputError, check_choice

CHECKPOINT_ROOT = Path(__file__).resolve().parents[2] / "data" / "checkpoints"
COMMAND = "python -m course_utils.zoo"  # the zoo's one command: trains and ships checkpoints by name
CHECKPOINT_DIR = CHECKPOINT_ROOT / "04"  # notebook 04's models
RECURRENT_DIR = CHECKPOINT_ROOT / "05_06"  # notebooks 05 and 06: recurrent models
FFNN = {"embed_dim": 64, "hidden_dim": 256}
FFNN_TRAINING = {"steps": 1500, "batch_size": 64, "lr": 3e-3, "seed": 0}
MASKED_TRAINING = {"steps": 1500, "batch_size": 256, "lr": 3e-3, "seed": 0}
SENTIMENT_TRAINING = {"steps": 600, "batch_size": 64, "lr": 1e-2, "seed": 0}
RECIPES = {
    "ffnn_n2": ("ffnn", {"context_size": 2, **FFNN}, FFNN_TRAINING),
    "ffnn_n3": ("ffnn", {"context_size": 3, **FFNN}, FFNN_TRAINING),
    "ffnn_n5": ("ffnn", {"context_size": 5, **FFNN}, FFNN_TRAINING),
    "masked_concat_w2": ("masked", {"width": 2, "combine": "concat", **FFNN}, MASKED_TRAINING),
    "masked_bag_w2": ("masked", {"width": 2, "combine": "bag", **FFNN}, MASKED_TRAINING),
    "masked_concat_w4": ("masked", {"width": 4, "combine": "concat", **FFNN}, MASKED_TRAINING),
    "sentiment_features": ("features", {"n_features": 6, "hidden_dim": 16}, SENTIMENT_TRAINING),
    "sentiment_embeddings": ("embeddings", {"embed_dim": 64, "hidden_dim": 16}, SENTIMENT_TRAINING),
    # the same classifier, its embeddings started from the trained ffnn_n5's: "benefit 2" of a neural LM
    "sentiment_pretrained": (
        "embeddings",
        {"embed_dim": 64, "hidden_dim": 16},
        {**SENTIMENT_TRAINING, "init_embeddings": "ffnn_n5"},
    ),
}


# The comparison of notebooks 05-06: the same small hidden state and the same budget for every cell.
RNN = {"embed_dim": 64, "hidden_dim": 128, "max_len": 128}
RNN_TRAINING = {"steps": 3000, "batch_size": 64, "lr": 3e-3, "seed": 0}
# The same comparison with twice the hidden state (and clipping): the RNN catches up on this language.
RNN_WIDE = {**RNN, "hidden_dim": 256}
RNN_WIDE_TRAINING = {"steps": 1500, "batch_size": 64, "lr": 3e-3, "seed": 0, "clip_grad_norm": 1.0}
BIDIRECTIONAL_TRAINING = {"steps": 1500, "batch_size": 64, "lr": 3e-3, "seed": 0, "clip_grad_norm": 1.0}
RECURRENT_RECIPES = {
    "rnn_lm": ("recurrent", {"cell": "rnn", **RNN}, RNN_TRAINING),
    "gru_lm": ("recurrent", {"cell": "gru", **RNN}, RNN_TRAINING),
    "lstm_lm": ("recurrent", {"cell": "lstm", **RNN}, RNN_TRAINING),
    "lstm2_lm": ("recurrent", {"cell": "lstm", "num_layers": 2, **RNN}, RNN_TRAINING),
    "rnn_wide_lm": ("recurrent", {"cell": "rnn", **RNN_WIDE}, RNN_WIDE_TRAINING),
    "lstm_wide_lm": ("recurrent", {"cell": "lstm", **RNN_WIDE}, RNN_WIDE_TRAINING),
    # notebook 06's LSTM with the streamed GPT's data budget (notebook 08's gpt_stream): 9,000 batches of 64 fresh
    # sentences from language.stream, none seen twice. Does the transformer still win when neither is data-bound?
    "lstm_stream": ("recurrent", {"cell": "lstm", **RNN}, {**RNN_TRAINING, "steps": 9000, "data": "stream"}),
    "masked_bilstm": ("masked_bilstm", {"embed_dim": 64, "hidden_dim": 128, "max_len": 128}, BIDIRECTIONAL_TRAINING),
    "elmo": ("elmo", {"embed_dim": 64, "hidden_dim": 128, "num_layers": 2, "max_len": 128}, BIDIRECTIONAL_TRAINING),
    "elmo_sentiment": ("elmo_classifier", {"n_classes": 2, "hidden": 32},
                       {**SENTIMENT_TRAINING, "steps": 3000, "init_from": "elmo"}),  # frozen features: slower to fit
}  # fmt: skip
ALL_RECIPES = {**RECIPES, **RECURRENT_RECIPES}


def _recipe(name: str) -> tuple[str, dict, dict]:
    if name not in ALL_RECIPES:
        raise CourseInputError(f"unknown model {name!r}; the models are {', '.join(ALL_RECIPES)}")
    return ALL_RECIPES[name]


def checkpoint_dir(name: str, directory: Path | str | None = None) -> Path:
    """Where the shipped model ``name`` lives (``directory`` overrides the notebook's folder)."""
    _recipe(name)
    if directory is None:
        directory = CHECKPOINT_DIR if name in RECIPES else RECURRENT_DIR
    return Path(directory) / name


def ngram_models(orders=(1, 2, 3), smoothing: str = "interpolated-kn") -> dict[str, NGramLM]:
    """Unigram, bigram, trigram models counted on the training split."""
    names = {1: "unigram", 2: "bigram", 3: "trigram"}
    return {names.get(n, f"{n}-gram"): NGramLM(course_vocab(), n, smoothing=smoothing).fit(train_ids()) for n in orders}


# ---------------------------------------------------------------- building models from a config


def build_model(kind: str, config: dict) -> torch.nn.Module:
    """A fresh (untrained) model of ``kind`` with ``config``."""
    vocab = course_vocab()
    if kind == "ffnn":
        return FeedForwardLM(len(vocab), bos_id=vocab.bos_id, **config)
    if kind == "masked":
        return WindowMaskedLM(len(vocab), pad_id=vocab.pad_id, **config)
    if kind == "features":
        return FeatureClassifier(**config)
    if kind == "embeddings":
        return EmbeddingClassifier(len(vocab), pad_id=vocab.pad_id, **config)
    from course_utils.models.recurrent import recurrent_lm as rl

    if kind == "recurrent":
        return rl.RecurrentLM(len(vocab), **config)
    if kind == "masked_bilstm":
        return rl.MaskedBiLSTM(len(vocab), pad_id=vocab.pad_id, **config)
    if kind == "elmo":
        return rl.ElmoLM(len(vocab), pad_id=vocab.pad_id, **config)
    if kind == "elmo_classifier":
        elmo = build_model("elmo", _recipe("elmo")[1])
        return rl.ElmoClassifier(elmo, **config)
    raise CourseInputError(f"unknown model kind {kind!r}")


def train_model(name: str, *, steps: int | None = None, seed: int | None = None, progress: bool = True):
    """Train the model ``name`` by its recipe (``steps`` and ``seed`` override the recipe's); return (model, history)."""
    kind, config, recipe = _recipe(name)
    recipe = recipe if seed is None else {**recipe, "seed": seed}  # another draw of the same recipe
    torch.manual_seed(recipe["seed"])
    model = build_model(kind, config)
    if "init_embeddings" in recipe:
        start_from_pretrained(model, _load_model(recipe["init_embeddings"]))
    if "init_from" in recipe:  # a classifier on a frozen, already trained model
        model.elmo.load_state_dict(_load_model(recipe["init_from"]).state_dict())
    batches = _batches(kind, config, recipe)
    history = train(model, batches, steps=steps or recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe.get("clip_grad_norm"), progress=progress, description=name)  # fmt: skip
    return model, history


def start_from_pretrained(classifier: torch.nn.Module, language_model: torch.nn.Module) -> None:
    """Copy a language model's embeddings into ``classifier``, rescaled to the classifier's initial size.

    Only the directions come from the language model: the mean row norm stays that of the random
    initialisation, so a comparison with random embeddings is not a comparison of scales.
    """
    with torch.no_grad():
        source = language_model.embedding.weight  # (V, d)
        size = classifier.embedding.weight.norm(dim=1).mean() / source.norm(dim=1).mean()
        classifier.embedding.weight.copy_(source * size)


LM_DATA = ("train", "stream")  # a language model recipe's "data": the training split (the default) or the stream


def lm_batches(recipe: dict):
    """``step -> (idx, targets)`` for an LM recipe: shuffled epochs of the training split, or the stream's batch
    ``step`` of fresh sentences (``"data": "stream"``)."""
    data = check_choice("data", recipe.get("data", "train"), LM_DATA)
    vocab, batch_size, seed = course_vocab(), recipe["batch_size"], recipe["seed"]
    if data == "train":
        return lm.batch_stream(train_ids(), vocab, batch_size=batch_size, seed=seed)
    fresh = stream.encoded_batches(batch_size=batch_size, seed=seed)
    return lambda step: lm.make_batch(fresh(step), vocab)


def _batches(kind: str, config: dict, recipe: dict):
    vocab, size, seed = course_vocab(), recipe["batch_size"], recipe["seed"]
    if kind in ("ffnn", "recurrent", "elmo"):
        return lm_batches(recipe)
    if kind == "masked_bilstm":
        from course_utils.models.recurrent.recurrent_lm import masked_batches

        return masked_batches(train_ids(), vocab, batch_size=size, seed=seed)
    if kind == "masked":
        windows, targets = masked_examples(train_ids(), vocab, config["width"])
        return example_batches(windows, targets, batch_size=size, seed=seed)
    x, labels = review_tensors("train", kind)
    return example_batches(x, labels, batch_size=size, seed=seed)


def review_tensors(split: str, kind: str):
    """Reviews of ``split`` as model inputs (hand features or padded ids) and labels (1 = positive)."""
    items = corpus.load_eval(f"reviews_{split}")
    labels = torch.tensor([item["label"] == "pos" for item in items], dtype=torch.long)  # (n,)
    if kind == "features":
        return feature_matrix([item["words"] for item in items], review_lexicon()), labels  # (n, 6)
    vocab = course_vocab()
    ids = [vocab.encode(item["words"]) for item in items]
    if kind == "elmo_classifier":  # framed as ELMo read its training sentences
        from course_utils.models.recurrent.recurrent_lm import frame_sentences

        return frame_sentences(ids, vocab), labels  # (n, T)
    return pad_batch(ids, vocab.pad_id), labels  # (n, T)


def review_lexicon() -> SentimentLexicon:
    """The lecture's positive and negative lexicons, for the course language's reviews."""
    from course_utils.language import lexicon as lx

    return SentimentLexicon(positive=set(lx.POSITIVE) | set(lx.LOVE_VERBS["pos"]) | {"love"},
                            negative=set(lx.NEGATIVE) | set(lx.LOVE_VERBS["neg"]) | {"hate"})  # fmt: skip


def validation_score(kind: str, model: torch.nn.Module) -> dict:
    """Perplexity on the validation split (LMs), loss of the masked word, or accuracy (classifiers)."""
    vocab = course_vocab()
    model.eval()
    with torch.no_grad():
        if kind in ("ffnn", "recurrent", "elmo"):
            return {"valid_perplexity": lm.evaluate(model, vocab, corpus.load_split("valid")).perplexity}
        if kind == "masked_bilstm":
            from course_utils.models.recurrent.recurrent_lm import masked_batches

            ids = lm.encode_sentences(vocab, corpus.load_split("valid"))
            _, loss = model(*masked_batches(ids, vocab, batch_size=len(ids), seed=0)(0))
            return {"valid_masked_nll": float(loss)}
        if kind == "masked":
            ids = lm.encode_sentences(vocab, corpus.load_split("valid"))
            _, loss = model(*masked_examples(ids, vocab, model.width))
            return {"valid_masked_nll": float(loss)}
        x, labels = review_tensors("valid", kind)
        logits, _ = model(x)
        return {"valid_accuracy": float((logits.argmax(-1) == labels).double().mean())}


def build_checkpoint(name: str, directory: Path | None = None, *, seed: int | None = None) -> dict:
    """Train ``name`` by its recipe (``seed`` overrides the recipe's) and save it; return its config (with time and
    score)."""
    kind, config, recipe = _recipe(name)
    recipe = recipe if seed is None else {**recipe, "seed": seed}
    start = time.perf_counter()
    model, history = train_model(name, seed=seed)
    seconds = time.perf_counter() - start
    saved = {"kind": kind, "model": config, "recipe": recipe, "train_seconds": round(seconds, 1),
             "final_train_loss": history.final_loss, "torch_threads": torch.get_num_threads(),
             **validation_score(kind, model)}  # fmt: skip
    save_checkpoint(model, checkpoint_dir(name, directory), saved)
    return saved


def _load_model(name: str, directory: Path | str | None = None) -> torch.nn.Module:
    """A shipped model, in eval mode; the checkpoint's checksums are verified first."""
    path = checkpoint_dir(name, directory)
    if not path.is_dir():
        raise CourseInputError(f"{path} is missing; make it with `{COMMAND} {name}`")
    model, _ = load_checkpoint(path, lambda saved: build_model(saved["kind"], saved["model"]))
    return model.eval()


def default_demo_models() -> dict[str, torch.nn.Module]:
    """The shipped RNN, GRU and LSTM language models, for the widgets of notebooks 05 and 06."""
    return {label: _load_model(name) for label, name in (("RNN", "rnn_lm"), ("GRU", "gru_lm"), ("LSTM", "lstm_lm"))}


# name -> a function that trains and saves it into a folder (None: its notebook's), and one that loads it from there
BUILDERS = {name: partial(build_checkpoint, name) for name in ALL_RECIPES}
LOADERS = {name: partial(_load_model, name) for name in ALL_RECIPES}
