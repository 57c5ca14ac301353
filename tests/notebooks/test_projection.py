"""The projector (issue 42): in lecture mode, every cell a lecture plan shows is readable and fits the window.

Each notebook is opened as stored (a copy: the outputs a lecture shows, nothing executed), one after another in one
JupyterLab page in headless Chromium with scroll bars, as a desktop browser shows them, with lecture mode's stylesheet
on the page: the HTML that ``lecture_mode()`` displays (``course_utils.lecture.stylesheet``). Then, at 1280×720 and at
1024×768, for every cell the notebook's ``### Lecture plan`` (docs/teaching.md, ``tests/plan_support.py``) names by
its prompt [n]:

- its code (CodeMirror) and each of its outputs (stream, text/plain, HTML, Markdown, pictures; widget views are the
  projector test's, ``test_projector.py``) must not scroll sideways: scrollWidth ≤ clientWidth;
- at 1280×720 its code and output text is 20 px or more (``course_utils.lecture.SMALLEST_TEXT_PX``);
- its prompt [n] shows whole, with the stored execution count.

Lecture mode sizes code and printed text so that ``HOUSE_WIDTH`` (88) monospace columns fit; a printed line does not
wrap in lecture mode, so a line too long for the window scrolls and fails here. A made-up notebook checks the test and
the real path: in a kernel, ``lecture_mode()`` switches it on; lines of exactly 88 columns fit at both sizes, lines of
96 are caught, and ``lecture_mode(False)`` gives JupyterLab's own sizes back. Measures go to
``tests/artifacts/projection/``.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import nbformat
import pytest

from browser_support import (
    NOTEBOOK_DIR,
    WIDGET_VIEW,
    LabNotebook,
    LabServer,
    launched_chromium,
    notebook_params,
    served_lab,
    stage_notebooks,
)
from course_utils.lecture import HOUSE_WIDTH, PROJECTOR_SIZES, SMALLEST_TEXT_PX, lecture_mode, stylesheet
from plan_support import shown_prompts

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "projection"
SIZES = tuple({"width": width, "height": height} for width, height in PROJECTOR_SIZES)
PROBE = "course_projection_probe"
OFF = "course_projection_off"  # the made-up notebook's last cell: lecture_mode(False)
LECTURE_CELL = "from course_utils.lecture import lecture_mode\n\nlecture_mode()"
MADE_UP = "house_width.ipynb"
TOO_WIDE = HOUSE_WIDTH + 8

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Each named cell, scrolled into view (CodeMirror draws only the lines near the window): its prompt, its code's font
# and sideways scroll and how many monospace columns fit beside it, and the same for each of its outputs that is not a
# widget view. One call per notebook and window size.
MEASURE_JS = """async ([prompts, probe, widget]) => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const px = (element) => parseFloat(getComputedStyle(element).fontSize);
  const column = (element) => {
    const span = document.createElement('span');
    span.style.font = getComputedStyle(element).font;
    span.style.whiteSpace = 'pre';
    span.style.position = 'absolute';
    span.textContent = '0'.repeat(100);
    document.body.appendChild(span);
    const width = span.getBoundingClientRect().width / 100;
    span.remove();
    return width;
  };
  const scroll = (element) => [element.scrollWidth, element.clientWidth];
  const panel = window.__courseMeasured || window.jupyterapp.shell.currentWidget;
  const code = panel.content.widgets.filter((cell) => cell.model.type === 'code' && !cell.model.getMetadata(probe));
  const cells = [];
  for (const n of prompts) {
    const cell = code[n - 1];
    if (!cell) { cells.push({prompt: n, missing: true}); continue; }
    cell.node.scrollIntoView({block: 'start'});
    await frame();
    const prompt = cell.node.querySelector('.jp-InputPrompt');
    const scroller = cell.node.querySelector('.cm-scroller');
    const content = cell.node.querySelector('.cm-content');
    const line = cell.node.querySelector('.cm-line');
    const room = scroller.getBoundingClientRect().right - (scroller.offsetWidth - scroller.clientWidth)
      - line.getBoundingClientRect().left - parseFloat(getComputedStyle(line).paddingLeft)
      - parseFloat(getComputedStyle(line).paddingRight);
    const stored = cell.model.outputs.toJSON();
    const outputs = Array.from(cell.node.querySelectorAll(
      '.jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output')).map((output, index) => {
      if ((stored[index] && stored[index].data && stored[index].data[widget]) || output.querySelector('.jupyter-widgets')) {
        return {widget: true};
      }
      const pres = Array.from(output.querySelectorAll('pre'));
      const texty = pres.length > 0 || output.innerText.trim().length > 0;
      return {widget: false, text: texty, scroll: scroll(output), pres: pres.map(scroll),
              font: !texty ? null : pres.length ? Math.min(...pres.map(px)) : px(output),
              columns: pres.length ? Math.min(...pres.map((pre) => pre.clientWidth / column(pre))) : null};
    });
    cells.push({prompt: n, count: cell.model.executionCount, prompt_text: prompt.innerText.trim(),
                prompt_scroll: scroll(prompt), code_font: px(content), code_scroll: scroll(scroller),
                code_columns: room / column(content), outputs});
  }
  const outer = document.querySelector('.jp-WindowedPanel-outer') || panel.content.node;
  return {width: innerWidth, height: innerHeight, page_scroll: scroll(outer), cells};
}"""

# Run the first cell that carries the metadata key.
_RUN_PROBE_JS = """async (key) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = panel.content.widgets.findIndex((cell) => cell.model.getMetadata(key));
  await window.jupyterapp.commands.execute('notebook:run-cell');
}"""

_STYLED_JS = "() => !!document.getElementById('course-lecture-text')"
_SWITCHED_OFF_JS = "() => document.querySelectorAll('#course-lecture-text').length >= 2"  # on, then off

_START_JS = """async () => { await window.jupyterapp.restored; window.jupyterapp.shell.collapseLeft(); }"""

# Open a notebook in the page (its kernel starts; nothing runs), wait until its cells are on the page, and keep it
# as the one to measure.
_OPEN_JS = """async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.revealed;
  app.shell.activateById(panel.id);
  window.__courseMeasured = panel;
  return panel.content.widgets.length;
}"""

_CLOSE_JS = """async () => {
  const panel = window.__courseMeasured;
  window.__courseMeasured = null;
  await panel.sessionContext.shutdown();
  panel.dispose();
}"""


def probe_cell(source: str) -> nbformat.NotebookNode:
    """A code cell the measures do not count as one of the notebook's (its prompts [n] stay the plan's)."""
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata[PROBE] = True
    return cell


def stream_cell(count: int, width: int) -> nbformat.NotebookNode:
    """A stored code cell whose line is ``width`` characters and whose printed line is ``width`` characters."""
    code = f"x = 1  # {'c' * (width - 9)}"
    cell = nbformat.v4.new_code_cell(code, execution_count=count)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="|" + "o" * (width - 2) + "|\n")]
    return cell


def made_up_notebook(path: Path) -> None:
    """Cell [1]: a line and a printed line of HOUSE_WIDTH columns; [2]: TOO_WIDE; then the probe that ends lecture
    mode; a page of short cells after them, so that the notebook scrolls as a lecture's does."""
    cells = [probe_cell(LECTURE_CELL), stream_cell(1, HOUSE_WIDTH), stream_cell(2, TOO_WIDE)]
    cells += [nbformat.v4.new_code_cell("y = 2\n" * 6, execution_count=n) for n in range(3, 12)]
    off = probe_cell("lecture_mode(False)")
    off.metadata[OFF] = True
    notebook = nbformat.v4.new_notebook(cells=cells + [off])
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(notebook, path)


