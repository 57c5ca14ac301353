"""Course code printed in a notebook, as the lecture reads it: ``print(listing(fn))``.

The source is the function's own, without the ``@course_reference`` line (``course_utils.reference``). For a
function whose body an exercise of the notebook asks for, ``exercise=N`` prints only its signature and docstring:
the answer does not stand above its exercise.
"""

from __future__ import annotations

import inspect
import textwrap


def listing(function, *, exercise: int | None = None) -> str:
    """The source of ``function`` (a function or method); with ``exercise``, its signature and docstring only."""
    source = textwrap.dedent(inspect.getsource(function))
    lines = [line for line in source.splitlines() if line.strip() != "@course_reference"]
    if exercise is None:
        return "\n".join(lines) + "\n"
    header = next(index for index, line in enumerate(lines) if line.lstrip().startswith("def "))
    signature_end = next(index for index in range(header, len(lines)) if lines[index].rstrip().endswith(":"))
    docstring = inspect.getdoc(function) or ""
    body = textwrap.indent(f'"""{docstring}"""', "    ") if docstring else ""
    hidden = f"    ...  # the body is exercise {exercise}'s answer, at the end of this notebook"
    return "\n".join([*lines[: signature_end + 1], *([body] if body else []), hidden]) + "\n"
