"""Lecture mode enlarges plots and widget labels, and switches back."""

import re

import matplotlib as mpl
import pytest

from course_utils import CourseInputError
from course_utils.lecture import (
    CELL_CHROME_PX,
    HOUSE_WIDTH,
    MONO_COLUMN_EM,
    SMALLEST_TEXT_PX,
    code_font_css,
    code_font_px,
    font_px,
    is_lecture_mode,
    lecture_mode,
    stylesheet,
    text_css,
)


@pytest.fixture(autouse=True)
def back_to_normal():
    yield
    lecture_mode(False)


def test_lecture_mode_scales_fonts_and_lines():
    lecture_mode(False)
    normal_font, normal_line, normal_label = mpl.rcParams["font.size"], mpl.rcParams["lines.linewidth"], font_px(16)
    lecture_mode(True, scale=2.0)
    assert is_lecture_mode()
    assert mpl.rcParams["font.size"] >= 1.9 * normal_font
    assert mpl.rcParams["lines.linewidth"] >= 1.9 * normal_line
    assert font_px(16) == 2 * normal_label
    lecture_mode(False)
    assert not is_lecture_mode() and mpl.rcParams["font.size"] == normal_font and font_px(16) == normal_label


def test_bad_scale():
    with pytest.raises(CourseInputError, match="scale"):
        lecture_mode(True, scale=0)


def test_house_width_fits_a_1280_px_window_at_20_px_and_a_1024_px_one():
    """The fitted code font: HOUSE_WIDTH columns of MONO_COLUMN_EM each fill the window less JupyterLab's width."""
    lecture_mode(True)
    at_1280, at_1024 = code_font_px(1280), code_font_px(1024)
    assert at_1280 >= SMALLEST_TEXT_PX > at_1024 >= 12
    for width, font in ((1280, at_1280), (1024, at_1024)):
        assert HOUSE_WIDTH * MONO_COLUMN_EM * font <= width - CELL_CHROME_PX + 0.01
    assert code_font_px(4000) == font_px()  # a wide window: no larger than the widgets' text


def test_text_stylesheet_enlarges_code_output_and_markdown_and_switches_back():
    lecture_mode(True)
    on = text_css()
    columns = f"{HOUSE_WIDTH * MONO_COLUMN_EM:.2f}"
    assert code_font_css() == f"clamp(12px, calc((100vw - {CELL_CHROME_PX}px) / {columns}), {font_px()}px)"
    for part in (".cm-content", ".jp-OutputArea-output pre", ".jp-RenderedMarkdown", ".jp-InputPrompt"):
        assert part in on
    assert on.count(code_font_css()) == 2 and "white-space: pre !important" in on
    lecture_mode(False)
    off = text_css()
    assert "100vw" not in off and "var(--jp-code-font-size)" in off and "white-space: pre-wrap !important" in off
    selectors = re.compile(r"([^{}]*)\{")
    assert selectors.findall(off) == selectors.findall(on)  # the same rules, JupyterLab's own values


def test_lecture_mode_displays_both_stylesheets_in_ipython():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    try:
        with capture_output() as shown:
            lecture_mode(True)
            lecture_mode(False)
    finally:
        InteractiveShell.clear_instance()  # other tests run outside IPython
    html = [output.data["text/html"] for output in shown.outputs]
    assert len(html) == 2 and all('id="course-lecture-text"' in text for text in html)
    assert "100vw" in html[0] and "100vw" not in html[1] and html[1] == stylesheet()
    assert 'id="course-lecture-mode"' in html[0] and f"font-size: {font_px()}px" in html[1]