def stored_copies(root: Path) -> None:
    """The stored notebooks, and the made-up notebook in ``probe/``."""
    stage_notebooks(NOTEBOOK_DIR, root)
    (root / "probe").mkdir()
    made_up_notebook(root / "probe" / MADE_UP)


def lecture_stylesheet() -> str:
    """The HTML that ``lecture_mode()`` displays in a notebook."""
    lecture_mode(True)
    try:
        return stylesheet()
    finally:
        lecture_mode(False)


@pytest.fixture(scope="module")
def browser():
    """Chromium with scroll bars: the width beside a code line is a desktop browser's."""
    yield from launched_chromium(scrollbars=True)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    yield from served_lab(tmp_path_factory, "projection", stored_copies)


@pytest.fixture(scope="module")
def lab_page(browser, lab):
    """One JupyterLab page, at 1280×720, with lecture mode's stylesheet, in which each notebook opens in turn."""
    context = browser.new_context(viewport=SIZES[0])
    page = context.new_page()
    page.goto(f"{lab.url}/lab?reset", wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=120_000)
    page.evaluate(_START_JS)
    page.evaluate("(html) => document.body.insertAdjacentHTML('beforeend', html)", lecture_stylesheet())
    yield page
    context.close()


def switch_on(notebook: LabNotebook) -> None:
    """Run the probe cell that switches lecture mode on; wait for its stylesheet and the page to lay itself out."""
    notebook.page.evaluate(_RUN_PROBE_JS, PROBE)
    notebook.page.wait_for_function(_STYLED_JS, timeout=60_000, polling=200)
    notebook.page.wait_for_timeout(500)


