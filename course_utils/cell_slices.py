"""The few cells of a notebook that some chosen cells need: the chosen cells, the set-up cell, and every earlier
cell that binds a name one of them reads, transitively.

The browser test and ``course.sh lecture`` run only the cells a notebook's widgets need (``frontend_cells``); the
grader runs only those a submission's exercises need (``needed_cells`` of the exercise cells). The reading is
static (Python's ``ast``): what a cell binds and what it reads from earlier cells.
"""

from __future__ import annotations

import ast
import re

# Outputs that JupyterLab's own renderers draw (widgets, HTML, LaTeX, Markdown, JavaScript), unlike plain text and
# images, which nbval has compared already.
FRONTEND_MIME = re.compile(r"^(application/vnd\.jupyter\.widget|text/(html|latex|markdown)$|application/javascript$)")


def shows_frontend_output(cell) -> bool:
    """The cell's saved outputs hold something JupyterLab's renderers draw, e.g. a widget."""
    return any(FRONTEND_MIME.match(mime) for output in cell.get("outputs", []) for mime in output.get("data", {}))


def python_lines(source: str) -> str:
    """``source`` without its IPython magic and shell lines (``%…``, ``!…``)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def cell_names(source: str, modules: set[str]) -> tuple[set[str], set[str]]:
    """(names the cell may bind or change, names it reads from earlier cells). A ``SyntaxError`` for source that
    is not Python.

    Binding: assignment, ``def``/``class``, ``import``, ``x.attr = …``/``x[i] = …``, and a statement that is only a
    method call, ``x.fit(…)``, on a name that is not one of the notebook's ``modules`` (it may change ``x``). Loop
    and comprehension variables, parameters, a function's own variables, and what a statement reads after an
    earlier one of the cell bound it, are the cell's own.
    """
    binds, reads = set(), set()
    for statement in ast.parse(python_lines(source)).body:
        bound, read, local = _statement_names(statement)
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            if isinstance(statement.value.func, ast.Attribute):
                bound |= _base_name(statement.value.func.value) - modules
        reads |= read - binds - local
        binds |= bound - local
    return binds, reads


def _statement_names(statement) -> tuple[set[str], set[str], set[str]]:
    """(names bound, names read, names local to it: loop and comprehension variables, parameters)."""
    bound, read, local = set(), set(), set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            if not isinstance(node, ast.ClassDef):
                local |= _function_locals(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            bound |= _base_name(node.value)
        elif isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            local |= {name.id for name in ast.walk(node.target) if isinstance(name, ast.Name)}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            local.add(node.name)
    return bound, read, local


def _function_locals(function) -> set[str]:
    """The names a function's body assigns, less those it declares ``global`` or ``nonlocal``: Python makes them
    the function's own, so they are neither read from nor bound in the notebook."""
    stored, declared = set(), set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stored.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names)
    return stored - declared


def _base_name(node) -> set[str]:
    """``{x}`` for ``x``, ``x.a``, ``x[i]``, ``x.f()``…; empty when the chain does not start at a name."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return {node.id} if isinstance(node, ast.Name) else set()


def imported_names(sources) -> set[str]:
    """Every name an ``import`` binds anywhere in ``sources`` (modules: calling their functions changes no name)."""
    names = set()
    for source in sources:
        try:
            tree = ast.parse(python_lines(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def needed_cells(sources: list[str], targets: set[int]) -> set[int]:
    """Indices into ``sources`` (the code cells, in order) to run so that the ``targets`` run as in the whole
    notebook: the targets, the first cell (the set-up) and every earlier cell that binds a name one of them reads,
    transitively. A cell that is not Python keeps itself and every cell before it."""
    keep, needed, modules = {0} if sources else set(), set(), imported_names(sources)
    for index in range(len(sources) - 1, -1, -1):
        try:
            binds, reads = cell_names(sources[index], modules)
        except SyntaxError:
            return keep | set(range(index + 1))
        if index == 0 or index in targets or binds & needed:
            keep.add(index)
            needed |= reads
    return keep


def frontend_cells(notebook) -> set[int]:
    """Indices (among the code cells) of what the browser test runs: the cells whose saved outputs JupyterLab's
    renderers draw, and what they need (``needed_cells``).

    The rest, measurements that print text or draw a picture, nbval has run and compared already. A notebook with
    no saved outputs keeps every cell.
    """
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not any(cell.get("outputs") for cell in cells):
        return set(range(len(cells)))
    drawn = {index for index, cell in enumerate(cells) if shows_frontend_output(cell)}
    return needed_cells([cell.source for cell in cells], drawn)
