"""The tracked files fit on a GPU machine: it takes at most 64 MiB of working tree, and ``scripts/gpu_check.sh``
travels with its ~7.5 MB of wheels, so the tracked files stay under 56 MiB (text data is stored compressed,
``course_utils.language.stored_text``, and so are the course checkpoints' weights, ``course_utils.checkpoints``)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT_MIB = 56
MIB = 1 << 20


def tracked_sizes() -> dict[str, int]:
    """Every file ``git ls-files`` lists, with its size in bytes (as ``du -b`` counts it)."""
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [name for name in listing.decode("utf-8").split("\0") if name]
    return {name: os.lstat(ROOT / name).st_size for name in names if os.path.lexists(ROOT / name)}


def biggest(sizes: dict[str, int], n: int = 12) -> str:
    """The ``n`` biggest files, one a line, in MB."""
    top = sorted(sizes.items(), key=lambda item: -item[1])[:n]
    return "\n".join(f"  {size / 1e6:6.2f} MB  {name}" for name, size in top)


@pytest.fixture(scope="module")
def sizes():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return tracked_sizes()


def test_the_tracked_files_fit_beside_the_gpu_wheels(sizes):
    total = sum(sizes.values())
    assert total <= LIMIT_MIB * MIB, (
        f"the tracked files are {total / MIB:.1f} MiB, over {LIMIT_MIB} MiB: a GPU machine takes 64 MiB of working "
        f"tree, wheels included. The biggest files:\n{biggest(sizes)}"
    )


def test_the_sum_sees_the_whole_tree(sizes):
    assert {"README.md", "pyproject.toml", "course_utils/checkpoints.py"} <= set(sizes)
    assert len(sizes) > 300 and sum(sizes.values()) > 20 * MIB  # the checkpoints alone are more
    assert "data/translation/train.jsonl" not in sizes and "data/translation/train.jsonl.bz2" in sizes
    assert "data/checkpoints/07/dot_256/model.safetensors.gz" in sizes