def settled(page, prompts: list[int], *, tries: int = 10) -> dict:
    """The measures once two, 200 ms apart, agree (the page lays itself out again after a resize)."""
    measure = page.evaluate(MEASURE_JS, [prompts, PROBE, WIDGET_VIEW])
    for _ in range(tries):
        page.wait_for_timeout(200)
        again = page.evaluate(MEASURE_JS, [prompts, PROBE, WIDGET_VIEW])
        if again == measure:
            return measure
        measure = again
    return measure


def problems_at(measure: dict, *, check_font: bool) -> list[str]:
    """What does not fit (or is too small, when ``check_font``) in one window size's measures."""
    size = f"{measure['width']}×{measure['height']}"
    found = []
    if measure["page_scroll"][0] > measure["page_scroll"][1]:
        found.append(f"{size}: the notebook scrolls sideways {measure['page_scroll']}")
    for cell in measure["cells"]:
        where = f"[{cell['prompt']}] at {size}"
        if cell.get("missing"):
            found.append(f"[{cell['prompt']}]: the plan names it, the notebook has no such code cell")
            continue
        if cell["count"] != cell["prompt"] or f"[{cell['prompt']}]" not in cell["prompt_text"]:
            found.append(f"{where}: its prompt shows {cell['prompt_text']!r} (stored count {cell['count']})")
        if cell["prompt_scroll"][0] > cell["prompt_scroll"][1]:
            found.append(f"{where}: its prompt is cut {cell['prompt_scroll']}")
        if cell["code_scroll"][0] > cell["code_scroll"][1]:
            found.append(f"{where}: its code scrolls sideways ({cell['code_scroll'][0]} px in "
                         f"{cell['code_scroll'][1]} px, {cell['code_columns']:.1f} columns fit)")  # fmt: skip
        if check_font and cell["code_font"] < SMALLEST_TEXT_PX:
            found.append(f"{where}: its code is {cell['code_font']:.1f} px")
        for index, output in enumerate(cell["outputs"]):
            if output["widget"] or not output["text"] and output["scroll"][0] <= output["scroll"][1]:
                continue
            wide = [pre for pre in output["pres"] if pre[0] > pre[1]]
            if output["scroll"][0] > output["scroll"][1] or wide:
                columns = "" if output["columns"] is None else f", {output['columns']:.1f} columns fit"
                found.append(f"{where}: output {index} scrolls sideways "
                             f"({max([output['scroll'], *wide])[0]} px in {output['scroll'][1]} px{columns})")  # fmt: skip
            if check_font and output["text"] and output["font"] < SMALLEST_TEXT_PX:
                found.append(f"{where}: output {index}'s text is {output['font']:.1f} px")
    return found


def measured(browser, lab: LabServer, relative: str, prompts: list[int]) -> tuple[list[dict], LabNotebook]:
    """The notebook's measures at each size after its first cell switched lecture mode on in its kernel; the page
    stays open (the caller closes its context)."""
    context = browser.new_context(viewport=SIZES[0])
    notebook = LabNotebook(context.new_page(), lab, relative)
    switch_on(notebook)
    measures = []
    for size in SIZES:
        notebook.page.set_viewport_size(size)
        measures.append(settled(notebook.page, prompts))
    return measures, notebook


def close(notebook: LabNotebook) -> None:
    with contextlib.suppress(Exception):
        notebook.shutdown_kernel()
    notebook.page.context.close()


