"""``bash course.sh lecture NN`` (``scripts/lecture.py``): the lecture copy, and its page in a real browser.

The quick tests check the copy: every cell of the stored notebook with its outputs and prompt, no saved widget state,
the outputs of the cells that answer the plan's questions collapsed, and lecture mode run right after the set-up. The
browser test prepares notebooks 06 and 08 with the script's own functions (JupyterLab on a free port with a token, as an
instructor gets it, no browser of its own), opens the URL it gives in headless Chromium and checks, without running a
cell: the page joined the prepared kernel; every code cell shows its stored prompt, so each [n] the lecture plan names
is the [n] on screen; the outputs of the answering cells, and only those, are collapsed; the demos are in lecture mode
and live (moving a control changes the first one's picture). It prints the preparation times (``-s`` shows them).
Screenshots go to ``tests/artifacts/lecture/``.

    python -m pytest tests/notebooks/test_lecture_command.py -p no:xdist -s

Outside CI a machine without Debian's ``chromium`` (or without playwright) skips the browser test; in CI it fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from browser_support import LabNotebook, wait_or_fail

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


def plan_prompts(number: str) -> set[int]:
    """Every prompt the notebook's lecture plan names: its rows' cells and its questions' answers."""
    stem = lecture.notebook_path(number).stem
    plan = re.search(rf"^## {number} · .*?(?=^## |\Z)", lecture.TEACHING.read_text(encoding="utf-8"), flags=re.M | re.S)
    named = set()
    for first, last in re.findall(r"\[(\d+)\](?:–\[(\d+)\])?", plan[0].partition("### Lecture plan")[2]):
        named.update(range(int(first), int(last or first) + 1))
    assert named >= lecture.answer_prompts(stem) and named, f"{stem}: the plan names no cell"
    return named


def test_the_answers_are_read_from_the_plans_questions():
    teaching = (
        "## 01 · One\n\n### Lecture plan\n\n| 0–6 | 1. A | [4]–[6] | live |\n\n**Predict, then reveal:**\n"
        "- Why? (answered by [5]: 2)\n- And? (answered by\n  [9]: 3)\n\n## 02 · Two\n- (answered by [7]: 1)\n"
    )
    assert lecture.answer_prompts("01_one", teaching) == {5, 9}
    assert lecture.answer_prompts("03_three", teaching) == set()


@pytest.mark.parametrize("number", ["06", "08"])
def test_the_copy_keeps_every_cell_its_outputs_and_prompt_and_hides_the_answers(number):
    notebook = built(number)
    answers = lecture.answer_prompts(lecture.notebook_path(number).stem)
    copy = lecture.lecture_copy(notebook, answers)
    assert len(answers) >= 2
    assert [(c.cell_type, c.source, c.get("outputs"), c.get("execution_count")) for c in copy.cells] == [
        (c.cell_type, c.source, c.get("outputs"), c.get("execution_count")) for c in notebook.cells
    ]
    assert "widgets" not in copy.metadata and "widgets" in notebook.metadata
    hidden = {c.execution_count for c in copy.cells if c.get("metadata", {}).get("jupyter", {}).get("outputs_hidden")}
    assert hidden == answers
    assert plan_prompts(number) <= {c.execution_count for c in copy.cells if c.cell_type == "code"}


@pytest.mark.parametrize("number", ["06", "08"])
def test_lecture_mode_runs_right_after_the_set_up(number):
    notebook = built(number)
    work, at = lecture.lecture_run(notebook)
    sources = code_sources(notebook)
    set_up = lecture.set_up_count(sources)
    assert "setup_notebook(" in sources[set_up - 1]
    assert work.cells[at].source == lecture.LECTURE_MODE_SOURCE
    assert code_sources(work) == [*sources[:set_up], lecture.LECTURE_MODE_SOURCE, *sources[set_up:]]
    assert work.cells[at - 1].source == sources[set_up - 1]


