"""Whatever a check is given, it prints one ✓ or ✗ line and returns a bool: it never raises (a property test).

Hypothesis draws answers of every kind a student might hand in: None, booleans, Python numbers with NaN and inf, text,
NumPy scalars and arrays, torch tensors of several dtypes with and without grad, lists, tuples and dicts of these, and
functions that return any of them or raise. Each check gets one such value per parameter it requires. The draws are
derandomized, so CI sees the same examples on every machine.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import course_utils.exercises as exercises
from course_utils.exercises.answers import numbers_close, one_number, read_numbers, whole_number

MODULES = [
    importlib.import_module(f"course_utils.exercises.{m.name}") for m in pkgutil.iter_modules(exercises.__path__)
]
CHECKS = [fn for module in MODULES for name, fn in vars(module).items()
          if name.startswith("check_") and callable(fn) and getattr(fn, "__module__", "") == module.__name__]  # fmt: skip
TORCH_DTYPES = (torch.float64, torch.float32, torch.float16, torch.int64)

arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.int64, np.float16]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
)


def as_tensor(array: np.ndarray, dtype: torch.dtype, grad: bool) -> torch.Tensor:
    """A torch tensor of ``array``'s values in ``dtype``, requiring grad when asked and possible."""
    tensor = torch.as_tensor(np.nan_to_num(array.astype(np.float64))).to(dtype)
    return tensor.requires_grad_() if grad and dtype.is_floating_point else tensor


tensors = st.builds(as_tensor, arrays, st.sampled_from(TORCH_DTYPES), st.booleans())
parameters = st.lists(st.builds(as_tensor, arrays, st.just(torch.float32), st.just(True)), min_size=1, max_size=3).map(
    tuple
)  # (model.bias, model.weight): tensors that still require grad
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    arrays,
    tensors,
    parameters,
    st.builds(np.float32, st.floats(width=32)),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.sampled_from(["x", "y", "z", "W", "b"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def returning(value):
    """A student's function that returns ``value`` whatever it is called with."""
    return lambda *args, **kwargs: value


def raising(*args, **kwargs):
    raise RuntimeError("the student's code broke")


answers = st.one_of(values, st.builds(returning, values), st.just(raising))


def required(check) -> int:
    """How many arguments the check requires."""
    parameters = inspect.signature(check).parameters.values()
    return sum(p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters)


@pytest.mark.slow  # 36 checks × 25 draws, some of them run a model: CI runs it, the quick subset does not
@pytest.mark.parametrize("check", CHECKS, ids=[f"{c.__module__.rsplit('.', 1)[-1]}.{c.__name__}" for c in CHECKS])
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])  # fmt: skip
@given(data=st.data())
def test_a_check_never_raises_whatever_it_is_given(capsys, check, data):
    given_answers = [data.draw(answers) for _ in range(required(check))]
    result = check(*given_answers)
    out = capsys.readouterr().out
    assert isinstance(result, bool)
    assert out[:1] in ("✓", "✗"), out


def test_every_check_is_guarded():
    assert len(CHECKS) == 36 and all(hasattr(check, "__wrapped__") for check in CHECKS)


# The one coercion, on the forms of a right answer the first reading saw rejected.


@pytest.mark.parametrize(
    "answer",
    [0.0707, np.float64(0.0707), np.float32(0.0707), torch.tensor(0.0707), torch.tensor([0.0707]),
     torch.tensor(0.0707, requires_grad=True), torch.tensor(0.0707, dtype=torch.float32), [0.0707], (0.0707,)],
)  # fmt: skip
def test_one_number_reads_every_form(answer):
    value, why = one_number(answer)
    assert why is None and math.isclose(value, 0.0707, rel_tol=1e-6)


def test_a_float32_answer_is_judged_at_float32s_precision():
    exact = torch.linspace(-6, 6, 241, dtype=torch.float64)
    expected = 1 - torch.tanh(exact) ** 2
    assert numbers_close((1 - torch.tanh(exact.float()) ** 2), expected) == (True, None)
    assert numbers_close(expected.half(), expected)[0] is True  # float16: its own, looser precision
    assert numbers_close(expected.half(), expected + 0.01)[0] is False  # but not a real mistake
    assert numbers_close(expected + 1e-4, expected)[0] is False  # a float64 answer off by 1e-4 is wrong


@pytest.mark.parametrize("answer, whole", [(7, 7), (7.0, 7), (np.float32(7.0), 7), (torch.tensor(7.0), 7),
                                           (7.5, None), ("7", None), (True, None)])  # fmt: skip
def test_a_whole_number_written_as_a_float_is_a_whole_number(answer, whole):
    assert whole_number(answer) == whole


@pytest.mark.parametrize("answer, words", [(math.nan, "NaN"), (torch.tensor([1.0, math.inf]), "inf"),
                                           ("0.07", "not a number"), ([], "empty"), ([[1.0], [1.0, 2.0]], "numbers")])  # fmt: skip
def test_what_is_not_numbers_gets_a_clear_reason(answer, words):
    read, why = read_numbers(answer)
    assert read is None and words in why
