"""The frame every projected demo shares (controls, a message line, a fixed-height plot) and the checks of its input.

A demo subclasses ``Demo`` and implements ``draw(**values) -> Figure``. For speed, build one
``matplotlib.figure.Figure`` (not pyplot, so nothing else pops up) in ``__init__`` before calling
``super().__init__``, and have ``draw`` update its artists and return it. Any error in ``draw``
is shown as a one-line message inside the widget, never as a traceback. Each redraw's time
is kept in ``latencies`` (seconds) for the benchmarks. Works with ipywidgets 8 and with Colab's 7.7
(tests/widgets/test_ipywidgets7.py).
"""

from __future__ import annotations

import difflib
import html
import io
import math
import time

import ipywidgets as widgets
import torch
from matplotlib.text import Text

from course_utils.language.text_pipeline import SPECIALS, Vocab
from course_utils.lecture import demo_css, font_px, is_lecture_mode
from course_utils.validation import CourseInputError
from course_utils.widgets.backdrop import FrozenBackdrop
from course_utils.widgets import palette

ERROR_STYLE = f"color:{palette.ALERT};font-weight:600"


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


def smallest_figure_text_px(figure, dpi: int = PNG_DPI) -> float:
    """The smallest visible text of a matplotlib figure, in pixels of its PNG at ``dpi`` (inf if it has none)."""
    if figure is None:
        return math.inf
    sizes = [text.get_fontsize() * dpi / 72 for text in figure.findobj(Text)
             if text.get_visible() and text.get_text().strip() and text.get_alpha() != 0]  # fmt: skip
    frozen = [smallest_figure_text_px(backdrop.source, dpi) for backdrop in figure.findobj(FrozenBackdrop)]
    return min(sizes + frozen, default=math.inf)


def figure_png(figure, dpi: int = PNG_DPI) -> bytes:
    """Encode a matplotlib figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})  # fast, slightly larger
    return buffer.getvalue()


class Demo:
    """Base class of the course's projected demos; display it to show it."""

    plot_height = "520px"
    static_text_px = math.inf  # the smallest text of a picture pasted as pixels (a matplotlib backdrop), if any

    def __init__(self, controls: dict[str, widgets.ValueWidget], *, title: str = ""):
        self.controls = controls
        # In lecture mode the title carries the demo's own stylesheet (Colab shows each output in a frame of its own).
        title_px = font_px(16 if is_lecture_mode() else 18)  # 26 px on a projector: the picture needs the room
        self.title = widgets.HTML(f"<b style='font-size:{title_px}px'>{html.escape(title)}</b>{demo_css()}")
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
        self.plot.add_class("course-plot")
        self.control_rows = self._control_rows()
        self.box = self._frame([self.title, self.control_rows], self._picture_parts())
        self.box.add_class("course-demo")
        self.refresh()

    def _picture_parts(self) -> list[widgets.Widget]:
        """What goes beside the controls in lecture mode (under them otherwise): the readout, the message, the plot."""
        return [self.readout, self.message, self.plot]

    @staticmethod
    def _frame(side: list[widgets.Widget], main: list[widgets.Widget]) -> widgets.Box:
        """One column normally; in lecture mode the title and controls in a column on the left, the rest on the
        right, so the picture has the window's whole height (a projector's 720 px) less the readout."""
        if not is_lecture_mode():
            return widgets.VBox([*side, *main], layout=widgets.Layout(width="100%"))
        left, right = widgets.VBox(side), widgets.VBox(main)
        left.add_class("course-side")
        right.add_class("course-main")
        box = widgets.HBox([left, right], layout=widgets.Layout(width="100%"))
        box.add_class("course-lecture")
        return box

    def text_px(self) -> float:
        """The smallest text on the last picture, in the picture's own pixels: its matplotlib texts at ``PNG_DPI``
        (a painted demo adds what it paints). ``tests/notebooks/test_projector.py`` multiplies it by the scale the
        picture is shown at, which must leave 20 px on a 1280 × 720 projector."""
        return min(smallest_figure_text_px(self.last_figure), self.static_text_px)

    def _report_text_px(self) -> None:
        """In lecture mode the box carries the smallest text size as a class, ``course-text-<px>``, for the browser."""
        if not is_lecture_mode():
            return
        for name in [c for c in self.box._dom_classes if c.startswith("course-text-")]:
            self.box.remove_class(name)
        smallest = self.text_px()
        if math.isfinite(smallest):
            self.box.add_class(f"course-text-{math.floor(smallest)}")

    def _control_rows(self) -> widgets.Widget:
        rows = [
            labelled(getattr(control, "description", "") or name, control) for name, control in self.controls.items()
        ]
        return widgets.VBox(rows)

    def draw(self, **values):
        """Draw the figure for these control values and return it (subclasses implement)."""
        raise NotImplementedError

    def legends(self) -> list[dict[str, str]]:
        """Each colour key the picture shows, as {what it names: its colour} (``palette``'s colours); a test checks
        that a colour-blind student can tell every key's colours apart."""
        return []

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _on_change(self, _change) -> None:
        self.refresh()

    def show_readout(self, text: str) -> None:
        """A line of numbers under the controls (loss, gradient, ...)."""
        size = font_px(14 if is_lecture_mode() else 16)  # 22 px on a projector, as the picture's text
        self.readout.value = f"<span style='font-size:{size}px'>{html.escape(text)}</span>"

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
            if hasattr(self, "box"):
                self._report_text_px()
        self.renders += 1
        self.latencies.append(time.perf_counter() - started)

    if hasattr(widgets.Widget, "_repr_mimebundle_"):  # ipywidgets 8

        def _repr_mimebundle_(self, **kwargs):
            return self.box._repr_mimebundle_(**kwargs)

    else:  # ipywidgets 7 (Colab's) displays a widget through _ipython_display_

        def _ipython_display_(self, **kwargs):
            self.box._ipython_display_(**kwargs)


