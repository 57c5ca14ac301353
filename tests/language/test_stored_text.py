"""Text data stored compressed: written as ``X.bz2``, byte for byte the same each time, read back as ``X``."""

from __future__ import annotations

import bz2

import pytest

from course_utils.language import stored_text

TEXT = "the cat sat .\nkayla gets fed ; é ü ✓\n" * 50


def test_written_compressed_and_read_back_under_the_plain_name(tmp_path):
    written = stored_text.write_text(tmp_path / "train.txt", TEXT)
    assert written == tmp_path / "train.txt.bz2" and not (tmp_path / "train.txt").exists()
    assert bz2.decompress(written.read_bytes()).decode("utf-8") == TEXT
    assert written.stat().st_size < len(TEXT.encode("utf-8")) / 5
    assert stored_text.read_text(tmp_path / "train.txt") == TEXT


def test_writing_twice_gives_the_same_bytes(tmp_path):
    (tmp_path / "a").mkdir()
    first = stored_text.write_text(tmp_path / "a" / "x.jsonl", TEXT)
    second = stored_text.write_text(tmp_path / "x.jsonl", TEXT)
    assert first.read_bytes() == second.read_bytes()


def test_a_plain_file_is_read_and_replaced_when_rewritten(tmp_path):
    plain = tmp_path / "valid.txt"
    plain.write_text("plain text\n", encoding="utf-8")
    assert stored_text.stored_file(plain) == plain and stored_text.read_text(plain) == "plain text\n"
    stored_text.write_text(plain, TEXT)
    assert not plain.exists() and stored_text.stored_file(plain) == tmp_path / "valid.txt.bz2"
    assert stored_text.read_text(plain) == TEXT


def test_a_missing_file_names_both_forms(tmp_path):
    assert stored_text.stored_file(tmp_path / "test.txt") is None
    with pytest.raises(FileNotFoundError, match=r"test\.txt nor test\.txt\.bz2"):
        stored_text.read_text(tmp_path / "test.txt")
