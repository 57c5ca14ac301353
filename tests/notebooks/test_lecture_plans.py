"""The instructor at the projector (issues 34 and 42): every slow cell is marked in its notebook, and every notebook
has a lecture plan on the teaching page that fits a real 75-minute slot.

BENCHMARKS.md's Notebooks table lists the long cells, over 10 s in full mode, by their prompt [n] (their number among
the notebook's code cells, which is their stored ``execution_count``); ``benchmarks/notebook_times.py`` reads the
table. A slow cell is a long cell over 20 s. The stored notebook puts a ⏱ Markdown cell right before each slow cell,
and may put one before another long cell, with the seconds rounded to 5 s (within ±40 % of the benchmark's, which moves
from run to run: 08's ablation took 18 s in one quiet run and 29 s on a busy machine). The plan shows every marked
cell stored and lists it under **Slow cells**.

Each notebook's section of ``docs/teaching.md`` has a ``### Lecture plan``: a table ``| min | project | cells | how |``
whose minute ranges follow each other from 0 to 75 (one slot) or to 150 (two, "Slot 1" and "Slot 2"). A row is one of:

- ``live`` (run in class) or ``stored`` (shown as stored, as every slow cell is): a section of the notebook by its
  heading (a note may follow " · ") and the prompts it shows. It projects the Markdown right before each named cell,
  the cell's code and its printed text; at most ``DENSITY`` characters of that a minute (``projected``, measured on
  the stored notebook when the test runs). What a slot has no time for is listed under **Read at home:**.
- ``ask``: "Predict, then reveal · question k", 2–4 minutes, naming the cell that answers question k; it comes before
  any row that shows that cell.
- ``slack``: start-up, questions from the floor, a demo that runs long; each slot has one of ``SLACK_MINUTES``.

Then **Read at home:** (what the students read instead; the prompts it names are shown by no row), **Slow cells:**
(each slow cell with its seconds, or "none") and **Predict, then reveal:**, two or three questions that each end
"(answered by [n]: …)" with numbers that cell's stored output prints. The teaching page's "How to present" lists every
answer that nbval does not check or that fast mode changes (``moving_answers``).
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
from plan_support import cells_of  # noqa: E402  (tests/plan_support.py)

from course_utils.cell_slices import needed_cells  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BENCHMARKS = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
TEACHING = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")

MARK = re.compile(
    r"⏱ \*The next cell takes about (\d+) s on a 2-core CPU \(full mode\)\. "
    r"In lecture, show its stored output, or run it before class\.\*"
)
TOLERANCE = 0.4  # a mark's or the plan's seconds against the benchmark's: run-to-run noise, not a stale number
SLOT_MINUTES = 75
SLACK_MINUTES = 5  # one row per slot: start-up, questions from the floor, a demo that runs long
QUESTION_MINUTES = (2, 4)  # think, vote, reveal, with 120 students
# Characters of prose, code and printed text a row may project per minute. The second instructor's reading measured
# 230-407 characters of prose and code a minute on average per plan, about one screenful in 5-6 minutes, and called
# rows of ~700 too dense; printed text added 29 % over all rows when this was set: 450 × 1.3 ≈ 600.
DENSITY = 600
SHOWN, ASK, SLACK = ("live", "stored"), "ask", "slack"
FRONTEND = {"text/html", "image/png", "application/vnd.jupyter.widget-view+json"}  # not read as text on screen
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
        prompts = []  # none for a slack row, whose cells are "—"
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


def printed_text(cell: nbformat.NotebookNode) -> str:
    """What a cell prints as text: streams and plain-text results, not widgets, HTML or pictures."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif not FRONTEND & set(output.get("data", {})):
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def projected(stem: str) -> dict[int, int]:
    """Prompt -> the characters a plan row projects for that cell: the Markdown right before it (since the code cell
    before), its code and its printed text, read from the stored notebook."""
    sizes, prose, prompt = {}, 0, 0
    for cell in notebook(stem).cells:
        if cell.cell_type == "markdown":
            prose += len(cell.source)
        elif cell.cell_type == "code":
            prompt += 1
            sizes[prompt], prose = prose + len(cell.source) + len(printed_text(cell)), 0
    return sizes


