"""Lecture mode: one call makes code, prose, printed output, plots and widgets readable from the back of a hall."""

from __future__ import annotations

from course_utils.validation import check_positive

_STATE = {"on": False, "scale": 1.0}

# The house rule for what a lecture projects: at most HOUSE_WIDTH characters in every code line (ruff's default line
# length) and every printed line of a cell a lecture plan shows; lecture mode sizes code and printed text so that
# HOUSE_WIDTH columns fit a 1280 px window at SMALLEST_TEXT_PX or more (tests/notebooks/test_projection.py).
HOUSE_WIDTH = 88
SMALLEST_TEXT_PX = 20  # on a 1280 × 720 projector
PROJECTOR_SIZES = ((1280, 720), (1024, 768))  # width × height of the windows the projector tests use
# A monospace column is 0.60 of the font size in DejaVu Sans Mono, Menlo and Liberation Mono (Consolas: 0.55); 0.61
# leaves a few pixels for the editor's padding.
MONO_COLUMN_EM = 0.61
# What JupyterLab takes beside a code line, at any window width (measured in JupyterLab 4.6: its two side bars, the
# notebook's padding, the cell's collapser, its prompt [n] of 64 px and the editor's padding, 182 px), plus 15 px for a
# vertical scroll bar. Lecture mode keeps all of them, the prompts too: the lecture plans name cells by their [n].
CELL_CHROME_PX = 200
_TEXT_PX_MIN = 12  # a phone-sized window: no smaller than this
_PROMPT_PX = 16  # the prompts [n]: "[74]:" fits JupyterLab's 64 px prompt column at 16 px

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
    widgets made afterwards. A stylesheet this call displays (JupyterLab) also enlarges the standard
    widget text (slider readouts, dropdowns, buttons) of widgets already on screen, and all code,
    printed output and Markdown: HOUSE_WIDTH columns of code or output fit the window's width
    (``code_font_css``), 20 px or more at 1280 px. ``on=False`` displays JupyterLab's own sizes.
    """
    import matplotlib as mpl

    scale = check_positive("scale", scale)
    _STATE["on"] = bool(on)
    _STATE["scale"] = scale if on else 1.0
    if not on:
        mpl.rcParams.update(mpl.rcParamsDefault)
        _apply_notebook_defaults()
        _display_css()
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
    _display_css()


def _apply_notebook_defaults() -> None:
    """Course defaults for notebooks outside lecture mode: a readable, fixed figure size."""
    import matplotlib as mpl

    mpl.rcParams.update({"figure.figsize": (6.4, 4.0), "figure.dpi": 100, "axes.grid": True})


def _display_css() -> None:
    """Show the widget and text stylesheets in the notebook (does nothing outside IPython)."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return
    if get_ipython() is None:
        return
    display(HTML(stylesheet()))


def stylesheet() -> str:
    """The HTML ``lecture_mode()`` displays: the widget and text stylesheets, for lecture mode on or off."""
    scale = _STATE["scale"]
    return _LECTURE_CSS.format(font=font_px(), scale=scale, row=round(28 * scale)) + text_css()


# JupyterLab's code editors (CodeMirror 6), the cells' own text outputs (stream, text/plain and HTML <pre>; not those
# inside a widget, which the widget stylesheets size), rendered Markdown and HTML outputs, and code cells' prompts.
# In lecture mode a printed line does not wrap (JupyterLab breaks it anywhere, tables too): one wider than the window
# scrolls, where the projection test sees it. Outside lecture mode the same rules carry JupyterLab's own values, so
# lecture_mode(False) undoes lecture_mode(True) (the later stylesheet in the page wins).
_TEXT_CSS = """<style id="course-lecture-text">
.jp-Notebook .jp-Cell .cm-editor, .jp-Notebook .jp-Cell .cm-content, .jp-Notebook .jp-Cell .cm-gutters,
.jp-Notebook .jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output pre {{ font-size: {code} !important; }}
.jp-Notebook .jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output pre {{ white-space: {space} !important;
  word-break: {words} !important; overflow-wrap: {wrap} !important; }}
.jp-Notebook .jp-RenderedMarkdown,
.jp-Notebook .jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output.jp-RenderedHTML
  {{ font-size: {prose} !important; }}
.jp-Notebook .jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output.jp-RenderedHTML
  {{ padding-right: {html_pad} !important; }}
.jp-Notebook .jp-CodeCell .jp-InputPrompt, .jp-Notebook .jp-OutputPrompt {{ font-size: {prompt} !important; }}
</style>"""
# JupyterLab's own values: its variables, prompts that inherit the cell's font, and the 20 px it keeps right of an
# HTML output (lecture mode gives those 20 px to the output: 88 columns of highlighted code in HTML fit too).
_TEXT_DEFAULTS = {"code": "var(--jp-code-font-size)", "prose": "var(--jp-content-font-size1)", "prompt": "inherit",
                  "space": "pre-wrap", "words": "break-all", "wrap": "break-word", "html_pad": "20px"}  # fmt: skip


def code_font_css() -> str:
    """The CSS font size of code and printed text in lecture mode: HOUSE_WIDTH columns fill the window's width less
    JupyterLab's (CELL_CHROME_PX), up to the widgets' font (22 px at the scale 1.6)."""
    columns = HOUSE_WIDTH * MONO_COLUMN_EM
    return f"clamp({_TEXT_PX_MIN}px, calc((100vw - {CELL_CHROME_PX}px) / {columns:.2f}), {font_px()}px)"


def code_font_px(window_width: float) -> float:
    """The font size, in px, that ``code_font_css()`` gives in a window ``window_width`` px wide."""
    fitted = (window_width - CELL_CHROME_PX) / round(HOUSE_WIDTH * MONO_COLUMN_EM, 2)
    return min(max(fitted, _TEXT_PX_MIN), font_px())


def text_css() -> str:
    """The stylesheet for code, printed output, Markdown and prompts: enlarged in lecture mode, JupyterLab's own
    sizes outside it."""
    if not _STATE["on"]:
        return _TEXT_CSS.format(**_TEXT_DEFAULTS)
    prose = f"calc(1.1 * {code_font_css()})"  # prose wraps: a little larger than code
    return _TEXT_CSS.format(code=code_font_css(), prose=prose, prompt=f"{_PROMPT_PX}px", space="pre",
                            words="normal", wrap="normal", html_pad="0")  # fmt: skip
