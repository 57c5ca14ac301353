"""The rules for every notebook cell that nbval runs, wherever the notebook lies (notebooks/, tests/artifacts/, a
scratch folder): a hook in tests/conftest.py reaches only the tests under tests/, so these live at the root.

- A checked cell (``# NBVAL_CHECK_OUTPUT``) is compared by nbval's own comparison, forgiving one unit in the last
  printed digit of a decimal number and nothing else (``tests/nbval_support.py``).
- No cell may print a deprecation warning, checked or not.
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))  # the *_support modules, as the tests import them
from nbval_support import compare_forgiving_last_digit  # noqa: E402

# What a library prints when the course calls an API it is about to remove (a FutureWarning or
# DeprecationWarning, or transformers' logged "... are deprecated. Use ... instead."). The next release
# turns it into an error, so a notebook must not print one anywhere, checked cell or not.
# The student edition is stored without outputs, so nbval has nothing to compare there: course.sh newest runs it under
# nbval with the stored outputs kept (build_notebooks.py --student --outputs --out build/student_edition).
collect_ignore = ["notebooks/student"]

DEPRECATION = re.compile(r"(Future|Deprecation)Warning|\b(is|are) deprecated\b")


def is_notebook_cell(item) -> bool:
    return item.path.suffix == ".ipynb" and hasattr(item, "raise_cell_error")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Compare a notebook cell forgiving the last printed digit; after it ran, fail it if it printed a deprecation
    warning to stderr."""
    if is_notebook_cell(item):
        item.compare_outputs = functools.partial(compare_forgiving_last_digit, item)
    result = yield
    for output in getattr(item, "test_outputs", None) or []:
        text = output.get("text", "") if output.get("name") == "stderr" else ""
        if DEPRECATION.search(text):
            item.raise_cell_error(f"the cell printed a deprecation warning; use the new API:\n{text.strip()}")
    return result
