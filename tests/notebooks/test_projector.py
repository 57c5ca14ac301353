"""The projector (issue 34): every course demo, in lecture mode, fits a hall's screen at 1280×720 and at 1024×768.

For each notebook (a copy, in a temporary folder) JupyterLab in headless Chromium runs, in fast mode, the cells its
widgets need (``course_utils.cell_slices.frontend_cells``) with lecture mode switched on after the set-up, in
JupyterLab's simple interface. Then, at each window size, each demo is scrolled to the top of the page, and its title,
controls, readout and picture must all be in the window together: nothing below its bottom edge or right of its right
edge. In lecture mode a demo fills the window less JupyterLab's bars, and its picture is scaled to what the controls
leave (``course_utils.lecture``'s demo stylesheet). Screenshots and each picture's displayed scale (shown ÷ drawn
pixels) go to ``tests/artifacts/projector/``.

At 1280×720 the smallest text on each picture must also be shown at 20 px or more: the demo reports its smallest text
in the picture's own pixels (``Demo.text_px``, as the class ``course-text-<px>``), and the test multiplies it by the
scale the picture is shown at.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import nbformat
import pytest

from browser_support import (
    NOTEBOOK_DIR,
    one_class_per_notebook,
    LabNotebook,
    LabServer,
    run_all_or_fail,
    served_lab,
    stage_notebooks,
    wait_or_fail,
)
from course_utils.lecture import PROJECTOR_SIZES, SMALLEST_TEXT_PX

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "projector"
SIZES = tuple({"width": width, "height": height} for width, height in PROJECTOR_SIZES)
LECTURE_CELL = "from course_utils.lecture import lecture_mode\n\nlecture_mode()"
RUN_TIMEOUT_S = 240

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# One demo scrolled to the top of the notebook's page: the rectangles of its picture and of every element it shows
# outside the picture (a control that overflows its column counts, not only the column), and the smallest text size
# the demo reports (its class course-text-<px>, in the picture's own pixels).
MEASURE_JS = """(index) => {
  const demo = document.querySelectorAll('.course-demo')[index];
  demo.scrollIntoView({block: 'start'});
  const box = (element) => element.getBoundingClientRect();
  const plot = demo.querySelector('.course-plot');
  const img = plot.querySelector('img');
  const parts = Array.from(demo.querySelectorAll('*')).filter(
    (element) => !plot.contains(element) && box(element).height > 1 && box(element).width > 1);
  const all = [box(img), ...parts.map(box)];
  const text = Array.from(demo.classList).find((name) => name.startsWith('course-text-'));
  return {width: innerWidth, height: innerHeight, top: Math.min(...all.map((b) => b.top)),
          bottom: Math.max(...all.map((b) => b.bottom)), right: Math.max(...all.map((b) => b.right)),
          shown: [box(img).width, box(img).height], drawn: [img.naturalWidth, img.naturalHeight],
          text_px: text ? Number(text.slice('course-text-'.length)) : null};
}"""


def with_lecture_mode(path: Path) -> None:
    """Switch lecture mode on right after the notebook's set-up cell, so every demo is made in it."""
    notebook = nbformat.read(path, as_version=4)
    first = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(first + 1, nbformat.v4.new_code_cell(LECTURE_CELL))
    nbformat.write(notebook, path)


# A slice can end with a demo (03's does), which JupyterLab then cannot scroll to the top of the window; in the full
# notebook a section of text follows every demo.
PAGE_AFTER = nbformat.v4.new_markdown_cell("The rest of the notebook.\n\n" + "<br>" * 40)


