"""How an answer leaves the student's process: as plain data that ``torch.load(weights_only=True)`` reads back
without running any code (tensors, numbers, strings, None, and lists, tuples and dicts of them).

NumPy arrays and scalars become tensors of the same dtype, so the judge still knows an answer's precision.
Anything else (a set, a generator, an object) becomes ``{UNREADABLE: "its type"}``; an answer that raised becomes
``{RAISED: "ValueError: the message"}``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

RAISED = "__raised__"
UNBOUND = "__unbound__"  # the answer's name was never bound
NDARRAY = "__ndarray__"  # an argument that the student's function gets as a NumPy array
UNREADABLE = "__unreadable__"
MAX_DEPTH = 8
MAX_ITEMS = 1_000_000  # numbers in all; more is not an answer to any exercise here


class _TooBig(ValueError):
    pass


def plain(value, depth: int = 0, budget: list[int] | None = None):
    """``value`` as plain data (see the module's docstring)."""
    budget = [MAX_ITEMS] if budget is None else budget
    if depth > MAX_DEPTH:
        return {UNREADABLE: "nested too deeply"}
    if isinstance(value, np.generic):  # before float: np.float64 is a float, but not one torch.load reads back
        value = np.asarray(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype == object or not (np.issubdtype(value.dtype, np.number) or value.dtype == np.bool_):
            return {UNREADABLE: f"a NumPy array of {value.dtype}"}
        value = torch.from_numpy(np.array(value, order="C", copy=True))  # any view, any strides
    if isinstance(value, torch.Tensor):
        budget[0] -= value.numel()
        if budget[0] < 0:
            raise _TooBig("the answer holds more than a million numbers")
        return value.detach().cpu().clone().contiguous()
    if isinstance(value, list | tuple):
        parts = [plain(part, depth + 1, budget) for part in value]
        return parts if isinstance(value, list) else tuple(parts)
    if isinstance(value, dict):
        return {str(key) if not isinstance(key, int) else key: plain(part, depth + 1, budget)
                for key, part in value.items()}  # fmt: skip
    return {UNREADABLE: type(value).__name__}


def pack_arguments(value):
    """A case's arguments for the trip into the student's process: NumPy arrays as ``{NDARRAY: tensor}``, so that
    a function written for NumPy gets NumPy (``unpack_arguments`` turns them back)."""
    if isinstance(value, np.ndarray):
        return {NDARRAY: torch.from_numpy(np.array(value, order="C", copy=True))}
    if isinstance(value, list | tuple):
        return type(value)(pack_arguments(part) for part in value)
    if isinstance(value, dict):
        return {key: pack_arguments(part) for key, part in value.items()}
    return value


def unpack_arguments(value):
    if isinstance(value, dict) and set(value) == {NDARRAY} and isinstance(value[NDARRAY], torch.Tensor):
        return value[NDARRAY].numpy()
    if isinstance(value, list | tuple):
        return type(value)(unpack_arguments(part) for part in value)
    if isinstance(value, dict):
        return {key: unpack_arguments(part) for key, part in value.items()}
    return value


def save_answer(value, path: Path) -> None:
    """Write ``value`` as plain data to ``path``."""
    try:
        data = plain(value)
    except _TooBig as error:
        data = {UNREADABLE: str(error)}
    torch.save(data, path)


def save_raised(error: BaseException, path: Path) -> None:
    torch.save({RAISED: f"{type(error).__name__}: {error}"[:500]}, path)


def load_answer(path: Path):
    """What ``save_answer`` wrote, read without running code; ``{UNREADABLE: why}`` for a file that is not that."""
    try:
        return torch.load(path, weights_only=True, map_location="cpu")
    except Exception as error:  # noqa: BLE001 - a file the student's process wrote is not trusted
        return {UNREADABLE: f"the answer could not be read back ({type(error).__name__})"}


def marker(answer, key: str) -> str | None:
    """The text under ``key`` (RAISED or UNREADABLE) when ``answer`` is such a marker, else None."""
    if isinstance(answer, dict) and set(answer) == {key} and isinstance(answer[key], str):
        return answer[key]
    return None
