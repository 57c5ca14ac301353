"""The instructor at the projector (issue 34): every slow cell is marked in its notebook, and every notebook has a
lecture plan on the teaching page.

BENCHMARKS.md's Notebooks table lists the long cells, over 10 s in full mode, by their prompt [n] (their number among
the notebook's code cells, which is their stored ``execution_count``); ``benchmarks/notebook_times.py`` reads the
table. A slow cell is a long cell over 20 s. The stored notebook puts a ⏱ Markdown cell right before each slow cell,
and may put one before another long cell, with the seconds rounded to 5 s (within ±40 % of the benchmark's, which moves
from run to run: 08's ablation took 18 s in one quiet run and 29 s on a busy machine). The plan shows every marked
cell stored and lists it under **Slow cells**.

Each notebook's section of ``docs/teaching.md`` has a ``### Lecture plan``: a table ``| min | project | cells | how |``
whose minute ranges follow each other from 0 to 75 (one slot) or to 150 (two, "Slot 1" and "Slot 2"), each row
naming a section of the notebook by its heading (a note may follow " · ") and the prompts it shows, ``live`` (run in
class) or ``stored`` (shown as stored, as every slow cell is); then **Skip:**, **Slow cells:** (each slow cell with
its seconds, or "none") and **Predict, then reveal:**, two or three questions that each end "(answered by [n]: …)"
with numbers that cell's stored output prints.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import notebook_times  # noqa: E402  (benchmarks/notebook_times.py)

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BENCHMARKS = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
TEACHING = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")

MARK = re.compile(
    r"⏱ \*The next cell takes about (\d+) s on a 2-core CPU \(full mode\)\. "
    r"In lecture, show its stored output, or run it before class\.\*"
)
TOLERANCE = 0.4  # a mark's or the plan's seconds against the benchmark's: run-to-run noise, not a stale number
SLOT_MINUTES = 75
MINUTES = re.compile(r"(\d+)–(\d+)")  # an en dash
PROMPTS = re.compile(r"\[(\d+)\](?:–\[(\d+)\])?")  # [n] or [a]–[b]
ANSWERED = re.compile(r"\(answered by \[(\d+)\]: (.+)\)\s*$")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def notebook(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)


def code_cells(stem: str) -> dict[int, nbformat.NotebookNode]:
    """The stored notebook's code cells by prompt."""
    cells = [cell for cell in notebook(stem).cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1)), "not one clean run"
    return dict(enumerate(cells, 1))


def headings(stem: str) -> set[str]:
    found = set()
    for cell in notebook(stem).cells:
        if cell.cell_type == "markdown":
            found |= {match[1].strip() for match in re.finditer(r"^#{1,4} +(.+)$", cell.source, flags=re.M)}
    return found


def slow_cells(stem: str) -> dict[int, float]:
    """BENCHMARKS.md's slow cells of the notebook: prompt -> seconds in full mode."""
    assert notebook_times.SLOW_HEADER in BENCHMARKS, (
        f"BENCHMARKS.md's Notebooks table has no column {notebook_times.SLOW_HEADER!r}: run python benchmarks/run.py"
    )
    times = notebook_times.read_table(BENCHMARKS)
    assert stem in times, f"BENCHMARKS.md's Notebooks table has no row for {stem}: run python benchmarks/run.py"
    return times[stem].slow


def long_cells(stem: str) -> dict[int, float]:
    """BENCHMARKS.md's long cells (over 10 s) of the notebook: prompt -> seconds in full mode."""
    slow_cells(stem)  # the table and the row are there
    return dict(notebook_times.read_table(BENCHMARKS)[stem].long)


def marked_cells(stem: str) -> dict[int, int]:
    """The prompts of the cells a ⏱ note precedes in the stored notebook -> the note's seconds."""
    cells, marked = notebook(stem).cells, {}
    for index, cell in enumerate(cells):
        if cell.cell_type == "markdown" and "⏱" in cell.source:
            assert MARK.fullmatch(cell.source.strip()), f"{stem}: a ⏱ cell is one sentence, as written: {cell.source!r}"
            after = cells[index + 1] if index + 1 < len(cells) else None
            assert after is not None and after.cell_type == "code", (
                f"{stem}: a ⏱ cell must come right before a code cell"
            )
            marked[after.execution_count] = int(MARK.fullmatch(cell.source.strip())[1])
    return marked


def close(said: float, measured: float) -> bool:
    return abs(said - measured) <= TOLERANCE * measured


def section(stem: str) -> str:
    """The notebook's section of the teaching page: from its '## NN · ' heading to the next '## '."""
    match = re.search(rf"^## {stem[:2]} · .*?(?=^## |\Z)", TEACHING, flags=re.M | re.S)
    assert match, f"docs/teaching.md has no section '## {stem[:2]} · …'"
    return match[0]


def plan(stem: str) -> str:
    text = section(stem)
    assert text.count("### Lecture plan") == 1, f"{stem}: one '### Lecture plan' in its teaching-page section"
    return text.split("### Lecture plan", 1)[1]


def cells_of(row: list[str]) -> list[str]:
    """A Markdown table row's cells; a pipe inside a cell is written \\|."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def rows(stem: str) -> list[dict]:
    """The plan's table rows, in order (a two-slot plan has one table per slot)."""
    found = []
    for line in plan(stem).splitlines():
        if not line.startswith("| "):
            continue
        cells = cells_of(line)
        minutes = MINUTES.fullmatch(cells[0])
        if cells[0] == "min" or minutes is None:
            assert cells == ["min", "project", "cells", "how"], (
                f"{stem}: a plan's table is | min | project | cells | how |"
            )
            continue
        prompts = []
        for first, last in PROMPTS.findall(cells[2]):
            prompts += range(int(first), int(last or first) + 1)
        found.append({"start": int(minutes[1]), "end": int(minutes[2]), "project": cells[1], "cells": cells[2],
                      "prompts": prompts, "how": cells[3]})  # fmt: skip
    return found


