"""The Colab set-up cell and badges are generated from REPO_URL; sync rewrites stale copies; the cell (at most 8
lines) runs the installer, ``course_utils/colab_install.py``, which installs on Colab what CI tested and breaks nothing
of Colab's.

The installer's decisions are tested on real files: dist-info folders written from the model of Colab's runtime, the
repository's pyproject.toml and Colab lock. The install itself is tested for real (the tests marked slow). A Python
3.13 venv replicates Colab's runtime from ``requirements/colab-runtime.metadata`` (every package of
googlecolab/backend-info's pip freeze at a named commit): pip 24.1.2 and packaging installed for real, every other
package a dist-info holding its real Requires-Dist and Requires-Python (``scripts/colab_lock.py``'s ``runtime_venv``).
The notebooks' own set-up cell (``setup_cell_source()``) runs there twice, with ``google.colab`` a module in
``sys.modules`` and ``/content/course`` replaced by this checkout, and the real pip installs from PyPI. It fails on a
pip ``ERROR``, a new ``pip check`` problem, a changed torch, ipykernel, ipywidgets, numpy, matplotlib or pillow, a
transformers CI does not test, or anything installed that the Colab lock (``requirements/colab.txt``) does not pin.
Without PyPI or a Python 3.13 it is skipped, saying so.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.request import urlopen

import pytest

from course_utils import colab, colab_install

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import colab_lock  # noqa: E402

CONTENT = "/content/course"
COLABS_OWN = {"torch", "ipykernel", "ipywidgets"}

RUN_CELL_TWICE = """\
import json, os, subprocess, sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")
source = open(sys.argv[1]).read()
calls, real_run = [], subprocess.run

def recorded(command, *args, **kwargs):  # the real command, written down
    calls[-1].append([os.path.basename(str(command[0])), *map(str, command[1:])])
    return real_run(command, *args, **kwargs)

subprocess.run = recorded
for run in (1, 2):
    calls.append([])
    exec(compile(source, "setup-cell", "exec"), {"__name__": "__main__"})
print("\\nRESULT " + json.dumps({"calls": calls, "cwd": os.getcwd(), "path": sys.path}))
"""


def model_python() -> str:
    """Colab's Python, as the model of its runtime records it."""
    return colab_lock.read_model()[0]["python"]


def colab_lock_lines() -> dict[str, tuple[str, list[str]]]:
    """``{name: (version, [the course's packages it is for])}`` from ``requirements/colab.txt``."""
    found = {}
    for line in colab_lock.COLAB_LOCK.read_text().splitlines():
        if match := re.match(r"^([\w.-]+)==(\S+)  # (?:floor|lock), for (.+)$", line):
            found[colab_lock.canonical(match[1])] = (match[2], match[3].split(", "))
    return found


# --- the cell's source, the badges, sync ---------------------------------------------------------------------------


def test_the_cell_may_install_exactly_the_core_less_colabs_own():
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert colab_install.colab_requirements() == [r for r in core if not r.startswith(tuple(COLABS_OWN))]
    assert set(colab_install.KEPT_ON_COLAB) == COLABS_OWN
    assert {"torch", "ipywidgets"} <= {re.match(r"[\w-]+", r).group() for r in core}, "the core still names them"


def test_the_cell_is_at_most_8_lines_and_runs_the_installer_of_its_clone():
    from course_utils.lecture import HOUSE_WIDTH

    source = colab.setup_cell_source()
    assert len(source.splitlines()) <= 8, source
    assert max(map(len, source.splitlines())) <= HOUSE_WIDTH, "the set-up cell keeps the projector's width"
    assert source.startswith(colab.SETUP_CELL_MARKER)
    assert re.search(r'^    url, home = "(.+)", "/content/course"$', source, flags=re.M)[1] == colab.REPO_URL
    installer = re.search(r'run_path\(f"\{home\}/([\w/]+\.py)"\)\["(\w+)"\]\(\)', source)
    assert installer and (ROOT / installer[1]) == Path(colab_install.__file__), "the cell runs colab_install.py"
    assert callable(getattr(colab_install, installer[2]))
    assert source.rstrip().endswith('os.chdir(f"{home}/notebooks")'), "it ends where the notebooks are"


