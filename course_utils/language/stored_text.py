"""Text data files stored compressed: ``train.jsonl`` lies on disk as ``train.jsonl.bz2``.

Readers name the plain file and get its text either way (a plain file, if one is there, wins);
writers always write the compressed one, byte for byte the same on every run (bz2 stores no
name and no time), and remove a stale plain file beside it.
"""

from __future__ import annotations

import bz2
from pathlib import Path

SUFFIX = ".bz2"


def compressed(path: Path | str) -> Path:
    """The name ``path`` is stored under: ``train.txt`` → ``train.txt.bz2``."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def stored_file(path: Path | str) -> Path | None:
    """The file that holds the text of ``path`` (itself or its compressed form), or None."""
    path = Path(path)
    for candidate in (path, compressed(path)):
        if candidate.is_file():
            return candidate
    return None


def read_text(path: Path | str) -> str:
    """The UTF-8 text of ``path`` or of ``path.bz2``; FileNotFoundError if neither exists."""
    found = stored_file(path)
    if found is None:
        raise FileNotFoundError(f"neither {path} nor {compressed(path).name} exists")
    data = found.read_bytes()
    return (bz2.decompress(data) if found.suffix == SUFFIX else data).decode("utf-8")


def write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` compressed to ``path.bz2`` (deterministic bytes); return the file written."""
    target = compressed(path)
    target.write_bytes(bz2.compress(text.encode("utf-8"), compresslevel=9))
    Path(path).unlink(missing_ok=True)
    return target
