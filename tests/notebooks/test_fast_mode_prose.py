"""A sentence must not be wrong in fast mode: the prose that states a budget's full-mode number names the mode.

CI and the fast benchmarks run the notebooks in fast mode, where ``budget(full=…, fast=…)`` returns its second
number. A Markdown cell after such a budget (in its section, or in the summary) that states the full-mode number with
the budget's unit ("150 steps") must name the mode ("full mode", "fast mode") or give the fast number too. So must
each line of the notebook's lecture plan (docs/teaching.md), whose questions an instructor asks of a live run.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from build_notebooks import parse_cells  # noqa: E402
from plan_support import plan_text  # noqa: E402  (tests/plan_support.py)

SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
# the noun a budget counts, from the name it is bound to (its last word)
UNITS = {
    "steps": r"(?:[a-z-]+ )?steps?",
    "trials": r"(?:[a-z-]+ )?trials?",
    "lrs": r"learning rates?",
    "factors": r"(?:α )?values?",
}
MODE = re.compile(r"\b(full|fast) mode\b|\bbudget\(", re.IGNORECASE)
SUMMARY = re.compile(r"^## .*\bSummary\b", re.MULTILINE)


@dataclass(frozen=True)
class Budget:
    cell: int
    name: str
    full: int
    fast: int

    def stated(self, text: str, number: int) -> bool:
        """Whether ``text`` states ``number`` with this budget's unit ("150 steps", "1,500 training steps")."""
        forms = {str(number), f"{number:,}"}
        spelled = "|".join(re.escape(form) for form in forms)
        return re.search(rf"(?<![\d.,])(?:{spelled}) {UNITS[self.unit]}\b", text) is not None

    @property
    def unit(self) -> str:
        return self.name.split("_")[-1]


def imported_names(cells) -> dict:
    """The notebook's imports, run, so that ``budget(full=zoo.TRAINING["steps"], …)`` can be read."""
    names: dict = {}
    for cell in cells:
        if cell.cell_type != "code":
            continue
        for node in ast.parse(cell.source).body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                exec(compile(ast.Module([node], []), "<imports>", "exec"), names)
    return names


def bound_name(call: ast.Call, parents: dict) -> str | None:
    """The name a ``budget(…)`` call is bound to: an assignment's target or a call's keyword."""
    parent = parents.get(call)
    if isinstance(parent, ast.keyword):
        return parent.arg
    if isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(parent), ast.Assign):
        targets = parents[parent].targets[0]
        if isinstance(targets, ast.Tuple):
            return getattr(targets.elts[parent.elts.index(call)], "id", None)
    return None


@cache
def budgets(source: Path) -> tuple[list, list[Budget]]:
    """The notebook's cells and its scalar budgets whose unit the prose can state."""
    cells = parse_cells(source.read_text(encoding="utf-8"))
    names = imported_names(cells)
    found = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "budget"):
                continue
            values = {k.arg: k.value for k in call.keywords}
            try:
                full, fast = (
                    eval(compile(ast.Expression(values[k]), "<budget>", "eval"), names) for k in ("full", "fast")
                )
            except NameError:  # a number the notebook computes at run time
                continue
            name = bound_name(call, parents)
            if isinstance(full, int) and full != fast and name and name.split("_")[-1] in UNITS:
                found.append(Budget(index, name, full, fast))
    return cells, found


def cells_that_read(cells, budget: Budget) -> list[int]:
    """The Markdown cells after the budget's cell up to the next section, and the summary's."""
    read, in_section, in_summary = [], False, False
    for index, cell in enumerate(cells):
        if index == budget.cell:
            in_section = True
        if cell.cell_type != "markdown":
            continue
        if re.match(r"## ", cell.source):
            in_section = False
            in_summary = SUMMARY.match(cell.source) is not None
        if in_section or in_summary:
            read.append(index)
    return read


def test_the_guard_finds_the_budgets_it_reads():
    found = {(s.name[:2], b.name, b.full, b.fast) for s in SOURCES for b in budgets(s)[1]}
    assert ("08", "ablation_steps", 150, 100) in found
    assert ("04", "steps", 1500, 100) in found  # read from the zoo's recipe
    assert ("01", "n_lrs", 16, 8) in found  # one of a tuple's targets


def test_the_guard_reads_a_sentence_the_way_a_student_does():
    budget = Budget(cell=0, name="ablation_steps", full=150, fast=100)
    assert budget.stated("So in 150 steps of a 6 × 32 model, LayerNorm costs more.", 150)
    assert budget.stated("after 1,500 training steps", 1500) and not budget.stated("after 1500.5 steps", 1500)
    assert not budget.stated("150 wide", 150) and not MODE.search("in 150 steps")
    assert MODE.search("in 150 steps (100 in fast mode)")


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: path.stem)
def test_prose_states_a_full_mode_budget_only_with_its_mode(source):
    cells, found = budgets(source)
    texts = [(f"cell {i}", cells[i].source) for budget in found for i in cells_that_read(cells, budget)]
    flat = flat_statements(texts, found)
    assert not flat, f"{source.name}: name the mode, or give both numbers: {flat}"


def flat_statements(texts: list[tuple[str, str]], found: list[Budget]) -> list[str]:
    """``(where, text)`` pairs that state a budget's full-mode number without its mode or its fast number."""
    return [
        f"{where} states {budget.full} {budget.unit} ({budget.name}; {budget.fast} in fast mode)"
        for where, text in texts
        for budget in found
        if budget.stated(text, budget.full) and not (MODE.search(text) or budget.stated(text, budget.fast))
    ]


@pytest.mark.parametrize("source", SOURCES, ids=lambda path: path.stem)
def test_the_lecture_plan_states_a_full_mode_budget_only_with_its_mode(source):
    plan = plan_text(source.stem) or ""
    lines = [(f"docs/teaching.md, {source.stem[:2]}'s plan: {line[:60]!r}", line) for line in plan.splitlines()]
    flat = flat_statements(lines, budgets(source)[1])
    assert not flat, f"name the mode, or give both numbers: {flat}"
