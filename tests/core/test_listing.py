"""``course_utils.listing``: course code as a notebook prints it, and only the signature of a function whose body
an exercise asks for."""

from __future__ import annotations

import inspect

from course_utils.listing import listing
from course_utils.models.recurrent import seq2seq
from course_utils.models.transformer import attention, positional


def test_a_listing_is_the_function_source_without_the_reference_mark():
    text = listing(attention.split_heads)
    assert text == inspect.getsource(attention.split_heads).rstrip("\n") + "\n"
    marked = listing(positional.sinusoidal_positions)
    assert "@course_reference" not in marked and marked.startswith("def sinusoidal_positions(")
    assert "torch.sin" in marked or "sin(" in marked


def test_with_an_exercise_only_the_signature_and_docstring_show():
    text = listing(seq2seq.attend, exercise=1)
    body = [line.strip() for line in listing(seq2seq.attend).splitlines()[1:] if line.strip()]
    assert text.startswith("def attend(") and "exercise 1's answer" in text
    assert inspect.getdoc(seq2seq.attend).splitlines()[0] in text
    code = [line for line in body if not line.startswith(('"""', "scores (", "Returns")) and '"""' not in line]
    assert code and not any(line in text for line in code), "no line of the body is printed"
    method = listing(seq2seq.Attention.scores)
    assert method.startswith("def scores(self")
