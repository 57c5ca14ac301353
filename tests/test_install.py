"""pip (pyproject.toml) and conda (environment.yml) must install the same packages and ranges."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PIP = {"pytorch": "torch"}
NOT_PACKAGES = {"python", "pip"}


def _split(requirement: str) -> tuple[str, str]:
    match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*$", requirement)
    name, spec = match.group(1).lower().replace("_", "-"), match.group(2).replace(" ", "")
    return CONDA_TO_PIP.get(name, name), ",".join(sorted(spec.split(","))) if spec else ""


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = project["dependencies"] + project["optional-dependencies"]["test"]
    return dict(_split(r) for r in names)


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


def test_environment_installs_the_course_itself():
    assert re.search(r"^\s+-\s+-e \.\[test\]\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_torch_is_a_floor_only_so_an_installed_build_is_kept():
    spec = pyproject_requirements()["torch"]
    assert spec.startswith(">=") and "<" not in spec and "==" not in spec


def test_conda_channel_is_conda_forge_only():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"channels:\s*\n\s+-\s+conda-forge\s*\n\s*dependencies:", text)