def slots(stem: str) -> list[list[dict]]:
    """The plan's rows, slot by slot."""
    table = rows(stem)
    return [[row for row in table if slot * SLOT_MINUTES <= row["start"] < (slot + 1) * SLOT_MINUTES]
            for slot in range(table[-1]["end"] // SLOT_MINUTES)]  # fmt: skip


def questions(stem: str) -> list[tuple[int, str]]:
    """The plan's predict-then-reveal questions: (the prompt that answers it, the answer)."""
    items = re.split(r"^- ", field(stem, "Predict, then reveal"), flags=re.M)[1:]  # a bullet may wrap
    found = []
    for item in items:
        answered = ANSWERED.search(" ".join(item.split()))
        assert answered, f"{stem}: a question ends '(answered by [n]: …)': {item!r}"
        found.append((int(answered[1]), answered[2]))
    return found


def moving_answers() -> set[str]:
    """ "NN [n]" for every plan answer that can differ on the instructor's screen: its cell is not checked by nbval
    (no ``NBVAL_CHECK_OUTPUT``, or ``NBVAL_IGNORE_OUTPUT``), or it or a cell it needs calls ``budget(``, so fast
    mode changes it."""
    found = set()
    for stem in STEMS:
        sources = [cell.source for cell in code_cells(stem).values()]
        for prompt, _ in questions(stem):
            source = sources[prompt - 1]
            checked = "NBVAL_CHECK_OUTPUT" in source and "NBVAL_IGNORE_OUTPUT" not in source
            needs = needed_cells(sources, {prompt - 1}) - {0}
            if not checked or any("budget(" in sources[index] for index in needs):
                found.add(f"{stem[:2]} [{prompt}]")
    return found


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
        assert row["how"] in (*SHOWN, ASK, SLACK), f"{where}: how is live, stored, ask or slack, not {row['how']!r}"
        if row["how"] == SLACK:
            assert not row["prompts"], f"{where}: a slack row names no cell"
            continue
        assert row["prompts"], f"{where}: no cell named"
        assert all(prompt in cells for prompt in row["prompts"]), (
            f"{where}: {row['cells']} (the notebook has [1]–[{len(cells)}])"
        )
        if row["how"] == ASK:
            continue
        heading = row["project"].split(" · ")[0]  # a note may follow: "12. Widgets · `QKVDemo`"
        assert heading in known, f"{where}: {heading!r} is not a heading of the notebook"
        if row["how"] == "live":
            assert not set(row["prompts"]) & set(slow), f"{where}: a marked (⏱) cell shown live ({sorted(slow)})"


@pytest.mark.parametrize("stem", STEMS)
def test_each_slot_keeps_its_slack_and_times_its_questions(stem):
    plan_questions = questions(stem)
    asked = [row for row in rows(stem) if row["how"] == ASK]
    assert [row["prompts"] for row in asked] == [[prompt] for prompt, _ in plan_questions], (
        f"{stem}: one 'ask' row per question, in the questions' order, naming the cell that answers it"
    )
    for number, row in enumerate(asked, 1):
        where = f"{stem}, {row['start']}–{row['end']}"
        assert row["project"] == f"Predict, then reveal · question {number}", where
        assert QUESTION_MINUTES[0] <= row["end"] - row["start"] <= QUESTION_MINUTES[1], f"{where}: 2–4 minutes"
        shown = [other for other in rows(stem) if other["how"] in SHOWN and row["prompts"][0] in other["prompts"]]
        assert shown, f"{where}: no row shows [{row['prompts'][0]}], the answer"
        assert row["end"] <= shown[0]["start"], f"{where}: asked after its answer is shown ({shown[0]['start']})"
    for number, slot in enumerate(slots(stem), 1):
        slack = [row for row in slot if row["how"] == SLACK]
        assert [row["end"] - row["start"] for row in slack] == [SLACK_MINUTES], (
            f"{stem}, slot {number}: one 'slack' row of {SLACK_MINUTES} minutes"
        )


@pytest.mark.parametrize("stem", STEMS)
def test_no_row_projects_more_than_a_screenful_in_five_minutes(stem):
    sizes = projected(stem)
    dense = {}
    for row in rows(stem):
        if row["how"] in SHOWN:
            characters = sum(sizes[prompt] for prompt in row["prompts"])
            if characters > DENSITY * (row["end"] - row["start"]):
                dense[f"{row['start']}–{row['end']} {row['project']}"] = round(characters / (row["end"] - row["start"]))
    assert not dense, (
        f"{stem}: rows over {DENSITY} characters of prose, code and printed text a minute (per minute): {dense}; "
        "give them minutes, or move cells to **Read at home:**"
    )


def test_projected_counts_the_prose_before_a_cell_its_code_and_its_printed_text():
    sizes, cells = projected("02_computation_graphs"), notebook("02_computation_graphs").cells
    code = [index for index, cell in enumerate(cells) if cell.cell_type == "code"]
    before = sum(
        len(cells[index].source) for index in range(code[3] + 1, code[4]) if cells[index].cell_type == "markdown"
    )
    assert before > 0
    assert sizes[5] == before + len(cells[code[4]].source) + len(printed_text(cells[code[4]]))
    assert len(sizes) == len(code)


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
    home = field(stem, "Read at home")
    assert home, f"{stem}: say which sections and cells are left for reading"
    shown = {prompt for row in rows(stem) if row["how"] in SHOWN for prompt in row["prompts"]}
    named = {prompt for first, last in PROMPTS.findall(home) for prompt in range(int(first), int(last or first) + 1)}
    assert named <= set(code_cells(stem)), f"{stem}: **Read at home:** names {sorted(named - set(code_cells(stem)))}"
    assert not named & shown, f"{stem}: **Read at home:** names {sorted(named & shown)}, which a row shows"


@pytest.mark.parametrize("stem", STEMS)
def test_two_or_three_questions_each_answered_by_a_stored_output(stem):
    cells, plan_questions = code_cells(stem), questions(stem)
    assert 2 <= len(plan_questions) <= 3, f"{stem}: {len(plan_questions)} questions"
    for prompt, answer in plan_questions:
        assert prompt in cells, f"{stem}: [{prompt}] is not a cell of the notebook"
        printed = numbers(output_text(cells[prompt]))
        missing = numbers(answer) - printed
        assert numbers(answer) and not missing, f"{stem}: [{prompt}]'s stored output does not print {sorted(missing)}"


def test_the_teaching_page_lists_the_answers_that_can_move():
    match = re.search(r"^- \*\*Answers that can move\.\*\*(.*?)(?=^- |^#|\Z)", TEACHING, flags=re.M | re.S)
    assert match, "docs/teaching.md's How to present has no '- **Answers that can move.**' item"
    listed = set(re.findall(r"\b\d\d \[\d+\]", " ".join(match[1].split())))
    expected = moving_answers()
    assert listed == expected, (
        f"listed but not moving: {sorted(listed - expected)}; moving but not listed: {sorted(expected - listed)}"
    )
