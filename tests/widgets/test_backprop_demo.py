"""The forward/backward stepping widget, driven from code: every step redraws, bad input shows inline."""

import statistics

import pytest

from course_utils.widgets.backprop_demo import BackpropDemo, Walkthrough, lecture_graph, parse_number
from course_utils.validation import CourseInputError


@pytest.fixture
def demo():
    return BackpropDemo()


def box_texts(demo):
    """Each node's value and gradient as shown: {"e": "5|∇ -2", ...}."""
    picture = demo.picture
    return {n.label: f"{v.get_text()}|{g.get_text()}" for n, v, g in zip(picture.nodes, picture.values, picture.grads)}


def test_starts_with_the_inputs_only(demo):
    assert demo.renders == 1 and demo.last_error is None and demo.last_png
    assert "a = 3" in demo.readout.value and "b = 1" in demo.readout.value and "c = -2" in demo.readout.value
    texts = box_texts(demo)
    assert texts["a"] == "3|∇ ?"
    assert texts["L"] == "?|∇ ?"


def test_every_step_redraws_and_explains(demo):
    step = demo.controls["step"]
    assert step.max == 9  # 3 forward steps (d, e, L) + 6 backward steps, after step 0
    readouts, pictures = [demo.readout.value], [demo.last_png]
    for k in range(1, step.max + 1):
        step.value = k
        assert demo.renders == k + 1 and demo.last_error is None
        readouts.append(demo.readout.value)
        pictures.append(demo.last_png)
    assert len(set(readouts)) == len(readouts) and len(set(pictures)) == len(pictures)
    assert "Forward: e = a + d = 5" in readouts[2] and "∂e/∂a = 1" in readouts[2]
    assert "Forward: L = c * e = -10" in readouts[3]
    assert any("∂L/∂b = ∂L/∂d·∂d/∂b = (-2)·(2) = -4" in r for r in readouts)
    texts = box_texts(demo)  # after the last step every gradient is known
    assert [texts[k] for k in "abc"] == ["3|∇ -2", "1|∇ -4", "-2|∇ 5"]


def test_forward_fills_values_before_any_gradient(demo):
    demo.controls["step"].value = 2
    texts = box_texts(demo)
    assert texts["d"] == "2|∇ ?" and texts["e"] == "5|∇ ?" and texts["L"] == "?|∇ ?"
    assert all(t.endswith("∇ ?") for t in texts.values())


def test_editing_an_input_changes_the_numbers(demo):
    demo.controls["step"].value = 9
    before = demo.last_png
    demo.controls["c"].value = "4"
    assert demo.last_error is None and demo.last_png != before
    texts = box_texts(demo)
    assert texts["L"] == "20|∇ 1" and texts["a"] == "3|∇ 4" and texts["b"] == "1|∇ 8"


@pytest.mark.parametrize("text", ["abc", "", "3,5", "nan", "inf"])
def test_a_bad_text_field_shows_a_message_not_an_exception(demo, text):
    renders = demo.renders
    demo.controls["a"].value = text
    assert isinstance(demo.last_error, CourseInputError)
    assert "a must be" in demo.message.value and demo.renders == renders + 1
    demo.controls["a"].value = "1.5"
    assert demo.last_error is None and demo.message.value == ""
    assert "a = 1.5" in demo.readout.value


def test_numbers_that_overflow_show_a_message(demo):
    demo.controls["b"].value = "1e308"
    demo.controls["step"].value = 3
    assert isinstance(demo.last_error, CourseInputError) and "finite" in demo.message.value


def test_a_step_out_of_range_is_refused(demo):
    demo.controls["step"].value = 99
    assert demo.controls["step"].value == 9  # the slider clamps
    with pytest.raises(CourseInputError):
        demo.draw(a="3", b="1", c="-2", step=10)
    with pytest.raises(CourseInputError):
        Walkthrough(lecture_graph(3, 1, -2)).state(-1)


def test_walkthrough_ends_with_the_engine_gradients():
    walk = Walkthrough(lecture_graph(3, 1, -2))
    values, grads, current, phase = walk.state(walk.steps - 1)
    assert phase == "backward" and None not in values and None not in grads
    assert dict(zip((n.label for n in walk.nodes), grads)) == {"a": -2, "b": -4, "c": 5, "d": -2, "e": -2, "L": 1}


def test_parse_number():
    assert parse_number("a", " -2.5 ") == -2.5
    with pytest.raises(CourseInputError, match="b must be a number"):
        parse_number("b", "two")


def test_latency_is_recorded_for_every_render(demo):
    for k in range(1, 10):
        demo.controls["step"].value = k
    assert len(demo.latencies) == demo.renders == 10
    assert statistics.median(demo.latencies) < 1.0  # generous: CI machines are shared


def test_bad_starting_values_raise_a_clear_error():
    with pytest.raises(CourseInputError):
        BackpropDemo(a="three")
