"""Lecture mode enlarges plots and widget labels, and switches back."""

import matplotlib as mpl
import pytest

from course_utils import CourseInputError
from course_utils.lecture import font_px, is_lecture_mode, lecture_mode


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
