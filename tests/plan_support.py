"""The lecture plans of docs/teaching.md, read for the tests that check what a plan shows (the projection test, the
house rule): each notebook's ``### Lecture plan`` table ``| min | project | cells | how |`` names cells by their
prompts [n] (the n-th code cell of the stored notebook). The same reading as tests/notebooks/test_lecture_plans.py,
which checks the plans' structure."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEACHING = ROOT / "docs" / "teaching.md"
MINUTES = re.compile(r"(\d+)–(\d+)")  # an en dash
PROMPTS = re.compile(r"\[(\d+)\](?:–\[(\d+)\])?")  # [n] or [a]–[b]


def plan_text(stem: str, teaching: str | None = None) -> str | None:
    """The text after the notebook's ``### Lecture plan`` in its '## NN · ' section, or None without one."""
    teaching = TEACHING.read_text(encoding="utf-8") if teaching is None else teaching
    match = re.search(rf"^## {stem[:2]} · .*?(?=^## |\Z)", teaching, flags=re.M | re.S)
    if not match or "### Lecture plan" not in match[0]:
        return None
    return match[0].split("### Lecture plan", 1)[1]


def cells_of(row: str) -> list[str]:
    """A Markdown table row's cells; a pipe inside a cell is written \\|."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def plan_prompts(text: str) -> list[int]:
    """The prompts the plan's table rows name in their "cells" column, in order, each once."""
    shown: list[int] = []
    for line in text.splitlines():
        if not line.startswith("| "):
            continue
        cells = cells_of(line)
        if len(cells) < 3 or not MINUTES.fullmatch(cells[0]):
            continue  # the header or its rule
        for first, last in PROMPTS.findall(cells[2]):
            shown += [n for n in range(int(first), int(last or first) + 1) if n not in shown]
    return shown


def shown_prompts(stem: str, teaching: str | None = None) -> list[int] | None:
    """The prompts [n] of the cells the notebook's lecture plan shows, or None when it has no plan."""
    text = plan_text(stem, teaching)
    return None if text is None else plan_prompts(text)
