"""Students from LMS file names and rosters (``grading.roster``), and the totals, Canvas, Gradescope and feedback
files written from the grader's rows."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from grading.results import Row
from grading.roster import (
    NameParts,
    Student,
    by_student,
    choose_latest,
    key,
    match,
    notebook_of,
    parse_name,
    read_roster,
    roster_keys,
    student_key,
    submitted_files,
    write_canvas,
    write_feedback,
    write_gradescope,
    write_totals,
)

STEMS = ["01_linear_regression", "02_computation_graphs", "03_activation_functions"]


def parsed(tmp_path: Path, name: str) -> NameParts:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return parse_name(path, tmp_path)


def fields(parts: NameParts) -> tuple:
    return parts.student, parts.lms_id, parts.late, parts.attempt, parts.notebook_hint


# ---- file names ---------------------------------------------------------------------------------------------------

NAMES = {
    "canvas": (
        "smithjane_12345_67890_01_linear_regression.ipynb",
        ("smithjane", "12345", False, 0, "01_linear_regression"),
    ),
    "canvas late": (
        "smithjane_LATE_12345_67890_01_linear_regression.ipynb",
        ("smithjane", "12345", True, 0, "01_linear_regression"),
    ),
    "canvas resubmitted": (
        "smithjane_12345_67891_01_linear_regression-1.ipynb",
        ("smithjane", "12345", False, 1, "01_linear_regression"),
    ),
    "canvas second resubmission": (
        "smithjane_12345_67892_01_linear_regression-2.ipynb",
        ("smithjane", "12345", False, 2, "01_linear_regression"),
    ),
    "canvas Copy_of": (
        "smithjane_12345_67890_Copy_of_01_linear_regression.ipynb",
        ("smithjane", "12345", False, 0, "01_linear_regression"),
    ),
    "canvas Copy of (1)": (
        "smithjane_late_12345_67890_Copy of 01_linear_regression (1).ipynb",
        ("smithjane", "12345", True, 1, "01_linear_regression"),
    ),
    "colab in a student's folder": (
        "alice/Copy of 01_linear_regression.ipynb",
        ("alice", None, False, 0, "01_linear_regression"),
    ),
    "drive's duplicate in a student's folder": (
        "alice/Copy of Copy of 01_linear_regression (2).ipynb",
        ("alice", None, False, 2, "01_linear_regression"),
    ),
    "folder per student": (
        "Bob Jones/02_computation_graphs.ipynb",
        ("bobjones", None, False, 0, "02_computation_graphs"),
    ),
    "folder and name": ("alice/alice_01_linear_regression.ipynb", ("alice", None, False, 0, "01_linear_regression")),
    "moodle": (
        "Jane Smith_12345_assignsubmission_file_01_linear_regression.ipynb",
        ("janesmith", "12345", False, 0, "01_linear_regression"),
    ),
    "moodle's folders": (
        "Jane Smith_12345_assignsubmission_file_/01_linear_regression.ipynb",
        ("janesmith", "12345", False, 0, "01_linear_regression"),
    ),
    "plain": ("alice_01_linear_regression.ipynb", ("alice", None, False, 0, "01_linear_regression")),
    "plain, number only": ("carol-03.ipynb", ("carol", None, False, 0, "03")),
    "plain, two words": (
        "Jane_Smith_01_linear_regression.ipynb",
        ("janesmith", None, False, 0, "01_linear_regression"),
    ),
    "plain, resubmitted": ("carol-03-1.ipynb", ("carol", None, False, 1, "03")),
}


@pytest.mark.parametrize("name, expected", NAMES.values(), ids=NAMES.keys())
def test_each_lms_naming_pattern_names_its_student(tmp_path, name, expected):
    assert fields(parsed(tmp_path, name)) == expected


def test_the_source_tells_canvas_moodle_folders_and_plain_names_apart(tmp_path):
    sources = [parsed(tmp_path, name).source for name, _ in NAMES.values()]
    assert set(sources) == {"canvas", "moodle", "folder", "plain"}
    assert parsed(tmp_path, NAMES["moodle"][0]).source == "moodle"


def test_gradescope_export_names_students_through_its_metadata(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_111:\n"
        "  :submitters:\n"
        "  - :name: Jane Smith\n"
        "    :sid: '900123'\n"
        "    :email: jsmith@uni.edu\n"
        "  :created_at: 2026-11-01 10:00:00.000000000 -07:00\n"
        "submission_222: !ruby/hash:ActiveSupport::HashWithIndifferentAccess\n"
        "  :submitters:\n"
        "  - :name: Bob Jones\n"
        "    :sid: ''\n"
        "    :email: bob@uni.edu\n"
    )
    jane = parsed(tmp_path, "submission_111/01_linear_regression.ipynb")
    bob = parsed(tmp_path, "submission_222/Copy of 01_linear_regression.ipynb")
    assert fields(jane) == ("janesmith", "900123", False, 0, "01_linear_regression")
    assert (jane.source, jane.email) == ("gradescope", "jsmith@uni.edu")
    assert fields(bob) == ("bobjones", None, False, 0, "01_linear_regression")


def test_a_submission_folder_without_metadata_is_a_folder_like_any_other(tmp_path):
    parts = parsed(tmp_path, "submission_333/01_linear_regression.ipynb")
    assert (parts.student, parts.source) == ("submission333", "folder")


def test_one_students_late_resubmitted_and_copied_files_are_one_key_and_the_latest_attempt_wins(tmp_path):
    names = [
        "smithjane_LATE_12345_67890_01_linear_regression.ipynb",
        "smithjane_12345_67893_Copy of 01_linear_regression.ipynb",
        "smithjane_12345_67891_01_linear_regression-1.ipynb",
        "jonesbob_22222_67892_01_linear_regression.ipynb",
    ]
    files = [parsed(tmp_path, name) for name in names]
    groups = by_student(files)
    assert sorted(groups) == ["jonesbob", "smithjane"]
    assert len(groups["smithjane"]) == 3
    assert choose_latest(groups["smithjane"]).path.name == names[2]


def test_equal_attempts_fall_back_to_the_newest_file(tmp_path):
    older = parsed(tmp_path, "alice/01_linear_regression.ipynb")
    newer = parsed(tmp_path, "alice/Copy of 01_linear_regression.ipynb")
    os.utime(older.path, (1_000_000, 1_000_000))
    os.utime(newer.path, (2_000_000, 2_000_000))
    assert choose_latest([newer, older]) == newer
    os.utime(older.path, (3_000_000, 3_000_000))
    assert choose_latest([newer, older]) == older


def test_submitted_files_leave_out_checkpoints_macos_copies_and_hidden_files(tmp_path):
    for name in ["alice/01.ipynb", "alice/.ipynb_checkpoints/01-checkpoint.ipynb", "__MACOSX/alice/._01.ipynb",
                 ".hidden.ipynb", "bob_02.ipynb", "notes.txt"]:  # fmt: skip
        parsed(tmp_path, name)
    assert submitted_files(tmp_path) == [tmp_path / "alice" / "01.ipynb", tmp_path / "bob_02.ipynb"]


@pytest.mark.parametrize(
    "hint, expected",
    [
        ("01_linear_regression", "01_linear_regression"),
        ("01", "01_linear_regression"),
        ("3", "03_activation_functions"),
        ("computation graphs", "02_computation_graphs"),
        ("homework", None),
        ("07", None),
    ],
)
def test_a_hint_names_a_course_notebook_by_stem_number_or_name(hint, expected):
    assert notebook_of(hint, STEMS) == expected


def test_keys_drop_case_accents_spaces_and_punctuation():
    assert key("Jane Smith") == key("jane_smith") == key("Jane-Smith") == "janesmith"
    assert key("José O'Neil") == "joseoneil"


# ---- rosters ------------------------------------------------------------------------------------------------------

OURS = "id,name,email\ns1,Jane Smith,jsmith@uni.edu\ns2,Bob Jones,bob@uni.edu\ns3,Carol Díaz,carol@uni.edu\n"
CANVAS = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Homework 5 (12345)\n"
    "    Points Possible,,,,,10\n"
    '"Smith, Jane",12345,900123,jsmith,Section A,\n'
    '"Jones, Bob",22222,900222,bjones,Section B,\n'
    '"Student, Test",99999,,,Section A,\n'
)
GRADESCOPE = (
    "First Name,Last Name,SID,Email,Role,Sections\n"
    "Jane,Smith,900123,jsmith@uni.edu,Student,A\n"
    "Ann,Teacher,,ann@uni.edu,TA,\n"
    "Bob,Jones,900222,bob@uni.edu,Student,B\n"
)


def roster_file(tmp_path: Path, text: str, bom: bool = False) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8-sig" if bom else "utf-8")
    return path


def test_our_own_roster(tmp_path):
    roster = read_roster(roster_file(tmp_path, OURS))
    assert [(s.id, s.name, s.email) for s in roster] == [
        ("s1", "Jane Smith", "jsmith@uni.edu"),
        ("s2", "Bob Jones", "bob@uni.edu"),
        ("s3", "Carol Díaz", "carol@uni.edu"),
    ]
    assert roster_keys(roster) == ["s1", "s2", "s3"]


def test_canvas_gradebook_export_without_its_points_possible_line_or_test_student(tmp_path):
    roster = read_roster(roster_file(tmp_path, CANVAS, bom=True))
    assert roster == [
        Student("12345", "Smith, Jane", "", "900123", "jsmith", "Section A"),
        Student("22222", "Jones, Bob", "", "900222", "bjones", "Section B"),
    ]


def test_gradescope_roster_students_only(tmp_path):
    roster = read_roster(roster_file(tmp_path, GRADESCOPE))
    assert [(s.id, s.name, s.email, s.sis_user_id, s.section) for s in roster] == [
        ("900123", "Jane Smith", "jsmith@uni.edu", "900123", "A"),
        ("900222", "Bob Jones", "bob@uni.edu", "900222", "B"),
    ]


def test_match_by_canvas_user_id_first(tmp_path):
    roster = read_roster(roster_file(tmp_path, CANVAS))
    renamed = parsed(tmp_path, "somebodyelse_22222_67890_01_linear_regression.ipynb")  # the id decides
    assert match(renamed, roster).name == "Jones, Bob"
    assert student_key(renamed, roster) == "22222"


def test_match_by_login_or_email_local_part(tmp_path):
    canvas = read_roster(roster_file(tmp_path, CANVAS))
    assert match(parsed(tmp_path, "jsmith/01_linear_regression.ipynb"), canvas).id == "12345"
    ours = read_roster(roster_file(tmp_path, OURS))
    assert match(parsed(tmp_path, "bob/01_linear_regression.ipynb"), ours).id == "s2"


def test_match_by_name_either_order(tmp_path):
    ours = read_roster(roster_file(tmp_path, OURS))
    canvas_style = parsed(tmp_path, "smithjane_77777_67890_01_linear_regression.ipynb")  # id unknown to our roster
    assert match(canvas_style, ours).id == "s1"
    assert match(parsed(tmp_path, "Jane Smith_5_assignsubmission_file_01.ipynb"), ours).id == "s1"
    assert match(parsed(tmp_path, "carol_diaz_03.ipynb"), ours).id == "s3"
    canvas = read_roster(roster_file(tmp_path, CANVAS))
    assert match(parsed(tmp_path, "Bob Jones/01.ipynb"), canvas).id == "22222"


def test_moodle_participant_ids_are_not_taken_for_student_ids(tmp_path):
    canvas = read_roster(roster_file(tmp_path, CANVAS))
    moodle = parsed(tmp_path, "Jane Smith_22222_assignsubmission_file_01.ipynb")  # 22222 is Bob's Canvas id
    assert match(moodle, canvas).id == "12345"


def test_gradescope_export_matches_by_sid_then_email(tmp_path):
    roster = read_roster(roster_file(tmp_path, GRADESCOPE))
    by_sid = NameParts("someone", "900222", False, 0, "01", "gradescope", "nobody@uni.edu")
    by_email = NameParts("someone", None, False, 0, "01", "gradescope", "JSMITH@uni.edu")
    assert match(by_sid, roster).id == "900222"
    assert match(by_email, roster).id == "900123"


def test_no_match_and_ambiguous_names_give_none(tmp_path):
    ours = read_roster(roster_file(tmp_path, OURS + "s4,Jane Smith,jane.smith@other.edu\n"))
    assert match(parsed(tmp_path, "dave_01.ipynb"), ours) is None
    assert match(parsed(tmp_path, "smithjane_77777_1_01.ipynb"), ours) is None  # two Jane Smiths
    assert student_key(parsed(tmp_path, "dave_01.ipynb"), ours) == "dave"


# ---- outputs ------------------------------------------------------------------------------------------------------

ROSTER = [
    Student("12345", "Smith, Jane", "jsmith@uni.edu", "900123", "jsmith", "A"),
    Student("22222", "Jones, Bob", "bob@uni.edu", "900222", "bjones", "B"),
    Student("33333", "Díaz, Carol", "carol@uni.edu", "", "cdiaz", "A"),
    Student("44444", "Lee, Dan", "dan@uni.edu", "900444", "dlee", "B"),  # submitted nothing, no rows
]


def made_up_rows() -> list[Row]:
    """3 students, 2 notebooks of 2 exercises (2 and 3 points, then 4 and 1): Jane by id, Bob by a name key,
    Carol not submitting 02, and eve, who is not in the roster."""
    rows = []
    for student, first, second in [
        ("12345", (2.0, 1.5), (4.0, 0.5)),
        ("jonesbob", (2.0, 3.0), (2.5, 0.0)),
        ("33333", (0.0, 3.0), None),
        ("eve", (1.0, 1.0), (1.0, 1.0)),
    ]:
        for number, (points, out_of) in enumerate(zip(first, (2.0, 3.0)), start=1):
            status = "passed" if points == out_of else "partial" if points else "wrong"
            rows.append(Row(student, "01_linear_regression", number, status, points, out_of, "", cases="1/2"))
        for number, out_of in enumerate((4.0, 1.0), start=1):
            points = second[number - 1] if second else 0.0
            status = "not submitted" if second is None else "passed" if points == out_of else "partial"
            rows.append(Row(student, "02_computation_graphs", number, status, points, out_of, "msg"))
    return rows


def read_csv(path: Path, encoding: str = "utf-8") -> list[list[str]]:
    with open(path, newline="", encoding=encoding) as file:
        return list(csv.reader(file))


def test_totals_one_line_per_student_with_each_notebook_and_the_total(tmp_path):
    path = tmp_path / "totals.csv"
    write_totals(made_up_rows(), ROSTER, path)
    assert path.read_bytes().startswith("\ufeff".encode())  # for Excel
    lines = read_csv(path, "utf-8-sig")
    assert lines == [
        ["id", "name", "01_linear_regression", "02_computation_graphs", "total", "out_of"],
        ["12345", "Smith, Jane", "3.5", "4.5", "8", "10"],
        ["22222", "Jones, Bob", "5", "2.5", "7.5", "10"],
        ["33333", "Díaz, Carol", "3", "0", "3", "10"],
        ["44444", "Lee, Dan", "0", "0", "0", "10"],
        ["eve", "eve", "2", "2", "4", "10"],
    ]


def test_totals_without_a_roster_keep_the_rows_keys(tmp_path):
    path = tmp_path / "totals.csv"
    write_totals(made_up_rows(), None, path)
    assert [line[:2] + line[-2:] for line in read_csv(path, "utf-8-sig")[1:]] == [
        ["12345", "12345", "8", "10"],
        ["33333", "33333", "3", "10"],
        ["eve", "eve", "4", "10"],
        ["jonesbob", "jonesbob", "7.5", "10"],
    ]


def test_canvas_import_roster_columns_then_the_assignment_and_warnings_for_strangers(tmp_path):
    path = tmp_path / "canvas.csv"
    warnings = write_canvas(made_up_rows(), ROSTER, path, "Homework 5 (12345)")
    assert not path.read_bytes().startswith("\ufeff".encode())
    assert read_csv(path) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 5 (12345)"],
        ["Smith, Jane", "12345", "900123", "jsmith", "A", "8"],
        ["Jones, Bob", "22222", "900222", "bjones", "B", "7.5"],
        ["Díaz, Carol", "33333", "", "cdiaz", "A", "3"],
        ["Lee, Dan", "44444", "900444", "dlee", "B", ""],
    ]
    assert len(warnings) == 1 and warnings[0].startswith("eve")


def test_canvas_import_of_one_notebook(tmp_path):
    path = tmp_path / "canvas.csv"
    write_canvas(made_up_rows(), ROSTER, path, "Notebook 2 (777)", notebook="02_computation_graphs")
    assert [line[-1] for line in read_csv(path)] == ["Notebook 2 (777)", "4.5", "2.5", "0", ""]


def test_canvas_import_needs_a_roster(tmp_path):
    with pytest.raises(ValueError, match="roster"):
        write_canvas(made_up_rows(), None, tmp_path / "canvas.csv", "Homework 5 (12345)")


def test_gradescope_upload_columns_and_totals(tmp_path):
    path = tmp_path / "gradescope.csv"
    warnings = write_gradescope(made_up_rows(), ROSTER, path)
    assert read_csv(path) == [
        ["Name", "SID", "Email", "Total Score"],
        ["Smith, Jane", "900123", "jsmith@uni.edu", "8"],
        ["Jones, Bob", "900222", "bob@uni.edu", "7.5"],
        ["Díaz, Carol", "33333", "carol@uni.edu", "3"],
        ["Lee, Dan", "900444", "dan@uni.edu", ""],
    ]
    assert [warning.split(":")[0] for warning in warnings] == ["eve"]


def test_gradescope_upload_without_a_roster_warns_that_it_cannot_match(tmp_path):
    path = tmp_path / "gradescope.csv"
    warnings = write_gradescope(made_up_rows(), None, path)
    assert read_csv(path)[1:] == [["12345", "", "", "8"], ["33333", "", "", "3"], ["eve", "", "", "4"],
                                  ["jonesbob", "", "", "7.5"]]  # fmt: skip
    assert warnings


def test_feedback_one_markdown_file_per_student(tmp_path):
    rows = made_up_rows()
    rows[0].message, rows[0].notes = "all right", "cell 4 raised NameError"
    rows[1].notes = "cell 4 raised NameError"  # the same note on each of the notebook's rows: written once
    rows.append(Row("mallory/../x", "01_linear_regression", "", "crashed", 0.0, 0.0, "the kernel died\nat cell 3"))
    written = write_feedback(rows, tmp_path / "feedback", ROSTER)
    assert sorted(path.name for path in written) == ["12345.md", "22222.md", "33333.md", "eve.md", "mallory_x.md"]
    assert all(path.parent == tmp_path / "feedback" for path in written)
    jane = (tmp_path / "feedback" / "12345.md").read_text(encoding="utf-8")
    assert jane.splitlines() == [
        "# Feedback for Smith, Jane",
        "",
        "## 01_linear_regression: 3.5 / 5",
        "",
        "- Exercise 1: 2 / 2 (passed, 1/2 hidden cases): all right",
        "- Exercise 2: 1.5 / 3 (partial, 1/2 hidden cases)",
        "",
        "Notes: cell 4 raised NameError",
        "",
        "## 02_computation_graphs: 4.5 / 5",
        "",
        "- Exercise 1: 4 / 4 (passed): msg",
        "- Exercise 2: 0.5 / 1 (partial): msg",
        "",
        "**Total: 8 / 10**",
    ]
    assert (tmp_path / "feedback" / "22222.md").read_text(encoding="utf-8").startswith("# Feedback for Jones, Bob\n")
    carol = (tmp_path / "feedback" / "33333.md").read_text(encoding="utf-8")
    assert "- Exercise 1: 0 / 4 (not submitted): msg" in carol and carol.endswith("**Total: 3 / 10**\n")
    crashed = (tmp_path / "feedback" / "mallory_x.md").read_text(encoding="utf-8")
    assert "- The notebook: 0 / 0 (crashed): the kernel died\n  at cell 3" in crashed
