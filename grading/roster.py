"""Students from LMS file names and a roster; totals, Canvas and Gradescope CSVs, feedback files.

File names, one student each (``parse_name``), whatever the LMS did to them:

- Canvas bulk download: ``smithjane[_LATE]_<user id>_<submission id>_<original name>[-N]``; the original name may be
  ``Copy_of_...`` or ``Copy of ... (1)``.
- Moodle: ``Jane Smith_<participant id>_assignsubmission_file_<original name>`` (also as a folder, when the
  download puts each submission in its own folder).
- Gradescope's export: ``submission_<id>/...`` with ``submission_metadata.yml`` beside the folders.
- A folder per student (``alice/Copy of 01_linear_regression.ipynb``, Colab's Drive copies) and plain names
  (``alice_01_linear_regression.ipynb``, ``carol-03.ipynb``).

A student's key (``key``) is the name in lower case without spaces, underscores, dashes, dots or accents: Canvas's
``smithjane``. A roster (``read_roster``) reads our own CSV (id,name,email), Canvas's gradebook export and Gradescope's
roster; ``match`` finds a file's student in it. The writers take ``grading.results.Row`` rows.

Encodings: rosters are read as ``utf-8-sig`` (a byte-order mark, which Excel and Canvas's export option add, is
dropped; plain UTF-8 reads the same). The files for an LMS to import (Canvas, Gradescope) are written as plain UTF-8,
which Canvas asks for, with no byte-order mark that an importer could read as part of the first header. The totals
sheet, which people open in Excel, is written as ``utf-8-sig``: without the mark Excel reads UTF-8 as the local
code page and garbles accented names.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from grading.results import Row

UPLOAD_ENCODING = "utf-8"  # Canvas and Gradescope imports
SHEET_ENCODING = "utf-8-sig"  # the totals sheet, for Excel
READ_ENCODING = "utf-8-sig"  # rosters, with or without a byte-order mark
GRADESCOPE_METADATA = "submission_metadata.yml"

CANVAS_NAME = re.compile(r"^(?P<student>[^_]+)(?P<late>_late)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<rest>.+)$", re.I)
MOODLE_NAME = re.compile(r"^(?P<student>.+?)_(?P<participant>\d+)_assignsubmission_(?:file|onlinetext)_?(?P<rest>.*)$")
PLAIN_NAME = re.compile(r"^(?P<student>.+?)[ _-]+(?P<rest>\d.*)$")  # the notebook's part starts with its number
COPY_OF = re.compile(r"^(?:copy[ _]of[ _]+)+", re.I)  # Drive's "Copy of ", Canvas's "Copy_of_", repeated
ATTEMPT = re.compile(r"(?:-(?P<dash>\d+)|[ _]?\((?P<paren>\d+)\))$")  # Canvas's "-1", Drive's " (1)"
CANVAS_TEST_STUDENTS = {"teststudent", "studenttest"}


@dataclass(frozen=True)
class NameParts:
    """What a submitted file's path says about its student."""

    student: str  # the key: smithjane
    lms_id: str | None  # Canvas's user id, Moodle's participant id, Gradescope's SID
    late: bool
    attempt: int  # 0 for the first file, N for Canvas's "-N" or Drive's " (N)"
    notebook_hint: str  # what is left of the name: 01_linear_regression, 01
    source: str = "plain"  # canvas, moodle, gradescope, folder or plain
    email: str = ""  # Gradescope's export names it
    path: Path | None = None


@dataclass(frozen=True)
class Student:
    """One student of the roster."""

    id: str  # our id, Canvas's user id, or Gradescope's SID
    name: str
    email: str = ""
    sis_user_id: str = ""
    login: str = ""
    section: str = ""


# ---- file names ---------------------------------------------------------------------------------------------------


def key(text: str) -> str:
    """A name as a key: lower case, no accents, no spaces, underscores, dashes, dots, commas or apostrophes."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[\s_\-.,'’]+", "", plain.lower())


def split_attempt(name: str) -> tuple[str, int]:
    """``name`` without Canvas's "-N" or Drive's " (N)" at its end, and N (0 when neither)."""
    found = ATTEMPT.search(name)
    if found is None or found.start() == 0:
        return name, 0
    return name[: found.start()].rstrip(" _"), int(found["dash"] or found["paren"])


def clean_hint(name: str) -> tuple[str, int]:
    """An original file name's stem as a notebook hint ("Copy of", attempts dropped) and its attempt."""
    name, attempt = split_attempt(name.strip())
    return COPY_OF.sub("", name).strip(" _-"), attempt


