"""The demo frame: redraws on change, shows errors inline, keeps its latencies."""

import ipywidgets as widgets
from matplotlib.figure import Figure

from course_utils.lecture import lecture_mode
from course_utils.widgets.widget_kit import Demo, unknown_words_message


class SlopeDemo(Demo):
    def __init__(self):
        self.figure = Figure(figsize=(3, 2))
        (self.line,) = self.figure.add_subplot().plot([0, 1], [0, 1])
        super().__init__({"slope": widgets.FloatSlider(value=1.0, min=-2, max=2, description="slope")}, title="A line")

    def draw(self, slope):
        if slope < 0:
            raise ValueError("a negative slope is not allowed here")
        self.line.set_ydata([0, slope])
        self.show_readout(f"slope = {slope:.2f}")
        return self.figure


def test_changing_a_control_redraws():
    demo = SlopeDemo()
    first = demo.last_png
    demo.controls["slope"].value = 0.25
    assert demo.renders == 2 and demo.last_png != first and demo.last_png.startswith(b"\x89PNG")
    assert "0.25" in demo.readout.value and demo.message.value == ""
    assert len(demo.latencies) == 2 and all(t > 0 for t in demo.latencies)


def test_an_error_is_shown_inline_and_cleared_by_a_good_value():
    demo = SlopeDemo()
    good_png = demo.last_png
    demo.controls["slope"].value = -1.0  # must not raise
    assert isinstance(demo.last_error, ValueError)
    assert "negative slope" in demo.message.value and "Traceback" not in demo.message.value
    assert demo.last_png == good_png  # the last good picture stays
    demo.controls["slope"].value = 0.5
    assert demo.last_error is None and demo.message.value == ""


def test_error_text_is_escaped():
    demo = SlopeDemo()
    demo.show_error(ValueError("<script>x</script>"))
    assert "<script>" not in demo.message.value


def test_labels_follow_lecture_mode():
    lecture_mode(True, scale=2.0)
    try:
        big = SlopeDemo().title.value
    finally:
        lecture_mode(False)
    assert "font-size:32px" in big and "font-size:18px" in SlopeDemo().title.value  # 16 × 2: a projector's title


def test_in_lecture_mode_the_controls_go_left_and_the_picture_right():
    lecture_mode(True)
    try:
        demo = SlopeDemo()
    finally:
        lecture_mode(False)
    left, right = demo.box.children
    assert "course-lecture" in demo.box._dom_classes and "course-side" in left._dom_classes
    assert left.children == (demo.title, demo.control_rows) and right.children[-1] is demo.plot
    normal = SlopeDemo()
    assert normal.box.children[1] is normal.control_rows and normal.box.children[-1] is normal.plot  # one column


def test_the_box_is_marked_for_the_browser_test():
    assert "course-demo" in SlopeDemo().box._dom_classes


def test_unknown_words_message_names_the_words_and_the_closest(vocab):
    assert unknown_words_message(vocab, ["the", "cat"]) is None
    message = unknown_words_message(vocab, ["teh", "cat", "zzzzqx"])
    assert "'teh'" in message and "the" in message and "'zzzzqx'" in message and "'cat'" not in message


def test_a_demo_made_in_lecture_mode_carries_its_own_scoped_style():
    """On Colab each output lives in its own frame, out of reach of the stylesheet lecture_mode() displays."""
    lecture_mode(True, scale=2.0)
    try:
        demo = SlopeDemo()
    finally:
        lecture_mode(False)
    style = demo.title.value.split("</b>", 1)[1]  # the title carries it: no extra child to shift the box's rows
    assert "course-lecture" in demo.box._dom_classes and "font-size: 28px" in style
    rules = [rule for rule in style.replace("</style>", "").split("}") if "{" in rule]
    assert rules and all(
        ".course-demo.course-lecture" in selector for rule in rules for selector in rule.split("{")[0].split(",")
    )
    assert "course-plot" in demo.plot._dom_classes
    plain = SlopeDemo()
    assert "course-lecture" not in plain.box._dom_classes and "<style>" not in plain.title.value
