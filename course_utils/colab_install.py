"""On Colab: install the course, and only what Colab's runtime lacks, at the releases CI tested.

The notebooks' first cell (``course_utils/colab.py``) clones the course and runs this file with ``runpy``, before
anything of the course is installed. So it uses the standard library and ``packaging`` only (Colab has both) and
never imports ``course_utils`` (whose ``__init__`` imports torch). What it installs:

1. the course itself, ``pip install --no-deps -e`` the clone, where it is not installed yet;
2. of the course's core dependencies less ``KEPT_ON_COLAB`` (``pyproject.toml``), those the runtime lacks or holds
   outside the course's range: their pins in the Colab lock, ``requirements/colab.txt``, and what those bring on
   Colab's runtime, each at the release CI tested, with ``--no-deps`` (exactly that set, nothing floating);
3. a lacking package the Colab lock does not pin (only where Colab has changed since the lock was made), within its
   range, under the lock as constraints.

Run again, it installs nothing. ``tests/core/test_colab.py`` runs the cell, with this file, on a replica of Colab's
runtime with the real pip.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]  # the clone: /content/course on Colab
COLAB_LOCK = "requirements/colab.txt"
COURSE = "course-utils"

# Colab's own: never installed, upgraded or replaced (README, Troubleshooting).
KEPT_ON_COLAB = ("torch", "ipykernel", "ipywidgets")


def name_of(requirement: str) -> str:
    """The canonical name a requirement (``"tqdm>=4.66"``, ``"bertviz==1.4.1"``) is for."""
    return canonicalize_name(Requirement(requirement).name)


def colab_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The course's core dependencies less ``KEPT_ON_COLAB``: all this module may install."""
    core = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    return [r for r in core if name_of(r) not in KEPT_ON_COLAB]


def installed_versions(path: list[str] | None = None) -> dict[str, str]:
    """``{canonical name: version}`` of the distributions on ``path`` (default ``sys.path``), the first found of each."""
    found: dict[str, str] = {}
    for dist in metadata.distributions(**({} if path is None else {"path": path})):
        if dist.metadata["Name"]:
            found.setdefault(canonicalize_name(dist.metadata["Name"]), dist.version)
    return found


def lacking(requirement: str, versions: dict[str, str]) -> bool:
    """Not installed, or installed outside the requirement's range (or off its pin)."""
    parsed = Requirement(requirement)
    version = versions.get(canonicalize_name(parsed.name))
    return version is None or not parsed.specifier.contains(version, prereleases=True)


def tested_pins(colab_lock: Path, packages: set[str]) -> list[str]:
    """The Colab lock's pins for ``packages`` and for what they bring: its lines end ``# lock, for a, b``."""
    pins = []
    for line in colab_lock.read_text(encoding="utf-8").splitlines():
        pin, _, note = line.partition("  # ")
        if pin[:1].isalnum() and packages & set(note.split(" for ")[-1].strip().split(", ")):
            pins.append(pin.strip())
    return pins


def pip_steps(root: Path, versions: dict[str, str]) -> list[list[str]]:
    """The arguments of each ``pip install`` the runtime with ``versions`` needs, in order (none: nothing to do)."""
    steps = [["--no-deps", "-e", str(root)]] if lacking(COURSE, versions) else []
    missing = {name_of(r): r for r in colab_requirements(root / "pyproject.toml") if lacking(r, versions)}
    if missing:
        pins = tested_pins(root / COLAB_LOCK, set(missing))
        if stale := [pin for pin in pins if lacking(pin, versions)]:
            steps.append(["--no-deps", *stale])
        pinned = set(map(name_of, pins))
        if unpinned := [r for name, r in missing.items() if name not in pinned]:
            steps.append([*unpinned, "-c", str(root / COLAB_LOCK)])
    return steps


def install(root: Path | str = ROOT) -> None:
    """Run those steps with the kernel's own pip, quietly; then let the running kernel import the clone."""
    root = Path(root)
    for args in pip_steps(root, installed_versions()):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *args], check=True)
    if str(root) not in sys.path:  # the editable install reaches only kernels started after it
        sys.path.insert(0, str(root))
