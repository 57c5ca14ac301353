"""The hidden tests as otter-grader autograders (grading/otter.py): one otter question per exercise, one hidden test
case per hidden case with its points; and otter's own runner (no Docker) gives each exercise of the same submissions
the points the course's grader gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from grading.hidden import hidden_tests
from grading.key import answer_keys, write_examples
from grading.otter import CASES, _hidden_module_name, case_verdict, write_assignment, zip_name
from grading.submission import grade_submission
from tests.grading.hidden_support import solved_namespace

pytest.importorskip("otter")
from otter.test_files import ExceptionTestFile  # noqa: E402

FAST_STEM = "05_rnn_language_models"
GRADED = ("05_rnn_language_models", "02_computation_graphs")  # those whose hidden tests exist are graded both ways


@pytest.fixture(scope="module")
def zips(tmp_path_factory) -> Path:
    return write_assignment(tmp_path_factory.mktemp("otter"))  # every notebook's


def test_the_zip_holds_otters_config_and_one_hidden_question_per_exercise_with_the_hidden_points(zips):
    with zipfile.ZipFile(zips / zip_name(FAST_STEM)) as archive:
        names = set(archive.namelist())
        assert {"otter_config.json", "environment.yml", "run_autograder", "setup.sh", "run_otter.py"} <= names
        assert json.loads(archive.read("otter_config.json"))["lang"] == "python"
        tests = {name: archive.read(name).decode() for name in names if name.startswith("tests/")}
        exercises = hidden_tests()[FAST_STEM]
        assert len(tests) == len(exercises)
        for exercise in exercises:
            parsed = ExceptionTestFile.from_string(tests[f"tests/e{exercise.number:02d}.py"])
            cases = exercise.cases() if exercise.cases else [None]
            assert parsed.name == f"Exercise {exercise.number}"
            assert len(parsed.test_cases) == len(cases)
            assert all(case.hidden for case in parsed.test_cases)
            assert [case.points for case in parsed.test_cases] == [
                case.points if case else exercise.points for case in cases
            ]
            assert sum(case.points for case in parsed.test_cases) == exercise.total
            assert f"files/{CASES}/{FAST_STEM}-e{exercise.number}.pt" in names
        assert f"files/grading/hidden/{_hidden_module_name(FAST_STEM)}.py" in names


def test_gradescopes_run_autograder_runs_the_notebook_in_fast_mode_as_the_course_grader_does(zips):
    with zipfile.ZipFile(zips / zip_name(FAST_STEM)) as archive:
        script = archive.read("run_autograder").decode()
        environment = archive.read("environment.yml").decode()
    assert script.startswith("#!/bin/bash\nexport COURSE_FAST=1\n") and "run_otter.py" in script
    assert "otter-grader" in environment and "transformers==" in environment


FUNCTIONS = [(stem, e.number) for stem, tests in sorted(hidden_tests().items()) for e in tests if e.cases is not None]


@pytest.fixture(scope="module")
def unpacked(zips, tmp_path_factory) -> Path:
    """Every notebook's zip, its files as otter lays them next to a submission."""
    folder = tmp_path_factory.mktemp("unpacked")
    for stem in hidden_tests():
        with zipfile.ZipFile(zips / zip_name(stem)) as archive:
            archive.extractall(folder / stem)
    return folder


@pytest.mark.parametrize("stem, number", FUNCTIONS)
def test_a_case_is_judged_in_the_kernel_by_the_hidden_judge(stem, number, unpacked, monkeypatch):
    """``case_verdict`` as otter's test file calls it, in the folder otter copies the zip's files into: the
    course's solution passes every case, a wrong answer fails with the judge's message, an unbound name fails."""
    monkeypatch.chdir(unpacked / stem / "files")
    exercise = next(e for e in hidden_tests()[stem] if e.number == number)
    solved = solved_namespace(stem, number)
    for index in range(len(exercise.cases())):
        case_verdict(solved, stem, number, index)
        with pytest.raises(AssertionError, match="^unbound: "):
            case_verdict({}, stem, number, index)
    with pytest.raises(AssertionError, match="^not finished: "):
        case_verdict({**solved, exercise.answer[0]: lambda *args: None}, stem, number, 0)


