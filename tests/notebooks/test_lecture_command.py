"""``bash course.sh lecture NN`` (``scripts/lecture.py``): the lecture copy, and its page in a real browser.

The quick tests check the copy: the slice of the browser test, the set-up, lecture mode switched on right after it,
every Markdown cell, in the notebook's order, and all before the demos folded under the title. The browser test prepares notebooks 06 and 08 with the script's own
functions (JupyterLab on a free port with a token, as an instructor gets it, no browser of its own), opens the URL
it gives in headless Chromium and checks, without running a cell or scrolling: the page joined the prepared kernel,
the first demo is in view, in lecture mode, and live (moving a control changes its picture). It prints the
preparation times (``-s`` shows them). Screenshots go to ``tests/artifacts/lecture/``.

    python -m pytest tests/notebooks/test_lecture_command.py -p no:xdist -s

Outside CI a machine without Debian's ``chromium`` (or without playwright) skips the browser test; in CI it fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import nbformat
import pytest

from browser_support import LabNotebook, wait_or_fail
from course_utils.cell_slices import frontend_cells

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "lecture"
PROJECTOR = {"width": 1280, "height": 800}  # WXGA, a common projector
NORMAL_TITLE_PX = 18  # a demo's title outside lecture mode (widget_kit.Demo)


def lecture_script():
    """``scripts/lecture.py`` as a module."""
    spec = importlib.util.spec_from_file_location("lecture_script", ROOT / "scripts" / "lecture.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


lecture = lecture_script()


def built(number: str) -> nbformat.NotebookNode:
    return nbformat.read(lecture.notebook_path(number), as_version=4)


def code_sources(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


# ---------------------------------------------------------------- the copy


def test_an_unknown_notebook_is_refused_in_one_line_that_lists_the_notebooks():
    with pytest.raises(SystemExit) as refused:
        lecture.main(["99", "--no-browser"])
    message = str(refused.value)
    assert "\n" not in message and "'99'" in message
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        assert path.stem in message
    assert lecture.notebook_path("8") == lecture.notebook_path("08")


@pytest.mark.parametrize("number", ["06", "08"])
def test_the_copy_runs_the_slice_after_the_set_up_and_lecture_mode(number):
    notebook = built(number)
    copy = lecture.lecture_copy(notebook)
    sources = code_sources(notebook)
    set_up = lecture.set_up_count(sources)
    assert "setup_notebook(" in sources[set_up - 1]
    keep = sorted(frontend_cells(notebook) | set(range(set_up)))
    expected = [sources[i] for i in keep]
    expected.insert(set_up, lecture.LECTURE_MODE_SOURCE)
    assert code_sources(copy) == expected
    assert [c.source for c in copy.cells if c.cell_type == "markdown"] == [
        c.source for c in notebook.cells if c.cell_type == "markdown"
    ]
    assert not any(cell.get("outputs") for cell in copy.cells)
    assert "widgets" not in copy.metadata


@pytest.mark.parametrize("number", ["06", "08"])
def test_the_page_folds_all_before_the_demos_under_the_title_and_keeps_the_order(number):
    notebook = built(number)
    copy = lecture.lecture_copy(notebook)
    shown = lecture.demos_in_view(copy)
    assert code_sources(shown) == code_sources(copy)  # "Restart and run all" runs them as the notebook does
    title, note = shown.cells[0], shown.cells[1]
    assert title.source == notebook.cells[0].source.splitlines()[0] and title.metadata[lecture.COLLAPSED]
    assert note.id == lecture.NOTE_ID
    level_1 = [i for i, cell in enumerate(shown.cells) if cell.cell_type == "markdown" and cell.source.startswith("# ")]
    demos_heading = [i for i, cell in enumerate(shown.cells) if cell.get("id") == lecture.DEMOS_ID]
    assert level_1 == [0, *demos_heading], "the fold must end at the demos' heading, and only there"
    after = shown.cells[demos_heading[0] + 1 :]
    assert after[0].cell_type == "markdown" and after[0].source.startswith("## ")
    first_code = next(cell for cell in after if cell.cell_type == "code")
    assert first_code.metadata["jupyter"]["source_hidden"], "the first code cell after the heading is a demo"
    collapsed = [cell for cell in shown.cells if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden")]
    assert len(collapsed) == len(lecture.demo_cells(notebook)) >= 1


# ---------------------------------------------------------------- the page, in a real browser

# The first demo: where it is in the notebook's visible area, its classes and its title's font size.
_FIRST_DEMO_JS = """() => {
  const demo = document.querySelector('.course-demo');
  const area = window.jupyterapp.shell.currentWidget.content.node;
  const title = demo.querySelector('.widget-html-content b');
  const box = demo.getBoundingClientRect(), seen = area.getBoundingClientRect(), head = title.getBoundingClientRect();
  return {top: box.top, titleBottom: head.bottom, areaTop: seen.top, areaBottom: seen.bottom,
          scrolled: area.scrollTop, classes: demo.className, titlePx: parseFloat(getComputedStyle(title).fontSize)};
}"""

_KERNEL_ID_JS = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;
  return kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle' ? kernel.id : null;
}"""

