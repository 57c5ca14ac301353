"""The contract every exercise self-check honours, as tests a test module can take over.

    from exercise_contract import contract_tests
    test_right, test_wrong, test_unfinished = contract_tests(CHECKS, RIGHT, WRONG)

A check passes right answers (prints ✓), fails wrong ones with a hint that contains the given
words (prints ✗), and fails unfinished or crashing answers without raising. The answers themselves live in the
notebooks' <details> solutions (``solution_text``), never in a check's docstring.
"""

import re
from pathlib import Path

import pytest

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

    return (
        test_checks_pass_right_answers,
        test_checks_fail_wrong_answers_with_a_hint,
        test_checks_never_raise_on_unfinished_answers,
    )


def solution_text(stem: str) -> str:
    """The <details> solutions of ``notebooks/src/{stem}.py``, its Markdown's "# " taken off."""
    source = (Path(__file__).resolve().parents[1] / "notebooks" / "src" / f"{stem}.py").read_text(encoding="utf-8")
    blocks = re.findall(r"<details>.*?</details>", source, flags=re.S)
    return "\n".join(re.sub(r"^# ?", "", block, flags=re.M) for block in blocks)
