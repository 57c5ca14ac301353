"""The run times an instructor reads are the measured ones: the course map (README.md) and the teaching page give each
notebook's full and fast "Restart and run all" times as BENCHMARKS.md's Notebooks table measured them
(``bash course.sh bench`` writes the table, then the two pages: ``benchmarks/notebook_times.py``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import notebook_times  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
TIMES = notebook_times.read_table((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"))


def test_the_benchmark_measured_every_notebook():
    assert sorted(TIMES) == STEMS, "run bash course.sh bench (or python benchmarks/run.py) to measure every notebook"


@pytest.mark.parametrize("stem", STEMS)
def test_the_course_map_and_the_teaching_page_give_the_measured_times(stem):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| {stem[:2]} \| .*$", readme, flags=re.M).group(0)
    assert f"| {notebook_times.map_entry(TIMES[stem])} |" in row, f"the course map's row for {stem}: {row[-80:]}"
    teaching = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert notebook_times.teaching_entry(TIMES[stem]) in teaching, f"the teaching page's run time for {stem}"


def test_the_docs_are_rewritten_from_the_table(tmp_path: Path):
    readme, teaching = tmp_path / "README.md", tmp_path / "teaching.md"
    readme.write_text("| 01 | [01_x](notebooks/01_x.ipynb) | topic | 99 s / 98 s | [badge](link) |\n", encoding="utf-8")
    teaching.write_text("Notebook: [01_x](01_x.ipynb) · run time: 99 s full / 98 s fast · widget\n", encoding="utf-8")
    times = {"01_x": notebook_times.Times(fast_s=12.4, full_s=17.6, long=((3, 25.0), (5, 12.0)))}
    assert notebook_times.update_docs(times, readme, teaching) == [readme, teaching]
    assert "| 18 s / 12 s |" in readme.read_text(encoding="utf-8")
    assert "run time: 18 s full / 12 s fast · widget" in teaching.read_text(encoding="utf-8")
    assert notebook_times.slow_cells_text([1.0, 30.4, 2.0, 12.5]) == "[2] 30 s; [4] 12 s"
    assert times["01_x"].slow == {3: 25.0}
