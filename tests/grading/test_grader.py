"""The grader (``grading/``, ``scripts/grade.py``) on real submissions of notebook 05: each in a sandboxed process
of its own, its functions called on hidden inputs there, the answers judged in the grader's process.

The complete submission (each exercise answered with the solution's code) earns every point; the forgeries that
fooled the old grader (a rebound ``report``, a patched ``verdict``, a printed fake verdict) and an answer that only
calls the course's reference earn none; a crash, a loop or a shell command costs only the exercise it stops.
"""

from __future__ import annotations

import copy
import csv
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # each submission starts a process of its own: seconds each
from grading import sandbox
from grading.hidden import hidden_tests
from grading.key import answer_keys, completed, student_edition
from grading.submission import grade_submission
from tests.grading.hidden_support import course_notebook

ROOT = Path(__file__).resolve().parents[2]
STEM = "05_rnn_language_models"
KEY, HIDDEN = answer_keys()[STEM], hidden_tests()[STEM]
FULL = sum(exercise.total for exercise in HIDDEN)


def submission(tmp_path: Path, name: str, *cells: str, solved: bool = False, replace: dict | None = None) -> Path:
    """Notebook 05 as handed out (or ``solved``), with ``cells`` added at the end and exercise cells replaced
    (``replace``: exercise number → new source)."""
    notebook = copy.deepcopy(completed(course_notebook(STEM)) if solved else student_edition(course_notebook(STEM)))
    exercises = [cell for cell in notebook.cells if "exercise" in cell.metadata.get("tags", [])]
    for number, source in (replace or {}).items():
        exercises[number - 1].source = source
    notebook.cells += [nbformat.v4.new_code_cell(source) for source in cells]
    path = tmp_path / name / f"{STEM}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def grade(path: Path, timeout: float = 60):
    graded = grade_submission(path, path.parent.name, KEY, HIDDEN, timeout=timeout)
    return graded, {row.exercise: row for row in graded.rows}


def test_the_complete_submission_earns_every_point_and_the_empty_one_none(tmp_path: Path):
    graded, rows = grade(submission(tmp_path, "complete", solved=True))
    assert sum(row.points for row in graded.rows) == FULL >= 12
    assert {row.status for row in graded.rows} == {"passed"} and graded.notes == []
    graded, rows = grade(submission(tmp_path, "empty"))
    assert sum(row.points for row in graded.rows) == 0
    assert {row.status for row in graded.rows} == {"not finished"}


