"""Small helpers shared by the widget tests: run a callback quietly, move a control, read an HTML readout, check an
inline error."""

from __future__ import annotations

import contextlib
import html
import io


def quiet(action, *args, **kwargs):
    """Run ``action``; outside a kernel, display() prints a repr."""
    with contextlib.redirect_stdout(io.StringIO()):
        return action(*args, **kwargs)


def set_value(demo, name, value):
    """Move the demo's control ``name`` to ``value`` (its callback runs, quietly)."""
    quiet(setattr, demo.controls[name], "value", value)


def text_of(widget) -> str:
    """The text of an HTML widget, entities decoded."""
    return html.unescape(widget.value)


def labels_of(demo) -> str:
    """The text of every label in the demo's control rows."""
    found = []

    def walk(widget):
        if hasattr(widget, "children"):
            for child in widget.children:
                walk(child)
        elif hasattr(widget, "value") and isinstance(widget.value, str) and "<span" in widget.value:
            found.append(html.unescape(widget.value))

    walk(demo.control_rows)
    return " ".join(found)


def normal_and_lecture(make):
    """``(make(), make() in lecture mode)``: the same demo built twice, lecture mode switched off again after."""
    from course_utils.lecture import lecture_mode

    normal = quiet(make)
    quiet(lecture_mode)
    try:
        large = quiet(make)
    finally:
        quiet(lecture_mode, False)
    return normal, large


def _shown(demo, moved: str) -> tuple:
    """What a bad value must leave alone: the last picture, the readout, and every other control (value, range)."""
    readout = getattr(demo, "readout", None)
    controls = tuple((name, control.value, getattr(control, "max", None))
                     for name, control in demo.controls.items() if name != moved)  # fmt: skip
    return demo.last_png, readout.value if readout is not None else None, controls


def assert_inline_error(demo, name: str, value, *fragments: str) -> None:
    """Setting control ``name`` to ``value`` shows an inline "⚠" message holding every one of ``fragments``, no
    traceback, and leaves the picture, the readout and the other controls as they were."""
    from course_utils.validation import CourseInputError

    before = _shown(demo, name)
    set_value(demo, name, value)
    assert isinstance(demo.last_error, CourseInputError), demo.last_error
    message = text_of(demo.message)
    assert "⚠" in message and "Traceback" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert _shown(demo, name) == before
