"""`course_utils` is organised in wings, and imports run one way: widgets and exercises → analysis → zoo →
evaluation → models → language → the set-up core; slides → models, and widgets and exercises may also use the
slides' worked examples. Inside ``models/`` the families are ordered too: basics → classic → recurrent →
transformer → bert, each importing only the ones before it; ``generation`` may import them all, and only
analysis, widgets and exercises import ``generation``. Checked from the source with ``ast``, so a
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
    "colab_install",
    "device",
    "lecture",
    "listing",
    "notebook",
    "offline",
    "reference",
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
FAMILY_ORDER = ("basics", "classic", "recurrent", "transformer", "bert")  # each may import the ones before it
OVER_ALL = "generation"  # may import every family
GENERATION_USERS = {"analysis", "widgets", "exercises"}  # the only wings that import generation
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
            else:  # from course_utils.models import generation: the submodule, where there is one
                found += [(node.lineno, submodule(node.module, a.name)) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            pytest.fail(f"{path.relative_to(ROOT)}:{node.lineno} uses a relative import; write course_utils.… in full")
    return found


def submodule(package: str, name: str) -> str:
    """``package.name`` when that is a module or package of the source tree, else ``package``."""
    path = ROOT.joinpath(*package.split("."), name)
    return f"{package}.{name}" if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() else package


def family_of(dotted: str) -> str | None:
    """The model family of ``course_utils.models.<family>...``, None for anything else."""
    parts = dotted.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "models" and parts[2] in FAMILIES else None


def families_allowed(dotted: str) -> set[str]:
    """The families that module ``dotted`` may import (its own included)."""
    family, wing = family_of(dotted), wing_of(dotted)
    if family == OVER_ALL:
        return set(FAMILIES)
    if family is not None:
        return set(FAMILY_ORDER[: FAMILY_ORDER.index(family) + 1])
    if wing == "models":  # the LM contract and the package itself sit under every family
        return set()
    return set(FAMILIES) if wing in GENERATION_USERS else set(FAMILIES) - {OVER_ALL}


def family_violations(path: Path, dotted: str) -> list[str]:
    """The imports of ``path`` (module ``dotted``) that break the families' order."""
    allowed = families_allowed(dotted)
    return [f"line {line}: {name} ({family_of(name)})" for line, name in course_imports(path)
            if family_of(name) is not None and family_of(name) not in allowed]  # fmt: skip


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


def test_the_family_order_names_every_family():
    assert set(FAMILY_ORDER) | {OVER_ALL} == set(FAMILIES), (
        f"models/ has the families {FAMILIES}; place each new one in FAMILY_ORDER (or it is {OVER_ALL!r})"
    )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_model_families_import_only_earlier_ones(path):
    dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    wrong = family_violations(path, dotted)
    assert not wrong, (
        f"{path.relative_to(ROOT)} (family {family_of(dotted)}, wing {wing_of(dotted)}) may import only the "
        f"families {sorted(families_allowed(dotted))} (order: {' → '.join(FAMILY_ORDER)}, {OVER_ALL} over all, "
        f"imported only by {sorted(GENERATION_USERS)}): {wrong}"
    )


def test_the_checker_sees_a_family_import_the_wrong_way(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from course_utils.models.bert.bert_mlm import TinyBert\n"
        "def f():\n    from course_utils.models import generation as g, lm\n"
        "    from course_utils.models.basics import activations\n"
    )
    assert [name for _, name in course_imports(bad)] == [
        "course_utils.models.bert.bert_mlm", "course_utils.models.generation", "course_utils.models.lm",
        "course_utils.models.basics.activations",
    ]  # fmt: skip
    flagged = lambda dotted: {family_of(v.split()[2]) for v in family_violations(bad, dotted)}  # noqa: E731
    assert flagged("course_utils.models.classic.ngram") == {"bert", "generation"}
    assert flagged("course_utils.models.bert.bert_mlm") == {"generation"}
    assert flagged("course_utils.models.lm") == {"bert", "generation", "basics"}
    assert flagged("course_utils.zoo.lm_checkpoints") == {"generation"}
    assert flagged("course_utils.widgets.beam_demo") == flagged("course_utils.models.generation.beam") == set()


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
