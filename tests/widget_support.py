"""Small helpers shared by the widget tests: run a callback quietly, move a control, read an HTML readout."""
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
