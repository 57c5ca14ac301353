"""Checkpoints: safetensors + JSON config + sha256 manifest; tampering is caught."""

import gzip
import hashlib

import pytest
import torch
from torch import nn

from course_utils import CourseInputError, seed_everything
from course_utils.checkpoints import (
    CONFIG_FILE,
    MANIFEST_FILE,
    STORED_WEIGHTS_FILE,
    WEIGHTS_FILE,
    ChecksumError,
    load_checkpoint,
    save_checkpoint,
)


class TiedModel(nn.Module):
    """Embedding and output weights shared, as language models do."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.embed.weight


def build(config):
    return TiedModel(config["vocab"], config["dim"])


def test_round_trip_keeps_weights_and_config(tmp_path):
    seed_everything(0)
    model = build({"vocab": 11, "dim": 4})
    save_checkpoint(model, tmp_path / "ckpt", {"vocab": 11, "dim": 4})
    assert {p.name for p in (tmp_path / "ckpt").iterdir()} == {STORED_WEIGHTS_FILE, CONFIG_FILE, MANIFEST_FILE}
    loaded, config = load_checkpoint(tmp_path / "ckpt", build)
    assert config == {"vocab": 11, "dim": 4}
    assert torch.equal(loaded.embed.weight, model.embed.weight)
    assert loaded.out.weight is loaded.embed.weight
    assert not loaded.training


def test_no_pickle_is_written(tmp_path):
    save_checkpoint(build({"vocab": 3, "dim": 2}), tmp_path, {"vocab": 3, "dim": 2})
    assert not list(tmp_path.glob("*.pt")) and not list(tmp_path.glob("*.bin")) and not list(tmp_path.glob("*.pkl"))
    plain = gzip.decompress((tmp_path / STORED_WEIGHTS_FILE).read_bytes())
    assert plain[8:9] == b"{"  # safetensors: 8-byte length, then a JSON header
    assert f"{hashlib.sha256(plain).hexdigest()}  {WEIGHTS_FILE}" in (tmp_path / MANIFEST_FILE).read_text()


@pytest.mark.parametrize("victim", [STORED_WEIGHTS_FILE, CONFIG_FILE])
def test_a_changed_file_is_caught_before_loading(tmp_path, victim):
    save_checkpoint(build({"vocab": 3, "dim": 2}), tmp_path, {"vocab": 3, "dim": 2})
    data = bytearray((tmp_path / victim).read_bytes())
    data[-2] ^= 1
    (tmp_path / victim).write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=victim):
        load_checkpoint(tmp_path, build)


def test_missing_manifest_or_file(tmp_path):
    with pytest.raises(ChecksumError, match="not a course checkpoint"):
        load_checkpoint(tmp_path, build)
    save_checkpoint(build({"vocab": 3, "dim": 2}), tmp_path, {"vocab": 3, "dim": 2})
    (tmp_path / STORED_WEIGHTS_FILE).unlink()
    with pytest.raises(ChecksumError, match="missing"):
        load_checkpoint(tmp_path, build)


def test_config_must_be_json(tmp_path):
    with pytest.raises(CourseInputError, match="JSON"):
        save_checkpoint(build({"vocab": 3, "dim": 2}), tmp_path, {"device": torch.device("cpu")})
    with pytest.raises(CourseInputError, match="dict"):
        save_checkpoint(build({"vocab": 3, "dim": 2}), tmp_path, [1, 2])


def test_the_weights_are_stored_compressed_the_same_every_time(tmp_path):
    for name in ("a", "b"):
        seed_everything(0)
        save_checkpoint(build({"vocab": 50, "dim": 8}), tmp_path / name, {"vocab": 50, "dim": 8})
    first, second = ((tmp_path / name / STORED_WEIGHTS_FILE).read_bytes() for name in ("a", "b"))
    assert first == second and first[:2] == b"\x1f\x8b"  # gzip, no time stamp or name in its header


def test_a_damaged_compressed_stream_is_caught(tmp_path):
    save_checkpoint(build({"vocab": 50, "dim": 8}), tmp_path, {"vocab": 50, "dim": 8})
    data = bytearray((tmp_path / STORED_WEIGHTS_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / STORED_WEIGHTS_FILE).write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=STORED_WEIGHTS_FILE):
        load_checkpoint(tmp_path, build)
