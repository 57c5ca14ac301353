"""The hidden tests of every exercise, one module per notebook: ``nbNN.py`` holds ``NOTEBOOK`` (the notebook's
stem) and ``EXERCISES`` (its ``HiddenExercise``s, numbered as the notebook's exercises).

Instructor-only: these cases and seeds are not in the student release, so an answer fitted to the self-check's
cases meets inputs it has never seen.
"""

from __future__ import annotations

import importlib
import pkgutil

from grading.spec import HiddenExercise


def hidden_tests() -> dict[str, tuple[HiddenExercise, ...]]:
    """Each notebook's stem → its exercises' hidden tests."""
    tests = {}
    for module in pkgutil.iter_modules(__path__):
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        tests[loaded.NOTEBOOK] = tuple(loaded.EXERCISES)
    return tests
