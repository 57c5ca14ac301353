"""Argument checks that raise one clear error type, ``CourseInputError``."""

from __future__ import annotations

import math
from numbers import Real


class CourseInputError(ValueError):
    """A public function was called with an argument it cannot use; the message says why."""


def check_number(name: str, value) -> float:
    """Return ``value`` as a float if it is a finite real number."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise CourseInputError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise CourseInputError(f"{name} must be finite, got {value} (did a number overflow?)")
    return value


def check_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float if it is a finite number > 0 (or >= 0 with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise CourseInputError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise CourseInputError(f"{name} must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise CourseInputError(f"{name} must be {bound}, got {value}")
    return value


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` if it is an integer in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numpy as np

            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise TypeError
        except (ImportError, TypeError):
            raise CourseInputError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and value < minimum:
        raise CourseInputError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise CourseInputError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise CourseInputError(f"{name} must be one of {options}; got {value!r}")
    return value


def check_same_length(name_a: str, len_a: int, name_b: str, len_b: int) -> None:
    """Raise if two sized things that must pair up do not."""
    if len_a != len_b:
        raise CourseInputError(f"{name_a} has {len_a} rows but {name_b} has {len_b}; they must match")


def check_heads(width_name: str, width, heads_name: str, heads) -> tuple[int, int]:
    """``(width, heads)`` if both are positive integers and the width splits evenly into the heads."""
    width, heads = check_int(width_name, width, minimum=1), check_int(heads_name, heads, minimum=1)
    if width % heads:
        raise CourseInputError(
            f"{width_name}={width} must split evenly into {heads_name}={heads} heads ({width_name} % {heads_name} == 0)"
        )
    return width, heads


def check_dropout(value) -> float:
    """A dropout probability in [0, 1)."""
    value = check_positive("dropout", value, allow_zero=True)
    if value >= 1:
        raise CourseInputError(f"dropout is a probability below 1; got {value}")
    return value


def describe(value) -> str:
    """A tensor's (or array's) shape and dtype, or the type of anything else, for error messages."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    return f"shape {list(shape)} ({dtype})" if shape is not None and dtype is not None else type(value).__name__
