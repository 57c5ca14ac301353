"""The grader, ``scripts/grade.py``: a folder of submitted notebooks in, one CSV row per student and exercise out,
judged by the course's own checks in a fresh kernel with no network.

The slow tests run the real command on real notebooks: the two example students of every notebook (``complete``,
each exercise answered with its solution's code, and ``empty``, the student edition as handed out), whose scores
are known, and students whose answers loop, raise, reach for the network, forge a verdict or kill their kernel.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import grade  # noqa: E402
from build_notebooks import EXERCISE  # noqa: E402

STEMS = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
KEYS = grade.answer_keys()


def course_notebook(stem: str) -> nbformat.NotebookNode:
    return nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)


def run_grader(folder: Path, *args: str) -> tuple[list[dict], str]:
    out = folder.parent / f"{folder.name}.csv"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), str(folder), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with out.open(encoding="utf-8") as file:
        return list(csv.DictReader(file)), done.stdout


def by_student(rows: list[dict]) -> dict:
    return {(row["student"], row["notebook"], row["exercise"]): row for row in rows}


# ---------------------------------------------------------------- the answer key and the submissions


def test_the_answer_key_holds_every_exercise_of_the_course_with_its_check():
    assert sorted(KEYS) == STEMS
    for stem, key in KEYS.items():
        tagged = [cell for cell in course_notebook(stem).cells if EXERCISE in cell.metadata.get("tags", [])]
        assert [exercise.number for exercise in key.exercises] == list(range(1, len(tagged) + 1))
        namespace = {}
        exec(key.imports, namespace)  # the checks' imports, as the grader runs them
        assert all(callable(namespace.get(exercise.check_name)) for exercise in key.exercises), stem
    assert sum(len(key.exercises) for key in KEYS.values()) == 36


@pytest.mark.parametrize(
    "line, call",
    [("_ = check_fit(my_beta)", "check_fit(my_beta)"), ("check_xor_network(W1, b1, W2, b2);", "check_xor_network(W1, b1, W2, b2)"),
     ("_=check_fit( my_beta )", "check_fit(my_beta)"), ("print(check_fit(b))", None), ("my_beta = None", None),
     ("check_fit(", None), ("fit(my_beta)", None)],
)  # fmt: skip
def test_a_check_line_is_read_in_either_style_and_nothing_else_is(line, call):
    assert grade.check_call(line) == call


def write(path: Path, notebook: nbformat.NotebookNode | None = None, text: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_text(text, encoding="utf-8")
    else:
        nbformat.write(notebook or nbformat.v4.new_notebook(), path)
    return path


def test_the_student_and_the_notebook_come_from_folders_names_or_metadata(tmp_path: Path):
    tagged = nbformat.v4.new_notebook(metadata={"course": {"notebook": "04_ngram_and_feedforward_lms"}})
    write(tmp_path / "alice" / "01_linear_regression.ipynb")
    write(tmp_path / "bob_02_computation_graphs.ipynb")
    write(tmp_path / "carol-03.ipynb")
    write(tmp_path / "homework.ipynb", tagged)
    write(tmp_path / "dave_notes.ipynb")
    write(tmp_path / "erin_05.ipynb", text="{ not json")
    found = {(s.student, s.notebook or s.problem) for s in grade.find_submissions(tmp_path, KEYS)}
    assert found == {
        ("alice", "01_linear_regression"), ("bob", "02_computation_graphs"), ("carol", "03_activation_functions"),
        ("homework", "04_ngram_and_feedforward_lms"),
        ("dave_notes", "neither its metadata nor its name says which course notebook it is"),
        ("erin", "not a readable notebook (NotJSONError)"),
    }  # fmt: skip


def test_the_grader_runs_only_what_the_checks_need_and_each_check_once():
    submission = grade.completed(course_notebook("02_computation_graphs"))
    notebook, kept = grade.grading_notebook(submission, KEYS["02_computation_graphs"], "t0ken")
    code = [cell.source for cell in submission.cells if cell.cell_type == "code"]
    assert len(kept) < len(code) / 2, "the measurements between the set-up and the exercises are left out"
    assert 1 in kept and 2 in kept, "the set-up cell and the cell that calls setup_notebook"
    sources = [cell.source for cell in notebook.cells]
    for exercise in KEYS["02_computation_graphs"].exercises:
        assert sum(exercise.check in source for source in sources) == 1, exercise.check
        assert sources[-4 + exercise.number] == f"report('t0ken', {exercise.number}, lambda: {exercise.check})"
    assert sources[0].endswith("block_network()"), "no network from the first cell on"


def test_a_solution_gives_the_grader_exactly_one_python_block():
    assert grade.solution_code("<details>\n```python\nx = 1\n```\n</details>") == "x = 1"
    for wrong in ("<details>x = 1</details>", "```python\na\n```\n```python\nb\n```"):
        with pytest.raises(ValueError, match="Python blocks, not one"):
            grade.solution_code(wrong)


def test_the_summary_counts_points_per_student_and_notebook():
    rows = [grade.Row("ann", "01_x", 1, "check_a", "passed", 1, ""), grade.Row("ann", "01_x", 2, "check_b", "wrong", 0, ""),
            grade.Row("ben", "01_x", 1, "check_a", "not submitted", 0, ""), grade.Row("ben", "01_x", 2, "check_b", "not submitted", 0, "")]  # fmt: skip
    assert grade.summary(rows).splitlines()[1:] == [
        "ann" + " " * 13 + "    1/2  1/2",
        "ben" + " " * 13 + "    0/2  0/2",
    ]


def test_the_kernel_side_reports_refuses_the_network_and_never_raises(capsys):
    from course_utils.exercises import grading

    assert grading.report("tok", 1, lambda: print("noise\n✓ right") or True) is True
    assert grading.report("tok", 2, lambda: undefined_answer) is False  # noqa: F821
    assert grading.report("tok", 3, lambda: 1 / 0) is False
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == 'tok {"exercise": 1, "passed": true, "message": "right"}'
    assert "name 'undefined_answer' is not defined: its cell raised" in lines[1]
    assert "the check could not run: ZeroDivisionError" in lines[2]
    script = ("from course_utils.exercises.grading import block_network; import socket, urllib.request; block_network()\n"
              "try:\n    urllib.request.urlopen('http://example.com', timeout=5)\nexcept OSError as error:\n    print(error)\n"
              "listener = socket.socket(); listener.bind(('127.0.0.1', 0)); listener.listen()\n"
              "socket.create_connection(listener.getsockname(), timeout=5).close(); print('loopback works')")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "grading runs with no network: example.com is not looked up" in done.stdout, done.stdout + done.stderr
    assert "loopback works" in done.stdout


# ---------------------------------------------------------------- the real command, on real notebooks


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_the_two_example_students_get_the_expected_table(tmp_path: Path, stem):
    grade.write_examples(tmp_path / "all")
    folder = tmp_path / "submissions"
    for student in ("complete", "empty"):
        write(folder / student / f"{stem}.ipynb", nbformat.read(tmp_path / "all" / student / f"{stem}.ipynb", 4))
    rows, printed = run_grader(folder)
    exercises = KEYS[stem].exercises
    assert [(r["student"], r["notebook"], r["exercise"], r["check"]) for r in rows] == [
        (student, stem, str(e.number), e.check_name) for student in ("complete", "empty") for e in exercises
    ]
    for row in rows:
        if row["student"] == "complete":
            assert (row["status"], row["points"], row["notes"]) == ("passed", "1", ""), row
        else:
            assert (row["status"], row["points"]) == ("not finished", "0") and "not finished yet" in row["message"], row
    total = len(exercises)
    assert f"{total}/{total}  {total}/{total}" in printed and f"0/{total}  0/{total}" in printed


@pytest.mark.slow
def test_students_whose_answers_loop_raise_reach_out_forge_or_crash_still_get_every_row(tmp_path: Path):
    stem = "02_computation_graphs"

    def student(name: str, **edits) -> None:
        notebook = grade.completed(course_notebook(stem))
        exercises = [cell for cell in notebook.cells if EXERCISE in cell.metadata.get("tags", [])]
        for number, edit in edits.items():
            cell = exercises[int(number[1:]) - 1]
            cell.source = edit(cell.source)
        write(tmp_path / "in" / name / f"{stem}.ipynb", notebook)

    student("looper", e2=lambda s: s.replace("def softplus(x):", "def softplus(x):\n    while True:\n        pass"))
    student(
        "raiser", e3=lambda s: "output_layer_grads = undefined_name\n" + s.replace("def output_layer_grads", "def f")
    )
    student("networker", e2=lambda s: s.replace(
        "def softplus(x):", "def softplus(x):\n    import urllib.request\n    urllib.request.urlopen('http://example.com')"))  # fmt: skip
    student("forger", e1=lambda s: s.replace('"y": 11', '"y": 5') + '\nprint(\'{"exercise": 1, "passed": true}\')')
    student("killer", e2=lambda s: "import os\nos._exit(1)\n" + s)
    write(
        tmp_path / "in" / "elsewhere" / "03_activation_functions.ipynb",
        grade.completed(course_notebook("03_activation_functions")),
    )
    rows = by_student(run_grader(tmp_path / "in", "--timeout", "10")[0])
    status = {key: row["status"] for key, row in rows.items()}
    assert status[("looper", stem, "2")] == "timed out"
    assert "ran over the time limit" in rows[("looper", stem, "2")]["message"]
    assert status[("raiser", stem, "3")] == "error"
    assert "undefined_name" in rows[("raiser", stem, "3")]["notes"]
    assert status[("networker", stem, "2")] == "wrong"
    assert "grading runs with no network" in rows[("networker", stem, "2")]["message"]
    assert status[("forger", stem, "1")] == "wrong"
    assert {status[("killer", stem, n)] for n in "123"} == {"crashed"}
    assert {status[(name, stem, n)] for name in ("looper", "raiser", "networker", "forger") for n in "123"} - {
        "timed out",
        "error",
        "wrong",
    } == {"passed"}, "each student's other answers still pass"
    assert {status[("elsewhere", stem, n)] for n in "123"} == {"not submitted"}
    assert {status[("looper", "03_activation_functions", n)] for n in "123"} == {"not submitted"}
    assert {status[("elsewhere", "03_activation_functions", n)] for n in "123"} == {"passed"}