@pytest.mark.parametrize("number", ["06", "08"])
def test_the_kernel_runs_every_cell_or_with_demos_only_the_demos_slice(number):
    notebook = built(number)
    sources = code_sources(notebook)
    assert lecture.cells_to_run(notebook) == set(range(len(sources)))
    slice_ = lecture.cells_to_run(notebook, demos_only=True)
    assert set(range(lecture.set_up_count(sources))) <= slice_ < set(range(len(sources)))
    assert {index for index in range(len(sources)) if index in lecture.live_cells(notebook)} <= slice_
    assert set(lecture.demo_cells(notebook)) <= lecture.live_cells(notebook)


# ---------------------------------------------------------------- the page, in a real browser

# The first demo: its classes and its title's font size.
_FIRST_DEMO_JS = """() => {
  const demo = document.querySelector('.course-demo');
  const title = demo.querySelector('.widget-html-content b');
  return {classes: demo.className, titlePx: parseFloat(getComputedStyle(title).fontSize)};
}"""

# The prompt each code cell of the open notebook shows ("[5]:" -> "5") and whether its outputs are collapsed, in
# order: each cell scrolled into view first
# (JupyterLab renders only the cells near the view).
_PROMPTS_JS = """async () => {
  const content = window.jupyterapp.shell.currentWidget.content, shown = [];
  for (const [index, cell] of content.widgets.entries()) {
    if (cell.model.type !== 'code') continue;
    await content.scrollToItem(index, 'center');
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const prompt = cell.node.querySelector('.jp-InputArea-prompt');
    const text = prompt && cell.node.isConnected ? prompt.textContent.replace(/[\\[\\]:\\s]/g, '') : null;
    shown.push({prompt: text, outputHidden: cell.outputHidden});
  }
  return shown;
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
def test_the_page_shows_the_plans_prompts_and_live_demos_in_lecture_mode(browser, tmp_path, number):
    notebook = built(number)
    demos = len(lecture.demo_cells(notebook))
    stored = [str(cell.execution_count) for cell in notebook.cells if cell.cell_type == "code"]
    with prepared(number, tmp_path) as lab, opened(browser, lab, number) as page:
        timings = lab.timings
        print(f"\n{number}: prepared in {timings['total']:.1f} s (JupyterLab {timings['jupyterlab']:.1f} s, "
              f"{lab.cells_run} cells {timings['cells']:.1f} s), COURSE_FAST={os.environ.get('COURSE_FAST', '')!r}")  # fmt: skip
        assert page.kernel_id == lab.kernel_id, "the page did not join the kernel the cells ran in"
        cells = page.page.evaluate(_PROMPTS_JS)
        shown = [cell["prompt"] for cell in cells]
        assert shown == stored, f"prompts on screen {shown} against the stored notebook's {stored}"
        wrong = {n for n in plan_prompts(number) if shown[n - 1] != str(n)}
        assert not wrong, f"the plan names {sorted(wrong)}, which show other prompts"
        hidden = {int(cell["prompt"]) for cell in cells if cell["outputHidden"]}
        assert hidden == lecture.answer_prompts(lecture.notebook_path(number).stem), f"outputs collapsed: {hidden}"
        wait_or_fail(lambda: page.wait_for_demos(demos, timeout_s=60), f"{demos} demos with a picture did not show")
        problems = page.output_problems()
        assert not problems, "the page shows problems:\n" + "\n".join(problems)
        page.page.screenshot(path=ARTIFACTS / f"{number}-page.png")
        first = page.page.evaluate(_FIRST_DEMO_JS)
        assert "course-lecture" in first["classes"].split(), first
        assert first["titlePx"] >= 1.4 * NORMAL_TITLE_PX, first
        before = page.demo_state(0)
        assert before["loaded"], "the first demo's picture did not come from the kernel"
        moved = page.move_one_control(0)
        wait_or_fail(lambda: page.wait_for_change(0, before), f"moving its {moved} did not change the first demo")
        assert "⚠" not in page.demo_state(0)["html"]
        assert not page.page_errors, page.page_errors
