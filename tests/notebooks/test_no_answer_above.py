"""No answer above its exercise (issue 43, item 7): no cell before an exercise shows or computes the exercise's answer.

An exercise is a code cell tagged ``exercise``; its answer is the code of the ``solution`` cell that follows it, and the
course code its check compares an answer with. Three rules, each on every cell above the exercise:

- **No reference listing.** No printed output holds the body of a reference the check uses: a function or class of
  ``course_utils.models``, ``.evaluation`` or ``.analysis`` it calls (``lstm_step`` for 06's LSTM step), at most
  ``LISTED_LINES - 1`` of its lines.
- **No written answer.** No Markdown, code or output holds an expression the solution returns, read with
  the module prefixes dropped and the prose's maths as Python (``1 − tanh(z)²`` is ``1-tanh(z)**2``). The prose that
  poses the exercise (the Markdown right above it) may state what to compute.
- **No computed answer.** No code cell makes every distinctive call of the solution, with the same constant arguments
  and slices (``forget[k + 1 : t + 1].prod(dim=0)``: a slice ``[_ + 1 : _ + 1]`` and ``.prod(dim=0)``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "notebooks"))

from test_house_rules import printed_lines  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
LISTED_LINES = 3  # this many of a reference's body lines printed above its exercise give the answer away
SHORTEST = 10  # characters of a normalised answer expression, below which it is too common to be an answer
ALWAYS_MODULES = {"torch", "np", "numpy", "math", "F", "nn"}
MATHS = {"−": "-", "×": "*", "·": "*", "⋅": "*", "²": "**2", "³": "**3", "\\cdot": "*", "^{2}": "**2", "^2": "**2"}
CHECK_MODULE = re.compile(r"from\s+course_utils\.exercises\.(\w+)\s+import")
CHECK_CALL = re.compile(r"\b(check_\w+)\s*\(")
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", flags=re.S)
REFERENCE_PACKAGES = ("course_utils.models", "course_utils.evaluation", "course_utils.analysis")
# Course code a check uses that its exercise does not ask for, by check module: listing it gives no answer away.
NOT_ASKED = {
    "activations": {"forward", "xor_points", "tanh"},  # 03: weights run through the forward pass; tanh is given
    "backprop": {"Value"},  # 02: the engine the student's softplus node is built on
    "regression": {"analytic_solution"},  # 01: exercise 3 fits with torch.nn; the normal equations are section 2's
}


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def notebook(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)


# ---------------------------------------------------------------- what an exercise's answer is


def exercises(cells) -> list[tuple[int, str, list]]:
    """(index, solution code, check functions) of every exercise cell."""
    module = None
    found = []
    for n, cell in enumerate(cells):
        if cell.cell_type == "code" and (named := CHECK_MODULE.search(cell.source)):
            module = importlib.import_module(f"course_utils.exercises.{named.group(1)}")
        if cell.cell_type != "code" or "exercise" not in tags(cell):
            continue
        after = next((c for c in cells[n + 1 :] if "solution" in tags(c)), None)
        solution = "\n".join(PYTHON_BLOCK.findall(after.source)) if after is not None else ""
        checks = [getattr(module, name) for name in CHECK_CALL.findall(cell.source) if module and hasattr(module, name)]
        found.append((n, solution, checks))
    return found


def references(check) -> set:
    """The functions and classes of ``REFERENCE_PACKAGES`` that a check uses, itself or through its module's helpers,
    less its module's ``NOT_ASKED``."""
    check = inspect.unwrap(check)
    namespace, home = check.__globals__, check.__module__
    found, seen, todo = set(), set(), [check.__code__]
    while todo:
        code = todo.pop()
        if code in seen:
            continue
        seen.add(code)
        todo += [const for const in code.co_consts if inspect.iscode(const)]
        for name in code.co_names:
            value = namespace.get(name)
            if inspect.isfunction(value) and value.__module__ == home:
                todo.append(value.__code__)
            elif inspect.ismodule(value) and value.__name__.startswith(REFERENCE_PACKAGES):
                found |= {getattr(value, a) for a in code.co_names if _is_reference(getattr(value, a, None))}
            elif _is_reference(value):
                found.add(value)
    return {value for value in found if value.__name__ not in NOT_ASKED.get(home.rsplit(".", 1)[-1], set())}


def _is_reference(value) -> bool:
    return (inspect.isfunction(value) or inspect.isclass(value)) and (value.__module__ or "").startswith(
        REFERENCE_PACKAGES
    )


def body_lines(target) -> set[str]:
    """The stripped statement lines of a function's or class's source, without signatures (a ``def`` over several
    lines too), decorators, docstrings, comments and blank lines."""
    source = textwrap.dedent(definition(target))
    left_out = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and body:
            left_out.update(range(node.lineno, body[0].lineno))  # the signature, however many lines
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            left_out.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = source.splitlines()
    kept = (_statement(line) for n, line in enumerate(lines, 1) if n not in left_out)
    return {line for line in kept if line and not line.startswith(("def ", "class ", "@"))}


