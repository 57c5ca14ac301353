"""The painting kit the demos share: Pillow fonts and colours, a bitmap layer (``PaintedDemo``), the bar panels.

Matplotlib 3.11 lays out and renders every glyph in Python (about 0.2 ms a glyph), too slow for a
picture of hundreds of words redrawn at each click. So the demos paint with Pillow and hand the
figure one bitmap: a ``PaintedDemo`` holds a figure whose only artist is a ``PixelLayer``.

The bar panels (``Panel``, ``Painter``) set a model's next-word distribution beside the oracle's:
a box per distribution, its most likely words as labelled bars, coloured by the oracle's verdict.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch
from matplotlib import font_manager
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from PIL import Image, ImageDraw, ImageFont

from course_utils.language.text_pipeline import Vocab
from course_utils.lecture import lecture_scale
from course_utils.models import lm
from course_utils.widgets import palette
from course_utils.widgets.widget_kit import PNG_DPI, Demo

# ---------------------------------------------------------------- fonts, colours, bitmaps


def text_scale() -> float:
    """1 normally, larger in lecture mode (1.6 by default)."""
    return lecture_scale()


def rgb(name: str) -> tuple[int, int, int]:
    """A matplotlib colour (a name such as "tab:blue", or "#1a7f37") as Pillow's (r, g, b) in 0..255."""
    return tuple(round(255 * c) for c in to_rgb(name))


@lru_cache(maxsize=64)
def pillow_font(size_px: int, weight: str = "normal") -> ImageFont.FreeTypeFont:
    """Matplotlib's own font (DejaVu Sans), for Pillow, at ``size_px`` pixels (loaded once per size and weight)."""
    path = font_manager.findfont(font_manager.FontProperties(weight=weight))
    return ImageFont.truetype(path, size_px, layout_engine=ImageFont.Layout.BASIC)


def fit_text(font: ImageFont.FreeTypeFont, text: str, width: float) -> str:
    """``text``, cut with "…" so that it is at most ``width`` pixels wide in ``font``."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "…") > width:
        text = text[:-1]
    return text + "…"


@lru_cache(maxsize=64)
def wrapped(font: ImageFont.FreeTypeFont, text: str, width: float) -> str:
    """``text`` with its lines broken between words so that each is at most ``width`` pixels wide in ``font``."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            longer = f"{line} {word}" if line else word
            if line and font.getlength(longer) > width:
                lines.append(line)
                longer = word
            line = longer
        lines.append(line)
    return "\n".join(lines)