def parse_name(path: Path, folder: Path) -> NameParts:
    """The student, LMS id, lateness, attempt and notebook hint that ``path`` (a file under ``folder``) names."""
    path, folder = Path(path), Path(folder)
    relative = path.relative_to(folder)
    stem = relative.name.removesuffix(".ipynb")
    for parse in (canvas_name, moodle_name):
        parts = parse(stem)
        if parts is not None:
            return _with_path(parts, path)
    if len(relative.parts) > 1:
        return _with_path(folder_name(relative.parts[0], stem, folder), path)
    return _with_path(plain_name(stem), path)


def _with_path(parts: NameParts, path: Path) -> NameParts:
    return replace(parts, path=path)


def canvas_name(stem: str) -> NameParts | None:
    """Canvas's bulk download: smithjane[_LATE]_<user id>_<submission id>_<original name>[-N]."""
    found = CANVAS_NAME.match(stem)
    if found is None:
        return None
    hint, attempt = clean_hint(found["rest"])
    return NameParts(key(found["student"]), found["user"], bool(found["late"]), attempt, hint, "canvas")


def moodle_name(stem: str) -> NameParts | None:
    """Moodle's download: Jane Smith_<participant id>_assignsubmission_file_<original name>."""
    found = MOODLE_NAME.match(stem)
    if found is None:
        return None
    hint, attempt = clean_hint(found["rest"])
    return NameParts(key(found["student"]), found["participant"], False, attempt, hint, "moodle")


def plain_name(stem: str) -> NameParts:
    """alice_01_linear_regression, carol-03: the student, then the notebook from its number on."""
    found = PLAIN_NAME.match(COPY_OF.sub("", stem))
    student, rest = (found["student"], found["rest"]) if found else re.split(r"[ _-]+", stem + "_", maxsplit=1)
    hint, attempt = clean_hint(rest)
    return NameParts(key(student), None, False, attempt, hint)


def folder_name(top: str, stem: str, folder: Path) -> NameParts:
    """A file in a folder of its own: the folder names the student (Gradescope's submission_<id> through its
    metadata, Moodle's folder through its pattern), the file the notebook."""
    hint, attempt = clean_hint(stem)
    submitter = gradescope_submitters(folder / GRADESCOPE_METADATA).get(top)
    if submitter is not None:
        return NameParts(key(submitter["name"]), submitter["sid"] or None, False, attempt, hint, "gradescope",
                         submitter["email"])  # fmt: skip
    moodle = moodle_name(top)
    if moodle is not None:
        return NameParts(moodle.student, moodle.lms_id, False, attempt, hint, "moodle")
    student = key(top)
    own = plain_name(stem)
    if own.student == student and own.notebook_hint:  # alice/alice_01_linear_regression.ipynb
        hint = own.notebook_hint
    return NameParts(student, None, False, attempt, hint, "folder")


def _untagged(loader, suffix, node):
    """A node under a Ruby tag (``!ruby/object:...``) as the plain mapping, list or text it holds."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


@lru_cache(maxsize=8)
def _submitters_cached(path: Path, mtime: float) -> dict[str, dict[str, str]]:
    import yaml  # PyYAML: in the lock (through other packages), needed only for Gradescope's export

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", _untagged)
    data = yaml.load(path.read_text(encoding=READ_ENCODING), Loader=Loader) or {}
    found = {}
    for submission, about in data.items():
        about = {str(k).strip(":"): v for k, v in (about or {}).items()}
        people = about.get("submitters") or [{}]
        first = {str(k).strip(":"): v for k, v in (people[0] or {}).items()}  # a group's first member
        found[str(submission)] = {name: str(first.get(name) or "") for name in ("name", "sid", "email")}
    return found


def gradescope_submitters(path: Path) -> dict[str, dict[str, str]]:
    """Gradescope's submission_metadata.yml: each submission folder's (first) submitter's name, sid and email."""
    if not path.is_file():
        return {}
    return _submitters_cached(path, path.stat().st_mtime)


def submitted_files(folder: Path) -> list[Path]:
    """The notebooks under ``folder``, leaving out Jupyter's checkpoints, macOS's __MACOSX copies and hidden files."""
    folder = Path(folder)
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        parts = path.relative_to(folder).parts
        if not any(part.startswith(".") or part in ("__MACOSX", ".ipynb_checkpoints") for part in parts):
            found.append(path)
    return found


