"""No check names the course code that computes its answer: a student who reads the name calls it and passes.

A check's docstring, its module's docstring and every line it prints, for right and for wrong answers, must not name a
function or class of ``course_utils.models``, ``course_utils.evaluation`` or ``course_utils.analysis`` that the check's
module imports (directly, or as an attribute of a module it imports). They say what is computed instead.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import course_utils.exercises as exercises

REFERENCE_PACKAGES = ("course_utils.models", "course_utils.evaluation", "course_utils.analysis")
# Names the exercise itself hands the student, so that saying them gives nothing away: 02's softplus must build and
# return a ``Value`` (the notebook's own engine), 03's exercise differentiates tanh, the function named tanh, and
# 11's split takes an argument named flops (the budget).
INTERFACE = {"backprop": {"Value"}, "activations": {"tanh"}, "scaling": {"flops"}}
MODULES = [module for module in (importlib.import_module(f"course_utils.exercises.{m.name}")
                                 for m in pkgutil.iter_modules(exercises.__path__))
           if any(name.startswith("check_") for name in vars(module))]  # the checks' modules, one per notebook  # fmt: skip
HERE = Path(__file__).parent


def _is_reference(value) -> bool:
    return (inspect.isfunction(value) or inspect.isclass(value)) and getattr(value, "__module__", "").startswith(
        REFERENCE_PACKAGES
    )


def reference_names(module) -> set[str]:
    """The functions and classes of the reference packages that ``module`` imports, and their own names."""
    names = set()
    for alias, value in vars(module).items():
        if inspect.ismodule(value) and value.__name__.startswith(REFERENCE_PACKAGES):
            names |= {
                name for name, member in vars(value).items() if _is_reference(member) and not name.startswith("_")
            }
        elif _is_reference(value) and getattr(value, "__module__", "") != module.__name__:
            names |= {alias, value.__name__}
    return {name for name in names if not name.startswith("_")} - INTERFACE.get(
        module.__name__.rsplit(".", 1)[-1], set()
    )


def named(text: str, names: set[str]) -> list[str]:
    return sorted(name for name in names if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text))


CHECKS = [(module, fn) for module in MODULES for name, fn in vars(module).items()
          if name.startswith("check_") and inspect.isfunction(fn) and fn.__module__ == module.__name__]  # fmt: skip


@pytest.mark.parametrize(
    "module, check", CHECKS, ids=[f"{m.__name__.rsplit('.', 1)[-1]}.{c.__name__}" for m, c in CHECKS]
)
def test_no_docstring_names_the_reference(module, check):
    names = reference_names(module)
    for text in (inspect.getdoc(check) or "", inspect.getdoc(module) or ""):
        assert not named(text, names), f"{check.__name__}'s docstrings name {named(text, names)}"


def _answers():
    """(check, answer) of the right and wrong answers the checks' own tests hand in, and a few here."""
    pairs = []
    for path in sorted(HERE.glob("test_exercises_*.py")):
        spec = importlib.util.spec_from_file_location(f"_names_{path.stem}", path)
        test_module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = test_module  # answers that look their own module up (a pickled function) find it
        spec.loader.exec_module(test_module)
        pairs += [(check, answer) for check, answer in getattr(test_module, "RIGHT", [])]
        pairs += [(check, answer) for check, answer, *_ in getattr(test_module, "WRONG", [])]
        pairs += [(check, solution) for check, solution in getattr(test_module, "SOLUTIONS", [])]
    return pairs


ANSWERS = _answers()


@pytest.mark.parametrize("check, answer", ANSWERS, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(ANSWERS)])
def test_no_message_names_the_reference(capsys, check, answer):
    module = importlib.import_module(check.__module__)
    check(answer)
    out = capsys.readouterr().out
    assert not named(out, reference_names(module)), out


def test_every_module_is_probed_and_the_test_can_fail():
    assert {importlib.import_module(c.__module__) for c, _ in ANSWERS} >= set(MODULES) - {
        importlib.import_module(f"course_utils.exercises.{name}") for name in ("regression", "backprop", "activations")
    }
    assert named("your step matches elman_step on 3 cases", {"elman_step"}) == ["elman_step"]
    assert named("a RecurrentLM's count", {"RecurrentLM"}) == ["RecurrentLM"]
    assert not named("sacrebleu's BLEU", {"bleu"}) and not named("F.softmax", {"softmax"})
