"""Checkpoints as safetensors weights + a JSON config, checked against a sha256 manifest. No pickle.

The weights lie on disk gzip-compressed (``model.safetensors.gz``: ``gunzip`` gives the safetensors file); the
manifest names ``model.safetensors`` and hashes its plain bytes, so it does not depend on the compressor.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import tempfile
import zlib
from pathlib import Path
from typing import Callable

import torch

from course_utils.validation import CourseInputError

WEIGHTS_FILE = "model.safetensors"
STORED_WEIGHTS_FILE = WEIGHTS_FILE + ".gz"  # the same bytes, gzip-compressed (mtime 0: the same file every time)
CONFIG_FILE = "config.json"
MANIFEST_FILE = "manifest.sha256"


class ChecksumError(RuntimeError):
    """A checkpoint file is missing or differs from its manifest (corrupt or edited)."""


def stored_path(path) -> Path:
    """``path`` itself if it is a file, else its compressed form ``path.gz``."""
    path = Path(path)
    return path if path.is_file() else path.with_name(path.name + ".gz")


def open_stored(path):
    """Open ``path`` for reading bytes, or ``path.gz`` decompressing on the fly."""
    found = stored_path(path)
    return gzip.open(found, "rb") if found != Path(path) else open(found, "rb")


def compress(path) -> Path:
    """Replace the file ``path`` with ``path.gz`` (deterministic bytes); return the new file."""
    path = Path(path)
    target = path.with_name(path.name + ".gz")
    with open(target, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
        gz.write(path.read_bytes())
    path.unlink()
    return target


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file (of its plain bytes when it is stored as ``path.gz``), read in chunks."""
    digest = hashlib.sha256()
    with open_stored(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def save_checkpoint(model: torch.nn.Module, directory, config: dict) -> Path:
    """Write ``model.safetensors.gz``, ``config.json`` and ``manifest.sha256`` into ``directory``."""
    from safetensors.torch import save_model

    if not isinstance(config, dict):
        raise CourseInputError(f"config must be a dict of plain values, got {type(config).__name__}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    try:
        config_text = json.dumps(config, indent=2, sort_keys=True)
    except TypeError as err:
        raise CourseInputError(f"config must hold only JSON values (numbers, strings, lists, dicts): {err}") from None
    save_model(model, str(directory / WEIGHTS_FILE))
    compress(directory / WEIGHTS_FILE)
    (directory / CONFIG_FILE).write_text(config_text + "\n", encoding="utf-8")
    return write_manifest(directory, (WEIGHTS_FILE, CONFIG_FILE))


def write_manifest(directory, names) -> Path:
    """Write ``manifest.sha256`` for the files ``names`` in ``directory`` (``verify_checkpoint`` checks it)."""
    directory = Path(directory)
    lines = [f"{sha256_of(directory / name)}  {name}" for name in names]
    (directory / MANIFEST_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def verify_checkpoint(directory) -> None:
    """Raise ``ChecksumError`` unless every file in the manifest exists and matches its sha256."""
    directory = Path(directory)
    manifest = directory / MANIFEST_FILE
    if not manifest.is_file():
        raise ChecksumError(f"no {MANIFEST_FILE} in {directory}: not a course checkpoint")
    for line in manifest.read_text(encoding="utf-8").splitlines():
        expected, name = line.split(maxsplit=1)
        path = stored_path(directory / name)
        if not path.is_file():
            raise ChecksumError(f"{directory / name} is listed in the manifest but missing")
        try:
            digest = sha256_of(directory / name)
        except (OSError, EOFError, zlib.error) as err:  # a damaged .gz: bad CRC, length or stream
            raise ChecksumError(f"{path} is corrupt: {err}") from None
        if digest != expected:
            raise ChecksumError(
                f"{path} does not match its sha256 in {MANIFEST_FILE}: the file is corrupt or was edited"
            )


def load_checkpoint(directory, build_model: Callable[[dict], torch.nn.Module], *, device=None):
    """Verify, then load: ``build_model(config)`` makes the model, the weights go into it.

    Returns ``(model, config)``, the model in eval mode.
    """
    from safetensors.torch import load_model

    directory = Path(directory)
    verify_checkpoint(directory)
    config = json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))
    model = build_model(config)
    with tempfile.TemporaryDirectory() as scratch, open_stored(directory / WEIGHTS_FILE) as weights:
        plain = Path(scratch) / WEIGHTS_FILE  # safetensors loads from a file: the weights, decompressed
        plain.write_bytes(weights.read())
        load_model(model, str(plain), device=str(device or "cpu"))
    if device is not None:
        model.to(device)
    return model.eval(), config
