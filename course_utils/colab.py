"""Colab support. ``REPO_URL`` below is the one place the repository's address is written.

Notebooks cannot import the course before it is installed, so their first cell carries the address: on Colab it
clones the course and runs ``course_utils/colab_install.py``, which installs the course and only what Colab's
runtime lacks, at the releases CI tested (the Colab lock, ``requirements/colab.txt``; tests/core/test_colab.py runs
the cell on a replica of Colab's runtime with the real pip). ``python -m course_utils.colab`` rewrites those cells
and the README's badges from ``REPO_URL``, and a test checks that they agree.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO_URL = "https://github.com/nn-lm-course/notebooks"
BRANCH = "main"

# The first code cell of every notebook: at most 8 lines, the logic in course_utils/colab_install.py. Idempotent;
# does nothing outside Colab. runpy runs the installer without importing course_utils, which needs torch.
SETUP_CELL = """\
# Set-up. On Colab this installs the course once per runtime; elsewhere, nothing.
import os, runpy, subprocess, sys
if "google.colab" in sys.modules:
    url, home = "{url}", "/content/course"
    if not os.path.isdir(home):
        subprocess.run(["git", "clone", "-q", "--depth", "1", url, home], check=True)
    runpy.run_path(f"{{home}}/course_utils/colab_install.py")["install"]()
    os.chdir(f"{{home}}/notebooks")"""

SETUP_CELL_MARKER = "# Set-up. On Colab this installs the course"


def setup_cell_source(url: str = REPO_URL) -> str:
    """The first cell's source for ``url``."""
    return SETUP_CELL.format(url=url)


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