def field(stem: str, name: str) -> str:
    """The text after '**name:**', up to the next blank line."""
    match = re.search(rf"^\*\*{re.escape(name)}:\*\*(.*?)(?:\n\n|\Z)", plan(stem), flags=re.M | re.S)
    assert match, f"{stem}: the lecture plan has no **{name}:**"
    return match[1].strip()


def output_text(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif "text/plain" in output.get("data", {}):
            parts.append(output.data["text/plain"])
    return "".join(parts)


def numbers(text: str) -> set[str]:
    return {number.rstrip(",") for number in NUMBER.findall(text.replace("−", "-"))}


@pytest.mark.parametrize("stem", STEMS)
def test_every_slow_cell_is_marked_and_every_mark_is_a_long_cell(stem):
    slow, long, marked = slow_cells(stem), long_cells(stem), marked_cells(stem)
    assert set(slow) <= set(marked), (
        f"{stem}: BENCHMARKS.md's slow cells {sorted(slow)} need a ⏱ mark (marked: {sorted(marked)}): mark each in "
        "notebooks/src and run python scripts/build_notebooks.py NN --prose"
    )
    assert set(marked) <= set(long), f"{stem}: ⏱ marks before {sorted(marked)}, but the long cells are {sorted(long)}"
    for prompt, seconds in marked.items():
        assert close(seconds, long[prompt]), f"{stem} [{prompt}]: ⏱ says about {seconds} s, BENCHMARKS {long[prompt]} s"


@pytest.mark.parametrize("stem", STEMS)
def test_the_plan_fills_its_slots_minute_by_minute(stem):
    table = rows(stem)
    assert table, f"{stem}: the lecture plan has no table rows"
    assert table[0]["start"] == 0
    for before, after in zip(table, table[1:]):
        assert before["end"] == after["start"], f"{stem}: {before['end']} is followed by {after['start']}"
    assert all(row["start"] < row["end"] for row in table)
    total = table[-1]["end"]
    assert total in (SLOT_MINUTES, 2 * SLOT_MINUTES), f"{stem}: the plan ends at {total}, not 75 or 150"
    if total == 2 * SLOT_MINUTES:
        assert "**Slot 1**" in plan(stem) and "**Slot 2**" in plan(stem), f"{stem}: two slots are named Slot 1, Slot 2"
        assert any(row["end"] == SLOT_MINUTES for row in table), f"{stem}: no row ends where slot 1 ends"


@pytest.mark.parametrize("stem", STEMS)
def test_the_plan_names_real_sections_and_cells_and_shows_slow_cells_stored(stem):
    cells, known, slow = code_cells(stem), headings(stem), marked_cells(stem)
    for row in rows(stem):
        where = f"{stem}, {row['start']}–{row['end']}"
        heading = row["project"].split(" · ")[0]  # a note may follow: "12. Widgets · `QKVDemo`"
        assert heading in known, f"{where}: {heading!r} is not a heading of the notebook"
        assert row["prompts"], f"{where}: no cell named"
        assert all(prompt in cells for prompt in row["prompts"]), (
            f"{where}: {row['cells']} (the notebook has [1]–[{len(cells)}])"
        )
        assert row["how"] in ("live", "stored"), f"{where}: how is live or stored, not {row['how']!r}"
        if row["how"] == "live":
            assert not set(row["prompts"]) & set(slow), f"{where}: a marked (⏱) cell shown live ({sorted(slow)})"


@pytest.mark.parametrize("stem", STEMS)
def test_the_plan_lists_the_slow_cells_and_what_to_skip(stem):
    marked, long, listed = marked_cells(stem), long_cells(stem), field(stem, "Slow cells")
    said = {int(prompt): float(seconds) for prompt, seconds in re.findall(r"\[(\d+)\][^\[]*?(\d+) s\b", listed)}
    if not marked:
        assert listed.rstrip(".") == "none", f"{stem}: the notebook marks no cell ⏱, the plan: {listed!r}"
    assert sorted(said) == sorted(marked), f"{stem}: the plan lists {sorted(said)}, the notebook marks {sorted(marked)}"
    for prompt in marked:
        assert close(said[prompt], long[prompt]), (
            f"{stem} [{prompt}]: the plan says {said[prompt]} s, BENCHMARKS {long[prompt]} s"
        )
    assert field(stem, "Skip"), f"{stem}: say which sections are left for reading"


@pytest.mark.parametrize("stem", STEMS)
def test_two_or_three_questions_each_answered_by_a_stored_output(stem):
    cells = code_cells(stem)
    items = re.split(r"^- ", field(stem, "Predict, then reveal"), flags=re.M)[1:]  # a bullet may wrap
    questions = [" ".join(item.split()) for item in items]
    assert 2 <= len(questions) <= 3, f"{stem}: {len(questions)} questions"
    for question in questions:
        answered = ANSWERED.search(question)
        assert answered, f"{stem}: a question ends '(answered by [n]: …)': {question!r}"
        prompt, answer = int(answered[1]), answered[2]
        assert prompt in cells, f"{stem}: [{prompt}] is not a cell of the notebook"
        printed = numbers(output_text(cells[prompt]))
        missing = numbers(answer) - printed
        assert numbers(answer) and not missing, f"{stem}: [{prompt}]'s stored output does not print {sorted(missing)}"
