"""pip (pyproject.toml) and conda (environment.yml) must install the same packages and ranges.

pyproject.toml splits them: the core (what the notebooks import; all Colab may install), the ``lab``
extra (the local Jupyter stack) and the ``test`` extra. environment.yml is the local environment,
all three together: where an extra narrows a core range, it carries the extra's range.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONDA_TO_PIP = {"pytorch": "torch"}
NOT_PACKAGES = {"python", "pip"}
JUPYTER_STACK = {"jupyterlab", "notebook", "ipykernel", "jupyterlab-widgets", "widgetsnbextension", "jupyter-server"}


def _split(requirement: str) -> tuple[str, str]:
    match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*$", requirement)
    name, spec = match.group(1).lower().replace("_", "-"), match.group(2).replace(" ", "")
    return CONDA_TO_PIP.get(name, name), ",".join(sorted(spec.split(","))) if spec else ""


def pyproject_groups() -> dict[str, dict[str, str]]:
    """Name and range of each requirement, per group: "core", "lab", "test"."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = {"core": project["dependencies"], **project["optional-dependencies"]}
    return {group: dict(_split(r) for r in requirements) for group, requirements in groups.items()}


def pyproject_requirements() -> dict[str, str]:
    """The local environment: core, then lab, then test; a later group's range replaces an earlier one."""
    groups = pyproject_groups()
    assert set(groups) == {"core", "lab", "test"}, f"groups: {sorted(groups)}"
    return {**groups["core"], **groups["lab"], **groups["test"]}


def _bounds(spec: str) -> tuple[Version | None, Version | None]:
    """The floor (>=) and the ceiling (<) of a range like ">=8.1,<9"; None where it has none."""
    floor = [Version(s.version) for s in SpecifierSet(spec) if s.operator in (">=", "==")]
    ceiling = [Version(s.version) for s in SpecifierSet(spec) if s.operator in ("<", "==")]
    return (max(floor) if floor else None), (min(ceiling) if ceiling else None)


def conda_requirements() -> dict[str, str]:
    """Read environment.yml's dependency lines (conda and pip) without a YAML library."""
    requirements = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        entry = re.match(r"^\s+-\s+(\S.*)$", line)
        if not entry or entry.group(1).startswith(("-e", "conda-forge", "pip:")) or entry.group(1) == "pip:":
            continue
        name, spec = _split(entry.group(1))
        if name not in NOT_PACKAGES:
            requirements[name] = spec
    return requirements


def test_pip_and_conda_name_the_same_packages_and_ranges():
    pip_side, conda_side = pyproject_requirements(), conda_requirements()
    assert set(pip_side) == set(conda_side), (
        f"only in pyproject: {sorted(set(pip_side) - set(conda_side))}; "
        f"only in environment.yml: {sorted(set(conda_side) - set(pip_side))}"
    )
    differing = {name: (pip_side[name], conda_side[name]) for name in pip_side if pip_side[name] != conda_side[name]}
    assert not differing, f"version ranges differ (pyproject, environment.yml): {differing}"


def test_pip_and_conda_admit_the_same_pythons():
    requires_python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires_python == ">=3.11", "3.10 reached its end of life in October 2026"
    assert re.search(rf"^\s+-\s+python{re.escape(requires_python)}\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_an_extra_only_narrows_a_core_range():
    groups = pyproject_groups()
    for extra in ("lab", "test"):
        for name in set(groups[extra]) & set(groups["core"]):
            (core_floor, core_ceiling), (floor, ceiling) = _bounds(groups["core"][name]), _bounds(groups[extra][name])
            assert floor is not None and (core_floor is None or floor >= core_floor), (extra, name)
            assert core_ceiling is None or (ceiling is not None and ceiling <= core_ceiling), (extra, name)


def test_the_core_leaves_the_jupyter_stack_to_the_lab_extra():
    groups = pyproject_groups()
    assert not JUPYTER_STACK & set(groups["core"]), (
        "Colab's set-up installs the core: it must not replace Colab's Jupyter"
    )
    assert {"jupyterlab", "ipykernel", "ipywidgets"} <= set(groups["lab"])
    core_widgets, lab_widgets = SpecifierSet(groups["core"]["ipywidgets"]), SpecifierSet(groups["lab"]["ipywidgets"])
    assert "7.7.1" in core_widgets and "8.1.5" in core_widgets, "the core admits Colab's ipywidgets 7.7 and 8"
    assert "7.7.1" not in lab_widgets and "8.1.5" in lab_widgets, "JupyterLab 4 renders ipywidgets 8"


def test_environment_and_course_sh_install_the_course_with_both_extras():
    assert re.search(r"^\s+-\s+-e \.\[lab,test\]\s*$", (ROOT / "environment.yml").read_text(), re.M)
    course_sh = (ROOT / "course.sh").read_text()
    assert re.search(r"\$\{COURSE_REQUIREMENTS:-requirements/lock\.txt\}", course_sh), "the tested versions, by default"
    assert re.search(r'pip install -q -r "\$lock"', course_sh)
    assert re.search(r'pip install -q -e "\.\[lab,test\]"', course_sh), "the newest within the ranges, on request"


# --- the lock: requirements/lock.txt, made by uv from pyproject's ranges (bash course.sh lock) ------------------


def locked() -> dict[str, Version]:
    """The lock's pins that apply to this Python and platform."""
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if line[:1].isalnum():
            pin = Requirement(line)
            if pin.marker is None or pin.marker.evaluate():
                (spec,) = pin.specifier
                assert spec.operator == "==", f"the lock pins exact versions: {line}"
                pins[canonicalize_name(pin.name)] = Version(spec.version)
    return pins


def test_the_lock_pins_every_requirement_within_pyprojects_range_and_leaves_torch_out():
    pins = locked()
    for name, spec in pyproject_requirements().items():
        if name == "torch":
            assert name not in pins, "torch is whatever the machine has (requirements/kept.txt)"
            continue
        assert name in pins, f"{name} is not in requirements/lock.txt: run bash course.sh lock"
        assert pins[name] in SpecifierSet(spec), f"the lock's {name} {pins[name]} is outside pyproject's {spec}"
    assert not {"nvidia-cublas-cu12", "triton", "sympy"} & set(pins), "nothing that only torch needs"


def test_this_environment_has_the_locked_versions():
    """course.sh and CI install the lock: what runs the tests is what the lock says."""
    differing = {}
    for name, version in locked().items():
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            differing[name] = (version, None)
            continue
        if installed != version:
            differing[name] = (version, installed)
    assert not differing, f"(locked, installed): {differing}; bash course.sh setup installs the lock"


def test_the_floor_is_pyprojects_lower_bound_for_transformers():
    floor = {canonicalize_name(r.name): r.specifier for r in map(Requirement, _lines(ROOT / "requirements/floor.txt"))}
    assert set(floor) == {"transformers", "tokenizers", "huggingface-hub"}
    lowest, _ = _bounds(pyproject_groups()["core"]["transformers"])
    assert floor["transformers"] == SpecifierSet(f"=={lowest}"), "the floor CI tests is the oldest release admitted"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_torch_is_a_floor_only_so_an_installed_build_is_kept():
    spec = pyproject_groups()["core"]["torch"]
    assert spec.startswith(">=") and "<" not in spec and "==" not in spec


def test_conda_channel_is_conda_forge_only():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"channels:\s*\n\s+-\s+conda-forge\s*\n\s*dependencies:", text)


