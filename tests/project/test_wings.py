"""`course_utils` is organised in wings, and imports run one way: widgets and exercises → analysis → zoo →
evaluation → models → language → the set-up core; slides → models, and widgets and exercises may also use the
slides' worked examples. Checked from the source with ``ast``, so a
lazy import inside a function counts too."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "course_utils"
CORE = {
    "__init__",
    "budget",
    "cell_slices",
    "checkpoints",
    "colab",
    "device",
    "lecture",
    "notebook",
    "offline",
    "threads",
    "training",
    "validation",
}
WINGS = ("language", "models", "evaluation", "zoo", "analysis", "slides", "widgets", "exercises")
BELOW = {  # each wing may import itself and the wings below it
    "core": set(),
    "language": {"core"},
    "models": {"language", "core"},
    "evaluation": {"models", "language", "core"},
    "zoo": {"evaluation", "models", "language", "core"},
    "analysis": {"zoo", "evaluation", "models", "language", "core"},
    "slides": {"models", "language", "core"},
    "widgets": {"analysis", "slides", "zoo", "evaluation", "models", "language", "core"},  # the beam demo draws
    "exercises": {"analysis", "slides", "zoo", "evaluation", "models", "language", "core"},  # the slides' tree
}
MAY_IMPORT = {wing: below | {wing} for wing, below in BELOW.items()}
FAMILIES = sorted(p.parent.name for p in (PACKAGE / "models").glob("*/__init__.py"))
MODULES = sorted(PACKAGE.rglob("*.py"))


def wing_of(dotted: str) -> str:
    """The wing of ``course_utils.x.y`` ("core" for the top level)."""
    parts = dotted.split(".")[1:]
    return parts[0] if parts and parts[0] in WINGS else "core"


def course_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``course_utils`` module that ``path`` imports, with its line number."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "course_utils"]
        elif (
            isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "course_utils"
        ):
            if node.module == "course_utils":  # from course_utils import models / budget / CourseInputError
                found += [
                    (node.lineno, f"course_utils.{a.name}" if a.name in WINGS else "course_utils") for a in node.names
                ]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            pytest.fail(f"{path.relative_to(ROOT)}:{node.lineno} uses a relative import; write course_utils.… in full")
    return found


def test_the_top_level_holds_only_the_core_and_the_wings():
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == CORE, f"modules outside a wing: {sorted(top - CORE)}; missing core modules: {sorted(CORE - top)}"
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(WINGS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way(path):
    wing = wing_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
    wrong = [f"line {line}: {name} ({wing_of(name)})" for line, name in course_imports(path)
             if wing_of(name) not in MAY_IMPORT[wing]]  # fmt: skip
    assert not wrong, (
        f"{path.relative_to(ROOT)} is in {wing!r}, which may import only {sorted(MAY_IMPORT[wing])}: {wrong}"
    )


def test_the_checker_sees_a_wrong_way_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f():\n    from course_utils.widgets.widget_kit import Demo\n    from course_utils import models\n"
    )
    assert [name for _, name in course_imports(bad)] == ["course_utils.widgets.widget_kit", "course_utils.models"]
    assert {wing_of(name) for _, name in course_imports(bad)} - MAY_IMPORT["language"] == {"widgets", "models"}


def packages() -> list[str]:
    """Every folder of the package that holds modules: the wings, and the model families inside ``models/``."""
    return [*WINGS, *(f"models/{family}" for family in FAMILIES)]


def contents(folder: str) -> list[str]:
    """A folder's modules and sub-packages (``name/``), as its docstring lists them."""
    path = PACKAGE / folder
    modules = [p.stem for p in path.glob("*.py") if p.stem != "__init__"]
    return sorted(modules + [f"{p.parent.name}/" for p in path.glob("*/__init__.py")])


@pytest.mark.parametrize("folder", packages())
def test_each_wing_docstring_lists_its_modules_one_line_each(folder):
    doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    listed = re.findall(r"^- ``(\w+/?)``: \S", doc, flags=re.M)
    assert sorted(listed) == contents(folder)


def test_the_models_are_grouped_in_families():
    loose = sorted(p.stem for p in (PACKAGE / "models").glob("*.py") if p.stem != "__init__")
    assert loose == ["lm"], f"models/ holds families and the LM contract only; loose modules: {loose}"
    assert FAMILIES, "models/ has no family folders"


def test_the_readme_layout_shows_every_wing_and_module():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    for folder in packages():
        name = folder.rsplit("/", 1)[-1]
        assert re.search(rf"^\s+{name}/", layout, flags=re.M), f"the README's Layout does not show {folder}/"
        for module in (PACKAGE / folder).glob("*.py"):
            if module.stem != "__init__":
                assert re.search(rf"\b{module.stem}\b", layout), (
                    f"the README's Layout does not name {folder}/{module.name}"
                )
    for module in CORE - {"__init__"}:
        assert re.search(rf"\b{module}\b", layout), f"the README's Layout does not name the core module {module}"
