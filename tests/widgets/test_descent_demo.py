"""The gradient-descent widget, driven from code: redraws, convergence, crawling, divergence, bad values."""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from course_utils.widgets.backdrop import FrozenBackdrop
from course_utils.widgets.descent_demo import (
    DescentDemo,
    clip_path,
    demo_problem,
    draw_adam_edge,
    draw_steps_against_lr,
)
from course_utils.models.basics.regression import make_regression_data
from course_utils.validation import CourseInputError
from course_utils.widgets.widget_kit import figure_png


@pytest.fixture
def demo():
    return DescentDemo()


def set_values(demo, **values):
    for name, value in values.items():
        demo.controls[name].value = value


def test_first_render_happens_on_construction(demo):
    assert demo.renders == 1
    assert demo.last_error is None and demo.message.value == ""
    assert demo.last_png and demo.readout.value
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert all(name in labels for name in ("learning rate", "steps", "optimizer"))


@pytest.mark.parametrize("name, value", [("lr", 0.2), ("steps", 20), ("optimizer", "adam")])
def test_each_control_redraws(demo, name, value):
    before_png, before_readout, before_path = demo.last_png, demo.readout.value, demo.path_line.get_xydata().copy()
    demo.controls[name].value = value
    assert demo.renders == 2 and demo.last_error is None
    assert demo.last_png != before_png
    assert demo.readout.value != before_readout or name == "steps"
    assert not np.array_equal(demo.path_line.get_xydata(), before_path)


def test_convergence_is_reported(demo):
    set_values(demo, lr=0.8 * demo.lr_max, steps=200)
    assert "converged" in demo.readout.value and "diverged" not in demo.readout.value
    assert np.abs(demo.path_line.get_xydata()[-1] - demo.beta_star).max() < 1e-3
    assert demo.note.get_text() == ""


def test_a_tiny_learning_rate_crawls(demo):
    set_values(demo, lr=1e-3, steps=100)
    assert "still on its way" in demo.readout.value
    assert demo.last_error is None


def test_divergence_is_shown_inline_not_raised(demo):
    set_values(demo, lr=1.5 * demo.lr_max, steps=40)
    assert demo.last_error is None
    assert "diverged" in demo.readout.value and "diverged" in demo.note.get_text()


def test_overflow_is_clipped_and_reported(demo):
    set_values(demo, lr=3.0, steps=300)  # about 8 × the limit: the numbers overflow to inf
    assert demo.last_error is None and demo.last_png
    assert "overflowed" in demo.readout.value
    drawn = demo.path_line.get_xydata()
    assert np.isfinite(drawn).all()
    assert np.abs(drawn - demo.center).max() <= 3.0 * demo.half_width + 1e-9
    assert np.isfinite(demo.loss_line.get_xydata()).all()


def test_a_bad_value_becomes_a_message(demo):
    demo.controls["steps"].min = -5
    demo.controls["steps"].value = -5
    assert isinstance(demo.last_error, CourseInputError)
    assert "steps" in demo.message.value
    demo.controls["steps"].value = 10  # and it recovers
    assert demo.last_error is None and demo.message.value == ""


def test_momentum_and_adam_draw_different_paths(demo):
    paths = {}
    for optimizer in ("gd", "momentum", "adam"):
        set_values(demo, optimizer=optimizer)
        paths[optimizer] = demo.path_line.get_xydata().copy()
    assert not np.allclose(paths["gd"], paths["momentum"])
    assert not np.allclose(paths["gd"], paths["adam"])


def test_the_demo_needs_a_two_parameter_problem():
    wide = make_regression_data(beta=(1.0, 2.0, 3.0))
    with pytest.raises(CourseInputError, match="2 columns"):
        DescentDemo(wide, beta0=[0.0, 0.0, 0.0])
    data, _ = demo_problem()
    with pytest.raises(CourseInputError, match="beta0"):
        DescentDemo(data, beta0=None)


def test_clip_path_keeps_a_path_inside_and_cuts_one_that_leaves():
    inside = np.array([[0.0, 0.0], [0.5, 0.5]])
    np.testing.assert_array_equal(clip_path(inside, center=[0, 0], half_width=1.0), inside)
    leaving = np.array([[0.0, 0.0], [2.0, 0.0], [1e200, -1e200], [np.inf, 0.0]])
    clipped = clip_path(leaving, center=[0, 0], half_width=1.0)
    np.testing.assert_array_equal(clipped, [[0.0, 0.0], [2.0, 0.0], [3.0, -3.0]])


def test_the_frozen_backdrop_reproduces_its_source_pixel_for_pixel():
    source = Figure(figsize=(3, 2))
    source.subplots().plot([0, 1], [1, 0])
    canvas = FigureCanvasAgg(source)
    canvas.draw()
    expected = np.asarray(canvas.buffer_rgba()).copy()
    overlay = Figure(figsize=(3, 2), dpi=source.dpi)
    overlay.patch.set_visible(False)
    overlay.add_artist(FrozenBackdrop(source))
    overlay_canvas = FigureCanvasAgg(overlay)
    overlay_canvas.draw()
    np.testing.assert_array_equal(np.asarray(overlay_canvas.buffer_rgba()), expected)


@pytest.mark.parametrize("lecture", [False, True])
def test_the_moving_lines_sit_exactly_on_the_backdrop(lecture):
    """A data point maps to the same place in the overlay and in the frozen backdrop, in lecture mode too."""
    from course_utils.lecture import lecture_mode

    lecture_mode(lecture)
    try:
        demo = DescentDemo()
    finally:
        lecture_mode(False)
    figure_png(demo.figure)  # renders the backdrop at the PNG's resolution
    for overlay, under in zip((demo.ax_surface, demo.ax_loss), demo.backdrop_axes):
        np.testing.assert_allclose(overlay.get_position().bounds, under.get_position().bounds, atol=1e-9)
        assert overlay.get_ylim() == under.get_ylim()
    points = np.array([demo.beta_star, demo.beta0, demo.center])  # (3, 2)
    to_fraction = lambda ax: (ax.transData + ax.figure.transFigure.inverted()).transform(points)  # noqa: E731
    np.testing.assert_allclose(to_fraction(demo.ax_surface), to_fraction(demo.backdrop_axes[0]), atol=1e-9)


def test_redraws_are_recorded_for_the_benchmarks(demo):
    for lr in (0.01, 0.05, 0.2):
        demo.controls["lr"].value = lr
    assert len(demo.latencies) == demo.renders == 4
    assert all(latency > 0 for latency in demo.latencies)


def test_draw_steps_against_lr_marks_the_edge_and_theorys_best():
    ax = Figure().subplots()
    draw_steps_against_lr(ax, np.array([0.5, 0.9, 1.05]), np.array([40.0, 12.0, np.nan]), 0.8, 1e-6)
    assert [line.get_xdata()[0] for line in ax.lines[1:]] == [1.0, 0.8]
    assert ax.get_yscale() == "log" and "1e-06" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()][1] == "2/(λ_min + λ_max): best in theory"


def test_draw_adam_edge_draws_the_edge_and_one_line_per_crossing():
    ax = Figure().subplots()
    draw_adam_edge(ax, np.geomspace(1, 1e-9, 50), np.linspace(10, 50, 50), 38.0, [20, 40], lr=0.3)
    assert len(ax.lines) == 3 and [line.get_xdata()[0] for line in ax.lines[1:]] == [20, 40]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[-1] == "Adam's edge 2(1+β₁)/(1−β₁) = 38" and "α = 0.3" in ax.get_title()
