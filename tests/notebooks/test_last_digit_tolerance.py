"""The comparison of checked outputs forgives one unit in the last printed digit of a decimal, and nothing else
(``tests/nbval_support.py``). tests/notebooks/test_nbval_rules.py runs it inside nbval on real notebooks."""

from __future__ import annotations

import pytest
from nbformat.v4 import new_output

from nbval_support import forgive_last_digits, last_digit_unit, outputs_alike, split_decimals

ALIKE = [
    ("probe accuracy 0.69", "probe accuracy 0.70"),  # issue 31's flip, AMD against Intel
    ("0.70", "0.69"),
    ("ratio 1.0145x", "ratio 1.0146x"),
    ("0.69 and 0.7", "0.70 and 0.69"),  # a value printed by round(): 0.7 is 0.70
    ("-0.00", "0.00"),
    ("gap 9.99e-05", "gap 1.00e-04"),
    ("| 9.99 |", "| 10.00 |"),  # the padding follows a width that changed at the boundary
    ("  9.99 ok", " 10.00 ok"),
    ("the same text, 3 words", "the same text, 3 words"),
]

DIFFERENT = [
    ("probe accuracy 0.69", "probe accuracy 0.71"),  # two units
    ("1.084", "1.094"),  # ten units of the last digit
    ("0.7", "0.72"),  # 0.7 printed by round() is 0.70: two units of the finer digit
    ("1.084", "1.08"),  # 1.08 is 1.080: four units
    ("BERT 1.084 vs BiLSTM 1.096", "BERT 1.084 vs LSTM 1.096"),  # a changed word
    ("verdict: ahead at each layer (0.96)", "verdict: behind at each layer (0.96)"),  # a changed verdict
    ("verdict: True (0.69)", "verdict: False (0.70)"),  # the verdict changed, though the number flipped by one
    ("102 of 605 words split", "103 of 605 words split"),  # an integer count
    ("transformers 5.24.0", "transformers 5.25.0"),  # a dotted version is no decimal
    ("0.69 0.70", "0.69"),  # a number more or less
    ("a  0.69", "a 0.69"),  # padding, where no width changed
    ("1.5e-05", "1.5e-06"),
]


@pytest.mark.parametrize("reference, new", ALIKE)
def test_one_unit_in_the_last_printed_digit_is_forgiven(reference, new):
    assert outputs_alike(reference, new)
    assert outputs_alike(new, reference)


@pytest.mark.parametrize("reference, new", DIFFERENT)
def test_anything_else_is_a_difference(reference, new):
    assert not outputs_alike(reference, new)
    assert not outputs_alike(new, reference)


def test_the_unit_is_the_last_printed_digit():
    assert [str(last_digit_unit(n)) for n in ("0.69", "1.0145", "0.7", "9.99e-05", "1e-05")] == [
        "0.01",
        "0.0001",
        "0.1",
        "1E-7",
        "0.00001",
    ]


def test_integers_and_versions_stay_in_the_text():
    gaps, numbers = split_decimals("step 300: loss 1.25, 5.24.0, 4x256, 1.5e-3 and 0.69.")
    assert numbers == ["1.25", "1.5e-3", "0.69"]
    assert gaps == ["step 300: loss ", ", 5.24.0, 4x256, ", " and ", "."]


def stream(text, name="stdout"):
    return new_output("stream", name=name, text=text)


def result(text):
    return new_output("execute_result", data={"text/plain": text}, execution_count=1)


def test_fields_are_paired_as_nbval_pairs_them_and_only_alike_ones_are_replaced():
    reference = [stream("acc 0.69\n"), stream("warning 1.5\n", "stderr"), result("0.123")]
    new = [stream("acc 0.70\n"), stream("warning 1.7\n", "stderr"), result("0.124")]
    replaced = forgive_last_digits(new, reference, skip_compare=("metadata", "execution_count"), sanitize=str)
    assert replaced == 2
    assert [o.get("text", o.get("data", {}).get("text/plain")) for o in new] == ["acc 0.69\n", "warning 1.7\n", "0.123"]


def test_the_sanitizer_runs_before_the_comparison():
    def sanitize(text):
        return text.replace("12 ms", "TIME").replace("15 ms", "TIME")

    new = [stream("12 ms per step, loss 0.70")]
    forgive_last_digits(new, [stream("15 ms per step, loss 0.69")], skip_compare=(), sanitize=sanitize)
    assert new[0]["text"] == "15 ms per step, loss 0.69"
