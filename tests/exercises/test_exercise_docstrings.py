"""A check's docstring says what to write, never the answer: Shift-Tab and help() show it to the student."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import course_utils.exercises as exercises

SHARED = {"answers", "grading", "probes"}  # shared by the wing (answers) or the grader (grading, probes); the rest:
# one notebook each
MODULES = [
    importlib.import_module(f"course_utils.exercises.{m.name}")
    for m in pkgutil.iter_modules(exercises.__path__)
    if m.name not in SHARED
]
CHECKS = [(module.__name__, name, fn) for module in MODULES for name, fn in vars(module).items()
          if name.startswith("check_") and inspect.isfunction(fn) and fn.__module__ == module.__name__]  # fmt: skip
GIVES_AWAY = re.compile(r"correct answer|solution|answer::", re.I)


def test_every_exercise_module_has_checks():
    assert {name for name, _, _ in CHECKS} == {module.__name__ for module in MODULES}


@pytest.mark.parametrize("module, name, fn", CHECKS, ids=[f"{m.rsplit('.', 1)[-1]}.{n}" for m, n, _ in CHECKS])
def test_no_docstring_gives_the_answer(module, name, fn):
    for text in (inspect.getdoc(fn) or "", inspect.getdoc(importlib.import_module(module)) or ""):
        assert not GIVES_AWAY.search(text), f"{module}.{name}: {GIVES_AWAY.search(text).group(0)!r} in its docstring"
