"""Lecture mode: one call makes plots and widgets readable from the back of a lecture hall."""

from __future__ import annotations

from course_utils.validation import check_positive

_STATE = {"on": False, "scale": 1.0}

# Base sizes, multiplied by the scale in lecture mode.
_BASE_FONT_PX = 14
_LECTURE_CSS = """
<style id="course-lecture-mode">
.jp-OutputArea .widget-label, .jp-OutputArea .widget-readout,
.jp-OutputArea .widget-html-content, .jp-OutputArea .widget-dropdown select,
.jp-OutputArea .widget-toggle-button, .jp-OutputArea .widget-button,
.jp-OutputArea .widget-text input, .jp-OutputArea .widget-radio-box label,
.jp-OutputArea .widget-inline-hbox .widget-label {{ font-size: {font}px !important; }}
.jp-OutputArea .widget-slider .noUi-handle {{ transform: scale({scale}); }}
.jp-OutputArea .widget-slider, .jp-OutputArea .widget-hslider {{ min-height: {row}px; }}
</style>
"""


# The same enlargement carried by each demo made in lecture mode, inside its own box and scoped to it: on Colab, where
# each output lives in a frame of its own, the stylesheet that lecture_mode() displays cannot reach a demo shown in
# another cell. ipywidgets' own class names (widget-label, widget-readout...) are the same in JupyterLab and on Colab.
_DEMO_CSS = """<style>
.course-demo.course-lecture .widget-label, .course-demo.course-lecture .widget-readout,
.course-demo.course-lecture .widget-html-content, .course-demo.course-lecture .widget-dropdown select,
.course-demo.course-lecture .widget-toggle-button, .course-demo.course-lecture .widget-button,
.course-demo.course-lecture .widget-text input, .course-demo.course-lecture .widget-radio-box label,
.course-demo.course-lecture select, .course-demo.course-lecture input {{ font-size: {font}px !important; }}
.course-demo.course-lecture .noUi-handle, .course-demo.course-lecture .ui-slider-handle {{ transform: scale({scale}); }}
.course-demo.course-lecture .widget-slider, .course-demo.course-lecture .widget-hslider {{ min-height: {row}px; }}
.jp-OutputArea .course-demo.course-lecture {{ height: calc(100vh - {chrome}px); gap: 12px; }}
.course-demo.course-lecture > .course-side {{ flex: 0 0 32%; min-width: 0; }}
.course-demo.course-lecture > .course-side .widget-hbox {{ flex-wrap: wrap; max-width: 100%; }}
.course-demo.course-lecture > .course-side > *, .course-demo.course-lecture > .course-side .widget-vbox > *
  {{ flex-shrink: 0; }}
.course-demo.course-lecture > .course-side .widget-text, .course-demo.course-lecture > .course-side .widget-dropdown,
.course-demo.course-lecture > .course-side .widget-slider, .course-demo.course-lecture > .course-side .widget-hslider
  {{ max-width: 100%; }}
.course-demo.course-lecture > .course-main {{ flex: 1 1 0; min-width: 0; }}
.jp-OutputArea .course-demo.course-lecture .course-plot {{ flex: 1 1 0 !important; height: auto !important;
  min-height: 0; }}
.jp-OutputArea .course-demo.course-lecture .course-plot .jp-OutputArea,
.jp-OutputArea .course-demo.course-lecture .course-plot .jp-OutputArea-child,
.jp-OutputArea .course-demo.course-lecture .course-plot .jp-OutputArea-output,
.jp-OutputArea .course-demo.course-lecture .course-plot .jp-RenderedImage {{ height: 100%; min-height: 0; }}
.jp-OutputArea .course-demo.course-lecture .course-plot img {{ width: 100%; height: 100%; max-width: 100%;
  object-fit: contain; object-position: left top; }}
</style>"""
# JupyterLab's own bars above and below a notebook's page (menu, tab, toolbar, status): a demo in lecture mode fills
# the rest of the window: its title and controls in a column on the left (``course-side``), its readout and picture
# on the right (``course-main``), the picture scaled to the height the readout leaves. The controls keep their height
# (no flex shrinking): a column too tall for the window runs out of it, where the projector test sees it.
_LAB_CHROME_PX = 110


def demo_css() -> str:
    """The stylesheet a demo made in lecture mode carries (empty outside lecture mode)."""
    if not _STATE["on"]:
        return ""
    scale = _STATE["scale"]
    return _DEMO_CSS.format(font=font_px(), scale=scale, row=round(28 * scale), chrome=_LAB_CHROME_PX)


def is_lecture_mode() -> bool:
    """True after ``lecture_mode()`` was switched on."""
    return _STATE["on"]


def lecture_scale() -> float:
    """How much lecture mode enlarges text and lines (1 outside it)."""
    return _STATE["scale"]


def font_px(base: float = _BASE_FONT_PX) -> int:
    """A font size in pixels for widget labels, enlarged in lecture mode."""
    return round(base * _STATE["scale"])


def lecture_mode(on: bool = True, *, scale: float = 1.6) -> None:
    """Enlarge fonts, lines and figures (``on=True``) or go back to the defaults (``on=False``).

    Affects matplotlib figures drawn afterwards and the titles, labels and readouts of course
    widgets made afterwards; a stylesheet this call displays also enlarges the standard widget
    text (slider readouts, dropdowns, buttons) of widgets already on screen.
    """
    import matplotlib as mpl

    scale = check_positive("scale", scale)
    _STATE["on"] = bool(on)
    _STATE["scale"] = scale if on else 1.0
    if not on:
        mpl.rcParams.update(mpl.rcParamsDefault)
        _apply_notebook_defaults()
        _display_css(font=_BASE_FONT_PX, scale=1.0)
        return
    mpl.rcParams.update(
        {
            # no text under 12.5 pt × the scale: at the demos' 80 dpi, 22 px at 1.6, 20 px on a projector
            "font.size": 12.5 * scale,  # ax.text() with no size; the painted demos use lecture_scale()
            "axes.titlesize": 13.5 * scale,
            "axes.labelsize": 13 * scale,
            "xtick.labelsize": 12.5 * scale,
            "ytick.labelsize": 12.5 * scale,
            "legend.fontsize": 12.5 * scale,
            "lines.linewidth": 1.5 * scale,
            "lines.markersize": 6 * scale,
            "axes.linewidth": 0.8 * scale,
            "figure.figsize": (6.4 * min(scale, 1.5), 4.0 * min(scale, 1.5)),
        }
    )
    _display_css(font=font_px(), scale=scale)


def _apply_notebook_defaults() -> None:
    """Course defaults for notebooks outside lecture mode: a readable, fixed figure size."""
    import matplotlib as mpl

    mpl.rcParams.update({"figure.figsize": (6.4, 4.0), "figure.dpi": 100, "axes.grid": True})


def _display_css(*, font: int, scale: float) -> None:
    """Show the widget stylesheet in the notebook (does nothing outside IPython)."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return
    if get_ipython() is None:
        return
    display(HTML(_LECTURE_CSS.format(font=font, scale=scale, row=round(28 * scale))))
