"""Refresh the lock, ``requirements/lock.txt``: today's newest releases within pyproject's ranges, kept only if they pass.

    bash course.sh lock               # what a maintainer runs (it installs uv first when missing)
    python scripts/lock.py            # the same, in an environment that has uv and the course's tools
    python scripts/lock.py --dry-run  # resolve and print what would move; install and test nothing

1. ``uv pip compile`` resolves pyproject's core, lab and test requirements for every platform and every Python
   that pyproject admits (``--universal``), newest first (``--upgrade``). torch is left out (it is whatever the
   machine has: ``requirements/kept.txt``), and so are the packages only torch needs.
2. The new versions go into a side environment, ``build/lock-env`` (a venv that sees this one's packages, so an
   installed torch serves it and only what moved is downloaded).
3. The compatibility subset runs there: the tests marked ``parity`` and every notebook under nbval (fast mode).
4. Only when all of it passes is ``requirements/lock.txt`` replaced, and the notebooks' Colab set-up cells are
   rewritten to install the new pins (``python -m course_utils.colab``). Either way it prints which packages moved
   and, when something failed, what.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
KEPT = ROOT / "requirements" / "kept.txt"
SIDE_ENV = ROOT / "build" / "lock-env"
OLDEST_PYTHON = "3.11"  # pyproject's requires-python
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)\s*(?:;\s*(.+?))?\s*$")


def compile_command(output: Path, *, upgrade: bool) -> list[str]:
    """The ``uv pip compile`` call that writes the lock (``upgrade``: newest releases, else keep the pins)."""
    command = [sys.executable, "-m", "uv", "pip", "compile", "pyproject.toml", "--extra", "lab", "--extra", "test", "--universal",
               "--python-version", OLDEST_PYTHON, "--excludes", str(KEPT.relative_to(ROOT)), "--quiet",
               "--custom-compile-command", "bash course.sh lock", "--output-file", str(output)]  # fmt: skip
    return command + (["--upgrade"] if upgrade else [])


def pins(text: str) -> dict[tuple[str, str], str]:
    """``{(package, marker): version}`` from a lock's text (the marker is "" where the pin holds everywhere)."""
    found = {}
    for line in text.splitlines():
        match = PIN.match(line.strip())
        if match:
            name, version, marker = match.groups()
            found[(name.lower().replace("_", "-"), marker or "")] = version
    return found


def moved(old_text: str, new_text: str) -> list[str]:
    """One line per package whose pin changed, appeared or went: ``name  old -> new  [marker]``."""
    old, new = pins(old_text), pins(new_text)
    lines = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            name, marker = key
            change = f"{old.get(key, '(none)')} -> {new.get(key, '(none)')}"
            lines.append(f"{name:32} {change:28} {marker}".rstrip())
    return lines


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("$", " ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, **kwargs)


def share_this_environment(python: Path) -> None:
    """Let ``python``'s venv see this environment's packages (its torch), after its own: a ``.pth`` file.
    ``--system-site-packages`` would share the base Python's instead, where this one is a venv (course.sh's .venv)."""
    import sysconfig

    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.check_output([str(python), "-c", code], text=True).strip())
    ours = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site / "course-environment.pth").write_text("".join(f"{path}\n" for path in ours), encoding="utf-8")


def make_side_env(candidate: Path) -> Path:
    """``build/lock-env`` with the candidate's versions; returns its python."""
    shutil.rmtree(SIDE_ENV, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(SIDE_ENV)], check=True)
    python = SIDE_ENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    share_this_environment(python)
    run([str(python), "-m", "pip", "install", "-q", "-r", str(candidate)], check=True)
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", "."], check=True)
    return python


def compatibility_subset(python: Path) -> subprocess.CompletedProcess:
    """The parity tests and every notebook under nbval, in the side environment; the output is kept."""
    env = {
        **os.environ,
        "COURSE_FAST": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "MKL_CBWR": os.environ.get("MKL_CBWR", "COMPATIBLE"),  # MKL's other path, as the suite runs
    }
    command = [str(python), "-m", "pytest", "-n", "2", "--dist", "loadscope", "-q", "-m", "parity or nbval",
               "tests", "notebooks"]  # fmt: skip
    print("$", " ".join(command), flush=True)
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    print(result.stdout[-4000:], result.stderr[-2000:], sep="\n")
    return result


def failures(pytest_output: str) -> list[str]:
    """The ``FAILED``/``ERROR`` lines of a pytest summary."""
    return [line for line in pytest_output.splitlines() if line.startswith(("FAILED", "ERROR"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="resolve and print what would move; test nothing")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("uv") is None:
        print("uv is not installed: pip install uv (bash course.sh lock does it)", file=sys.stderr)
        return 2
    old_text = LOCK.read_text(encoding="utf-8") if LOCK.exists() else ""
    with tempfile.TemporaryDirectory() as tmp:
        candidate = Path(tmp) / "lock.txt"
        candidate.write_text(old_text, encoding="utf-8")
        run(compile_command(candidate, upgrade=True), check=True)
        new_text = candidate.read_text(encoding="utf-8")
        changes = moved(old_text, new_text)
        print(f"\n{len(changes)} pin(s) moved:" if changes else "\nnothing moved: the lock is today's newest")
        print("\n".join(changes))
        if args.dry_run or not changes:
            return 0
        result = compatibility_subset(make_side_env(candidate))
        if result.returncode != 0:
            print("\nThe lock is unchanged: the compatibility subset failed with the new versions:")
            print("\n".join(failures(result.stdout)) or result.stdout[-2000:])
            print("Those packages moved (above); fix the code, or narrow pyproject's range, and run it again.")
            return 1
        LOCK.write_text(new_text, encoding="utf-8")
    run([sys.executable, "-m", "course_utils.colab", str(ROOT)], check=True)
    # The Colab lock pins the lock's releases for what the set-up cell brings on Colab: resolve it again.
    colab = run([sys.executable, str(ROOT / "scripts" / "colab_lock.py"), "lock"])
    print(
        f"\nwrote {LOCK.relative_to(ROOT)}: the compatibility subset passed with the versions above."
        "\nInstall them here with bash course.sh setup, run the whole suite, and commit the lock."
    )
    if colab.returncode != 0:
        print("The Colab lock (requirements/colab.txt) was not rewritten: run python scripts/colab_lock.py lock.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
