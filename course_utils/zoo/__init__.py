"""The zoo wing: the course's trained models, one loader and one command for all of them.

    from course_utils import zoo
    zoo.load("rnn_lm")                        # any shipped model (or the tokenizer), by its checkpoint name
    python -m course_utils.zoo gpt_lm         # train it again by its recipe -> data/checkpoints/08/gpt_lm/

A name is the checkpoint's folder name under ``data/checkpoints/<notebook>/``; ``names()`` lists them all.

- ``__main__``: the command line: train and ship checkpoints by name or by notebook.
- ``lm_checkpoints``: notebooks 04-06: the feed-forward, window and recurrent LMs, ELMo, the sentiment classifiers.
- ``translation_checkpoints``: notebook 07: the GRU translators, with and without attention.
- ``transformer_checkpoints``: notebook 08: the GPT, the position LMs and the transformer translator.
- ``bert_checkpoints``: notebook 09: the WordPiece tokenizer and the BERTs.
"""

from __future__ import annotations

import difflib

from pathlib import Path

from course_utils.validation import CourseInputError
from course_utils.zoo import bert_checkpoints, lm_checkpoints, transformer_checkpoints, translation_checkpoints

# notebook -> the names of its checkpoints, in build order (a model may start from one before it)
NOTEBOOKS: dict[str, tuple[str, ...]] = {
    "04": tuple(lm_checkpoints.RECIPES),
    "05_06": tuple(lm_checkpoints.RECURRENT_RECIPES),
    "07": tuple(translation_checkpoints.BUILDERS),
    "08": tuple(transformer_checkpoints.BUILDERS),
    "09": tuple(bert_checkpoints.BUILDERS),
}
_MODULES = (lm_checkpoints, translation_checkpoints, transformer_checkpoints, bert_checkpoints)
_LOADERS = {name: loader for module in _MODULES for name, loader in module.LOADERS.items()}
_BUILDERS = {name: builder for module in _MODULES for name, builder in module.BUILDERS.items()}


def names() -> list[str]:
    """Every checkpoint name, notebook by notebook."""
    return [name for group in NOTEBOOKS.values() for name in group]


def _known(name: str) -> str:
    if name not in _LOADERS:
        close = difflib.get_close_matches(str(name), names(), n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise CourseInputError(
            f"unknown checkpoint {name!r}; {hint}zoo.names() lists all {len(names())} "
            "(or run python -m course_utils.zoo --list)"
        )
    return name


def load(name: str, directory: Path | str | None = None):
    """The shipped model ``name`` (or the ``tokenizer``), ready to use; its checksums are verified first.

    ``directory`` holds the checkpoint's folder (default: ``data/checkpoints/<notebook>/``).
    """
    return _LOADERS[_known(name)](directory)


def build(name: str, directory: Path | str | None = None) -> dict:
    """Train ``name`` by its recipe and save it (into ``directory``, default its notebook's); return its record."""
    return _BUILDERS[_known(name)](directory)
