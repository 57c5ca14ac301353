"""The activation widget, driven from code: each control redraws, the numbers are the measured ones, bad values become messages."""

import numpy as np
import pytest

from widget_support import normal_and_lecture

from course_utils.widgets.activation_demo import DPI, LAYOUT, ActivationDemo
from course_utils.models.basics.feedforward import layer_gradient_norms
from course_utils.validation import CourseInputError


@pytest.fixture
def demo():
    return ActivationDemo(activation="sigmoid", depth=6, max_depth=8)


def test_first_render_happens_on_construction(demo):
    assert demo.renders == 1
    assert demo.last_error is None and demo.message.value == ""
    assert demo.last_png and "sigmoid, 6 layers" in demo.readout.value
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert "activation" in labels and "depth" in labels


@pytest.mark.parametrize("name, value", [("activation", "relu"), ("depth", 8)])
def test_each_control_redraws(demo, name, value):
    before_png, before_readout = demo.last_png, demo.readout.value
    before_line = demo.lines["sigmoid"].get_xydata().copy()
    demo.controls[name].value = value
    assert demo.renders == 2 and demo.last_error is None
    assert demo.last_png != before_png
    assert demo.readout.value != before_readout
    if name == "depth":
        assert len(demo.lines["sigmoid"].get_xydata()) == 8 != len(before_line)


def test_the_backdrop_and_the_highlight_follow_the_activation(demo):
    demo.controls["activation"].value = "gelu"
    assert np.array_equal(demo.backdrop.get_array(), demo.backdrops["gelu"])
    assert demo.lines["gelu"].get_linewidth() > demo.lines["sigmoid"].get_linewidth()
    assert len({backdrop.tobytes() for backdrop in demo.backdrops.values()}) == 4


def test_the_backdrop_lines_up_with_the_live_axes(demo):
    """The lines are drawn on transparent axes over a picture of the real ones: same box, same limits."""
    assert demo.backdrops["relu"].shape[:2] == tuple(round(s * DPI) for s in reversed(demo.figure.get_size_inches()))
    assert tuple(demo.ax.get_position().bounds) == pytest.approx(LAYOUT["normal"][2])


def test_on_a_projector_the_picture_fits_the_picture_column_at_22_px_text():
    _, large = normal_and_lecture(ActivationDemo)
    width, height = (round(s * DPI) for s in large.figure.get_size_inches())
    assert width <= 760 and height <= 500 and large.text_px() >= 22
    assert tuple(large.ax.get_position().bounds) == pytest.approx(LAYOUT["lecture"][2])


def test_the_readout_and_lines_report_the_measured_norms(demo):
    demo.controls["depth"].value = 7
    norms = demo.tables["sigmoid"][6, :7]
    assert np.allclose(norms, layer_gradient_norms("sigmoid", 7).numpy(), rtol=1e-5)  # the same nets, measured alone
    ratio = float(norms[0] / norms[-1])
    assert f"{ratio:.1e}" in demo.readout.value
    assert f"{ratio ** (1 / 6):.2f} per layer" in demo.readout.value
    assert "max g'(z) = 0.250" in demo.readout.value.replace("&#x27;", "'")
    for name, line in demo.lines.items():
        assert np.array_equal(line.get_xydata()[:, 1], demo.tables[name][6, :7])


def test_the_axes_stay_fixed_so_depths_compare(demo):
    limits = demo.ax.get_xlim(), demo.ax.get_ylim()
    for depth in (2, 8):
        demo.controls["depth"].value = depth
        assert (demo.ax.get_xlim(), demo.ax.get_ylim()) == limits
    low, high = limits[1]
    for table in demo.tables.values():
        drawn = table[np.tril_indices(len(table))]
        assert low < drawn.min() and drawn.max() < high


@pytest.mark.parametrize(
    "control, value, words", [("depth", 1, "depth"), ("depth", 9, "depth"), ("activation", "swish", "activation")]
)
def test_a_bad_value_becomes_a_message(demo, control, value, words):
    widget = demo.controls[control]
    if control == "depth":
        widget.min, widget.max = min(widget.min, value), max(widget.max, value)
    else:
        widget.options = [*widget.options, value]
    widget.value = value
    assert isinstance(demo.last_error, CourseInputError)
    assert words in demo.message.value
    widget.value = 5 if control == "depth" else "tanh"  # and it recovers
    assert demo.last_error is None and demo.message.value == ""


@pytest.mark.parametrize(
    "kwargs", [{"activation": "step"}, {"depth": 1}, {"depth": 9, "max_depth": 8}, {"max_depth": 101}]
)
def test_bad_constructor_arguments_raise_clear_errors(kwargs):
    with pytest.raises(CourseInputError):
        ActivationDemo(**{"max_depth": 8, "depth": 4, **kwargs})
