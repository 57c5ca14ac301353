"""The Colab set-up cell and badges are generated from REPO_URL; sync rewrites stale copies.

The set-up cell's install decisions are tested for real: its source runs in a fresh interpreter
that sees only a simulated Colab runtime (``*.dist-info`` folders, as pip leaves them), with a
``google.colab`` module in ``sys.modules`` and stand-ins for ``git`` and ``pip`` that record
their arguments and "install" by writing a dist-info folder. Nothing touches the network.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import packaging

from course_utils import colab

ROOT = Path(__file__).resolve().parents[2]
CONTENT = "/content/course"
COLABS_OWN = {"torch", "ipykernel", "ipywidgets"}
LOCK = ROOT / "requirements" / "lock.txt"


def locked_pins() -> dict[str, str]:
    """``{name: "name==version"}`` from the lock, for the Python running the tests."""
    from packaging.requirements import Requirement

    pins = {}
    for line in LOCK.read_text().splitlines():
        if line[:1].isalnum():
            pin = Requirement(line)
            if pin.marker is None or pin.marker.evaluate():
                pins[pin.name] = f"{pin.name}{pin.specifier}"
    return pins


# A runtime like Colab's: its own torch, ipykernel and ipywidgets 7.7.1; an older transformers; no bertviz, no sacrebleu.
COLAB_LIKE = {"torch": "2.8.0+cu126", "ipykernel": "6.17.1", "ipywidgets": "7.7.1", "numpy": "2.0.2",
              "matplotlib": "3.10.0", "pillow": "11.3.0", "tqdm": "4.67.1", "safetensors": "0.6.2",
              "transformers": "4.57.1"}  # fmt: skip

FAKE_GIT = """\
import json, os, shutil, sys
with open(os.environ["SETUP_LOG"], "a") as log:
    log.write(json.dumps(["git", *sys.argv[1:]]) + "\\n")
os.makedirs(os.path.join(sys.argv[-1], "notebooks"))
os.makedirs(os.path.join(sys.argv[-1], "requirements"))
shutil.copy(os.environ["COURSE_LOCK"], os.path.join(sys.argv[-1], "requirements", "lock.txt"))
"""

FAKE_PIP = """\
import glob, json, os, re, shutil, sys
args = sys.argv[1:]
with open(os.environ["SETUP_LOG"], "a") as log:
    log.write(json.dumps(["pip", *args]) + "\\n")
editable = [args[i + 1] for i, arg in enumerate(args) if arg == "-e"]
named = [a for a in args if not a.startswith("-") and a != "install" and a not in editable]
installs = [("course-utils", "0.1.0") for _ in editable]
installs += [re.match(r"([\\w.-]+)(?:[>=]=([\\w.]+))?", r).groups() for r in named]  # at its pin or floor
for name, version in installs:
    stem = os.path.join(os.environ["FAKE_SITE"], name.replace("-", "_"))
    for old in glob.glob(stem + "-*.dist-info"):  # an upgrade replaces the old version, as pip does
        shutil.rmtree(old)
    os.makedirs(f"{stem}-{version or '1.0'}.dist-info")
    with open(f"{stem}-{version or '1.0'}.dist-info/METADATA", "w") as metadata:
        metadata.write(f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version or '1.0'}\\n")
"""

RUN_CELL_TWICE = """\
import json, os, sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")
source = open(sys.argv[1]).read()
for run in (1, 2):
    with open(os.environ["SETUP_LOG"], "a") as log:
        log.write(json.dumps(["run", run]) + "\\n")
    exec(compile(source, "setup-cell", "exec"), {"__name__": "__main__"})
