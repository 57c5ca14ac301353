"""Real browser: JupyterLab in headless Chromium runs every notebook and moves each demo's controls.

For each ``notebooks/*.ipynb`` (a copy, in a temporary folder) the test runs, in fast mode, the cells
whose saved outputs JupyterLab's renderers draw (every widget, every demo), with the cells they need
(``course_utils.cell_slices.frontend_cells``). nbval runs every cell and compares their outputs already, so the
measurements that only print or plot are not run a second time here. The test fails on an error
output, "Error displaying widget", "Javascript Error" or a missing or text-only widget, then moves
one control of every course demo and waits for its picture or readout to change. Screenshots go to
``tests/artifacts/browser/``.

    python -m pytest tests/notebooks/test_browser.py -p no:xdist
    COURSE_BROWSER_NOTEBOOKS=/some/folder python -m pytest tests/notebooks/test_browser.py   # other notebooks
    COURSE_BROWSER_ALL_CELLS=1 python -m pytest tests/notebooks/test_browser.py   # every cell: "Run all", as a student does

Outside CI a machine without Debian's ``chromium`` (or without playwright) skips it; in CI it fails.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from browser_support import (
    NOTEBOOK_DIR,
    one_class_per_notebook,
    LabNotebook,
    LabServer,
    expected_demo_count,
    lecture_mode_notebook,
    run_all_or_fail,
    stage_notebooks,
    wait_or_fail,
)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "browser"
ALL_CELLS = os.environ.get("COURSE_BROWSER_ALL_CELLS", "").strip() not in {"", "0"}
RUN_TIMEOUT_S = 240  # a notebook takes up to about 60 s in fast mode; CI machines can be slower
VIEWPORT = {"width": 1400, "height": 1100}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving copies of the notebooks (their frontend cells, or all), kernels in fast mode; stopped
    even on failure."""
    root = tmp_path_factory.mktemp("lab") / "root"
    root.mkdir()
    stage_notebooks(NOTEBOOK_DIR, root, frontend_only=not ALL_CELLS)
    server = LabServer(root)
    yield server
    server.stop()


@contextlib.contextmanager
def open_notebook(browser, lab: LabServer, relative_path: str, name: str):
    """The notebook open in a fresh browser context; a screenshot is saved if the block fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in ARTIFACTS.glob(f"{name}-*.png"):
        stale.unlink()
    context = browser.new_context(viewport=VIEWPORT)
    notebook = None
    try:
        notebook = LabNotebook(context.new_page(), lab, relative_path)
        yield notebook
    except BaseException:
        with contextlib.suppress(Exception):  # the screenshot is a diagnostic; keep the original error
            context.pages[0].screenshot(path=ARTIFACTS / f"{name}-failure.png")
        raise
    finally:
        if notebook is not None:
            with contextlib.suppress(Exception):  # stopping the server ends any kernel left running
                notebook.shutdown_kernel()
        context.close()


def _run_all(notebook: LabNotebook) -> None:
    run_all_or_fail(notebook, RUN_TIMEOUT_S)


def _check_outputs(notebook: LabNotebook) -> None:
    problems = notebook.output_problems()
    assert not problems, "the run's outputs show problems:\n" + "\n".join(problems)


def _check_demo_responds(notebook: LabNotebook, index: int, name: str) -> None:
    demo = notebook.demos.nth(index)
    demo.screenshot(path=ARTIFACTS / f"{name}-demo{index}-before.png")
    before = notebook.demo_state(index)
    moved = notebook.move_one_control(index)
    wait_or_fail(
        lambda: notebook.wait_for_change(index, before),
        f"demo {index}: moving its {moved} did not change its picture or readout within 30 s",
    )
    after = notebook.demo_state(index)
    assert "⚠" not in after["html"], f"demo {index}: moving its {moved} showed an error: {after['html']}"
    demo.screenshot(path=ARTIFACTS / f"{name}-demo{index}-after.png")


def check_notebook_in_the_browser(browser, lab, path: Path) -> None:
    """Run every cell of ``path`` in JupyterLab, check the outputs, then move a control of each demo."""
    expected = expected_demo_count(path)
    with open_notebook(browser, lab, f"notebooks/{path.name}", path.stem) as notebook:
        _run_all(notebook)
        _check_outputs(notebook)
        wait_or_fail(
            lambda: notebook.wait_for_demos(expected),
            lambda: f"expected {expected or 'at least 1'} course demos with a picture, found {notebook.demos.count()}",
        )
        found = notebook.demos.count()
        assert found >= 1, "the notebook shows no course demo"
        if expected is not None:
            assert found == expected, f"{found} demos rendered, the saved outputs display {expected}"
        notebook.demos.first.scroll_into_view_if_needed()
        notebook.page.screenshot(path=ARTIFACTS / f"{path.stem}-page.png", full_page=True)
        for index in range(found):
            _check_demo_responds(notebook, index, path.stem)
        assert not notebook.page_errors, f"uncaught JavaScript errors in the page: {notebook.page_errors}"


one_class_per_notebook(
    globals(),
    "TestInTheBrowser",
    "test_notebook_runs_and_every_demo_responds",
    check_notebook_in_the_browser,
    "{} in JupyterLab in headless Chromium.",
)


def test_lecture_mode_enlarges_demo_text_and_figure(browser, lab):
    lecture_mode_notebook(lab.root / "lecture_mode_check.ipynb")
    with open_notebook(browser, lab, "lecture_mode_check.ipynb", "lecture-mode") as notebook:
        _run_all(notebook)
        _check_outputs(notebook)
        wait_or_fail(lambda: notebook.wait_for_demos(2), "the two demos (normal, lecture mode) did not render")
        sizes = notebook.demo_sizes()
        normal, lecture = sizes["demos"]
        notebook.demos.nth(1).screenshot(path=ARTIFACTS / "lecture-mode-demo.png")
    assert lecture["title"] >= 1.4 * normal["title"], sizes
    assert lecture["slider"] >= 1.4 * sizes["base"], sizes
    assert lecture["width"] > normal["width"], sizes
