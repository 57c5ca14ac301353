"""The frame every projected demo shares: controls, an inline message line, a fixed-height plot.

A demo subclasses ``Demo`` and implements ``draw(**values) -> Figure``. For speed, build one
``matplotlib.figure.Figure`` (not pyplot, so nothing else pops up) in ``__init__`` before calling
``super().__init__``, and have ``draw`` update its artists and return it. Any error in ``draw``
is shown as a one-line message inside the widget, never as a traceback. Each redraw's time
is kept in ``latencies`` (seconds) for the benchmarks. Works with ipywidgets 8 and with Colab's 7.7
(tests/test_ipywidgets7.py).
"""

from __future__ import annotations

import html
import io
import time

import ipywidgets as widgets

from course_utils.lecture import font_px

ERROR_STYLE = "color:#b00020;font-weight:600"


def label(text: str, *, size: float = 16, bold: bool = False) -> widgets.HTML:
    """A text label whose size grows in lecture mode (slider fonts cannot be styled directly)."""
    weight = "font-weight:600;" if bold else ""
    return widgets.HTML(f"<span style='font-size:{font_px(size)}px;{weight}'>{html.escape(text)}</span>")


def labelled(text: str, control: widgets.Widget) -> widgets.HBox:
    """``control`` with a large label on its left."""
    control.description = ""
    return widgets.HBox([label(text), control], layout=widgets.Layout(align_items="center"))


def text_box(value: str, description: str, placeholder: str, *, width: str = "32em") -> widgets.Text:
    """A one-line text box that reports its value on Enter (not at each keystroke); ``placeholder`` says what to type."""
    return widgets.Text(value=value, description=description, continuous_update=False, placeholder=placeholder,
                        layout=widgets.Layout(width=width))  # fmt: skip


PNG_DPI = 80  # demos that paste bitmaps render them at this resolution, so they fit pixel for pixel


def figure_png(figure, dpi: int = PNG_DPI) -> bytes:
    """Encode a matplotlib figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})  # fast, slightly larger
    return buffer.getvalue()


class Demo:
    """Base class of the course's projected demos; display it to show it."""

    plot_height = "520px"

    def __init__(self, controls: dict[str, widgets.ValueWidget], *, title: str = ""):
        self.controls = controls
        self.title = widgets.HTML(f"<b style='font-size:{font_px(18)}px'>{html.escape(title)}</b>")
        self.message = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.readout = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.plot = widgets.Output(layout=widgets.Layout(height=self.plot_height, overflow="hidden"))
        self.last_figure = None
        self.last_png: bytes | None = None
        self.last_error: Exception | None = None
        self.renders = 0
        self.latencies: list[float] = []
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.box = widgets.VBox(
            [self.title, self._control_rows(), self.readout, self.message, self.plot],
            layout=widgets.Layout(width="100%"),
        )
        self.box.add_class("course-demo")
        self.refresh()

    def _control_rows(self) -> widgets.Widget:
        rows = [
            labelled(getattr(control, "description", "") or name, control) for name, control in self.controls.items()
        ]
        return widgets.VBox(rows)

    def draw(self, **values):
        """Draw the figure for these control values and return it (subclasses implement)."""
        raise NotImplementedError

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _on_change(self, _change) -> None:
        self.refresh()

    def show_readout(self, text: str) -> None:
        """A line of numbers under the controls (loss, gradient, ...)."""
        self.readout.value = f"<span style='font-size:{font_px(16)}px'>{html.escape(text)}</span>"

    def show_error(self, error: Exception) -> None:
        self.last_error = error
        self.message.value = f"<span style='font-size:{font_px(16)}px;{ERROR_STYLE}'>⚠ {html.escape(str(error))}</span>"

    def refresh(self) -> None:
        """Redraw for the current values; an error becomes an inline message.

        The time kept in ``latencies`` covers computing, drawing and PNG encoding: all the
        work the kernel does before the browser gets the new picture.
        """
        from IPython.display import Image, display

        started = time.perf_counter()
        try:
            figure = self.draw(**self.values())
            picture = figure_png(figure)
        except Exception as error:  # noqa: BLE001 - a projected widget must never show a traceback
            self.show_error(error)
        else:
            self.last_error = None
            self.message.value = ""
            self.last_figure = figure
            self.last_png = picture
            with self.plot:
                self.plot.clear_output(wait=True)
                display(Image(data=picture, format="png"))
        self.renders += 1
        self.latencies.append(time.perf_counter() - started)

    if hasattr(widgets.Widget, "_repr_mimebundle_"):  # ipywidgets 8

        def _repr_mimebundle_(self, **kwargs):
            return self.box._repr_mimebundle_(**kwargs)

    else:  # ipywidgets 7 (Colab's) displays a widget through _ipython_display_

        def _ipython_display_(self, **kwargs):
            self.box._ipython_display_(**kwargs)
