"""Self-check functions for the notebooks' exercises, one module per notebook.

A check prints one friendly line, ✓ or ✗ with a hint, and returns True or False. It never
raises, whatever it is given (each is wrapped in ``never_raises``), so "Restart and run all" always works,
and it judges an answer's value, not its type (``answers``).
The helpers here call a student's function safely and compare its answer. It imports the models
wing and the core, never the widgets.

- ``grading``: what the instructor's grader runs first in a submission's process: Python's own network block.
- ``probes``: for an answer that takes or gives a course object, the call the grader makes in the student's process.
- ``answers``: one coercion for every check: an answer read as numbers, whatever its type, and the tolerance its precision earns.
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
- ``scaling``: notebook 11 (an IsoFLOP profile's minimum, the compute-optimal split of a budget, approach 3's
  Huber objective).
"""

from __future__ import annotations

import copy
import functools
import math

from course_utils.exercises.answers import REL_TOLERANCE, Number, one_number
from course_utils.validation import CourseInputError

# Every check says this, and only this, of an answer still left as shipped (None): the grader counts it as not finished.
NOT_FINISHED = "not finished yet"
# What a check says of attention weights that hold NaN, whatever else is wrong with them.
NAN_WEIGHTS = ("your weights contain NaN: a row whose scores are all -inf (every key blocked, say by a mask used the "
               "wrong way round) gives 0/0 in the softmax, and exp of a large score overflows (torch.softmax "
               "subtracts each row's maximum for you)")  # fmt: skip


def never_raises(check):
    """Wrap a check so that whatever it is given, it prints one ✗ line and returns False instead of raising."""

    @functools.wraps(check)
    def guarded(*args, **kwargs) -> bool:
        try:
            return check(*args, **kwargs)
        except CourseInputError as error:  # the check was called wrongly: say how
            return verdict(False, str(error))
        except Exception as error:  # noqa: BLE001 - a self-check reports, it never raises
            return verdict(False, f"the check could not read this answer ({type(error).__name__}: {error}); "
                                  "look at what your code returns")  # fmt: skip

    return guarded


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
        return None, f"your function returns None: {NOT_FINISHED}"
    return answer, None


def as_number(value) -> float | None:
    """``value`` as a float if it is one real number (Python, NumPy, a one-element tensor or list), else None."""
    number, why = one_number(value)
    return None if why else number


def numeric_answer(fn, args: tuple, crash_hint: str = ""):
    """``(Number, None)``, or ``(None, why)`` when ``fn`` raised, returned None, returned no number or NaN (inf is a
    number here: a check whose answer may be inf compares it)."""
    answer, why = answer_of(fn, args, crash_hint)
    value, why = (None, why) if why else one_number(answer, finite=False)
    if value is not None and math.isnan(value):
        return None, NOT_A_NUMBER + (f". Hint: {crash_hint}" if crash_hint else "")
    return value, why


# What a check says of an answer that is NaN, whatever the exercise.
NOT_A_NUMBER = (
    "your function returns NaN (not a number): look for a 0/0, inf − inf, or a log or square root of a negative number"
)


def close(answer: float | None, expected: float, floor: float = REL_TOLERANCE) -> bool:
    """Equal up to the rounding of the answer's own precision (a ``Number`` read from a float32 or float16 answer
    earns its dtype's tolerance), and at least up to ``floor`` relative."""
    rel_tol = answer.rel_tolerance(floor) if isinstance(answer, Number) else floor
    return answer is not None and math.isclose(answer, expected, rel_tol=rel_tol, abs_tol=1e-12)