def check_projection(page, path: Path) -> None:
    prompts = shown_prompts(path.stem)
    assert prompts, f"{path.stem}: docs/teaching.md has no lecture plan naming its cells"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(SIZES[0])
    page.evaluate(_OPEN_JS, f"notebooks/{path.name}")
    try:
        measures = []
        for size in SIZES:
            page.set_viewport_size(size)
            measures.append(settled(page, prompts))
        (ARTIFACTS / f"{path.stem}.json").write_text(json.dumps(measures, indent=1), encoding="utf-8")
        problems = [p for i, m in enumerate(measures) for p in problems_at(m, check_font=i == 0)]
        assert not problems, f"{path.stem}: shown cells that do not fit lecture mode:\n" + "\n".join(problems)
    except BaseException:
        with contextlib.suppress(Exception):
            page.screenshot(path=ARTIFACTS / f"{path.stem}-failure.png")
        raise
    finally:
        with contextlib.suppress(Exception):
            page.evaluate(_CLOSE_JS)


# One class per notebook, as tests/browser_support.one_class_per_notebook makes them: pytest-xdist's --dist loadscope
# then spreads the notebooks over the workers, each starting the module's JupyterLab and page once.
for _param in notebook_params():

    @pytest.mark.parametrize("path", [_param])
    def _test(self, lab_page, path):
        check_projection(lab_page, path)

    _name = f"TestProjected_{_param.id[:2]}"
    globals()[_name] = type(_name, (), {"test_every_shown_cell_fits_at_1280x720_and_1024x768": _test,
                                        "__doc__": f"{_param.id}'s shown cells in lecture mode on a projector."})  # fmt: skip


def summary(measure: dict, prompt: int) -> dict:
    """One cell's font and the columns that fit beside its code and in its output (for BENCHMARKS.md)."""
    cell = next(cell for cell in measure["cells"] if cell["prompt"] == prompt)
    return {"size": f"{measure['width']}×{measure['height']}", "font_px": round(cell["code_font"], 2),
            "output_font_px": round(cell["outputs"][0]["font"], 2),
            "code_columns": round(cell["code_columns"], 1), "output_columns": round(cell["outputs"][0]["columns"], 1)}  # fmt: skip


def test_house_width_fits_and_a_wider_line_is_caught(browser, lab):
    """The test's own check: 88 columns of code and of output fit at both sizes; 96 scroll and are reported; after
    lecture_mode(False) the text is JupyterLab's 13 px again and a long printed line wraps as JupyterLab wraps it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    measures, notebook = measured(browser, lab, f"probe/{MADE_UP}", [1, 2])
    try:
        for index, measure in enumerate(measures):
            fits = {**measure, "cells": measure["cells"][:1]}
            assert problems_at(fits, check_font=index == 0) == [], measure["cells"][0]
            caught = "\n".join(problems_at({**measure, "cells": measure["cells"][1:]}, check_font=index == 0))
            assert "[2]" in caught and "its code scrolls sideways" in caught and "output 0 scrolls" in caught, caught
            assert measure["cells"][0]["code_columns"] >= HOUSE_WIDTH
        assert measures[0]["cells"][0]["code_font"] >= SMALLEST_TEXT_PX
        notebook.page.evaluate(_RUN_PROBE_JS, OFF)
        notebook.page.wait_for_function(_SWITCHED_OFF_JS, timeout=60_000, polling=200)
        normal = settled(notebook.page, [1, 2])
        record = [summary(measure, 1) for measure in measures] + [{**summary(normal, 1), "lecture_mode": False}]
        (ARTIFACTS / "house-width.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
        wrapped = normal["cells"][1]
        assert normal["cells"][0]["code_font"] == 13 and wrapped["outputs"][0]["font"] == 13, normal["cells"][0]
        assert wrapped["outputs"][0]["scroll"][0] <= wrapped["outputs"][0]["scroll"][1], wrapped
    finally:
        close(notebook)


def test_the_page_gets_what_lecture_mode_displays():
    assert 'id="course-lecture-text"' in lecture_stylesheet() and "100vw" in lecture_stylesheet()
    assert "100vw" not in stylesheet()  # lecture mode is off again
