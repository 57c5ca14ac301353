"""The notebooks' run times, from BENCHMARKS.md's Notebooks table (``benchmarks/run.py`` writes it) into the course
map (README.md) and the teaching page (docs/teaching.md); and the long cells, over ``LONG_CELL_S`` in full mode. A
notebook marks ⏱ every slow cell (over ``SLOW_CELL_S``), and its lecture plan shows it stored rather than run live; it
may mark a long cell too, since a cell's time moves from run to run (08's ablation took 18 s in one quiet run, 29 s
on a busy machine).

A cell is named by its prompt, [n]: its number among the code cells, which a top-to-bottom run shows beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW_CELL_S = 20.0  # must be marked ⏱ and shown stored
LONG_CELL_S = 10.0  # listed in the table; may be marked
SLOW_HEADER = f"cells over {LONG_CELL_S:g} s (full)"
SLOW_CELL = re.compile(r"\[(\d+)\] (\d+) s")


@dataclass(frozen=True)
class Times:
    fast_s: float
    full_s: float
    long: tuple[tuple[int, float], ...]  # (prompt, seconds) of each cell over LONG_CELL_S in full mode

    @property
    def slow(self) -> dict[int, float]:
        """The cells over SLOW_CELL_S: prompt -> seconds."""
        return {prompt: seconds for prompt, seconds in self.long if seconds > SLOW_CELL_S}


def long_cells(code_cell_s: list[float]) -> list[tuple[int, float]]:
    return [(prompt, seconds) for prompt, seconds in enumerate(code_cell_s, 1) if seconds > LONG_CELL_S]


def slow_cells_text(code_cell_s: list[float]) -> str:
    """The table's entry: each long cell as "[n] N s"."""
    return "; ".join(f"[{prompt}] {seconds:.0f} s" for prompt, seconds in long_cells(code_cell_s)) or "none"


def read_table(benchmarks_md: str) -> dict[str, Times]:
    """Each notebook's row of the Notebooks table: fast and full wall time and the slow cells."""
    section = benchmarks_md.split("## Notebooks", 1)[1].split("\n## ", 1)[0]
    header = next(line for line in section.splitlines() if line.startswith("| notebook |"))
    columns = [name.strip() for name in header.strip("|").split("|")]
    times = {}
    for line in section.splitlines():
        if re.match(r"\| \d\d_", line):
            row = dict(zip(columns, (cell.strip() for cell in line.strip("|").split("|"))))
            long = tuple((int(p), float(s)) for p, s in SLOW_CELL.findall(row.get(SLOW_HEADER, "")))
            times[row["notebook"]] = Times(float(row["fast (s)"]), float(row["full (s)"]), long)
    return times


def map_entry(times: Times) -> str:
    return f"{times.full_s:.0f} s / {times.fast_s:.0f} s"


def teaching_entry(times: Times) -> str:
    return f"run time: {times.full_s:.0f} s full / {times.fast_s:.0f} s fast"


def update_docs(times: dict[str, Times], readme: Path = ROOT / "README.md",
                teaching: Path = ROOT / "docs" / "teaching.md") -> list[Path]:  # fmt: skip
    """Write each notebook's times into its course-map row and its teaching-page line; return the files changed."""
    changed = []
    text = readme.read_text(encoding="utf-8")
    new = text
    for stem, entry in times.items():
        row = re.compile(rf"^(\| {stem[:2]} \| .*\| )\d+ s / \d+ s( \| [^|]*\|)$", flags=re.M)
        new = row.sub(lambda match: f"{match[1]}{map_entry(entry)}{match[2]}", new)
    if new != text:
        readme.write_text(new, encoding="utf-8")
        changed.append(readme)
    text = teaching.read_text(encoding="utf-8")
    new = text
    for stem, entry in times.items():
        line = re.compile(rf"(\[{stem}\]\({stem}\.ipynb\) · )run time: \d+ s full / \d+ s fast")
        new = line.sub(lambda match: match[1] + teaching_entry(entry), new)
    if new != text:
        teaching.write_text(new, encoding="utf-8")
        changed.append(teaching)
    return changed