# --- where set-up installs: never into a system Python (bash course.sh setup, for real, with a small set) ---------

# What set-up reads; the rest of the repository plays no part in it.
SETUP_READS = ("course.sh", "pyproject.toml", "README.md", "course_utils", "scripts/lab_settings.py", "requirements")
# The lock's pins for what set-up itself needs after the install (jupyter_core, jupyterlab_widgets): a small set, in
# the lock's place (COURSE_REQUIREMENTS), so that the test takes seconds instead of the lock's minutes.
SMALL_SET = ("jupyter-core", "platformdirs", "traitlets", "jupyterlab-widgets")


def _freeze(python: Path) -> list[str]:
    done = subprocess.run([python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True)
    return sorted(done.stdout.splitlines())


def _setup(course: Path, base: Path, requirements: Path, active: bool = False) -> subprocess.CompletedProcess:
    """``bash course.sh setup`` with ``base``'s python3 first on PATH and no virtual or conda environment active
    (``active``: ``base`` activated, as ``source base/bin/activate`` leaves it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHON", "COURSE_UNLOCKED")}
    env.update(PATH=f"{base / 'bin'}{os.pathsep}{env['PATH']}", COURSE_REQUIREMENTS=str(requirements))
    env.update({"VIRTUAL_ENV": str(base)} if active else {})
    return subprocess.run(["bash", "course.sh", "setup"], cwd=course, env=env, capture_output=True, text=True,
                          timeout=900)  # fmt: skip


@pytest.mark.slow
def test_setup_installs_into_dot_venv_and_leaves_python3_alone_unless_an_environment_is_active(tmp_path):
    course, base = tmp_path / "course", tmp_path / "python3"
    for name in SETUP_READS:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        (course / name).parent.mkdir(parents=True, exist_ok=True)
        copy(
            ROOT / name,
            course / name,
            **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree else {}),
        )
    # A plain python3 of its own (a venv, so that anything installed into it shows), not activated: nothing says
    # VIRTUAL_ENV, so to course.sh it is the python3 on PATH.
    subprocess.run([sys.executable, "-m", "venv", base], check=True)
    requirements = tmp_path / "small.txt"
    requirements.write_text("".join(f"{name}=={locked()[name]}\n" for name in SMALL_SET))
    before = _freeze(base / "bin" / "python3")
    first = _setup(course, base, requirements)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "making ./.venv" in first.stdout and "ERROR" not in first.stdout + first.stderr
    venv_python = course / ".venv" / "bin" / "python"
    installed = dict(line.split("==") for line in _freeze(venv_python) if "==" in line)
    installed = {canonicalize_name(name): version for name, version in installed.items()}
    assert {name: installed.get(name) for name in SMALL_SET} == {name: str(locked()[name]) for name in SMALL_SET}
    shown = subprocess.check_output([venv_python, "-m", "pip", "show", "course-utils"], text=True)
    assert f"Editable project location: {course}" in shown, shown
    assert "include-system-site-packages = false" in (course / ".venv" / "pyvenv.cfg").read_text()
    assert _freeze(base / "bin" / "python3") == before, "nothing went into the python3 on PATH"
    second = _setup(course, base, requirements)  # .venv is made once, then used
    assert second.returncode == 0 and "making ./.venv" not in second.stdout, second.stdout[-3000:]
    assert _freeze(base / "bin" / "python3") == before
    third = _setup(course, base, requirements, active=True)  # an active environment is the one set-up installs into
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    assert {canonicalize_name(line.split("==")[0]) for line in _freeze(base / "bin" / "python3")} >= set(SMALL_SET)