def upright_words(words: tuple[str, ...], cell: int, size_px: int, height: int) -> Image.Image:
    """Column labels: ``words`` written upwards, one per ``cell`` pixels, each starting at the bottom edge."""
    strip = Image.new("RGBA", (height, len(words) * cell), "white")
    pen = ImageDraw.Draw(strip)
    for i, word in enumerate(words):
        pen.text((2, i * cell + cell // 2), word, fill="black", font=pillow_font(size_px), anchor="lm")
    return strip.rotate(90, expand=True)  # (height, len(words) * cell)


def paste_colour_bar(picture: Image.Image, lut: np.ndarray, x: int, top: int, height: int, px: int,
                     font: ImageFont.FreeTypeFont) -> None:  # fmt: skip
    """A vertical colour ramp ``lut`` (256, 4) from weight 1 (top) to 0, ``px`` wide, numbered at both ends."""
    height = max(height, 3 * px)
    ramp = lut[np.linspace(255, 0, height).astype(np.intp)][:, None, :]  # (height, 1, 4)
    picture.paste(Image.fromarray(np.repeat(ramp, px, axis=1), "RGBA"), (x, top))
    pen = ImageDraw.Draw(picture)
    for value, y in ((1, top), (0, top + height)):
        pen.text((x + round(1.3 * px), y), str(value), fill="black", font=font, anchor="lm")


class PixelLayer(Artist):
    """A figure-sized RGBA picture (H, W, 4) pasted pixel for pixel; render the figure at its own dpi."""

    def __init__(self, pixels: np.ndarray):
        super().__init__()
        self.set_pixels(pixels)

    def set_pixels(self, pixels: np.ndarray) -> None:
        self._rgba = np.ascontiguousarray(pixels[::-1])  # bottom row first, as the renderer wants it
        self.stale = True

    def draw(self, renderer) -> None:
        gc = renderer.new_gc()
        renderer.draw_image(gc, 0, 0, self._rgba)
        gc.restore()


class PaintedDemo(Demo):
    """A ``Demo`` that shows one painted picture, and whose callbacks may adjust other controls without a redraw."""

    _quiet = False

    def make_canvas(self, width: int, height: int) -> None:
        """``figure`` holding only ``layer``, a picture of width × height pixels, at PNG_DPI so it is pasted 1:1."""
        self.figure = Figure(figsize=(width / PNG_DPI, height / PNG_DPI), dpi=PNG_DPI)
        FigureCanvasAgg(self.figure)
        self.layer = PixelLayer(np.full((height, width, 4), 255, dtype=np.uint8))
        self.figure.add_artist(self.layer)
        self.plot_height = f"{height + 12}px"

    def text_px(self) -> float:
        """The smallest text on the picture: the painter's own (``painted_text_px``) or a matplotlib text's."""
        return min(super().text_px(), self.painted_text_px())

    def painted_text_px(self) -> float:
        """The smallest text the painter paints, in pixels (a demo whose painter paints smaller text than its
        ``px`` says so here; ``tests/widgets/test_text_sizes.py`` measures every text the painter draws)."""
        return getattr(self, "painter", self).px

    @contextmanager
    def quietly(self):
        """Control changes made inside this block (a slider's range, a dropdown's options) do not redraw."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _on_change(self, change) -> None:
        if not self._quiet:
            super()._on_change(change)


# ---------------------------------------------------------------- bar panels: a distribution beside the oracle's

MAX_K = 10  # the most bars a panel shows
COLORS = {"oracle": palette.ORACLE, "possible": palette.MODEL, "impossible": palette.IMPOSSIBLE}
KEY = (
    ("oracle", "the oracle's distribution"),
    ("possible", "a model's guess"),
    ("impossible", "a word the oracle says cannot come next"),
)  # (colour, meaning)
SHORT_KEY = (("oracle", "the oracle"), ("possible", "a model's guess"), ("impossible", "cannot come next"))  # one line


@dataclass(frozen=True)
class Panel:
    """What one panel shows: a title, and the ``MAX_K`` most likely words with their colour keys, or a note."""

    title: str
    top: list[tuple[str, float]] = field(default_factory=list)  # (word, probability), most likely first
    kinds: list[str] = field(default_factory=list)  # a key of COLORS for each word
    note: str = ""


def top_panel(title: str, probs: np.ndarray, vocab: Vocab, kind) -> Panel:
    """The ``MAX_K`` most likely words of ``probs`` (V,) with p > 0; ``kind(word)`` is each bar's colour key."""
    top = [(word, p) for word, p in lm.top_k(torch.from_numpy(probs), vocab, MAX_K) if p > 0]
    return Panel(title, top, [kind(word) for word, _ in top])


def probability_text(p: float) -> str:
    """A bar's number: 0.123, or 3e-05 for one too small to show in three decimals."""
    return f"{p:.3f}" if p >= 5e-4 else f"{p:.0e}"


class Painter:
    """Paints the panels: a grid of boxes, each a title and up to ``max_bars`` labelled bars.

    By default a panel has room for ``MAX_K`` bars ``10 × px`` long at most, the panels are in one row (up to three)
    or two, and the colour key ``KEY`` is along the bottom. A demo can ask for a smaller picture (in lecture mode, to
    fit a projector): fewer bars (``max_bars``), shorter bars (``bar_em``, in text heights), the panels in
    ``columns`` columns and as many rows as they need, and a shorter key (``key``: (colour, text) entries).
    """

    key = KEY  # the colour key's (colour, text) entries along the bottom

    def __init__(self, panels: int, words: list[str], *, max_bars: int = MAX_K, bar_em: float = 10,
                 columns: int | None = None, key: tuple[tuple[str, str], ...] | None = None):  # fmt: skip
        if key is not None:
            self.key = key
        self.max_bars = max_bars
        self.px = round(14 * text_scale())  # text size in pixels
        self.font, self.bold = pillow_font(self.px), pillow_font(self.px, "bold")
        self.hex = {**COLORS, "note": palette.ALERT}  # a key of COLORS (or "note") -> its colour
        self.colors = {kind: rgb(color) for kind, color in self.hex.items()}
        if columns is None:
            self.rows = 1 if panels <= 3 else 2
            self.cols = math.ceil(panels / self.rows)
        else:
            self.cols, self.rows = columns, math.ceil(panels / columns)
        self.row_px = round(1.45 * self.px)  # one bar and its gap
        self.label_px = round(max(self.font.getlength(w) for w in words)) + self.px // 2  # the words' column
        self.value_px = round(3.6 * self.px)  # room for "0.123" after the longest bar
        self.panel = (self.label_px + round(bar_em * self.px) + self.value_px, 2 * self.px + max_bars * self.row_px)
        width = self.cols * self.panel[0] + self.px
        self.key_lines = self._key_lines(width)
        self.size = (width, self.rows * self.panel[1] + round((0.7 + 1.5 * len(self.key_lines)) * self.px))
        self.static = self._key()

    def origin(self, index: int) -> tuple[int, int]:
        """Top-left pixel of panel ``index`` (row by row)."""
        row, col = divmod(index, self.cols)
        return col * self.panel[0] + self.px // 2, row * self.panel[1] + self.px // 2

    def _key_entry_px(self, text: str) -> int:
        return round(1.4 * self.px + self.font.getlength(text) + 2 * self.px)

    def _key_lines(self, width: int) -> list[list[tuple[str, str]]]:
        """The colour key's entries, wrapped onto as many lines as the picture's width needs."""
        lines: list[list[tuple[str, str]]] = [[]]
        used = self.px // 2
        for entry in self.key:
            size = self._key_entry_px(entry[1])
            if lines[-1] and used + size > width:
                lines.append([])
                used = self.px // 2
            lines[-1].append(entry)
            used += size
        return lines

    def _key(self) -> Image.Image:
        """A white picture with the colour key along the bottom: the part that never changes."""
        picture = Image.new("RGBA", self.size, "white")
        draw = ImageDraw.Draw(picture)
        for row, entries in enumerate(self.key_lines):
            x = self.px // 2
            y = self.size[1] - self.px - round(1.5 * self.px) * (len(self.key_lines) - 1 - row)
            for name, text in entries:
                draw.rectangle((x, y - self.px // 3, x + self.px, y + self.px // 3), fill=self.colors[name])
                draw.text((x + round(1.4 * self.px), y), text, fill="black", font=self.font, anchor="lm")
                x += self._key_entry_px(text)
        return picture

    def legend(self) -> dict[str, str]:
        """What the colour key names: {its text: its colour}."""
        return {text: self.hex[name] for name, text in self.key}

    def new_picture(self) -> tuple[Image.Image, ImageDraw.ImageDraw]:
        """A copy of the static picture, and a pen to paint the panels on it."""
        picture = self.static.copy()
        return picture, ImageDraw.Draw(picture)

    def paint(self, draw: ImageDraw.ImageDraw, index: int, panel: Panel, k: int) -> None:
        """Panel ``index``: its title, then its note or its first ``k`` bars, the longest scaled to the panel."""
        left, top_px = self.origin(index)
        draw.text((left, top_px), panel.title, fill="black", font=self.bold, anchor="lt")
        if panel.note:
            middle = (left + self.panel[0] // 2, top_px + self.panel[1] // 2)
            draw.multiline_text(
                middle, panel.note, fill=self.colors["note"], font=self.font, anchor="mm", align="center"
            )
            return
        area_top, bar_left = top_px + round(1.6 * self.px), left + self.label_px
        full = self.panel[0] - self.label_px - self.value_px - self.px  # pixels for the largest probability
        widest = max(panel.top[0][1], 1e-12)
        draw.rectangle((bar_left, area_top, bar_left, area_top + self.max_bars * self.row_px), fill="black")
        for i, ((word, p), kind) in enumerate(zip(panel.top[:k], panel.kinds)):
            middle = area_top + i * self.row_px + self.row_px // 2
            end = bar_left + round(full * p / widest)
            half = self.row_px * 3 // 8  # half a bar's thickness
            draw.rectangle((bar_left, middle - half, end, middle + half), fill=self.colors[kind])
            draw.text((bar_left - self.px // 3, middle), word, fill="black", font=self.font, anchor="rm")
            draw.text((end + self.px // 3, middle), probability_text(p), fill="black", font=self.font, anchor="lm")