def modified(parts: NameParts) -> float:
    """The file's modification time (0 when there is no file)."""
    return parts.path.stat().st_mtime if parts.path is not None and parts.path.exists() else 0.0


def choose_latest(parts_list: list[NameParts]) -> NameParts:
    """The latest of one student's files: the highest attempt, then the newest file."""
    return max(parts_list, key=lambda parts: (parts.attempt, modified(parts)))


def by_student(parts_list: list[NameParts]) -> dict[str, list[NameParts]]:
    """The files grouped by student key."""
    groups: dict[str, list[NameParts]] = defaultdict(list)
    for parts in parts_list:
        groups[parts.student].append(parts)
    return dict(groups)


def _leading_number(text: str) -> int | None:
    found = re.match(r"\d+", text)
    return int(found[0]) if found else None


def notebook_of(hint: str, stems: list[str]) -> str | None:
    """The course notebook (one of ``stems``) that a hint names: the whole stem, else its number, else its name;
    None when none or several fit."""
    hint_key = key(hint)
    whole = [stem for stem in stems if key(stem) == hint_key]
    if whole:
        return whole[0]
    if _leading_number(hint_key) is not None:
        fits = [stem for stem in stems if _leading_number(stem) == _leading_number(hint_key)]
    else:
        fits = [stem for stem in stems if key(re.sub(r"^\d+_?", "", stem)) in hint_key]
    return fits[0] if len(fits) == 1 else None


# ---- the roster ---------------------------------------------------------------------------------------------------


def _column(row: dict[str, str], *names: str) -> str:
    """The first of ``names`` (case-insensitive) that ``row`` has, stripped; "" when none."""
    lowered = {str(k).strip().lower(): (v or "").strip() for k, v in row.items() if k is not None}
    return next((lowered[name] for name in names if lowered.get(name)), "")


def roster_student(row: dict[str, str]) -> Student | None:
    """One roster line as a Student, whichever header (ours, Canvas's, Gradescope's); None for Canvas's
    "Points Possible" line, its test student, Gradescope's staff, or a line without a name."""
    name = _column(row, "name", "student", "full name") or " ".join(
        part for part in (_column(row, "first name"), _column(row, "last name")) if part
    )
    role = _column(row, "role")
    if not name or "points possible" in name.lower() or key(name) in CANVAS_TEST_STUDENTS:
        return None
    if role and role.lower() != "student":
        return None
    email = _column(row, "email", "email address")
    login = _column(row, "sis login id", "login", "login id")
    sid = _column(row, "sid", "student id")
    sis = _column(row, "sis user id", "sis_user_id") or sid
    student_id = _column(row, "id") or sid or email or key(name)
    return Student(student_id, name, email, sis, login, _column(row, "section", "sections"))


def read_roster(path: Path) -> list[Student]:
    """The students of a roster CSV: ours (id,name,email), Canvas's gradebook export or Gradescope's roster."""
    with open(path, newline="", encoding=READ_ENCODING) as file:
        students = [roster_student(row) for row in csv.DictReader(file)]
    return [student for student in students if student is not None]


def roster_keys(roster: list[Student]) -> list[str]:
    """The keys that rows use for the roster's students (their ids), in the roster's order: each gets rows,
    "not submitted" where no file came."""
    return [student.id for student in roster]


def name_keys(name: str) -> set[str]:
    """Keys a roster name may appear as: "Jane Smith" and "Smith, Jane" both give janesmith and smithjane
    (every split of the words, for names of more than two words)."""
    if "," in name:
        last, first = name.split(",", 1)
        words = first.split() + last.split()
    else:
        words = name.split()
    return {key("".join(words[i:] + words[:i])) for i in range(max(len(words), 1))}


def login_keys(student: Student) -> set[str]:
    """Keys of a student's login and of their email's local part."""
    found = {key(student.login.split("@")[0]), key(student.email.split("@")[0])}
    return found - {""}


def _only(found: list[Student]) -> Student | None:
    return found[0] if len(found) == 1 else None


def match(parts: NameParts, roster: list[Student]) -> Student | None:
    """The roster's student for a file: by LMS id, then by email or login, then by name; None when no student,
    or more than one, fits at the first step that finds any."""
    steps = []
    if parts.lms_id and parts.source != "moodle":  # Moodle's number is a participant id, not the student's
        steps.append(lambda s: parts.lms_id in (s.id, s.sis_user_id if parts.source == "gradescope" else None))
    if parts.email:
        steps.append(lambda s: s.email.lower() == parts.email.lower())
    steps.append(lambda s: parts.student in login_keys(s))
    steps.append(lambda s: parts.student in name_keys(s.name))
    for fits in steps:
        found = [student for student in roster if fits(student)]
        if found:
            return _only(found)
    return None