def definition(target) -> str:
    """The source of a function or class as its module writes it, read from the module: a decorator's wrapper
    (``course_reference``'s) does not hide it."""
    module = sys.modules[target.__module__]
    tree = ast.parse(source := inspect.getsource(module))
    scope = tree.body
    for name in target.__qualname__.split("."):
        node = next(n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
        scope = node.body
    return ast.get_source_segment(source, node, padded=True)


def _statement(line: str) -> str:
    """A source or printed line without its comment and its indentation."""
    return line.split("#")[0].strip()


def answer_expressions(solution: str, modules: set[str]) -> set[str]:
    """What the solution's functions return (or, without a function, what it assigns), normalised
    (``normalise_code``), each at least ``SHORTEST`` long."""
    try:
        tree = ast.parse(solution)
    except SyntaxError:
        return set()
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if functions:  # a function's answer is what it returns; a solution of plain values is what it assigns
        values = [node.value for f in functions for node in ast.walk(f) if isinstance(node, ast.Return) and node.value]
    else:
        values = [node.value for node in tree.body if isinstance(node, ast.Assign)]
    normalised = {normalise_code(ast.unparse(value), modules) for value in values}
    return {text for text in normalised if len(text) >= SHORTEST}


def normalise_code(text: str, modules: set[str]) -> str:
    """An expression without spaces and without the module prefixes in ``modules`` (``torch.tanh`` is ``tanh``)."""
    prefixes = "|".join(sorted(map(re.escape, modules), key=len, reverse=True))
    return re.sub(rf"\b(?:{prefixes})\.", "", text).replace(" ", "") if prefixes else text.replace(" ", "")


def normalise_prose(text: str, modules: set[str]) -> str:
    """Prose, code or output read as Python: the maths' signs as Python's, no backticks, dollars or spaces."""
    for sign, python in MATHS.items():
        text = text.replace(sign, python)
    text = re.sub(r"[`$\s]", "", text)
    return normalise_code(text, modules)


def imported_modules(cells) -> set[str]:
    """The names the notebook binds to modules (``import torch``, ``from course_utils.models.basics import activations``)."""
    names = set(ALWAYS_MODULES)
    for cell in cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(_python(cell.source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.update(
                    alias.asname or alias.name for alias in node.names if _is_module(f"{node.module}.{alias.name}")
                )
    return names


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def _python(source: str) -> str:
    """A code cell's source without IPython's magics and shell lines."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def operations(code: str) -> set[str]:
    """The distinctive operations of some code: each call with its constant arguments (``.prod(dim=0)``, ``softmax
    (_, dim=-1)``) and each slice with a constant offset (``[_+1:_+1]``); names do not count."""
    try:
        tree = ast.parse(_python(code))
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = f".{func.attr}" if isinstance(func, ast.Attribute) else getattr(func, "id", "?")
            args = [ast.unparse(a) if _constant(a) else "_" for a in node.args]
            args += [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords if _constant(k.value)]
            if any(a != "_" for a in args):
                found.add(f"{name}({','.join(args)})")
        elif isinstance(node, ast.Slice) and any(
            isinstance(bound, ast.BinOp) and isinstance(bound.right, ast.Constant) for bound in (node.lower, node.upper)
        ):
            found.add("[" + ":".join(_shape(bound) for bound in (node.lower, node.upper)) + "]")
    return found


def _constant(node) -> bool:
    """Whether an expression is a literal (``0``, ``-1``, ``"mean"``, ``(1, 2)``)."""
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def _shape(bound) -> str:
    if isinstance(bound, ast.BinOp) and isinstance(bound.right, ast.Constant):
        return f"_{type(bound.op).__name__}{bound.right.value!r}"
    return "_" if bound is not None else ""


# ---------------------------------------------------------------- the three rules


def listed_references(cells, exercise: int, checks) -> list[str]:
    """The reference listings printed above an exercise: 'cell [n] prints <name>'s body'."""
    found = []
    for target in {ref for check in checks for ref in references(check)}:
        lines = body_lines(target)
        for n, cell in enumerate(cells[:exercise]):
            if cell.cell_type != "code":
                continue
            shown = lines & {_statement(line) for line in printed_lines(cell)}
            if len(shown) >= min(LISTED_LINES, len(lines)):
                found.append(f"cell [{n}] prints {len(shown)} lines of {target.__qualname__}'s body")
    return found


def written_answers(cells, exercise: int, solution: str) -> list[str]:
    """The solution's expressions written above an exercise (its own prompt excepted)."""
    modules = imported_modules(cells)
    answers = answer_expressions(solution, modules)
    prompt = exercise
    while prompt > 0 and cells[prompt - 1].cell_type == "markdown" and "solution" not in tags(cells[prompt - 1]):
        prompt -= 1
    found = []
    for n, cell in enumerate(cells[:prompt]):
        texts = [cell.source, *(printed_lines(cell) if cell.cell_type == "code" else [])]
        text = normalise_prose("\n".join(texts), modules)
        found += [f"cell [{n}] writes the answer {answer!r}" for answer in sorted(answers) if answer in text]
    return found


def computed_answers(cells, exercise: int, solution: str) -> list[str]:
    """Code cells above an exercise that make every distinctive operation of its solution (two at least)."""
    needed = operations(solution)
    if len(needed) < 2:
        return []
    return [
        f"cell [{n}] computes the answer: {sorted(needed)}"
        for n, cell in enumerate(cells[:exercise])
        if cell.cell_type == "code" and needed <= operations(cell.source)
    ]


def leaks(cells) -> list[str]:
    """Every answer shown above its exercise, as 'exercise at [n]: cell [m] ...'."""
    found = []
    for n, solution, checks in exercises(cells):
        for leak in (
            listed_references(cells, n, checks)
            + written_answers(cells, n, solution)
            + computed_answers(cells, n, solution)
        ):
            found.append(f"exercise at [{n}]: {leak}")
    return found


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("stem", STEMS)
def test_no_answer_above_its_exercise(stem):
    cells = notebook(stem).cells
    assert exercises(cells), f"{stem}: no exercise found"
    assert not leaks(cells), f"{stem}: answers above their exercises:\n" + "\n".join(leaks(cells))


@pytest.mark.parametrize("stem", STEMS)
def test_every_exercise_has_a_solution_and_a_check(stem):
    for n, solution, checks in exercises(notebook(stem).cells):
        assert solution.strip(), f"{stem} [{n}]: no solution code after the exercise"
        assert checks, f"{stem} [{n}]: the exercise calls no check of course_utils.exercises"


def _cell(kind: str, source: str, output: str = "", cell_tags=()):
    cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
    if output:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
    cell.metadata["tags"] = list(cell_tags)
    return cell


def _exercise(source: str, solution: str) -> list:
    return [
        _cell("markdown", "**Exercise 1.** Write it."),
        _cell("code", source, cell_tags=["exercise"]),
        _cell("markdown", f"<details>\n\n```python\n{solution}\n```\n</details>", cell_tags=["solution"]),
    ]


LSTM_EXERCISE = _exercise(
    "from course_utils.exercises.lstm import check_lstm_step, check_cell_gradient\n_ = check_lstm_step(None)",
    "def my_lstm_step(x, h_prev, c_prev, W, U, b):\n    return None",
)


def test_a_printed_reference_is_a_leak_and_its_docstring_is_not():
    from course_utils.models.recurrent.rnn import lstm_step

    listing = _cell("code", "print(inspect.getsource(lstm_step))", definition(lstm_step))
    docstring = _cell("code", "print(inspect.getdoc(lstm_step))", inspect.getdoc(lstm_step))
    assert any("lstm_step's body" in leak for leak in leaks([listing, *LSTM_EXERCISE]))
    assert not leaks([docstring, *LSTM_EXERCISE])
    assert not leaks([*LSTM_EXERCISE, listing])  # below the exercise it is no leak


def test_an_answer_in_the_prose_is_a_leak_and_in_the_prompt_it_is_not():
    cells = _exercise(
        "from course_utils.exercises.activations import check_tanh_derivative\n_ = check_tanh_derivative(None)",
        "def my_tanh_derivative(z):\n    return 1 - activations.tanh(z) ** 2",
    )
    imports = _cell("code", "from course_utils.models.basics import activations")
    table = _cell("markdown", "| tanh | 2σ(2z) − 1 | 1 − tanh(z)² |")
    assert leaks([table, imports, *cells]) == ["exercise at [3]: cell [0] writes the answer '1-tanh(z)**2'"]
    assert not leaks([imports, table, *cells])  # the exercise's own prompt may state it
    assert not leaks([_cell("markdown", "| tanh | 2σ(2z) − 1 | exercise 1 |"), imports, *cells])


def test_the_solution_s_operations_computed_above_are_a_leak_and_autograd_is_not():
    cells = _exercise(
        "from course_utils.exercises.lstm import check_cell_gradient\n_ = check_cell_gradient(None)",
        "def my_cell_gradient(forget, k, t):\n    return forget[k + 1 : t + 1].prod(dim=0)",
    )
    product = _cell("code", "forget = read['forget'][subject + 1 : last + 1]\nkept = forget.prod(dim=0)")
    autograd = _cell(
        "code",
        "forget = read['forget'][subject + 1 : last + 1]\n"
        "(kept,) = torch.autograd.grad(c.sum(), at_subject)\nlow = forget.min()",
    )
    assert [leak.split(":")[1] for leak in leaks([product, *cells])] == [" cell [0] computes the answer"]
    assert not leaks([autograd, *cells])


def test_operations_keep_constants_and_drop_names():
    assert operations("a[i + 1 : j + 1].prod(dim=0)") == {".prod(dim=0)", "[_Add1:_Add1]"}
    assert operations("torch.softmax(w, dim=-1); f(x)") == {".softmax(_,dim=-1)"}
