"""Grading a class: 120 generated submissions of one notebook, graded by ``scripts/grade.py``'s machinery in
parallel, as an instructor's folder from Canvas would hold them.

    python benchmarks/grading_bench.py                    # notebook 05, 120 students, jobs 1 and 2; prints a table
    python benchmarks/grading_bench.py --students 12 --jobs 2

The class: complete answers, answers wrong in one exercise (partial credit where some cases pass), the student
edition as handed out, the forgeries of issue 43 and an answer that calls the course's reference, and answers that
crash or loop; a tenth of the students hand in late, or twice. Each row: the wall time, the mean time a
submission took in its worker, and the points of each kind of student (the same at every ``jobs``).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grading.folder import find_submissions, grade_all  # noqa: E402
from grading.hidden import hidden_tests  # noqa: E402
from grading.key import answer_keys, completed, student_edition  # noqa: E402

STEM = "05_rnn_language_models"
# Each kind of student: exercise number → the cell that replaces that exercise's (None: the solution stays).
KINDS = {
    "complete": {},
    "no bias": {1: "def my_elman_step(x_t, h_prev, W, U, b):\n    return torch.tanh(h_prev @ U.T + x_t @ W.T)"},
    "per tensor": {3: "def my_clip(grads, max_norm):\n    return [g * min(1.0, max_norm / g.norm().item()) for g in grads]"},
    "empty": None,
    "report forged": "import course_utils.exercises.grading as g\ng.report = lambda *a, **k: print('✓') or True",
    "delegating": {1: "from course_utils.models.recurrent.rnn import elman_step\n"
                      "def my_elman_step(x_t, h_prev, W, U, b):\n    return elman_step(x_t, h_prev, W, U, b)"},
    "crash": {2: "import os\ndef my_sequence_loss(logits, targets):\n    os._exit(1)"},
    "loop": {3: "def my_clip(grads, max_norm):\n    while True:\n        pass"},
}  # fmt: skip
SHARES = {"complete": 40, "no bias": 15, "per tensor": 15, "empty": 20, "report forged": 10, "delegating": 10,
          "crash": 5, "loop": 5}  # fmt: skip


def notebook_of_kind(kind: str) -> nbformat.NotebookNode:
    course = nbformat.read(ROOT / "notebooks" / f"{STEM}.ipynb", as_version=4)
    change = KINDS[kind]
    if change is None:
        return student_edition(course)
    if isinstance(change, str):
        notebook = student_edition(course)
        notebook.cells.append(nbformat.v4.new_code_cell(change))
        return notebook
    notebook = copy.deepcopy(completed(course))
    exercises = [cell for cell in notebook.cells if "exercise" in cell.metadata.get("tags", [])]
    for number, source in change.items():
        exercises[number - 1].source = source
    return notebook


def write_class(folder: Path, students: int) -> dict[str, str]:
    """``students`` submissions in Canvas's names, kinds in ``SHARES``' proportions; student key → kind."""
    kinds = [kind for kind, share in SHARES.items() for _ in range(share)]
    notebooks = {kind: notebook_of_kind(kind) for kind in SHARES}
    who = {}
    for index in range(students):
        kind = kinds[index * len(kinds) // students]
        name = f"student{index:03d}"
        late = "_LATE" if index % 10 == 3 else ""
        nbformat.write(notebooks[kind], folder / f"{name}{late}_{1000 + index}_{5000 + index}_{STEM}.ipynb")
        if index % 10 == 7:  # handed in twice: the first try, then the same answers as "-1"
            nbformat.write(notebooks["empty"], folder / f"{name}_{1000 + index}_{4000 + index}_{STEM}.ipynb")
            os.utime(folder / f"{name}_{1000 + index}_{4000 + index}_{STEM}.ipynb", (1, 1))
            nbformat.write(notebooks[kind], folder / f"{name}_{1000 + index}_{6000 + index}_{STEM}-1.ipynb")
        who[name] = kind
    return who


def run(students: int, jobs: int, timeout: float) -> dict:
    keys, hidden = answer_keys(), hidden_tests()
    with tempfile.TemporaryDirectory(prefix="class-") as scratch:
        folder = Path(scratch)
        who = write_class(folder, students)
        submissions = find_submissions(folder, keys)
        times = []
        started = time.monotonic()
        rows = grade_all(submissions, keys, hidden, timeout=timeout, jobs=jobs,
                         log=lambda line: times.append(float(line.split(" in ")[-1].split()[0])) if " graded in " in line
                         and ":" in line else None)  # fmt: skip
        wall = time.monotonic() - started
    points = defaultdict(float)
    for row in rows:
        points[row.student] += row.points
    by_kind = defaultdict(set)
    for student, kind in who.items():
        by_kind[kind].add(points[student])
    return {"students": students, "files": len(submissions), "jobs": jobs, "wall_s": wall,
            "mean_s": statistics.mean(times) if times else float("nan"), "rows": len(rows),
            "points": {kind: sorted(values) for kind, values in by_kind.items()}}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=120)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--timeout", type=float, default=10, help="seconds each cell and each call may run")
    args = parser.parse_args()
    print("| students | files | jobs | wall time | per submission | points by kind |")
    print("|---:|---:|---:|---:|---:|---|")
    for jobs in args.jobs:
        result = run(args.students, jobs, args.timeout)
        kinds = "; ".join(f"{kind} {'/'.join(f'{p:g}' for p in values)}" for kind, values in result["points"].items())
        print(f"| {result['students']} | {result['files']} | {jobs} | {result['wall_s']:.0f} s | "
              f"{result['mean_s']:.1f} s | {kinds} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
