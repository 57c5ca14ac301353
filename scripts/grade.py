"""Grade a folder of submitted notebooks on the instructor's hidden tests: one row per student and exercise, the
TA's files, and a table.

    bash course.sh grade SUBMISSIONS                        # writes SUBMISSIONS/grades/ and prints the table
    bash course.sh grade SUBMISSIONS --roster roster.csv --canvas-column "Homework 5 (12345)" --out grades/
    bash course.sh grade --examples FOLDER                  # example students for every notebook, to try it on

SUBMISSIONS holds what an LMS hands out: Canvas's bulk download (``smithjane_LATE_12345_67890_05_rnn…-1.ipynb``),
Moodle's, a folder per student (``alice/05_rnn_language_models.ipynb``), or ``alice_05.ipynb``; resubmissions and
"Copy of" count once, the latest (``grading.roster``). Which notebook a file is comes from its metadata (both
editions carry it) or else from its name.

Each submission runs in a process of its own, in a sandbox (``grading.sandbox``: no network, the environment
read-only, memory and time caps, a throwaway home), several at once. Its functions are called there on hidden
inputs that are not in the student release (``grading/hidden``), and only their answers come back, judged here.
Points per case, so partial credit. The files written (``grading.roster``):

    grades.csv       one row per student, notebook and exercise: status, points, out_of, cases, message, notes
    totals.csv       one row per student: points per notebook and in all
    canvas.csv       Canvas's gradebook import (with --roster: its students; --canvas-column names the column)
    gradescope.csv   Gradescope's score upload (Name, SID, Email, Total Score)
    feedback/        one Markdown file per student: each exercise, its points and the message
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grading import roster as lms  # noqa: E402
from grading import sandbox  # noqa: E402
from grading.folder import find_submissions, grade_all, missing_rows  # noqa: E402
from grading.hidden import hidden_tests  # noqa: E402
from grading.key import answer_keys, write_examples  # noqa: E402
from grading.results import COLUMNS, Row  # noqa: E402


def write_rows(rows: list[Row], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(asdict(row) for row in rows)


def summary(rows: list[Row]) -> str:
    """Points per student and notebook, as a table."""
    notebooks = sorted({row.notebook[:2] for row in rows if row.exercise != ""})
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for row in rows:
        if row.exercise != "":
            got, total = table.get((row.student, row.notebook[:2]), (0.0, 0.0))
            table[(row.student, row.notebook[:2])] = (got + row.points, total + row.out_of)
    lines = ["student".ljust(16) + "".join(n.rjust(9) for n in notebooks) + "    total"]
    for student in sorted({row.student for row in rows}):
        cells = [table.get((student, n)) for n in notebooks]
        got, total = sum(c[0] for c in cells if c), sum(c[1] for c in cells if c)
        lines.append(student[:16].ljust(16) + "".join((f"{c[0]:g}/{c[1]:g}" if c else "-").rjust(9) for c in cells)
                     + f"  {got:g}/{total:g}")  # fmt: skip
    return "\n".join(lines)


def isolation_line() -> str:
    found = sandbox.probe()
    if found.namespaces:
        return "sandbox: no network, a read-only environment, no capabilities (network and mount namespaces)"
    return (f"sandbox: namespaces are not available here ({found.why_not}): each submission still runs in its own "
            "process with memory and time caps and Python's own network block, but not shut off by the system")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="the submissions (or, with --examples, where to write examples)")
    parser.add_argument("--out", type=Path, help="the folder to write the files into (default: FOLDER/grades)")
    parser.add_argument("--roster", type=Path, help="a CSV of students (ours: id,name,email; or Canvas's or "
                                                    "Gradescope's export)")  # fmt: skip
    parser.add_argument("--canvas-column", default="Course notebooks", help="the assignment's column in canvas.csv, "
                        "as Canvas's gradebook export names it, e.g. 'Homework 5 (12345)'")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=60, help="seconds each cell and each call may run (60)")
    parser.add_argument("--jobs", type=int, default=0, help="submissions graded at once (default: one per core)")
    parser.add_argument("--examples", action="store_true", help="write example students into FOLDER, grade nothing")
    args = parser.parse_args(argv)
    if args.examples:
        print(f"wrote {len(write_examples(args.folder))} example submissions into {args.folder}")
        return 0
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder of submissions")
    roster = lms.read_roster(args.roster) if args.roster else None
    keys, hidden = answer_keys(), hidden_tests()
    submissions = find_submissions(args.folder, keys, roster)
    if not submissions:
        parser.error(f"no notebooks (.ipynb) in {args.folder}")
    print(isolation_line())
    rows = grade_all(submissions, keys, hidden, timeout=args.timeout, jobs=args.jobs)
    if roster:
        graded = [s for s in submissions if s.notebook]
        rows += missing_rows(submissions, graded, keys, hidden, lms.roster_keys(roster))
        rows = sorted({(r.student, r.notebook, str(r.exercise)): r for r in rows}.values(),
                      key=lambda r: (r.student, r.notebook, str(r.exercise)))  # fmt: skip
    out = args.out or args.folder / "grades"
    write_outputs(rows, roster, out, args.canvas_column)
    print(summary(rows))
    print(f"wrote {len(rows)} rows and each student's feedback to {out}")
    return 0


def write_outputs(rows: list[Row], roster, out: Path, canvas_column: str) -> None:
    """grades.csv, totals.csv, gradescope.csv, canvas.csv (with a roster: Canvas's import needs its ids) and the
    feedback files."""
    write_rows(rows, out / "grades.csv")
    lms.write_totals(rows, roster, out / "totals.csv")
    warnings = lms.write_gradescope(rows, roster, out / "gradescope.csv")
    if roster:
        warnings += lms.write_canvas(rows, roster, out / "canvas.csv", canvas_column)
    else:
        warnings.append("canvas.csv needs Canvas's ids: pass --roster (Canvas's gradebook export will do)")
    lms.write_feedback(rows, out / "feedback", roster)
    for warning in dict.fromkeys(warnings):
        print(f"note: {warning}")


if __name__ == "__main__":
    sys.exit(main())