# ---------------------------------------------------------------- graded both ways


def partly_wrong(complete: Path, target: Path, stem: str) -> Path:
    """The complete submission with its first function exercise wrong (its answer plus one) wherever the first
    argument's first dimension is above 2: some of its cases, not all."""
    key = answer_keys()[stem]
    exercise = next(e for e in hidden_tests()[stem] if e.cases is not None)
    check = key.exercises[exercise.number - 1].check
    name = exercise.answer[0]
    notebook = nbformat.read(complete, as_version=4)
    cell = next(cell for cell in notebook.cells if cell.cell_type == "code" and check in cell.source)
    wrong = [f"_right_answer = {name}", "", "", f"def {name}(*args):", "    answer = _right_answer(*args)",
             "    return answer + 1.0 if args[0].shape[0] > 2 else answer", "", ""]  # fmt: skip
    lines = cell.source.splitlines()
    at = max(index for index, line in enumerate(lines) if check in line)
    cell.source = "\n".join([*lines[:at], *wrong, *lines[at:]])
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return target


OTTER_LIMIT = 420  # seconds for one otter run; 08, the longest, takes about 3 minutes here


def otter_points(autograder: Path, submission: Path, out: Path) -> tuple[dict[int, float], float]:
    """Each exercise's points from ``otter run`` (no Docker), and the seconds it took. otter's runner sets no time
    limit on a cell, and it has hung here 4 times in about 40 runs (its kernel idle, the runner waiting, on a cell
    that shows a widget): such a run is stopped, with its kernel, and run once more."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COURSE_FAST": "1"}
    otter = [sys.executable, "-m", "otter", "run", "--no-logo", "-a", str(autograder), "-o", str(out)]
    for attempt in range(2):
        started = time.monotonic()
        process = subprocess.Popen([*otter, str(submission)], cwd=out, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        try:
            output, _ = process.communicate(timeout=OTTER_LIMIT)
            break
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # otter (its kernel stops when its parent has gone)
            process.communicate()
            print(f"otter run on {submission.name} hung past {OTTER_LIMIT} s (attempt {attempt + 1})")
    else:
        pytest.fail(f"otter run on {submission} hung twice")
    seconds = time.monotonic() - started
    assert process.returncode == 0, output[-3000:]
    tests = json.loads((out / "results.json").read_text())["tests"]
    return {int(t["name"].split()[-1]): t["score"] for t in tests if t["name"].startswith("Exercise ")}, seconds


@pytest.mark.slow
@pytest.mark.parametrize("stem", GRADED)
def test_otters_runner_and_the_course_grader_give_each_exercise_the_same_points(stem, zips, tmp_path):
    if stem not in hidden_tests():
        pytest.skip(f"no hidden tests for {stem} yet")
    examples = tmp_path / "examples"
    write_examples(examples)
    submissions = {student: examples / student / f"{stem}.ipynb" for student in ("complete", "empty")}
    if stem == FAST_STEM:
        submissions["partial"] = partly_wrong(submissions["complete"], examples / "partial" / f"{stem}.ipynb", stem)
    key, hidden = answer_keys()[stem], hidden_tests()[stem]
    for student, submission in submissions.items():
        graded = grade_submission(submission, student, key, hidden, timeout=60)
        course = {row.exercise: row.points for row in graded.rows}
        otter, seconds = otter_points(zips / zip_name(stem), submission, tmp_path / "otter" / student)
        print(f"{stem} {student}: otter {otter} in {seconds:.0f} s; course {course} in {graded.seconds:.0f} s")
        assert otter == course, (student, otter, course)
        total = sum(exercise.total for exercise in hidden)
        if student == "complete":
            assert sum(course.values()) == total
        if student == "empty":
            assert sum(course.values()) == 0
        if student == "partial":
            assert 0 < sum(course.values()) < total
