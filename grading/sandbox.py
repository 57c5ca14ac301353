"""The command that starts a submission's process (``grading.runner``) shut off from the machine:

- no network: a network namespace of its own (``unshare --net``), so nothing leaves the machine, at the level of
  the operating system and not only of Python;
- a read-only environment: Python, its packages and the course are mounted read-only in a mount namespace of its
  own, and the process then gives up every capability, so it cannot mount them writable again: a ``pip install``
  or ``pip uninstall`` fails, and the next submission runs with what the first one did;
- caps: memory (``prlimit --data``), the size of a file it writes, and the number of processes.

Its home, working folder and temporary folder are a throwaway folder of its own (``grading.session``). Where the
system refuses namespaces (a container without the rights, macOS), ``probe()`` says why, and grading goes on with
the caps and Python's own network block only.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMORY_BYTES = 6 * 2**30
FILE_BYTES = 512 * 2**20
PROCESSES = 4096


@dataclass(frozen=True)
class Isolation:
    namespaces: bool
    why_not: str = ""


def read_only_folders() -> list[str]:
    """The folders a submission must not change: Python, its packages and the course, outermost only."""
    folders = {Path(sys.prefix), Path(sys.base_prefix), ROOT}
    folders |= {Path(p) for p in sys.path if p and Path(p).is_dir() and not Path(p).is_relative_to("/tmp")}
    folders = sorted({folder.resolve() for folder in folders if folder.is_dir()})
    return [str(f) for f in folders if not any(f != o and f.is_relative_to(o) for o in folders)]


def _namespace_prefix() -> list[str]:
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return ["unshare", *user, "--net", "--mount", "--fork", "--"]


def _inside(command: list[str]) -> str:
    """The shell line run in the namespaces: mount read-only, then drop every capability and start ``command``."""
    mounts = " && ".join(f"mount --rbind -o ro {shlex.quote(f)} {shlex.quote(f)}" for f in read_only_folders())
    drop = ["setpriv", "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all"]
    return f"{mounts} && exec {shlex.join(drop + command)}"


@functools.cache
def probe() -> Isolation:
    """Whether namespaces work here: one real try of the whole command with ``true``."""
    missing = [tool for tool in ("unshare", "setpriv", "mount", "prlimit") if shutil.which(tool) is None]
    if missing:
        return Isolation(False, f"{', '.join(missing)} not found (util-linux)")
    try:
        done = subprocess.run([*_namespace_prefix(), "sh", "-c", _inside(["true"])], capture_output=True, text=True,
                              timeout=30)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        return Isolation(False, str(error))
    if done.returncode:
        return Isolation(False, (done.stderr.strip() or f"exit status {done.returncode}").splitlines()[-1])
    return Isolation(True)


def _caps(memory_bytes: int) -> list[str]:
    if shutil.which("prlimit") is None:
        return []
    return ["prlimit", f"--data={memory_bytes}", f"--fsize={FILE_BYTES}", f"--nproc={PROCESSES}", "--"]


def runner_command(requests_fd: int, replies_fd: int, memory_bytes: int = MEMORY_BYTES) -> list[str]:
    """The command that starts ``grading.runner`` reading requests on ``requests_fd``, replying on ``replies_fd``."""
    command = [*_caps(memory_bytes), sys.executable, "-m", "grading.runner", str(requests_fd), str(replies_fd)]
    if not probe().namespaces:
        return command
    return [*_namespace_prefix(), "sh", "-c", _inside(command)]
