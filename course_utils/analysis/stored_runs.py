"""Results of runs too long for a notebook, stored as a small JSON file beside the checkpoints.

The file holds the command that makes it again and one row per run: ``{"command": ..., "runs": {name: row}}``.
``save_run`` reads the file again just before writing, so two commands that each add their own runs keep both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from course_utils.validation import CourseInputError


def load_runs(path: Path, command: str) -> dict:
    """The stored results; a missing file names the command that makes it."""
    if not path.is_file():
        raise CourseInputError(f"{path} is missing; make it with `{command}`")
    return json.loads(path.read_text(encoding="utf-8"))


def save_run(path: Path, command: str, order: Iterable[str], name: str, row: dict) -> None:
    """Store ``row`` as run ``name``, keeping the other runs, in the order of ``order``."""
    runs = load_runs(path, command)["runs"] if path.is_file() else {}
    runs[name] = row
    ordered = {run: runs[run] for run in order if run in runs}
    path.write_text(json.dumps({"command": command, "runs": ordered}, indent=1) + "\n", encoding="utf-8")
