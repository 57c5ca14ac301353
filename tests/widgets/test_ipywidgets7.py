"""Every course demo works with Colab's ipywidgets 7.7.1 as well as with the installed ipywidgets 8.

A virtual environment with ``--system-site-packages`` and ``ipywidgets==7.7.1`` from the package
index is made once, in ``.venv-ipywidgets7/`` (gitignored; 18 s here). tests/demo_driving.py then
runs in it and in this interpreter: it builds every Demo in ``course_utils/widgets/*_demo.py`` with
its defaults, displays it, and drives each control through a few values. Without the package
index the test is skipped, except in CI (``CI=true``), where it fails.
"""

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a venv / real kernels: not in the quick subset

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-ipywidgets7"
COLAB_IPYWIDGETS = "7.7.1"


def _make_venv() -> None:
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(VENV)], check=True)
    # The packages this interpreter sees, also where it is itself a virtual environment (course.sh's .venv).
    purelib = subprocess.run([VENV / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    Path(purelib, "course-parent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    installed = subprocess.run([VENV / "bin" / "python", "-m", "pip", "install", "-q", f"ipywidgets=={COLAB_IPYWIDGETS}"],
                               capture_output=True, text=True, timeout=600)  # fmt: skip
    if installed.returncode != 0:
        reason = f"could not install ipywidgets=={COLAB_IPYWIDGETS} from the package index: {installed.stderr.strip()[-300:]}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    (VENV / "ready").write_text(COLAB_IPYWIDGETS + "\n")


@pytest.fixture(scope="module")
def ipywidgets7_python() -> Path:
    """The interpreter of ``.venv-ipywidgets7``, made on first use."""
    ready = VENV / "ready"
    if not ready.exists() or ready.read_text().strip() != COLAB_IPYWIDGETS:
        shutil.rmtree(VENV, ignore_errors=True)  # a half-made one from an interrupted run
        _make_venv()
    return VENV / "bin" / "python"


@pytest.fixture(scope="module")
def reports(ipywidgets7_python) -> dict[str, dict]:
    """tests/demo_driving.py's report from each interpreter, both run side by side."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    runs = {
        "ipywidgets 7.7.1": subprocess.Popen([ipywidgets7_python, ROOT / "tests" / "demo_driving.py"], **_pipes(env)),
        "installed ipywidgets": subprocess.Popen([sys.executable, ROOT / "tests" / "demo_driving.py"], **_pipes(env)),
    }
    found = {}
    for name, run in runs.items():
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, f"{name}: {stderr[-2000:]}"
        found[name] = json.loads(stdout.strip().splitlines()[-1])
    return found


def _pipes(env: dict) -> dict:
    return {"cwd": ROOT, "env": env, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}


def test_the_environments_have_colabs_and_the_installed_ipywidgets(reports):
    import ipywidgets

    assert reports["ipywidgets 7.7.1"]["ipywidgets"] == COLAB_IPYWIDGETS
    assert reports["installed ipywidgets"]["ipywidgets"] == ipywidgets.__version__


@pytest.mark.parametrize("where", ["ipywidgets 7.7.1", "installed ipywidgets"])
def test_every_demo_builds_displays_and_redraws_on_each_control(reports, where):
    demos = reports[where]["demos"]
    demo_files = sorted((ROOT / "course_utils" / "widgets").glob("*_demo.py"))
    assert {name.split(".")[0] for name in demos} == {path.stem for path in demo_files}, "a demo file was not driven"
    problems = {name: report["problems"] for name, report in demos.items() if report["problems"]}
    assert not problems, f"{where}: {problems}"
    assert all(report["changes"] >= 1 for report in demos.values()), f"a demo with no control driven: {demos}"


@pytest.mark.parametrize("where", ["ipywidgets 7.7.1", "installed ipywidgets"])
def test_no_widget_warnings(reports, where):
    assert reports[where]["warnings"] == []