FORGERIES = {
    "report": "import course_utils.exercises.grading as g\n"
    "g.report = lambda *a, **k: print('✓ right') or True\nimport builtins\nbuiltins.report = g.report",
    "verdict": "import course_utils.exercises as ex, course_utils.exercises.recurrent as rec\n"
    "ex.verdict = rec.verdict = lambda ok, message: print('✓ ' + message) or True",
    "printed": "print('✓ your step is right on all cases')\n"
    'print(\'0123456789abcdef {"exercise": 1, "passed": true, "message": "right"}\')',
    "delegating": "from course_utils.models.recurrent.rnn import elman_step\n"
    "def my_elman_step(x_t, h_prev, W, U, b):\n    return elman_step(x_t, h_prev, W, U, b)",
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_forged_verdict_or_a_delegating_answer_earns_nothing(tmp_path: Path, forgery):
    graded, rows = grade(submission(tmp_path, forgery, FORGERIES[forgery]))
    assert sum(row.points for row in graded.rows) == 0
    expected = "refused" if forgery == "delegating" else "not finished"
    assert rows[1].status == expected, rows[1]
    if forgery == "delegating":
        assert "calls the course's own elman_step" in rows[1].message


def test_a_crash_a_loop_and_a_shell_command_cost_only_what_they_stop(tmp_path: Path):
    solved = {cell.source.split("def ")[1].split("(")[0]: cell.source for cell in
              completed(course_notebook(STEM)).cells if "exercise" in cell.metadata.get("tags", [])}  # fmt: skip
    crash = "import os\ndef my_sequence_loss(logits, targets):\n    os._exit(1)"
    loop = "def my_clip(grads, max_norm):\n    while True:\n        pass"
    killer = "import os\nos._exit(3)\ndef my_parameter_count(V, d, H, T):\n    return 0"
    path = submission(tmp_path, "unlucky", "!pip install six\nimport subprocess\n"
                      "subprocess.run([sys.executable, '-m', 'pip', 'uninstall', '-y', 'six'])",
                      solved=True, replace={2: crash, 3: loop, 4: killer})  # fmt: skip
    assert solved  # the solved cells are kept for exercise 1
    graded, rows = grade(path, timeout=20)
    assert (rows[1].status, rows[1].points) == ("passed", HIDDEN[0].total)
    assert rows[2].status == "crashed" and rows[3].status == "timed out"
    assert rows[4].status == "error", "the cell that killed its process is left out: the name is never bound"
    assert "code cell" in graded.rows[0].notes and "killed the process" in graded.rows[0].notes


@pytest.mark.skipif(not sandbox.probe().namespaces, reason=f"no namespaces here: {sandbox.probe().why_not}")
def test_the_sandbox_has_no_network_and_a_read_only_environment(tmp_path: Path):
    probe = textwrap.dedent("""
        import pathlib, subprocess, sys
        REACH = "import socket\\ntry: socket.create_connection(('192.0.2.1', 80), timeout=2)\\n" \\
                "except OSError as error: print(error.errno)"
        def my_parameter_count(V, d, H, T):
            found = [int(subprocess.run([sys.executable, "-c", REACH], capture_output=True, text=True).stdout)]
            try:
                (pathlib.Path(sys.prefix) / "x").write_text("x")
            except OSError as error:
                found.append(error.errno)
            return found
    """)  # a fresh Python, without the grader's own block in Python: the system's answer
    graded, rows = grade(submission(tmp_path, "probe", probe), timeout=20)
    assert "[101, 30]" in rows[4].message or "101, 30" in rows[4].message, rows[4].message  # ENETUNREACH, EROFS


def test_the_command_writes_the_ta_files_for_a_canvas_download(tmp_path: Path):
    folder = tmp_path / "canvas"
    folder.mkdir()
    for name, source in (("smithjane_1001_5001", "complete"), ("smithjane_LATE_1001_5002", "empty"),
                         ("doejohn_1002_5003", "empty")):  # fmt: skip
        notebook = completed(course_notebook(STEM)) if source == "complete" else student_edition(course_notebook(STEM))
        nbformat.write(notebook, folder / f"{name}_{STEM}.ipynb")
    (folder / "smithjane_1001_5004_05_rnn_language_models-1.ipynb").write_bytes(
        (folder / f"smithjane_1001_5001_{STEM}.ipynb").read_bytes()
    )  # the resubmission: the same complete answers
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\n1001,Jane Smith,jane@example.edu\n1002,John Doe,john@example.edu\n"
                      "1003,Ann Lee,ann@example.edu\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "grades"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(folder), "--roster", str(roster),
                           "--out", str(out), "--canvas-column", "Homework 5 (777)"],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with (out / "totals.csv").open(encoding="utf-8-sig") as file:
        totals = {row[next(iter(row))]: row for row in csv.DictReader(file)}
    assert set(totals) == {"1001", "1002", "1003"}, "one row per student: the late file and the resubmission too"
    assert float(totals["1001"]["total"]) == FULL and float(totals["1002"]["total"]) == 0
    assert (out / "feedback").is_dir() and len(list((out / "feedback").glob("*.md"))) == 3
    header = (out / "canvas.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    assert "Homework 5 (777)" in header and header.startswith("Student,ID")


def test_every_notebook_complete_earns_every_point_and_empty_none(tmp_path: Path):
    """The example students of every notebook (``--examples``), graded by the command, two at a time."""
    folder, out = tmp_path / "examples", tmp_path / "grades"
    for args in (["--examples", str(folder)], [str(folder), "--out", str(out), "--jobs", "2"]):
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), *args], capture_output=True,
                              text=True, timeout=1200)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    with (out / "grades.csv").open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    hidden = hidden_tests()
    assert len(rows) == 2 * sum(len(tests) for tests in hidden.values())
    for row in rows:
        full = float(row["out_of"])
        expected = ("passed", full) if row["student"] == "complete" else ("not finished", 0.0)
        assert (row["status"], float(row["points"])) == expected, row
