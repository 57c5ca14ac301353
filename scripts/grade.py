"""Grade a folder of submitted notebooks with the course's own checks: one CSV row per student and exercise.

    bash course.sh grade SUBMISSIONS                    # writes SUBMISSIONS/grades.csv and prints a summary
    bash course.sh grade SUBMISSIONS --out grades.csv --timeout 60
    bash course.sh grade --examples FOLDER              # two example students for every notebook, to try it on

SUBMISSIONS holds one folder per student (``alice/01_linear_regression.ipynb``…) or the notebooks themselves, one file
per student and notebook (``alice_01_linear_regression.ipynb``: the student is the name less the notebook's).
Which notebook a file is comes from its metadata (both editions carry it) or else from its name.

Each submission runs in a fresh kernel, in a scratch folder, with no network (``course_utils.exercises.grading``):
only the cells its exercises need (the set-up, each cell that binds a name a check reads, and what those read:
``course_utils.cell_slices``), each cell with a time limit, interrupted when it runs over. Then each exercise's check
runs in a cell of its own, with its own time limit, as the course's notebook calls it (``notebooks/NN_*.ipynb``),
whatever the submission did to its own check line. A submission that loops, crashes or kills its kernel still gets
a row for every exercise. The statuses:

    passed        the check printed ✓ (1 point)
    wrong         the check printed ✗, with its hint as the message
    not finished  the answer is still the shipped None
    error         the answer's name was never bound (its cell raised, or was renamed)
    timed out     the check ran over the time limit
    crashed       the kernel died before the check ran
    not submitted no file for this notebook, which other students submitted
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import secrets
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import EXERCISE, NOTEBOOKS, SOLUTION, student_edition, wakeful_kernel_manager_class  # noqa: E402

from course_utils.cell_slices import needed_cells  # noqa: E402
from course_utils.exercises import NOT_FINISHED  # noqa: E402

STATUSES = ("passed", "wrong", "not finished", "error", "timed out", "crashed", "not submitted")
TIMED_OUT = "CellTimeout"
# A cell that runs over is interrupted, and the kernel reports that as KeyboardInterrupt: only the grader interrupts.
INTERRUPTED = {TIMED_OUT, "KeyboardInterrupt"}
COLUMNS = ("student", "notebook", "exercise", "check", "status", "points", "message", "notes")
# Offline, whatever the instructor's shell says; one torch thread per kernel.
KERNEL_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


# ---------------------------------------------------------------- the answer key: the course's own notebooks


@dataclass(frozen=True)
class Exercise:
    number: int
    check: str  # the call, as the course's notebook writes it: check_gradient(my_gradient)

    @property
    def check_name(self) -> str:
        return self.check.split("(", 1)[0]


@dataclass(frozen=True)
class AnswerKey:
    notebook: str
    exercises: tuple[Exercise, ...]
    imports: str  # the statements that import the checks


def check_call(line: str) -> str | None:
    """``check_x(args)`` for a line that only calls a check (``_ = check_x(a)``, ``check_x(a);``), else None."""
    text = re.sub(r"^_\s*=\s*", "", line.strip()).rstrip(";").strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    called = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("check_")
    return ast.unparse(node) if called else None


def answer_key(notebook: nbformat.NotebookNode, name: str) -> AnswerKey:
    """Each exercise cell's check call (its last line) and the imports of the checks, from a course notebook."""
    cells = [cell for cell in notebook.cells if cell.cell_type == "code" and EXERCISE in cell.metadata.get("tags", [])]
    exercises, imports = [], []
    for number, cell in enumerate(cells, 1):
        call = check_call(cell.source.strip().splitlines()[-1])
        if call is None:
            raise ValueError(f"{name}, exercise {number}: the cell does not end by calling its check")
        exercises.append(Exercise(number, call))
        imports += [ast.unparse(node) for node in ast.walk(ast.parse(cell.source))
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils.exercises")]  # fmt: skip
    return AnswerKey(name, tuple(exercises), "\n".join(imports))


def answer_keys(folder: Path = NOTEBOOKS) -> dict[str, AnswerKey]:
    return {
        path.stem: answer_key(nbformat.read(path, as_version=4), path.stem) for path in sorted(folder.glob("*.ipynb"))
    }


# ---------------------------------------------------------------- submissions: who, and which notebook


@dataclass(frozen=True)
class Submission:
    student: str
    notebook: str | None  # None: not a course notebook, or not readable
    path: Path
    problem: str = ""


def identify(path: Path, folder: Path, keys: dict[str, AnswerKey]) -> Submission:
    """The student (the first folder under ``folder``, else the file's name less the notebook's) and the notebook."""
    relative = path.relative_to(folder)
    try:
        notebook = nbformat.read(path, as_version=4)
        stem, problem = notebook.metadata.get("course", {}).get("notebook"), ""
    except Exception as error:  # noqa: BLE001 - an unreadable file gets its row
        stem, problem = None, f"not a readable notebook ({type(error).__name__})"
    named = next((key for key in keys if key in path.stem), None)  # alice_01_linear_regression
    numbered = next((key for key in keys if re.search(rf"(^|\D){key[:2]}(\D|$)", path.stem)), None)  # alice_01
    if stem not in keys:
        stem = named or numbered
    if len(relative.parts) > 1:
        student = relative.parts[0]
    else:
        rest = (
            path.stem.replace(named, "")
            if named
            else re.sub(rf"(^|\D){stem[:2]}(\D|$)", r"\1\2", path.stem)
            if stem
            else ""
        )
        student = re.sub(r"^[\W_]+|[\W_]+$", "", rest) or path.stem
    if stem is None and not problem:
        problem = "neither its metadata nor its name says which course notebook it is"
    return Submission(student, stem if not problem else None, path, problem)


def find_submissions(folder: Path, keys: dict[str, AnswerKey]) -> list[Submission]:
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return [identify(path, folder, keys) for path in paths]


# ---------------------------------------------------------------- grading one submission


@dataclass
class Row:
    student: str
    notebook: str
    exercise: int | str
    check: str
    status: str
    points: int
    message: str
    notes: str = ""


def grading_notebook(
    submission: nbformat.NotebookNode, key: AnswerKey, token: str
) -> tuple[nbformat.NotebookNode, list[int]]:
    """The cells to run: the network guard, the submission's cells the checks need (their own check lines taken
    out: the grader calls each check once, itself), the checks' imports, then one cell per check. Also returns
    the kept cells' numbers among the submission's code cells (1-based), for the notes."""
    checks = {exercise.check for exercise in key.exercises}
    sources = []
    for cell in (cell for cell in submission.cells if cell.cell_type == "code"):
        lines = cell.source.splitlines()
        sources.append("\n".join(line for line in lines if check_call(line) not in checks))
    grading = key.imports + "\n" + "\n".join(exercise.check for exercise in key.exercises)
    set_up = {index for index, source in enumerate(sources) if "setup_notebook(" in source}
    keep = sorted(needed_cells([*sources, grading], {len(sources)} | set_up) - {len(sources)})
    cells = [
        nbformat.v4.new_code_cell("from course_utils.exercises.grading import block_network, report\nblock_network()")
    ]
    cells += [nbformat.v4.new_code_cell(sources[index]) for index in keep]
    cells.append(nbformat.v4.new_code_cell(key.imports))
    cells += [nbformat.v4.new_code_cell(f"report({token!r}, {exercise.number}, lambda: {exercise.check})")
              for exercise in key.exercises]  # fmt: skip
    return nbformat.v4.new_notebook(cells=cells), [index + 1 for index in keep]


def run(notebook: nbformat.NotebookNode, workdir: Path, timeout: int) -> str:
    """Execute ``notebook`` in a fresh kernel; return "" or why it stopped early (the kernel died)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(workdir)}},
        allow_errors=True, interrupt_on_timeout=True, startup_timeout=120,
        error_on_timeout={"ename": TIMED_OUT, "evalue": f"ran over {timeout} s and was interrupted", "traceback": []},
        kernel_manager_class=wakeful_kernel_manager_class([]),
    )  # fmt: skip
    try:
        client.execute()
    except DeadKernelError:
        return "the kernel died"
    return ""


def _error(cell) -> dict | None:
    return next((output for output in cell.get("outputs", []) if output.get("output_type") == "error"), None)


def cell_notes(cells, numbers: list[int]) -> str:
    """The submission's cells that raised or ran over, by their number among its code cells."""
    notes = []
    for cell, number in zip(cells, numbers):
        error = _error(cell)
        if error:
            what = (
                "ran over the time limit"
                if error["ename"] in INTERRUPTED
                else f"raised {error['ename']}: {error['evalue']}"
            )
            notes.append(f"code cell {number} {what}")
    return "; ".join(notes)[:500]


def verdict_row(cell, token: str, exercise: Exercise, stopped: str) -> tuple[str, str]:
    """(status, message) of one check cell after the run."""
    printed = "".join(output.get("text", "") for output in cell.get("outputs", []) if output.get("name") == "stdout")
    line = next((line for line in printed.splitlines() if line.startswith(token + " ")), None)
    if line is not None:
        verdict = json.loads(line[len(token) + 1 :])
        if verdict["passed"]:
            return "passed", verdict["message"]
        if NOT_FINISHED in verdict["message"]:
            return "not finished", verdict["message"]
        if "is not defined: its cell raised" in verdict["message"]:
            return "error", verdict["message"]
        return "wrong", verdict["message"]
    error = _error(cell)
    if error and error["ename"] in INTERRUPTED:
        return "timed out", f"{exercise.check} ran over the time limit and was interrupted"
    if error:
        return "error", f"{error['ename']}: {error['evalue']}"
    return "crashed", f"{stopped or 'the kernel stopped'} before this check ran"


def grade_submission(submission: Submission, key: AnswerKey, timeout: int) -> list[Row]:
    token = secrets.token_hex(8)  # what a verdict line starts with: nothing a submission prints can pass for one
    notebook, numbers = grading_notebook(nbformat.read(submission.path, as_version=4), key, token)
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        stopped = run(notebook, Path(scratch), timeout)
    student_cells = notebook.cells[1 : 1 + len(numbers)]
    notes = "; ".join(part for part in (cell_notes(student_cells, numbers), stopped) if part)
    check_cells = notebook.cells[-len(key.exercises) :]
    rows = []
    for exercise, cell in zip(key.exercises, check_cells):
        status, message = verdict_row(cell, token, exercise, stopped)
        rows.append(Row(submission.student, key.notebook, exercise.number, exercise.check_name, status,
                        int(status == "passed"), message, notes))  # fmt: skip
    return rows


# ---------------------------------------------------------------- the whole folder


def grade_folder(folder: Path, keys: dict[str, AnswerKey], timeout: int, log=print) -> list[Row]:
    submissions = find_submissions(folder, keys)
    rows = [Row(s.student, s.path.name, "", "", "error", 0, s.problem) for s in submissions if s.notebook is None]
    latest = {}  # a student who handed in a notebook twice: the newer file counts
    for s in sorted((s for s in submissions if s.notebook is not None), key=lambda s: s.path.stat().st_mtime):
        latest[(s.student, s.notebook)] = s
    graded = sorted(latest.values(), key=lambda s: (s.student, s.notebook))
    students = sorted({s.student for s in submissions})
    notebooks = sorted({s.notebook for s in graded})
    for submission in graded:
        started = time.monotonic()
        rows += grade_submission(submission, keys[submission.notebook], timeout)
        log(f"{submission.student}: {submission.notebook} graded in {time.monotonic() - started:.0f} s")
    done = {(row.student, row.notebook) for row in rows}
    for student in students:
        for notebook in notebooks:
            if (student, notebook) not in done:
                rows += [
                    Row(student, notebook, e.number, e.check_name, "not submitted", 0, "")
                    for e in keys[notebook].exercises
                ]
    return sorted(rows, key=lambda row: (row.student, row.notebook, str(row.exercise)))


def write_csv(rows: list[Row], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(asdict(row) for row in rows)


def summary(rows: list[Row]) -> str:
    """Points per student and notebook, as a table."""
    notebooks = sorted({row.notebook[:2] for row in rows if row.check})
    table = {}
    for row in rows:
        if row.check:
            got, total = table.get((row.student, row.notebook[:2]), (0, 0))
            table[(row.student, row.notebook[:2])] = (got + row.points, total + 1)
    lines = ["student".ljust(16) + "".join(n.rjust(7) for n in notebooks) + "  total"]
    for student in sorted({row.student for row in rows}):
        cells = [table.get((student, n)) for n in notebooks]
        got, total = sum(c[0] for c in cells if c), sum(c[1] for c in cells if c)
        lines.append(student[:16].ljust(16) + "".join((f"{c[0]}/{c[1]}" if c else "-").rjust(7) for c in cells)
                     + f"  {got}/{total}")  # fmt: skip
    return "\n".join(lines)


# ---------------------------------------------------------------- example submissions


def solution_code(markdown: str) -> str:
    """The one Python block of a solution cell."""
    blocks = re.findall(r"```python\n(.*?)```", markdown, flags=re.S)
    if len(blocks) != 1:
        raise ValueError(f"a solution holds {len(blocks)} Python blocks, not one")
    return blocks[0].strip("\n")


def completed(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student edition of a course notebook, each exercise answered with its solution's code, put before the
    cell's last line (its check call), as a student would write it."""
    notebook = nbformat.reads(nbformat.writes(notebook), as_version=4)  # a copy
    cells = notebook.cells
    for index, cell in enumerate(cells):
        if EXERCISE in cell.metadata.get("tags", []):
            solution = cells[index + 1]
            assert SOLUTION in solution.metadata.get("tags", []), f"no solution after cell {index}"
            *body, check = cell.source.rstrip().splitlines()
            cell.source = "\n".join([*body, solution_code(solution.source), "", check])
    return student_edition(notebook)


def write_examples(folder: Path, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Two students for every course notebook: ``complete`` (every exercise solved) and ``empty`` (as handed out)."""
    written = []
    for path in sorted(notebooks.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for student, edition in (("complete", completed(notebook)), ("empty", student_edition(notebook))):
            target = folder / student / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(edition, target)
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="the submissions (or, with --examples, where to write examples)")
    parser.add_argument("--out", type=Path, help="the CSV to write (default: FOLDER/grades.csv)")
    parser.add_argument("--timeout", type=int, default=60, help="seconds each cell and each check may run (60)")
    parser.add_argument("--examples", action="store_true", help="write two example students into FOLDER, grade nothing")
    args = parser.parse_args(argv)
    if args.examples:
        print(f"wrote {len(write_examples(args.folder))} example submissions into {args.folder}")
        return 0
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder of submissions")
    os.environ.update(KERNEL_ENV)
    rows = grade_folder(args.folder, answer_keys(), args.timeout)
    if not rows:
        parser.error(f"no notebooks (.ipynb) in {args.folder}")
    out = args.out or args.folder / "grades.csv"
    write_csv(rows, out)
    print(summary(rows))
    print(f"wrote {len(rows)} rows to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