_PAGE_READY_JS = """() => window.jupyterapp && window.jupyterapp.shell.currentWidget
  && window.jupyterapp.shell.currentWidget.sessionContext"""


class LectureNotebook(LabNotebook):
    """The lecture copy's page at the URL the script gives (with its token), as an instructor opens it: the
    harness's page, without its own URL, its panel collapsing or its kernel start."""

    def __init__(self, page, lab, *, timeout_s: float = 90):
        self.page = page
        self.page_errors: list[str] = []
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.goto(lab.url, wait_until="domcontentloaded")
        page.wait_for_function(_PAGE_READY_JS, timeout=timeout_s * 1000)
        self.kernel_id = page.wait_for_function(_KERNEL_ID_JS, timeout=timeout_s * 1000, polling=250).json_value()


@contextlib.contextmanager
def prepared(number: str, folder: Path):
    """Notebook ``number`` prepared by the script into ``folder``, with JupyterLab's defaults for the user's settings
    (not this machine's) and the app exposed to the test's JavaScript; stopped afterwards."""
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(folder / "user-settings"))
    lab = lecture.prepare(
        number, folder=folder / "lecture", extra_args=["--LabApp.expose_app_in_browser=True"], env=env
    )
    try:
        yield lab
    finally:
        lab.stop()


@contextlib.contextmanager
def opened(browser, lab, name: str):
    """The lab's URL open in a fresh browser context the size of a projector; a screenshot if the block fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=PROJECTOR)
    try:
        yield LectureNotebook(context.new_page(), lab)
    except BaseException:
        with contextlib.suppress(Exception):  # a diagnostic; keep the original error
            context.pages[0].screenshot(path=ARTIFACTS / f"{name}-failure.png")
        raise
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("number", ["06", "08"])
def test_the_page_opens_on_the_first_demo_live_and_in_lecture_mode(browser, tmp_path, number):
    demos = len(lecture.demo_cells(built(number)))
    with prepared(number, tmp_path) as lab, opened(browser, lab, number) as notebook:
        timings = lab.timings
        print(f"\n{number}: prepared in {timings['total']:.1f} s (JupyterLab {timings['jupyterlab']:.1f} s, "
              f"{lab.cells_run} cells {timings['cells']:.1f} s), COURSE_FAST={os.environ.get('COURSE_FAST', '')!r}")  # fmt: skip
        assert notebook.kernel_id == lab.kernel_id, "the page did not join the kernel the cells ran in"
        wait_or_fail(lambda: notebook.wait_for_demos(demos, timeout_s=60), f"{demos} demos with a picture did not show")
        problems = notebook.output_problems()
        assert not problems, "the page shows problems:\n" + "\n".join(problems)
        first = notebook.page.evaluate(_FIRST_DEMO_JS)
        notebook.page.screenshot(path=ARTIFACTS / f"{number}-page.png")
        assert first["areaTop"] <= first["top"] and first["titleBottom"] <= first["areaBottom"], first
        assert "course-lecture" in first["classes"].split(), first
        assert first["titlePx"] >= 1.4 * NORMAL_TITLE_PX, first
        before = notebook.demo_state(0)
        assert before["loaded"], "the first demo's picture did not come from the kernel"
        moved = notebook.move_one_control(0)
        wait_or_fail(lambda: notebook.wait_for_change(0, before), f"moving its {moved} did not change the first demo")
        assert "⚠" not in notebook.demo_state(0)["html"]
        assert not notebook.page_errors, notebook.page_errors
