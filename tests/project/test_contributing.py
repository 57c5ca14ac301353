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
