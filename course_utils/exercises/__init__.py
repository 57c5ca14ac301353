"""Self-check functions for the notebooks' exercises, one module per notebook.

A check prints one friendly line, ✓ or ✗ with a hint, and returns True or False. It never
raises on a wrong, unfinished (None) or crashing answer, so "Restart and run all" always works.
The helpers here call a student's function safely and compare its answer. It imports the models
wing and the core, never the widgets.

- ``regression``: notebook 01 (linear regression and gradient descent).
- ``backprop``: notebook 02 (computation graphs and backpropagation).
- ``activations``: notebook 03 (activation functions, XOR).
- ``language_models``: notebook 04 (n-gram and feed-forward language models).
- ``recurrent``: notebook 05 (the RNN language model).
- ``lstm``: notebook 06 (the LSTM, its gradient path, ELMo's scalar mix).
- ``translation``: notebook 07 (dot attention, BLEU of one pair, the AER of an attention matrix).
- ``attention``: notebook 08 (a causal mask, one attention head, the positional encoding).
- ``bert``: notebook 09 (BERT's 15 % masking with 80/10/10, WordPiece encoding of a word, the last four layers as features).
- ``generation``: notebook 10 (top-p filtering of a distribution, one beam-search step, the length-normalised score).
"""

from __future__ import annotations

import copy
import math
import numbers

import torch


def verdict(ok: bool, message: str) -> bool:
    """Print ``✓ message`` or ``✗ message`` and return ``ok``."""
    print(("✓ " if ok else "✗ ") + message)
    return ok


def answer_of(fn, args: tuple, crash_hint: str = "", *, copy_args: bool = True):
    """``(answer, None)``, or ``(None, why)`` when ``fn`` raised (``crash_hint`` added) or returned None.

    ``fn`` gets copies of ``args`` unless ``copy_args`` is False (for a check that the inputs are left alone).
    """
    try:
        answer = fn(*(copy.deepcopy(args) if copy_args else args))
    except Exception as error:  # noqa: BLE001 - a self-check reports, it never raises
        hint = f". Hint: {crash_hint}" if crash_hint else ""
        return None, f"your function raised {type(error).__name__}: {error}{hint}"
    if answer is None:
        return None, "your function returns None: not finished yet"
    return answer, None


def as_number(value) -> float | None:
    """``value`` as a float if it is one real number (Python, NumPy, or a one-element tensor), else None."""
    if isinstance(value, torch.Tensor):
        return float(value) if value.numel() == 1 else None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return None


def numeric_answer(fn, args: tuple, crash_hint: str = ""):
    """``(float, None)``, or ``(None, why)`` when ``fn`` raised, returned None or returned no number."""
    answer, why = answer_of(fn, args, crash_hint)
    value = None if why else as_number(answer)
    if value is None and not why:
        why = f"return one number (a float), got {type(answer).__name__}"
    return value, why


def close(answer: float | None, expected: float) -> bool:
    """Equal up to float32 rounding (an answer computed with torch's default dtype passes)."""
    return answer is not None and math.isclose(answer, expected, rel_tol=1e-6, abs_tol=1e-12)
