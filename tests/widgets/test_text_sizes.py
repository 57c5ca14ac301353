"""Each demo tells the truth about its smallest text (issue 34): ``Demo.text_px`` is what the projector test
multiplies by the scale a picture is shown at.

Every demo is built in lecture mode and drawn, with every text Pillow paints and every text matplotlib draws recorded
(the backdrops drawn once included); the smallest must be what the demo reports.
"""

from __future__ import annotations

import math

import pytest
from matplotlib.text import Text
from PIL import ImageDraw

import demo_driving
from course_utils.widgets.widget_kit import smallest_figure_text_px
from widget_support import quiet

CLASSES, _ = demo_driving.benchmarks().demo_classes()


@pytest.fixture
def painted_sizes(monkeypatch):
    """The size in pixels of every text Pillow paints or matplotlib draws while the test runs (backdrops too)."""
    sizes: list[float] = []
    original = ImageDraw.ImageDraw.text

    def recorded(self, xy, text, fill=None, font=None, *args, **kwargs):
        if str(text).strip():
            sizes.append(font.size)
        return original(self, xy, text, fill, font, *args, **kwargs)

    def drawn(self, renderer):
        if self.get_visible() and self.get_text().strip():
            sizes.append(self.get_fontsize() * renderer.points_to_pixels(1.0))
        return matplotlib_draw(self, renderer)

    matplotlib_draw = Text.draw
    monkeypatch.setattr(ImageDraw.ImageDraw, "text", recorded)
    monkeypatch.setattr(Text, "draw", drawn)
    return sizes


@pytest.fixture
def lecture():
    from course_utils.lecture import lecture_mode

    quiet(lecture_mode)
    yield
    quiet(lecture_mode, False)


@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_each_demo_reports_its_smallest_text(cls, lecture, painted_sizes):
    demo = quiet(cls)
    assert demo.last_error is None, demo.last_error
    measured = min(painted_sizes, default=math.inf)
    assert math.isfinite(measured), f"{cls.__name__} drew no text"
    assert demo.text_px() == pytest.approx(measured, abs=0.5), (demo.text_px(), measured)
    assert f"course-text-{math.floor(demo.text_px())}" in demo.box._dom_classes


def test_the_smallest_text_of_a_figure_skips_hidden_and_empty_texts():
    from matplotlib.figure import Figure

    figure = Figure()
    figure.text(0.1, 0.1, "shown", fontsize=18)
    figure.text(0.2, 0.2, "hidden", fontsize=6).set_visible(False)
    figure.text(0.3, 0.3, "  ", fontsize=4)
    assert smallest_figure_text_px(figure, dpi=72) == 18
    assert smallest_figure_text_px(None) == math.inf