def lecture_copies(root: Path) -> None:
    """The notebooks' frontend slices, each with lecture mode switched on after its set-up and a page of text after
    its last cell."""
    for path in stage_notebooks(NOTEBOOK_DIR, root, frontend_only=True).glob("*.ipynb"):
        with_lecture_mode(path)
        notebook = nbformat.read(path, as_version=4)
        notebook.cells.append(PAGE_AFTER)
        nbformat.write(notebook, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    yield from served_lab(tmp_path_factory, "projector", lecture_copies)


def settled_measure(page, index: int, *, tries: int = 20) -> dict:
    """The demo's measure once the page has laid itself out after a resize: two measures 100 ms apart agree."""
    measure = page.evaluate(MEASURE_JS, index)
    for _ in range(tries):
        page.wait_for_timeout(100)
        again = page.evaluate(MEASURE_JS, index)
        if again == measure:
            return measure
        measure = again
    return measure


def displayed_scale(measure: dict) -> float:
    """How much of its drawn size the picture is shown at (object-fit: contain keeps its proportions)."""
    (shown_w, shown_h), (drawn_w, drawn_h) = measure["shown"], measure["drawn"]
    return min(shown_w / drawn_w, shown_h / drawn_h)


def check_projector(browser, lab: LabServer, path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=SIZES[0])
    notebook = LabNotebook(context.new_page(), lab, f"notebooks/{path.name}")
    try:
        notebook.page.evaluate(
            "() => window.jupyterapp.commands.execute('application:set-mode', {mode: 'single-document'})"
        )
        run_all_or_fail(notebook, RUN_TIMEOUT_S)
        wait_or_fail(lambda: notebook.wait_for_demos(None, 90), "no course demo rendered")
        problems, scales = [], {}
        for size in SIZES:
            notebook.page.set_viewport_size(size)
            for index in range(notebook.demos.count()):
                measure = settled_measure(notebook.page, index)
                where = f"demo {index} at {size['width']}×{size['height']}"
                notebook.page.screenshot(
                    path=ARTIFACTS / f"{path.stem}-demo{index}-{size['width']}x{size['height']}.png"
                )
                scale = displayed_scale(measure)
                shown_text = scale * (measure["text_px"] or 0)
                scales[where] = {
                    "scale": round(scale, 3),
                    "text_px": measure["text_px"],
                    "shown_text_px": round(shown_text, 1),
                }
                if size is SIZES[0] and shown_text < SMALLEST_TEXT_PX:
                    problems.append(f"{where}: its smallest text, {measure['text_px']} px drawn, is shown at "
                                    f"{shown_text:.1f} px (scale {scale:.2f}); {SMALLEST_TEXT_PX} px is the least")  # fmt: skip
                if measure["bottom"] > measure["height"] + 1 or measure["right"] > measure["width"] + 1:
                    problems.append(f"{where}: it reaches {measure['right']:.0f} × {measure['bottom']:.0f} px")
                if measure["top"] < 0 or min(measure["shown"]) < 1:
                    problems.append(f"{where}: its top is at {measure['top']:.0f} px, its picture {measure['shown']}")
        (ARTIFACTS / f"{path.stem}-scales.json").write_text(json.dumps(scales, indent=1), encoding="utf-8")
        assert not problems, f"{path.stem} does not fit the projector:\n" + "\n".join(problems)
        assert not notebook.page_errors, notebook.page_errors
    except BaseException:
        with contextlib.suppress(Exception):
            notebook.page.screenshot(path=ARTIFACTS / f"{path.stem}-failure.png")
        raise
    finally:
        with contextlib.suppress(Exception):
            notebook.shutdown_kernel()
        context.close()


one_class_per_notebook(
    globals(),
    "TestOnTheProjector",
    "test_every_demo_fits_1280x720_and_1024x768",
    check_projector,
    "{}'s demos in lecture mode on a projector.",
)


def test_lecture_mode_is_switched_on_right_after_the_set_up(tmp_path: Path):
    path = tmp_path / "n.ipynb"
    cells = [
        nbformat.v4.new_markdown_cell("# t"),
        nbformat.v4.new_code_cell("setup()"),
        nbformat.v4.new_code_cell("demo"),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    with_lecture_mode(path)
    assert [cell.source for cell in nbformat.read(path, as_version=4).cells] == ["# t", "setup()", LECTURE_CELL, "demo"]
