"""The zoo's one loader and one command: every shipped checkpoint loads by its name, and the command lists and builds them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from course_utils import zoo
from course_utils.models.bert.wordpiece import COURSE_VOCAB_SIZE
from course_utils.validation import CourseInputError
from course_utils.zoo.__main__ import main
from course_utils.zoo.lm_checkpoints import CHECKPOINT_ROOT

ROOT = Path(__file__).resolve().parents[2]


def run_zoo(*args: str) -> subprocess.CompletedProcess:
    """``python -m course_utils.zoo ARGS`` in a subprocess, on one thread."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "course_utils.zoo", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


@pytest.mark.parametrize("name", zoo.names())
def test_every_name_loads_its_shipped_checkpoint(name):
    loaded = zoo.load(name)
    if name == "tokenizer":
        assert len(loaded) == COURSE_VOCAB_SIZE
    else:
        assert isinstance(loaded, torch.nn.Module) and not loaded.training


def test_the_names_are_the_shipped_folders():
    shipped = {(p.parent.name, p.name) for p in CHECKPOINT_ROOT.glob("*/*") if p.is_dir()}
    named = {(notebook, name) for notebook, names in zoo.NOTEBOOKS.items() for name in names}
    assert named == shipped
    assert len(zoo.names()) == len(set(zoo.names())), "a name belongs to two notebooks"


def test_an_unknown_name_is_a_clear_error():
    with pytest.raises(
        CourseInputError,
        match=r"unknown checkpoint 'gpt_huge'; did you mean gpt_lm( or \w+)*\? zoo.names\(\) lists all",
    ):
        zoo.load("gpt_huge")
    with pytest.raises(CourseInputError, match="unknown checkpoint"):
        zoo.build("gpt_huge")


@pytest.mark.parametrize("name", [names[0] for names in zoo.NOTEBOOKS.values()])
def test_a_missing_checkpoint_says_how_to_make_it(name, tmp_path):
    with pytest.raises(CourseInputError, match=f"missing; make it with `python -m course_utils.zoo {name}`"):
        zoo.load(name, tmp_path)


def test_the_command_lists_every_name_by_notebook():
    done = run_zoo("--list")
    assert done.returncode == 0, done.stderr
    listed = dict(line.split(": ") for line in done.stdout.splitlines())
    assert {notebook: tuple(names.split()) for notebook, names in listed.items()} == zoo.NOTEBOOKS


def test_the_command_refuses_unknown_names_and_no_names(capsys):
    with pytest.raises(SystemExit):
        main(["ffnn_n7"])
    assert "unknown name(s) ffnn_n7" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([])
    assert "--notebook" in capsys.readouterr().err


def test_the_command_builds_a_checkpoint_by_name(tmp_path):
    """``sentiment_features`` trains in a few seconds: built into a folder, it loads, with the shipped recipe."""
    done = run_zoo("sentiment_features", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("sentiment_features: ") and "1 thread(s)" in done.stdout
    assert not zoo.load("sentiment_features", tmp_path).training
    built, shipped = (json.loads((folder / "sentiment_features" / "config.json").read_text(encoding="utf-8"))
                      for folder in (tmp_path, CHECKPOINT_ROOT / "04"))  # fmt: skip
    assert built["recipe"] == shipped["recipe"] and built["model"] == shipped["model"]