def student_key(parts: NameParts, roster: list[Student] | None) -> str:
    """The key a file's rows get: the roster's id when it matched, else the name's key."""
    student = match(parts, roster) if roster else None
    return student.id if student is not None else parts.student


def find_student(student: str, roster: list[Student]) -> Student | None:
    """The roster's student a row's key names: by id, else by name."""
    by_id = [s for s in roster if s.id == student]
    return _only(by_id) if by_id else _only([s for s in roster if student in name_keys(s.name)])


# ---- outputs ------------------------------------------------------------------------------------------------------


def number(value: float) -> str:
    """Points as written: 2.5, 3, 0.33."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def notebooks_of(rows: list[Row]) -> list[str]:
    """The notebooks the rows are about, in order."""
    return sorted({row.notebook for row in rows})


def points_by_student(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Each student's points per notebook."""
    points: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        points[row.student][row.notebook] += row.points
    return points


def out_of_by_notebook(rows: list[Row]) -> dict[str, float]:
    """Each notebook's points possible: the largest of the students' sums of its rows' out_of."""
    per_student: dict[tuple[str, str], float] = defaultdict(float)
    for row in rows:
        per_student[row.student, row.notebook] += row.out_of
    out_of: dict[str, float] = defaultdict(float)
    for (_, notebook), total in per_student.items():
        out_of[notebook] = max(out_of[notebook], total)
    return dict(out_of)


def students_in_order(rows: list[Row], roster: list[Student] | None) -> list[str]:
    """The roster's keys in its order, then the rows' other students, sorted."""
    first = roster_keys(roster) if roster else []
    return first + sorted({row.student for row in rows} - set(first))


def write_csv(path: Path, header: list[str], lines: list[list[str]], encoding: str) -> None:
    """A CSV file: the header, then the lines."""
    with open(path, "w", newline="", encoding=encoding) as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(lines)


def rekeyed(rows: list[Row], roster: list[Student] | None) -> list[Row]:
    """The rows with each student's key replaced by their roster id where the roster has them (by id or name)."""
    ids = {}
    for student in {row.student for row in rows}:
        entry = find_student(student, roster or [])
        ids[student] = entry.id if entry is not None else student
    return [replace(row, student=ids[row.student]) for row in rows]


def roster_scores(rows: list[Row], roster: list[Student]) -> tuple[dict[str, float], list[str]]:
    """Each roster student's points (by roster id; absent where no rows), and a warning for each row student that
    the roster lacks."""
    scores: dict[str, float] = defaultdict(float)
    ids = set(roster_keys(roster))
    for row in rekeyed(rows, roster):
        if row.student in ids:
            scores[row.student] += row.points
    missing = sorted(student for student in {row.student for row in rows} if find_student(student, roster) is None)
    return dict(scores), [f"{student}: not in the roster, left out" for student in missing]


def write_totals(rows: list[Row], roster: list[Student] | None, path: Path) -> None:
    """One line per student: id, name, points in each notebook, total, out_of (every roster student; 0 where
    no rows)."""
    rows = rekeyed(rows, roster)
    notebooks = notebooks_of(rows)
    out_of = out_of_by_notebook(rows)
    points = points_by_student(rows)
    names = {student.id: student.name for student in roster or []}
    lines = []
    for student in students_in_order(rows, roster):
        mine = [points.get(student, {}).get(notebook, 0.0) for notebook in notebooks]
        lines.append([student, names.get(student, student), *map(number, mine), number(sum(mine)),
                      number(sum(out_of.values()))])  # fmt: skip
    write_csv(path, ["id", "name", *notebooks, "total", "out_of"], lines, SHEET_ENCODING)


CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def write_canvas(
    rows: list[Row], roster: list[Student] | None, path: Path, assignment: str, notebook: str | None = None
) -> list[str]:
    """A CSV for Canvas's gradebook import: the roster's columns, then ``assignment`` (the column's name as Canvas
    exports it, "Homework 5 (12345)") holding each student's points (in ``notebook``, or in all); one line per
    roster student, blank where they have no rows (Canvas then leaves the grade as it is). Returns warnings:
    the rows' students that the roster lacks, left out."""
    if not roster:
        raise ValueError("Canvas's import needs the roster's ids: give the Canvas gradebook export as the roster")
    scores, warnings = roster_scores([row for row in rows if notebook in (None, row.notebook)], roster)
    lines = [[s.name, s.id, s.sis_user_id, s.login, s.section, _score(scores, s)] for s in roster]
    write_csv(path, [*CANVAS_COLUMNS, assignment], lines, UPLOAD_ENCODING)
    return warnings


def _score(scores: dict[str, float], student: Student) -> str:
    return number(scores[student.id]) if student.id in scores else ""


# Gradescope's score upload. What the stored docs say (search, corpora docs and pages): Gradescope's help page
# "Adding Students and Staff" (help.gradescope.com/article/w59nl02vyt-instructor-course-add-members) keys a student
# by a unique email, with SID and sections as optional columns; Gradescope's grade export names its columns "Name",
# "SID", "Email", ..., "Total Score" (a script reading that export, gist.github.com/havron/554d0ffaec20a466a7f8ecca4d76c5da,
# renames "SID" and "Total Score"). No stored page spells out the "Upload Scores" file itself, so these columns are
# the export's own names, not a checked import spec: check the first upload's column mapping by hand.
GRADESCOPE_COLUMNS = ["Name", "SID", "Email", "Total Score"]


def write_gradescope(rows: list[Row], roster: list[Student] | None, path: Path) -> list[str]:
    """Gradescope's score upload: Name, SID, Email, Total Score, one line per roster student (blank score where no
    rows), or per row student when there is no roster. Returns warnings: row students the roster lacks, left out."""
    if not roster:
        points = points_by_student(rows)
        lines = [[student, "", "", number(sum(points[student].values()))] for student in students_in_order(rows, None)]
        write_csv(path, GRADESCOPE_COLUMNS, lines, UPLOAD_ENCODING)
        return ["no roster: no SID or email written; Gradescope cannot match these lines by name alone"]
    scores, warnings = roster_scores(rows, roster)
    lines = [[s.name, s.sis_user_id or s.id, s.email, _score(scores, s)] for s in roster]
    write_csv(path, GRADESCOPE_COLUMNS, lines, UPLOAD_ENCODING)
    return warnings


def safe_file_name(student: str) -> str:
    """A student key as a file name: letters, digits, dashes and underscores only."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", student).strip("_") or "student"


def exercise_line(row: Row) -> str:
    """One exercise's feedback line: points out of its total, status, cases, message."""
    label = f"Exercise {row.exercise}" if row.exercise != "" else "The notebook"
    cases = f", {row.cases} hidden cases" if row.cases else ""
    message = f": {row.message}".replace("\n", "\n  ") if row.message else ""  # more lines stay in the item
    return f"- {label}: {number(row.points)} / {number(row.out_of)} ({row.status}{cases}){message}"


def feedback_text(student: str, rows: list[Row], name: str = "") -> str:
    """A student's feedback in Markdown: each notebook, each exercise, the notes, the total."""
    lines = [f"# Feedback for {name or student}", ""]
    for notebook in notebooks_of(rows):
        mine = [row for row in rows if row.notebook == notebook]
        lines.append(f"## {notebook}: {number(sum(r.points for r in mine))} / {number(sum(r.out_of for r in mine))}")
        lines += ["", *map(exercise_line, mine)]
        notes = list(dict.fromkeys(row.notes for row in mine if row.notes))
        lines += ["", *(f"Notes: {note}" for note in notes), ""] if notes else [""]
    total, out_of = sum(row.points for row in rows), sum(row.out_of for row in rows)
    lines.append(f"**Total: {number(total)} / {number(out_of)}**")
    return "\n".join(lines) + "\n"


def write_feedback(rows: list[Row], folder: Path, roster: list[Student] | None = None) -> list[Path]:
    """One Markdown file per student, ``folder/<student>.md`` (the roster's id where the roster has the student);
    returns the files written."""
    folder, rows = Path(folder), rekeyed(rows, roster)
    folder.mkdir(parents=True, exist_ok=True)
    names = {student.id: student.name for student in roster or []}
    written = []
    for student in students_in_order(rows, None):
        path = folder / f"{safe_file_name(student)}.md"
        mine = [row for row in rows if row.student == student]
        path.write_text(feedback_text(student, mine, names.get(student, "")), encoding="utf-8")
        written.append(path)
    return written