class ExamplesWithAccount:
    """For a demo with an ``examples`` dropdown above its controls and the oracle's account of bad input.

    Typing by hand deselects the example. When the oracle rejects the input, the models are still drawn and
    the oracle's account (set in ``_account`` while drawing) becomes the inline message.
    """

    def _control_rows(self) -> widgets.Widget:
        rows = super()._control_rows()
        rows.children = (labelled("examples", self.examples), *rows.children)
        return rows

    def _on_typed(self, change) -> None:
        if change["new"] != self.examples.value:
            self.examples.value = None  # typed by hand: no example is selected

    def refresh(self) -> None:
        """Redraw; if the oracle rejected the input, its account is the message."""
        self._account = None
        super().refresh()
        if self._account is not None:
            self.show_error(CourseInputError(self._account))


def set_range(slider: widgets.IntSlider, value: int, maximum: int) -> None:
    """Give ``slider`` the maximum ``maximum`` and ``value`` (≤ maximum), in the order its traits allow."""
    if maximum >= slider.max:
        slider.max, slider.value = maximum, value
    else:
        slider.value, slider.max = value, maximum


# ---------------------------------------------------------------- what a demo is given


def models_and_vocab(models: dict | None, vocab: Vocab | None) -> tuple[dict, Vocab]:
    """The given models and vocabulary, or the shipped recurrent LMs (RNN, GRU, LSTM) and ``course_vocab()``."""
    if vocab is None:
        from course_utils.language.vocab import course_vocab

        vocab = course_vocab()
    if models is None:
        from course_utils.zoo.lm_checkpoints import default_demo_models

        models = default_demo_models()
    return models, vocab


def check_models(models, vocab: Vocab, *, limit: int) -> None:
    """``models`` must be a dict of 1 to ``limit`` language models name -> nn.Module over ``vocab``."""
    if not isinstance(vocab, Vocab):
        raise CourseInputError(f"vocab must be a course_utils.language.text_pipeline.Vocab, got {type(vocab).__name__}")
    if not isinstance(models, dict) or not models or len(models) > limit:
        raise CourseInputError(f"models must be a dict of 1 to {limit} entries name -> model, got {models!r:.80}")
    for name, model in models.items():
        if not isinstance(model, torch.nn.Module):
            kind = type(model).__name__
            raise CourseInputError(f"models[{name!r}] must be a language model (a torch.nn.Module), got {kind}")
        size = getattr(model, "vocab_size", len(vocab))
        if size != len(vocab):
            raise CourseInputError(f"models[{name!r}] predicts {size} token types; the vocabulary has {len(vocab)}")


def unknown_words_message(vocab: Vocab, words, knower: str = "the models know") -> str | None:
    """None if every word is in ``vocab``; otherwise which are not ("not a word {knower}: …"), with the closest
    words that are."""
    missing = [w for w in dict.fromkeys(words) if w not in vocab.stoi]
    if not missing:
        return None
    known = [w for w in vocab.itos if w not in SPECIALS]
    hints = []
    for word in missing[:3]:
        close = difflib.get_close_matches(word, known, n=4)
        hints.append(f"'{word}'" + (f" (closest: {', '.join(close)})" if close else ""))
    return f"not a word {knower}: {'; '.join(hints)}"
