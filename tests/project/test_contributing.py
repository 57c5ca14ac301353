"""CONTRIBUTING.md keeps up with the code: it names every file that enforces the course's structure, and every
command, path and test it names exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")

# A file enforces the structure when it walks the notebooks, their sources, the demos or the wings, or reads what a
# new notebook must add to the README or the teaching page.
ENFORCES = re.compile(r"""glob\(["'](\*\.ipynb|\[0-9\]|\*_demo\.py|\*\.py)|README\.md|teaching\.md""")
# Files that match but check nothing about the structure.
NOT_TOUCH_POINTS = {
    "tests/language/test_text_pipeline.py": "reads the README as sample text",
}


def enforcing_files() -> list[str]:
    files = [*ROOT.glob("tests/**/*.py"), ROOT / "benchmarks" / "run.py", *ROOT.glob("scripts/*.py")]
    found = [path.relative_to(ROOT).as_posix() for path in files if ENFORCES.search(path.read_text(encoding="utf-8"))]
    return sorted(set(found) - set(NOT_TOUCH_POINTS))


def test_the_guide_names_every_file_that_enforces_the_structure():
    missing = [path for path in enforcing_files() if path not in GUIDE]
    assert not missing, f"CONTRIBUTING.md does not say what these check when a notebook or a demo is added: {missing}"


def test_the_finder_sees_the_structure_tests():
    found = enforcing_files()
    for path in (
        "tests/notebooks/test_notebook_structure.py",
        "tests/project/test_wings.py",
        "tests/notebooks/test_site.py",
        "benchmarks/run.py",
    ):
        assert path in found


def test_every_path_the_guide_names_exists():
    named = set(re.findall(r"`((?:tests|scripts|benchmarks|course_utils|notebooks|docs|requirements|data)/[\w./-]+)`",
                           GUIDE))  # fmt: skip
    templates = {path for path in named if re.search(r"NN|topic|name_demo|test_name", path)}
    missing = [path for path in sorted(named - templates) if not (ROOT / path).exists()]
    assert not missing, missing
    assert templates, "the guide shows where a new notebook's files go"


def test_every_command_the_guide_gives_exists():
    course_sh = (ROOT / "course.sh").read_text(encoding="utf-8")
    for command in set(re.findall(r"bash course\.sh (\w+)", GUIDE)):
        assert re.search(rf"^\s+{command}\)", course_sh, flags=re.M), f"course.sh has no {command!r} command"
    for module in set(re.findall(r"python -m (course_utils(?:\.\w+)+)", GUIDE)):
        spec = importlib.util.find_spec(module)
        assert spec is not None and "__main__" in Path(spec.origin).read_text(encoding="utf-8"), module
    for script in set(re.findall(r"python ((?:scripts|benchmarks)/\w+\.py)", GUIDE)):
        assert (ROOT / script).exists(), script


def test_the_names_it_gives_for_checks_exist():
    structure = (ROOT / "tests" / "notebooks" / "test_notebook_structure.py").read_text(encoding="utf-8")
    assert "REQUIRED_SLIDE_CHECKS" in structure and "> **Slide check.** The slide (" in structure
    support = (ROOT / "tests" / "widget_support.py").read_text(encoding="utf-8")
    assert "def assert_inline_error" in support and "def normal_and_lecture" in support
    assert "def contract_tests" in (ROOT / "tests" / "exercise_contract.py").read_text(encoding="utf-8")
    assert "def demo_classes" in (ROOT / "benchmarks" / "run.py").read_text(encoding="utf-8")
    assert "REPO_URL = " in (ROOT / "course_utils" / "colab.py").read_text(encoding="utf-8")


# The kinds of error the fresh readings of notebooks 01-11 found (issue 45): each stays in the reader's checklist.
READER_CHECKS = [
    "A number no output prints",
    "An order or a direction reversed",
    '"All", "every" or "never" where the outputs show "most"',
    "One run, or a gap within noise, read as a finding; a noise yardstick borrowed from another recipe",
    "An unnamed confound: steps, size, data, learning rate",
    "A comparison with a paper whose setup differs, without saying how",
    "A slide check that refutes what the slide did not claim",
    "A mechanism asserted but not measured",
    "A term used before its definition",
    "A number that only full mode prints",
]


def readers_checklist() -> list[str]:
    """The numbered items of the guide's reader's checklist, each with its continuation lines."""
    section = GUIDE.split("## A reader's checklist", 1)[1].split("\n## ", 1)[0]
    return re.split(r"\n(?=\d+\. )", section.strip())[1:]


def test_the_readers_checklist_keeps_every_kind_of_error_with_an_example_from_the_course():
    items = readers_checklist()
    for kind in READER_CHECKS:
        item = next((item for item in items if item.split("**")[1].startswith(kind)), None)
        assert item is not None, f"the reader's checklist lost {kind!r}"
        example = re.search(r"\*(\d\d)\b[^*]+\*", item)
        assert example, f"{kind!r} has no example from a notebook (an italic sentence starting with its number)"
        assert list((ROOT / "notebooks").glob(f"{example[1]}_*.ipynb")), example[1]
    assert "with the reader's checklist" in GUIDE.split("## Before you commit", 1)[1]
