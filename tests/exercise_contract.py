"""The contract every exercise self-check honours, as tests a test module can take over.

    from exercise_contract import contract_tests
    test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)

A check passes right answers (prints ✓), the same answers returned in other forms (NumPy, a list, float32, a tensor
that requires grad: a check judges the value, not the type), fails wrong ones with a hint that contains the given
words (prints ✗), and fails unfinished or crashing answers without raising. The answers themselves live in the
notebooks' <details> solutions (``solution_text``), never in a check's docstring.
"""

import re
from pathlib import Path

import numpy as np
import pytest
import torch

FORMS = ("numpy", "list", "float32", "requires grad")


def in_form(result, form: str):
    """``result`` (a tensor, a float, or a tuple or list of tensors) returned in another ``form``, the same values."""
    if isinstance(result, tuple | list) and result and all(isinstance(part, torch.Tensor) for part in result):
        return type(result)(in_form(part, form) for part in result)
    if isinstance(result, float):
        return {"numpy": np.float64(result), "list": [result], "float32": np.float32(result),
                "requires grad": torch.tensor(result, dtype=torch.float64, requires_grad=True)}[form]  # fmt: skip
    if not isinstance(result, torch.Tensor):
        return result
    result = result.detach()
    if not result.is_floating_point():  # ids and masks: the same values as NumPy or a list
        return {"numpy": result.numpy(), "list": result.tolist()}.get(form, result)
    return {"numpy": result.numpy(), "list": result.tolist(), "float32": result.float(),
            "requires grad": result.double().clone().requires_grad_()}[form]  # fmt: skip


UNFINISHED = [(None, "TypeError"), (lambda *args: None, "not finished"), (lambda *args: 1 / 0, "ZeroDivisionError")]


def contract_tests(checks, right, wrong):
    """Three parametrized tests: ``right`` = [(check, answer)], ``wrong`` = [(check, answer, words of the hint)]."""

    @pytest.mark.parametrize("check, answer", right)
    def test_checks_pass_right_answers(capsys, check, answer):
        assert check(answer) is True
        assert capsys.readouterr().out.startswith("✓")

    @pytest.mark.parametrize("check, answer, words", wrong)
    def test_checks_fail_wrong_answers_with_a_hint(capsys, check, answer, words):
        assert check(answer) is False
        out = capsys.readouterr().out
        assert out.startswith("✗") and words in out, out

    @pytest.mark.parametrize("check", checks)
    @pytest.mark.parametrize("answer, words", UNFINISHED)
    def test_checks_never_raise_on_unfinished_answers(capsys, check, answer, words):
        assert check(answer) is False
        out = capsys.readouterr().out
        assert out.startswith("✗") and words in out, out

    @pytest.mark.parametrize("form", FORMS)
    @pytest.mark.parametrize("check, answer", [(c, a) for c, a in right if callable(a)])
    def test_checks_pass_right_answers_in_other_forms(capsys, check, answer, form):
        assert check(lambda *args, **kwargs: in_form(answer(*args, **kwargs), form)) is True, capsys.readouterr().out

    return (
        test_checks_pass_right_answers,
        test_checks_fail_wrong_answers_with_a_hint,
        test_checks_never_raise_on_unfinished_answers,
        test_checks_pass_right_answers_in_other_forms,
    )


def solution_text(stem: str) -> str:
    """The <details> solutions of ``notebooks/src/{stem}.py``, its Markdown's "# " taken off."""
    source = (Path(__file__).resolve().parents[1] / "notebooks" / "src" / f"{stem}.py").read_text(encoding="utf-8")
    blocks = re.findall(r"<details>.*?</details>", source, flags=re.S)
    return "\n".join(re.sub(r"^# ?", "", block, flags=re.M) for block in blocks)
