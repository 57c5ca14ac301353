"""Importing the course switches the Hugging Face hub to offline, unless downloads are allowed."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.parity  # a library release can change what this checks (course.sh floor, lock)

PROBE = (
    "import os, course_utils; print(os.environ.get('HF_HUB_OFFLINE'), os.environ.get('HF_HUB_DISABLE_PROGRESS_BARS'))"
)


def run_probe(**env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and k != "COURSE_ALLOW_DOWNLOADS"}
    return subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True, check=True
    ).stdout.split()


def test_import_sets_offline_variables():
    assert run_probe() == ["1", "1"]


def test_user_choice_is_kept():
    assert run_probe(HF_HUB_OFFLINE="0")[0] == "0"


def test_downloads_can_be_allowed():
    assert run_probe(COURSE_ALLOW_DOWNLOADS="1") == ["None", "None"]


def test_import_is_light():
    """The package import must not pull in plotting, widgets or transformers."""
    code = "import sys, course_utils; print(' '.join(m for m in ('matplotlib', 'ipywidgets', 'transformers') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == ""