print(json.dumps({"cwd": os.getcwd(), "path": sys.path}))
"""


def _write_dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def run_setup_cell(tmp_path: Path, installed: dict[str, str]) -> tuple[list[list], list[list], dict]:
    """Run the set-up cell twice on a simulated Colab with ``installed``; the commands of each run."""
    site, tools, course = tmp_path / "site", tmp_path / "tools", tmp_path / "content" / "course"
    site.mkdir()
    (tools / "pip").mkdir(parents=True)
    shutil.copytree(Path(packaging.__file__).parent, site / "packaging")  # the cell imports it; Colab has it
    for name, version in installed.items():
        _write_dist(site, name, version)
    (tools / "git").write_text(f"#!{sys.executable}\n" + FAKE_GIT)
    (tools / "git").chmod(0o755)
    (tools / "pip" / "__init__.py").write_text("")
    (tools / "pip" / "__main__.py").write_text(FAKE_PIP)
    source = colab.setup_cell_source()
    assert source.count(CONTENT) >= 3
    (tmp_path / "cell.py").write_text(source.replace(CONTENT, str(course)))
    (tmp_path / "driver.py").write_text(RUN_CELL_TWICE)
    log = tmp_path / "log.jsonl"
    env = {**os.environ, "SETUP_LOG": str(log), "FAKE_SITE": str(site), "COURSE_LOCK": str(LOCK), "PYTHONPATH": f"{tools}{os.pathsep}{site}",
           "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    # -S: no site-packages, so the cell sees the simulated runtime only (its pip stand-in is found first).
    done = subprocess.run([sys.executable, "-S", str(tmp_path / "driver.py"), str(tmp_path / "cell.py")],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    second = entries.index(["run", 2])
    return entries[1:second], entries[second + 1 :], {**json.loads(done.stdout), "course": str(course)}


def _installed_names(command: list) -> set[str]:
    return {re.match(r"[\w.-]+", a).group().lower() for a in command[3:] if not a.startswith("-") and "/" not in a}


def test_on_colab_only_the_lacking_packages_are_installed_and_colabs_own_are_kept(tmp_path):
    first, second, after = run_setup_cell(tmp_path, COLAB_LIKE)
    git, course, packages = first
    assert git[:2] == ["git", "clone"] and git[-2:] == [colab.REPO_URL, after["course"]]
    assert course == ["pip", "install", "-q", "--no-deps", "-e", after["course"]]
    pins = locked_pins()
    assert packages[:3] == ["pip", "install", "-q"] and sorted(packages[3:]) == [
        pins[name] for name in ("bertviz", "mpld3", "sacrebleu", "transformers", "xstatic-jquery")
    ]
    assert all(re.fullmatch(r"[\w.-]+==[\w.]+", p) for p in packages[3:]), "each at the version CI tested"
    assert second == [], "a second run installs nothing"
    assert after["cwd"] == str(Path(after["course"]) / "notebooks") and after["path"].count(after["course"]) == 1


def test_a_runtime_with_everything_gets_the_course_alone(tmp_path):
    everything = {
        **COLAB_LIKE,
        "transformers": "5.17.0",
        "bertviz": "1.4.1",
        "sacrebleu": "2.6.0",
        "mpld3": "0.5.12",
        "xstatic-jquery": "3.7.1.1",
    }
    first, second, _ = run_setup_cell(tmp_path, everything)
    assert [command[:2] for command in first] == [["git", "clone"], ["pip", "install"]]
    assert "--no-deps" in first[1] and second == []


def test_torch_ipykernel_and_ipywidgets_are_never_given_to_pip_even_when_absent(tmp_path):
    bare = {}  # nothing at all: the cell still leaves the kernel's own stack to Colab
    first, second, _ = run_setup_cell(tmp_path, bare)
    pip_calls = [command for command in first + second if command[0] == "pip"]
    named = set().union(*(_installed_names(command) for command in pip_calls))
    assert named == {r.split(">")[0].split("<")[0] for r in colab.colab_requirements()}
    assert not named & COLABS_OWN and second == []


def test_the_cell_may_install_exactly_the_core_less_colabs_own():
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert colab.colab_requirements() == [r for r in core if not r.startswith(tuple(COLABS_OWN))]
    assert all(json.dumps(r) in colab.setup_cell_source() for r in colab.colab_requirements())
    assert {"torch", "ipywidgets"} <= {re.match(r"[\w-]+", r).group() for r in core}, "the core still names them"


def test_setup_cell_is_colab_only_and_uses_no_drive_or_login():
    source = colab.setup_cell_source()
    assert 'if "google.colab" in sys.modules' in source
    assert "drive" not in source.lower() and "login" not in source.lower()
    before = (os.getcwd(), list(sys.path))
    exec(compile(source, "setup-cell", "exec"), {})  # outside Colab: does nothing, raises nothing
    assert (os.getcwd(), sys.path) == before


def test_badge_points_at_the_notebook_in_the_repository():
    badge = colab.colab_badge("01_x.ipynb")
    assert badge.endswith(
        "/github/" + colab.REPO_URL.removeprefix("https://github.com/") + "/blob/main/notebooks/01_x.ipynb)"
    )


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