def test_the_installer_needs_only_the_standard_library_and_packaging():
    # The cell runs it before the course's dependencies are installed, without importing course_utils (torch).
    import ast

    tree = ast.parse(Path(colab_install.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}  # fmt: skip
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported - set(sys.stdlib_module_names) == {"packaging"}, imported


def test_setup_cell_is_colab_only_and_uses_no_drive_or_login():
    source = colab.setup_cell_source()
    assert 'if "google.colab" in sys.modules' in source
    assert "drive" not in source.lower() and "login" not in source.lower()
    before = (os.getcwd(), list(sys.path))
    exec(compile(source, "setup-cell", "exec"), {})  # outside Colab: does nothing, raises nothing
    assert (os.getcwd(), sys.path) == before


def test_badge_points_at_the_student_edition_in_the_repository():
    badge = colab.colab_badge("01_x.ipynb")
    assert badge.endswith(
        "/github/" + colab.REPO_URL.removeprefix("https://github.com/") + "/blob/main/notebooks/student/01_x.ipynb)"
    )
    root = Path(colab.__file__).resolve().parents[1]
    for notebook in (root / "notebooks").glob("*.ipynb"):
        assert (root / colab.STUDENT_EDITION / notebook.name).is_file(), f"no student edition of {notebook.name}"


def test_sync_rewrites_a_stale_url(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    stale_cell = colab.setup_cell_source("https://github.com/old/place")
    notebook = {
        "cells": [{"cell_type": "code", "source": stale_cell, "metadata": {}, "outputs": [], "execution_count": None}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "notebooks" / "01_x.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "README.md").write_text(
        "| 01 | " + colab.colab_badge("01_x.ipynb", "https://github.com/old/place") + " |\n"
    )
    changed = colab.sync(tmp_path)
    assert len(changed) == 2
    source = json.loads((tmp_path / "notebooks" / "01_x.ipynb").read_text())["cells"][0]["source"]
    assert source == colab.setup_cell_source().splitlines(keepends=True)  # as nbformat writes it: one string a line
    assert colab.colab_badge("01_x.ipynb") in (tmp_path / "README.md").read_text()
    assert colab.sync(tmp_path) == []  # idempotent


# --- the model of Colab's runtime and the Colab lock (no network) -------------------------------------------------


def test_the_model_is_colabs_whole_runtime_at_a_named_commit_and_small():
    header, blocks = colab_lock.read_model()
    versions = {colab_lock.canonical(block["Name"]): block["Version"] for block in blocks}
    assert re.fullmatch(r"googlecolab/backend-info [0-9a-f]{7,40} \(\d{4}-\d{2}-\d{2}.*\)", header["source"])
    assert header["python"].startswith("3.13.") and len(blocks) > 600
    assert {name: versions[name] for name in ("pip", "torch", "ipywidgets", "ipykernel", "numpy")} == {
        "pip": "24.1.2", "torch": "2.11.0+cpu", "ipywidgets": "7.7.1", "ipykernel": "6.17.1", "numpy": "2.1.3"
    }  # fmt: skip
    gradio = next(block["metadata"] for block in blocks if block["Name"] == "gradio")
    assert re.search(r"^Requires-Dist: huggingface-hub<2\.0,>=", gradio, flags=re.M), "real Requires-Dist lines"
    assert colab_lock.MODEL.stat().st_size < 1_000_000


def test_every_pin_of_the_colab_lock_is_the_release_ci_tested():
    tested = colab_lock.tested_pins(model_python())
    floor = colab_lock.pins_of(colab_lock.FLOOR)
    pins = colab_lock_lines()
    assert pins, "requirements/colab.txt pins something"
    assert {name: version for name, (version, _) in pins.items() if version != tested.get(name)} == {}
    assert {name: pins[name][0] for name in floor} == floor, "transformers, tokenizers and the hub at the floor"


def test_the_colab_lock_covers_what_the_modelled_runtime_lacks_and_moves_nothing_colab_holds():
    _, blocks = colab_lock.read_model()
    versions = {colab_lock.canonical(block["Name"]): block["Version"] for block in blocks}
    lacking = {colab_lock.canonical(re.match(r"[\w.-]+", r)[0]) for r in colab_install.colab_requirements()
               if colab_lock.lacking(r, versions)}  # fmt: skip
    pins = colab_lock_lines()
    assert {"transformers", "bertviz", "sacrebleu"} <= lacking
    assert all(name in pins and name in pins[name][1] for name in lacking), "each lacking package is pinned for itself"
    assert set().union(*(set(roots) for _, roots in pins.values())) == lacking, "every pin is for a lacking package"
    assert not set(pins) & set(colab_lock.UNMOVED)
    assert [name for name, (version, _) in pins.items() if versions.get(name) == version] == [], "no pin is a no-op"


# --- the installer's decisions, on real files: the model's dist-infos, pyproject.toml, the Colab lock ------------


@pytest.fixture(scope="module")
def modelled_site(tmp_path_factory) -> Path:
    """A folder holding a dist-info for every package of the model of Colab's runtime, as pip leaves them."""
    site = tmp_path_factory.mktemp("site")
    for block in colab_lock.read_model()[1]:
        colab_lock.write_dist_info(site, block)
    return site


def _without(site: Path, name: str, tmp_path: Path) -> Path:
    """A copy of ``site`` without ``name``'s dist-info."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy, ignore=lambda _, names: [n for n in names if n.startswith(f"{name}-")])
    return copy


def _steps(site: Path) -> list[list[str]]:
    return colab_install.pip_steps(ROOT, colab_install.installed_versions([str(site)]))


def test_installed_versions_reads_the_dist_infos_on_a_path(modelled_site):
    versions = colab_install.installed_versions([str(modelled_site)])
    assert len(versions) == len(colab_lock.read_model()[1])
    assert versions["torch"] == "2.11.0+cpu" and versions["huggingface-hub"] and "course-utils" not in versions


def test_lacking_means_absent_or_outside_the_range():
    versions = {"tqdm": "4.67.1", "transformers": "5.15.0"}
    assert not colab_install.lacking("tqdm>=4.66", versions)
    assert colab_install.lacking("transformers>=5.17,<6", versions)
    assert colab_install.lacking("transformers==5.17.0", versions) and colab_install.lacking("bertviz", versions)
    assert not colab_install.lacking("transformers", versions)


def test_tested_pins_are_the_colab_locks_lines_for_those_packages():
    pins = colab_install.tested_pins(colab_lock.COLAB_LOCK, {"sacrebleu"})
    assert {colab_install.name_of(pin) for pin in pins} == {
        name for name, (_, roots) in colab_lock_lines().items() if "sacrebleu" in roots
    }
    assert all(re.fullmatch(r"[\w.-]+==[\w.+]+", pin) for pin in pins)
    assert colab_install.tested_pins(colab_lock.COLAB_LOCK, {"numpy"}) == []


def test_on_the_modelled_runtime_the_course_then_every_pin_of_the_colab_lock(modelled_site):
    lock = ROOT / "requirements" / "colab.txt"
    course, pins = _steps(modelled_site)
    assert course == ["--no-deps", "-e", str(ROOT)]
    assert pins[0] == "--no-deps" and sorted(pins[1:]) == sorted(
        f"{n}=={v}" for n, (v, _) in colab_lock_lines().items()
    )
    assert str(lock) not in pins, "nothing left for pip to resolve"


def test_a_lacking_package_the_colab_lock_does_not_pin_is_left_to_pip_within_its_range(modelled_site, tmp_path):
    steps = _steps(_without(modelled_site, "tqdm", tmp_path))
    assert steps[-1] == ["tqdm>=4.66", "-c", str(ROOT / "requirements" / "colab.txt")]
    assert len(steps) == 3


def test_with_everything_installed_there_is_nothing_to_do(modelled_site, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(modelled_site, site)
    pins = {name: version for name, (version, _) in colab_lock_lines().items()}
    for info in site.glob("*.dist-info"):
        if colab_lock.canonical(info.name.split("-")[0]) in pins:
            shutil.rmtree(info)
    for name, version in {**pins, "course-utils": "0.1.0"}.items():
        colab_lock.write_dist_info(
            site, {"Name": name, "Version": version, "metadata": f"Name: {name}\nVersion: {version}"}
        )
    assert _steps(site) == []


# --- the cell on a replica of Colab's runtime, with the real pip (slow, needs PyPI) -------------------------------


def _pypi_reachable() -> bool:
    try:
        with urlopen("https://pypi.org/simple/pip/", timeout=15):
            return True
    except OSError:
        return False


def _pip_check(python: Path) -> list[str]:
    done = subprocess.run(
        [python, "-I", "-m", "pip", "check"], env=colab_lock.pip_env(), capture_output=True, text=True
    )
    return sorted(line for line in done.stdout.splitlines() if line.strip() and not line.startswith("No broken"))


def _run_cell_twice(python: Path, folder: Path) -> dict:
    """The notebooks' set-up cell, run twice by ``python`` as Colab would run it; its output and pip's commands."""
    source = colab.setup_cell_source()
    assert source.count(CONTENT) == 1, "the clone's folder is named once (home), then derived"
    (folder / "cell.py").write_text(source.replace(CONTENT, str(ROOT)))
    (folder / "driver.py").write_text(RUN_CELL_TWICE)
    env = {key: value for key, value in colab_lock.pip_env().items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([python, folder / "driver.py", folder / "cell.py"], cwd=folder, capture_output=True,
                          text=True, timeout=600, env={**env, "PYTHONNOUSERSITE": "1"})  # fmt: skip
    result = json.loads(done.stdout.rsplit("RESULT ", 1)[1]) if "RESULT " in done.stdout else {}
    return {**result, "returncode": done.returncode, "output": done.stdout + done.stderr}


def _replica(folder: Path) -> Path:
    """A venv in ``folder`` that replicates Colab's runtime; its python. Skips where that cannot be done here."""
    if colab_lock.find_python(model_python().rsplit(".", 1)[0]) is None:
        pytest.skip(
            f"no Python {model_python()[:4]} here to replicate Colab's runtime (PYTHON313, python3.13 or pyenv's)"
        )
    if not _pypi_reachable():
        pytest.skip("PyPI is unreachable: the set-up cell installs from it, so it cannot be run here")
    return colab_lock.runtime_venv(folder / "venv")


@pytest.fixture(scope="module")
def colab_run(tmp_path_factory) -> dict:
    """Colab's runtime replicated, the set-up cell run there twice: what it printed and did, before and after."""
    folder = tmp_path_factory.mktemp("colab")
    python = _replica(folder)
    before, check_before = colab_lock.installed(python), _pip_check(python)
    run = _run_cell_twice(python, folder)
    after = colab_lock.installed(python)
    changed = {name: version for name, version in after.items() if before.get(name) != version}
    return {**run, "before": before, "after": after, "changed": changed, "check_before": check_before,
            "check_after": _pip_check(python)}  # fmt: skip


@pytest.mark.slow
def test_on_colab_the_cell_runs_and_pip_prints_nothing(colab_run):
    assert colab_run["returncode"] == 0, colab_run["output"][-3000:]
    assert "ERROR" not in colab_run["output"], colab_run["output"][-3000:]
    printed = re.sub(r"^RESULT .*$", "", colab_run["output"], flags=re.M)  # stdout, less the driver's line, and stderr
    assert printed.strip() == "", printed[-3000:]


@pytest.mark.slow
def test_pip_check_finds_nothing_that_colabs_runtime_did_not_have(colab_run):
    # Colab's own runtime has one: its IPython 7.34 requires jedi, which Colab has never shipped.
    assert colab_run["check_before"] == ["ipython 7.34.0 requires jedi, which is not installed."]
    assert colab_run["check_after"] == colab_run["check_before"]


@pytest.mark.slow
def test_colabs_kernel_packages_are_kept(colab_run):
    kept = {name: colab_run["after"].get(name) for name in colab_lock.UNMOVED}
    assert kept == {name: colab_run["before"][name] for name in colab_lock.UNMOVED}


@pytest.mark.slow
def test_the_transformers_installed_is_one_ci_tests(colab_run):
    lock = [
        colab_lock.pins_of(colab_lock.LOCK, colab_lock.colab_markers(python)) for python in ("3.11.7", model_python())
    ]
    tested = {colab_lock.pins_of(colab_lock.FLOOR)["transformers"], *(pins["transformers"] for pins in lock)}
    assert colab_run["after"]["transformers"] in tested
    assert colab_run["after"]["huggingface-hub"].startswith("1."), "Colab's gradio and diffusers need hub < 2"


@pytest.mark.slow
def test_what_the_cell_installs_is_exactly_the_colab_lock(colab_run):
    installed = {name: version for name, version in colab_run["changed"].items() if name != "course-utils"}
    assert installed == {name: version for name, (version, _) in colab_lock_lines().items()}
    assert colab_run["changed"].get("course-utils") == "0.1.0"


@pytest.mark.slow
def test_a_second_run_installs_nothing_and_the_kernel_sees_the_course(colab_run):
    first, second = colab_run["calls"]
    assert [command[1:4] for command in first] == [["-m", "pip", "install"]] * 2, "the course, then the packages"
    assert first[0][-3:] == ["--no-deps", "-e", str(ROOT)] and "--no-deps" in first[1]
    assert second == [], "a second run installs nothing"
    assert colab_run["cwd"] == str(ROOT / "notebooks") and colab_run["path"].count(str(ROOT)) == 1


@pytest.mark.slow
def test_a_lacking_package_the_colab_lock_does_not_pin_is_installed_within_its_range(tmp_path):
    # Where Colab has changed since the Colab lock was made: here its tqdm is gone.
    python = _replica(tmp_path)
    for info in (python.parents[1] / "lib").glob("python3.*/site-packages/tqdm-*.dist-info"):
        shutil.rmtree(info)
    check_before = _pip_check(python)
    run = _run_cell_twice(python, tmp_path)
    assert run["returncode"] == 0 and "ERROR" not in run["output"], run["output"][-3000:]
    assert run["calls"][0][-1][-3:] == ["tqdm>=4.66", "-c", str(ROOT / "requirements" / "colab.txt")]
    assert colab_lock.lacking("tqdm>=4.66", colab_lock.installed(python)) is False and run["calls"][1] == []
    assert _pip_check(python) == [line for line in check_before if "tqdm" not in line]
