"""Checkpoints as safetensors weights + a JSON config, checked against a sha256 manifest. No pickle."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import torch

from course_utils.validation import CourseInputError

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
MANIFEST_FILE = "manifest.sha256"


class ChecksumError(RuntimeError):
    """A checkpoint file is missing or differs from its manifest (corrupt or edited)."""


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def save_checkpoint(model: torch.nn.Module, directory, config: dict) -> Path:
    """Write ``model.safetensors``, ``config.json`` and ``manifest.sha256`` into ``directory``."""
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
        path = directory / name
        if not path.is_file():
            raise ChecksumError(f"{path} is listed in the manifest but missing")
        if sha256_of(path) != expected:
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
    load_model(model, str(directory / WEIGHTS_FILE), device=str(device or "cpu"))
    if device is not None:
        model.to(device)
    return model.eval(), config
