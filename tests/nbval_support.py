"""What nbval compares in a checked cell (``# NBVAL_CHECK_OUTPUT``), and what it forgives: one unit in the last
printed digit of a decimal number, and nothing else.

A checked cell prints numbers rounded well above numerical noise, but a value that lies near a rounding boundary
(0.695 printed with two decimals) can print 0.69 on one machine and 0.70 on another: MKL takes another code path on
another CPU vendor, torch another kernel on another vector unit. That flip is one unit in the last printed digit.
So two outputs are alike when they are the same text once their decimal numbers are set aside, and each pair of
decimal numbers differs by at most one unit in the finer of the two last printed digits: 0.69 = 0.70 = 0.7, but
0.69 ≠ 0.71 and 1.084 ≠ 1.094. Words, verdicts and integers (counts, sizes, indices) must match exactly; so must
dotted strings such as versions (5.24.0). Where a number's printed width changed (9.99 against 10.00), the padding
beside it may change with it.

The root ``conftest.py`` hands nbval's own comparison, for each pair of outputs it pairs up, the reference's text in
place of the new one when the two are alike; nbval compares and reports everything else as it always has.
"""

from __future__ import annotations

import copy
import re
from decimal import Decimal

# A decimal number: digits, a point, digits, perhaps an exponent (or digits with an exponent). Not part of a
# dotted string: no point or word character before it, no ".digit" after it.
DECIMAL = re.compile(r"(?<![\w.])-?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?!\.?\d)")
SPACES = re.compile(r"[ \t]+")


def last_digit_unit(number: str) -> Decimal:
    """One unit in the last printed digit: 0.01 for "0.69", 1e-7 for "9.99e-05", 1e-5 for "1e-05"."""
    return Decimal(1).scaleb(Decimal(number).as_tuple().exponent)


def numbers_alike(reference: str, new: str) -> bool:
    """The two printed decimals differ by at most one unit in the finer of their last printed digits."""
    unit = min(last_digit_unit(reference), last_digit_unit(new))
    return abs(Decimal(reference) - Decimal(new)) <= unit


def split_decimals(text: str) -> tuple[list[str], list[str]]:
    """``text`` as (the text between its decimal numbers, the numbers): ``len(gaps) == len(numbers) + 1``."""
    gaps, numbers, start = [], [], 0
    for match in DECIMAL.finditer(text):
        gaps.append(text[start : match.start()])
        numbers.append(match.group())
        start = match.end()
    gaps.append(text[start:])
    return gaps, numbers


def gaps_alike(reference: str, new: str, width_changed: bool) -> bool:
    """The text between two numbers is the same, or differs only in padding beside a number whose width changed."""
    return reference == new or (width_changed and SPACES.sub(" ", reference) == SPACES.sub(" ", new))


def outputs_alike(reference: str, new: str) -> bool:
    """``new`` is ``reference`` but for decimal numbers one unit apart in their last printed digit (module doc)."""
    if reference == new:
        return True
    reference_gaps, reference_numbers = split_decimals(reference)
    new_gaps, new_numbers = split_decimals(new)
    if len(reference_numbers) != len(new_numbers):
        return False
    if not all(numbers_alike(r, n) for r, n in zip(reference_numbers, new_numbers)):
        return False
    widths_changed = [False] + [len(r) != len(n) for r, n in zip(reference_numbers, new_numbers)] + [False]
    return all(
        gaps_alike(r, n, widths_changed[i] or widths_changed[i + 1])
        for i, (r, n) in enumerate(zip(reference_gaps, new_gaps))
    )


def flatten(outputs, skip_compare) -> list[tuple[str, dict, str]]:
    """Each compared field of ``outputs`` as (key, the dict that holds it, its key there), in nbval's order.

    nbval keys an output's fields by name, the fields of its ``data`` by MIME type and a stream's text by the
    stream's name, leaving out those in ``skip_compare``; it pairs the reference's and the new run's values key by
    key, in order. This walks the same.
    """
    fields = []
    for output in outputs:
        if output.get("output_type") == "stream":
            fields.append((output["name"], output, "text"))
            continue
        for key in output:
            if key in skip_compare:
                continue
            if key == "data":
                fields += [(mime, output["data"], mime) for mime in output["data"] if mime not in skip_compare]
            else:
                fields.append((key, output, key))
    return fields


def by_key(outputs, skip_compare) -> dict[str, list[tuple[dict, str]]]:
    """``flatten``'s fields grouped by key, in order: the lists nbval pairs up."""
    grouped: dict[str, list[tuple[dict, str]]] = {}
    for key, holder, field in flatten(outputs, skip_compare):
        grouped.setdefault(key, []).append((holder, field))
    return grouped


def forgive_last_digits(new_outputs, reference_outputs, skip_compare, sanitize) -> int:
    """Put the reference's text in place of each new text field that is alike (after nbval's sanitizing).

    Both are lists of outputs with their streams coalesced, as nbval hands them to its comparison. ``new_outputs``
    is changed in place (give it a copy); returns how many fields were replaced. Fields nbval would find unequal
    for any other reason are left as they are, so nbval reports them.
    """
    reference_by_key, new_by_key = by_key(reference_outputs, skip_compare), by_key(new_outputs, skip_compare)
    replaced = 0
    for key, new_fields in new_by_key.items():
        reference_fields = reference_by_key.get(key, [])
        if len(reference_fields) != len(new_fields):
            continue  # nbval reports the different number of outputs
        for (new_holder, new_field), (reference_holder, reference_field) in zip(new_fields, reference_fields):
            new_text, reference_text = new_holder[new_field], reference_holder[reference_field]
            if not (isinstance(new_text, str) and isinstance(reference_text, str)) or new_text == reference_text:
                continue
            if outputs_alike(sanitize(reference_text), sanitize(new_text)):
                new_holder[new_field] = reference_text
                replaced += 1
    return replaced


def compare_forgiving_last_digit(cell, new_outputs, reference_outputs, skip_compare=None) -> bool:
    """nbval's own comparison of a checked cell's outputs, after ``forgive_last_digits`` (the root conftest.py
    installs this on every notebook cell nbval runs)."""
    from nbval.plugin import IPyNbCell

    new_outputs = copy.deepcopy(new_outputs)  # nbval keeps the run's own outputs (the rules read their stderr)
    skip = skip_compare or cell.parent.skip_compare
    forgiven = forgive_last_digits(new_outputs, reference_outputs, skip, cell.sanitize)
    if forgiven:  # in the JUnit report (--junitxml), so a run shows which cells sit on a rounding boundary
        cell.user_properties.append(("last_digit_forgiven", forgiven))
    return IPyNbCell.compare_outputs(cell, new_outputs, reference_outputs, skip_compare)
