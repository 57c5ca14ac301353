"""Colab support. ``REPO_URL`` below is the one place the repository's address is written.

Notebooks cannot import the course before it is installed, so their first cell carries the
address, and the list of packages it may install (pyproject's core less Colab's own torch,
ipykernel and ipywidgets), too. What it installs, it installs from the clone's Colab lock,
``requirements/colab.txt``: every package the install brings on Colab's runtime, at the release
CI tested (``scripts/colab_lock.py`` resolves it against a model of that runtime; tests/core/test_colab.py
runs this cell there with the real pip). ``python -m course_utils.colab`` rewrites those cells and the
README's badges from ``REPO_URL`` and pyproject.toml, and a test checks that they agree.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

REPO_URL = "https://github.com/nn-lm-course/notebooks"
BRANCH = "main"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

# Colab's own: the set-up cell never installs, upgrades or replaces them (README, Troubleshooting).
KEPT_ON_COLAB = ("torch", "ipykernel", "ipywidgets")

# The first code cell of every notebook. Idempotent; does nothing outside Colab.
SETUP_CELL = """\
# Set-up. On Colab this installs the course (once per runtime); elsewhere it does nothing.
# It keeps Colab's own torch, ipykernel and ipywidgets and installs only what the runtime lacks, with what that
# brings, at the versions the course was tested with (requirements/colab.txt, resolved against Colab's runtime).
import sys
if "google.colab" in sys.modules:
    import os, subprocess
    from importlib.metadata import PackageNotFoundError, version
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def lacking(requirement):  # not installed, or not in the range (or at the pin) given
        requirement = Requirement(requirement)
        try:
            return not requirement.specifier.contains(version(requirement.name), prereleases=True)
        except PackageNotFoundError:
            return True

    def name(requirement):
        return canonicalize_name(Requirement(requirement).name)

    def tested_pins(packages):  # the Colab lock's pins for those and what they bring ("# ..., for a, b" says)
        for line in open("/content/course/requirements/colab.txt"):
            pin, _, note = line.partition("  # ")
            if pin[:1].isalnum() and packages & set(note.split(" for ")[-1].strip().split(", ")):
                yield pin.strip()

    def pip_install(*args):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *args], check=True)

    if not os.path.isdir("/content/course"):
        subprocess.run(["git", "clone", "-q", "--depth", "1", "{url}", "/content/course"], check=True)
    if lacking("course-utils"):  # the course itself, without its dependencies,
        pip_install("--no-deps", "-e", "/content/course")
    needs = [{requirements}]  # the course's dependencies less Colab's own
    missing = {{name(r): r for r in needs if lacking(r)}}  # then only those the runtime lacks,
    if missing:  # and what they bring on Colab, each at the release CI tested: exactly those, nothing floating
        pins = list(tested_pins(set(missing)))
        if any(map(lacking, pins)):
            pip_install("--no-deps", *[pin for pin in pins if lacking(pin)])
        unpinned = [r for package, r in missing.items() if package not in map(name, pins)]
        if unpinned:  # only where Colab has changed since the Colab lock was made
            pip_install(*unpinned, "-c", "/content/course/requirements/colab.txt")
    if "/content/course" not in sys.path:
        sys.path.insert(0, "/content/course")
    os.chdir("/content/course/notebooks")"""

SETUP_CELL_MARKER = "# Set-up. On Colab this installs the course"


def colab_requirements(pyproject: Path = PYPROJECT) -> list[str]:
    """The course's core dependencies less ``KEPT_ON_COLAB``: all the set-up cell may install."""
    import tomllib

    core = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    return [r for r in core if re.match(r"[\w.-]+", r).group().lower() not in KEPT_ON_COLAB]


def setup_cell_source(url: str = REPO_URL) -> str:
    """The first cell's source for ``url``."""
    indent = " " * len("    needs = [")
    items = ", ".join(json.dumps(r) for r in colab_requirements())
    listed = textwrap.fill(items, width=100, initial_indent=indent, subsequent_indent=indent, break_long_words=False,
                           break_on_hyphens=False).lstrip()  # fmt: skip
    return SETUP_CELL.format(url=url, requirements=listed)


# What a student's badge opens: the student edition, without the solutions (scripts/build_notebooks.py writes it).
STUDENT_EDITION = "notebooks/student"


def colab_link(notebook_name: str, url: str = REPO_URL) -> str:
    """Colab's address for the student edition of ``notebook_name``, ``notebooks/student/<notebook_name>``."""
    path = url.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{path}/blob/{BRANCH}/{STUDENT_EDITION}/{notebook_name}"


def colab_badge(notebook_name: str, url: str = REPO_URL) -> str:
    """Markdown for an 'Open in Colab' badge pointing at the student edition of ``notebook_name``."""
    return f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_link(notebook_name, url)})"


_BADGE_PATTERN = re.compile(
    r"\[!\[Open in Colab\]\([^)]*\)\]\(https://colab\.research\.google\.com/github/[^)]*/notebooks/(?:student/)?([^)]+)\)"
)


def sync(root: Path) -> list[Path]:
    """Rewrite the notebooks' set-up cells and the README's badges from ``REPO_URL``."""
    changed = []
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and source.startswith(SETUP_CELL_MARKER):
                if source != setup_cell_source():
                    cell["source"] = setup_cell_source().splitlines(keepends=True)  # as nbformat writes it
                    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
                    changed.append(path)
                break
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    new_text = _BADGE_PATTERN.sub(lambda match: colab_badge(match.group(1)), text)
    if new_text != text:
        readme.write_text(new_text, encoding="utf-8")
        changed.append(readme)
    return changed


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for path in sync(root):
        print(f"updated {path}")
