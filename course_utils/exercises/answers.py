"""One coercion for every check: a student's answer read as numbers, whatever its type, and the tolerance its
precision earns.

An answer may be a Python number, a NumPy scalar or array, a torch tensor of any dtype, on any device, with or
without grad, or a list or tuple of these. ``read_numbers`` turns it into float64 NumPy numbers and notes the
coarsest float precision it came in, so a float32 answer is judged at float32's tolerance and a float64 one at
float64's. A whole number written as a float (``10.0``) is a whole number. NaN and inf are reported, not compared.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch

REL_TOLERANCE = 1e-6  # the loosest the checks ask of a float64 answer (their references are float64)
ULPS = 8  # a float answer may be off by this many units in its own last place


@dataclass(frozen=True)
class Numbers:
    """An answer as float64 numbers, with the machine epsilon of the coarsest float it came in (0: exact)."""

    values: np.ndarray
    eps: float

    def rel_tolerance(self, floor: float = REL_TOLERANCE) -> float:
        """The relative tolerance this answer's precision earns, at least ``floor``: float32 about 1e-6,
        float16 about 8e-3."""
        return max(floor, ULPS * self.eps)


def _eps(dtype) -> float:
    """Machine epsilon of a float dtype (torch or NumPy); 0 for integers and booleans."""
    if isinstance(dtype, torch.dtype):
        return torch.finfo(dtype).eps if dtype.is_floating_point or dtype.is_complex else 0.0
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if np.issubdtype(dtype, np.inexact) else 0.0


def _parts(answer) -> tuple[object, float]:
    """``answer`` as something ``np.asarray`` reads as numbers, and its coarsest precision."""
    if isinstance(answer, torch.Tensor):
        tensor = answer.detach().cpu()
        eps = _eps(tensor.dtype)
        return tensor.to(torch.float64).numpy() if tensor.is_floating_point() else tensor.numpy(), eps
    if isinstance(answer, np.ndarray | np.generic):
        return answer, _eps(answer.dtype)
    if isinstance(answer, bool):
        raise TypeError("True/False is not a number here")
    if isinstance(answer, numbers.Real):
        return float(answer), 0.0 if isinstance(answer, numbers.Integral) else float(np.finfo(np.float64).eps)
    if isinstance(answer, list | tuple):
        read = [_parts(part) for part in answer]
        return [values for values, _ in read], max((eps for _, eps in read), default=0.0)
    raise TypeError(f"{type(answer).__name__} is not a number")


def non_finite(nan: bool) -> str:
    """What a check says of an answer that holds NaN (``nan``) or else inf."""
    return f"your answer contains {'NaN' if nan else 'inf'}: look for a division by zero or a log of 0"


def read_numbers(answer, *, finite: bool = True) -> tuple[Numbers | None, str | None]:
    """``(Numbers, None)``, or ``(None, why)`` for an answer that is not numbers, or (``finite``) holds NaN or inf."""
    try:
        parts, eps = _parts(answer)
        values = np.asarray(parts, dtype=np.float64)
    except (TypeError, ValueError) as error:
        return None, f"return numbers (a float, a list, an array or a tensor): {error}"
    if values.dtype == object or values.size == 0:
        return None, "return numbers: yours is empty or ragged"
    if not values.flags.c_contiguous or not values.flags.writeable:  # a view: a[::-1], a.T, a Fortran-order array
        values = values.copy(order="C")  # torch.from_numpy refuses negative strides
    if finite and not np.isfinite(values).all():
        return None, non_finite(np.isnan(values).any())
    return Numbers(values, eps), None


class Number(float):
    """One number read from an answer: a float that remembers the machine epsilon of the float it came in."""

    eps: float

    def __new__(cls, value: float, eps: float = 0.0) -> "Number":
        number = super().__new__(cls, value)
        number.eps = eps
        return number

    def rel_tolerance(self, floor: float = REL_TOLERANCE) -> float:
        """As ``Numbers.rel_tolerance``: the relative tolerance this number's precision earns."""
        return max(floor, ULPS * self.eps)


def one_number(answer, *, finite: bool = True) -> tuple[Number | None, str | None]:
    """``(Number, None)`` for an answer that is one number (a 0-d or one-element tensor or array too).

    ``finite=False`` lets NaN and inf through, for a check whose right answer may be inf (a perplexity).
    """
    read, why = read_numbers(answer, finite=finite)
    if why:
        return None, why.replace("return numbers", "return one number", 1)
    if read.values.size != 1:
        return None, f"return one number, got {read.values.size} of shape {read.values.shape}"
    return Number(float(read.values.reshape(())), read.eps), None


