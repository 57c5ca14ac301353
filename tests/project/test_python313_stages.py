"""course.sh's stages on Colab's Python (``bash course.sh newest`` and ``floor``, both run by ``course.sh test``): the
newest torch and the oldest transformers, in ``build/py313``. Where no Python 3.13 is found they cannot run, and a CI
run fails instead of passing without them. The stages themselves run in CI; here the finding and the refusal run on
a copy of course.sh (its ``build/py313`` is never this checkout's), and the commands are checked in its text."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COURSE_SH = (ROOT / "course.sh").read_text(encoding="utf-8")
BASH = shutil.which("bash")


def _function(name: str) -> str:
    match = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", COURSE_SH, flags=re.M | re.S)
    assert match, f"course.sh has no function {name}"
    return match.group(0)


def _no_python313_env(home: Path, bin_dir: Path) -> dict[str, str]:
    """A PATH of ``bin_dir`` alone (with ``dirname``, which course.sh calls first), no pyenv, and a HOME of its own:
    no Python 3.13 anywhere, whatever the machine has in /usr/bin."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "dirname").symlink_to(shutil.which("dirname"))
    # No package index either: were a Python taken for 3.13 by mistake, its set-up would fail at once, not download.
    return {"PATH": str(bin_dir), "HOME": str(home), "CI": "true", "PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull}


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("command", ["newest", "floor", "test"])
def test_without_python313_the_stages_fail_in_ci_before_anything_is_installed(tmp_path, command):
    copy = tmp_path / "repo" / "course.sh"
    copy.parent.mkdir()
    shutil.copy(ROOT / "course.sh", copy)
    bin_dir = tmp_path / "bin"
    # pyenv's shim: on PATH, but it fails when pyenv has not selected 3.13. Found and run, it must not count.
    _executable(bin_dir / "python3.13", "#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
    env = _no_python313_env(tmp_path / "home", bin_dir)
    env["PYTHON313"] = sys.executable  # a Python, not 3.13: refused too
    done = subprocess.run([BASH, str(copy), command], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "NOT RUN: no Python 3.13" in done.stdout and "PYTHON313=" in done.stdout
    assert not (copy.parent / "build").exists() and not (copy.parent / ".venv").exists(), "nothing was set up"


def test_python313_is_found_past_a_failing_shim_in_pyenvs_versions_and_pythons313_comes_first(tmp_path):
    bin_dir = tmp_path / "bin"
    _executable(bin_dir / "python3.13", "#!/bin/sh\nexit 127\n")
    home = tmp_path / "home"
    pyenvs = _executable(home / ".pyenv" / "versions" / "3.13.9" / "bin" / "python3.13", "#!/bin/sh\nexit 0\n")
    script = f'PY313_VENV={tmp_path}/none\n{_function("find_python313")}find_python313 && echo "$PY313_BASE"\n'
    env = _no_python313_env(home, bin_dir)

    def found() -> str | None:
        done = subprocess.run([BASH, "-c", script], env=env, capture_output=True, text=True, timeout=30)
        assert done.returncode in (0, 1), done.stderr
        return done.stdout.strip() if done.returncode == 0 else None

    assert found() == str(pyenvs)
    env["PYTHON313"] = str(_executable(tmp_path / "custom" / "python3.13", "#!/bin/sh\nexit 0\n"))
    assert found() == env["PYTHON313"], "PYTHON313, named by hand, comes first"
    for candidate in (Path(env["PYTHON313"]), pyenvs):
        _executable(candidate, "#!/bin/sh\nexit 1\n")  # runs, but is not 3.13
    assert found() is None


def test_the_venv_gets_the_newest_torch_then_the_lock():
    setup = _function("setup_py313")
    torch = setup.index('PIP_CONSTRAINT=/dev/null "$PY313" -m pip install -q --upgrade torch\n')
    lock = setup.index('PIP_CONSTRAINT=/dev/null "$PY313" -m pip install -q -r requirements/lock.txt')
    assert torch < lock, "the lock's pins go over the torch's own dependencies, as Colab's set-up cell installs them"
    assert "the stage would not test the newest torch" in setup[lock:], "a torch the lock's install moved fails it"
    assert "build/py313" in COURSE_SH and "build/" in (ROOT / ".gitignore").read_text().split()


def test_the_newest_stage_runs_the_parity_tests_and_every_student_notebook_under_plain_kernels_and_mkls_basic_path():
    newest = _function("run_newest")
    assert "ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-default} MKL_CBWR=${MKL_CBWR:-COMPATIBLE}" in newest
    assert "COURSE_FAST=${COURSE_FAST:-1}" in newest
    assert re.search(
        r'"\$PY313" -m pytest -n 2 --dist loadscope -m "parity or nbval" \\\n\s+"\$STUDENT_EDITION" tests', newest
    )
    built = newest.index('scripts/build_notebooks.py --student --outputs --out "$STUDENT_EDITION"')
    assert newest.index('rm -rf "$STUDENT_EDITION"') < built < newest.index("-m pytest"), "a fresh edition, then nbval"


def test_the_floor_runs_in_the_python313_venv_and_course_sh_test_runs_both_after_the_suite():
    floor = _function("run_floor")
    assert '"$PY313" -m pip install -q --no-deps --target "$floor" -r requirements/floor.txt' in floor
    assert re.search(r'"\$PY313" -m pytest .*-m "parity or nbval" tests notebooks/09_bert\.ipynb', floor)
    assert '"$PY" -m' not in floor, "the floor runs on Colab's Python, not the suite's"
    assert "is not the floor" in floor, "the stage fails where the side folder does not give the floor's versions"
    test_branch = re.search(r"^    test\)\n(.*?)^        ;;", COURSE_SH, flags=re.M | re.S).group(1)
    suite = test_branch.index("--durations=25")
    stages = [test_branch.index(f"        {stage}\n", suite) for stage in ("setup_py313", "run_newest", "run_floor")]
    assert stages == sorted(stages), "after the suite: the venv, the newest torch, then the floor"
    for command in ("newest", "floor"):
        branch = re.search(rf"^    {command}\)\n(.*?)^        ;;", COURSE_SH, flags=re.M | re.S).group(1)
        assert "find_python313 || { no_python313; exit 1; }" in branch, f"course.sh {command} fails without 3.13"