def shown(expected: float, got: float, places: int = 4, kind: str = "f", *, group: bool = False) -> tuple[str, str]:
    """``expected`` and ``got`` written with ``places`` digits (decimals for ``kind`` "f", significant ones for
    "g"; thousands separated by commas when ``group``), or with as many more as it takes for two different numbers
    to read differently."""
    comma = "," if group else ""
    for digits in range(places, 18):
        texts = (f"{expected:{comma}.{digits}{kind}}", f"{got:{comma}.{digits}{kind}}")
        if texts[0] != texts[1] or expected == got:
            return texts
    return repr(float(expected)), repr(float(got))


def shown_lists(expected, got, places: int = 3) -> tuple[list[float], list[float]]:
    """Two lists of numbers rounded to ``places`` decimals, or to as many more as it takes for different lists to
    read differently."""
    expected, got = [float(v) for v in expected], [float(v) for v in got]
    for digits in range(places, 18):
        texts = [round(v, digits) for v in expected], [round(v, digits) for v in got]
        if texts[0] != texts[1] or expected == got:
            return texts
    return expected, got


def whole_number(answer) -> int | None:
    """``answer`` as an int when it is one whole number (``7``, ``7.0``, ``torch.tensor(7.)``), else None."""
    value, why = one_number(answer)
    return int(value) if not why and value == math.floor(value) else None


def numbers_close(answer, expected, *, abs_tolerance: float = 1e-12) -> tuple[bool, str | None]:
    """Whether ``answer`` equals ``expected`` (numbers of the same shape) up to the answer's precision.

    Returns ``(ok, why)``: ``why`` says what stopped the comparison (not numbers, NaN, a wrong shape), else None.
    """
    read, why = read_numbers(answer)
    if why:
        return False, why
    reference = np.asarray(expected.detach().cpu() if isinstance(expected, torch.Tensor) else expected, np.float64)
    values = read.values.reshape(reference.shape) if read.values.size == reference.size == 1 else read.values
    if values.shape != reference.shape:
        return False, f"expected shape {reference.shape}, got {values.shape}"
    scale = max(1.0, float(np.abs(reference).max(initial=0.0)))
    tolerance = read.rel_tolerance() * scale + abs_tolerance
    return bool(np.all(np.abs(values - reference) <= tolerance)), None


def _tensor(part, floats: bool, finite: bool) -> tuple[torch.Tensor | None, str | None]:
    """One part of an answer as a CPU tensor without grad: float64 when ``floats``; else integers stay integers.
    With ``finite``, a part holding NaN or inf is refused, and said so."""
    if isinstance(part, torch.Tensor):
        part = part.detach().cpu()
        if finite and (part.is_floating_point() or part.is_complex()) and not bool(torch.isfinite(part).all()):
            return None, non_finite(part.isnan().any())
        return (part.double() if floats else part), None
    read, why = read_numbers(part, finite=finite)
    if why:
        return None, why
    whole = not read.eps and not floats
    return torch.from_numpy(read.values.astype(np.int64) if whole else read.values), None


def as_tensors(
    answer, count: int, what: str, *, floats: bool = True, sequence: bool = False, finite: bool = True
) -> tuple[tuple[torch.Tensor, ...] | None, str | None]:
    """``answer`` as ``count`` tensors, or ``(None, why)``: ``answer`` itself when ``count`` is 1, unless
    ``sequence`` (a list of one tensor is then one part, not a (1, …) array). NaN and inf are refused (said so)
    unless ``finite`` is False, for a check that names their cause itself.

    A tensor, a NumPy array or a (nested) list of numbers are all read, by value: a check never asks for a type.
    """
    parts = (answer,) if count == 1 and not sequence else answer
    if (count > 1 or sequence) and (not isinstance(parts, tuple | list) or len(parts) != count):
        return None, f"return {what}; got {type(answer).__name__}"
    tensors = []
    for part in parts:
        tensor, why = _tensor(part, floats, finite)
        if why:
            return None, why if why.startswith(
                "your answer contains"
            ) else f"return {what} as numbers (tensors or arrays): {why}"
        tensors.append(tensor)
    return tuple(tensors), None
