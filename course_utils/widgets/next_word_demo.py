"""Widget: type the start of a sentence; see each model's next-word distribution beside the oracle's.

The oracle (``CourseLanguage.next_distribution``) is the truth, so every bar can be judged: a red
bar is a word the oracle says cannot come next. The readout compares each model with the oracle:
the probability it gives the oracle's most likely word, the total variation distance
TV = ½ Σ |p − q| (the share of probability in the wrong places), KL(oracle ‖ model) in nats (the
extra cost per word of coding the truth with the model) and the mass on impossible words.

Speed: distributions are computed once per context and kept, so moving k only redraws. The
panels are painted with Pillow, not with matplotlib artists: matplotlib 3.11 lays out and
renders every glyph in Python (about 0.2 ms a glyph), and six panels of words and numbers hold
some 700 glyphs. The picture reaches the figure as one bitmap (``PixelLayer``).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from functools import lru_cache

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib import font_manager
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from PIL import Image, ImageDraw, ImageFont

from course_utils.models import lm
from course_utils.language.grammar import CourseLanguage
from course_utils.evaluation.lm_probes import oracle_probs
from course_utils.language.text_pipeline import SPECIALS, Vocab, tokenize
from course_utils.validation import CourseInputError, check_int
from course_utils.widgets.widget_kit import PNG_DPI, Demo, labelled, text_box

EXAMPLES = (
    "the cat near the dogs",
    "he ate the cake with the",
    "i have to make sure that the dog gets",
    "kayla ate the",
    "the horse which was raced past the barn",
    "",
)
MAX_K = 10  # the most bars a panel shows
MAX_MODELS = 7  # panels: the oracle's and up to seven models', in two rows
COLORS = {"oracle": "tab:green", "possible": "tab:blue", "impossible": "tab:red"}
_CACHE_SIZE = 256  # contexts whose distributions are kept


def default_models() -> dict[str, torch.nn.Module]:
    """Notebook 04's models: n-grams counted on the training split and the shipped FFNNs (N = 3, 5)."""
    from course_utils.zoo.lm_checkpoints import load_model, ngram_models

    return {**ngram_models(), "FFNN N=3": load_model("ffnn_n3"), "FFNN N=5": load_model("ffnn_n5")}


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


def window_probs(model, vocab: Vocab, words: list[str]) -> np.ndarray:
    """P(next word | the sentence so far) (V,); a fixed-window model is given only the words it reads.

    The same numbers as ``lm.next_token_probs(model, vocab, words)``, without computing a
    prediction at every earlier position (an n-gram's forward pass does one per position).
    """
    n = getattr(model, "context_size", None)
    if n is None or len(words) < n:
        probs = lm.next_token_probs(model, vocab, words)
    elif n == 0:  # a unigram model reads nothing
        probs = lm.next_token_probs(model, vocab, [])
    else:
        probs = lm.next_token_probs(model, vocab, words[len(words) - n :], from_sentence_start=False)
    return probs.numpy()  # (V,)


@dataclass(frozen=True)
class Comparison:
    """How far a model's next-word distribution q is from the oracle's p."""

    p_top: float  # q of the oracle's most likely word
    tv: float  # total variation ½ Σ |p − q|
    kl: float  # KL(p ‖ q) in nats; inf when q = 0 where p > 0
    impossible: float  # Σ q over words with p = 0


def compare_to_oracle(q: np.ndarray, p: np.ndarray) -> Comparison:
    """Compare a model's probabilities ``q`` (V,) with the oracle's ``p`` (V,)."""
    possible = p > 0  # (V,)
    with np.errstate(divide="ignore"):  # log 0 = -inf: the KL is then inf
        kl = float(np.sum(p[possible] * (np.log(p[possible]) - np.log(q[possible]))))
    return Comparison(p_top=float(q[np.argmax(p)]), tv=0.5 * float(np.abs(p - q).sum()), kl=kl,
                      impossible=float(q[~possible].sum()))  # fmt: skip


@dataclass(frozen=True)
class Panel:
    """What one panel shows: a title, and the ``MAX_K`` most likely words with their colour keys, or a note."""

    title: str
    top: list[tuple[str, float]] = field(default_factory=list)  # (word, probability), most likely first
    kinds: list[str] = field(default_factory=list)  # a key of COLORS for each word
    note: str = ""


@dataclass(frozen=True)
class Prediction:
    """Everything the widget shows for one context, computed once."""

    models: dict[str, np.ndarray]  # name -> (V,) next-word probabilities
    oracle: np.ndarray | None  # (V,); None when the prefix is not in the language
    account: str | None  # the oracle's account of where an ungrammatical prefix fails
    panels: list[Panel]  # the oracle's, then one per model
    readout: str


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


@lru_cache(maxsize=64)
def pillow_font(size_px: int, weight: str = "normal") -> ImageFont.FreeTypeFont:
    """Matplotlib's own font (DejaVu Sans), for Pillow, at ``size_px`` pixels (loaded once per size and weight)."""
    path = font_manager.findfont(font_manager.FontProperties(weight=weight))
    return ImageFont.truetype(path, size_px, layout_engine=ImageFont.Layout.BASIC)


@lru_cache(maxsize=64)
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


def _rgb(name: str) -> tuple[int, int, int]:
    return tuple(round(255 * c) for c in to_rgb(name))


KEY = (
    ("oracle", "the oracle's distribution"),
    ("possible", "a model's guess"),
    ("impossible", "a word the oracle says cannot come next"),
)  # (colour, meaning)


class Painter:
    """Paints the panels: a grid of boxes, each a title and up to ``MAX_K`` labelled bars."""

    key = KEY  # the colour key's (colour, text) entries along the bottom

    def __init__(self, panels: int, words: list[str]):
        scale = matplotlib.rcParams["font.size"] / 10  # larger in lecture mode
        self.px = round(14 * scale)  # text size in pixels
        self.font, self.bold = pillow_font(self.px), pillow_font(self.px, "bold")
        self.colors = {kind: _rgb(color) for kind, color in {**COLORS, "note": "#b00020"}.items()}
        self.rows = 1 if panels <= 3 else 2
        self.cols = math.ceil(panels / self.rows)
        self.row_px = round(1.45 * self.px)  # one bar and its gap
        self.label_px = round(max(self.font.getlength(w) for w in words)) + self.px // 2  # the words' column
        self.value_px = round(3.6 * self.px)  # room for "0.123" after the longest bar
        self.panel = (self.label_px + round(10 * self.px) + self.value_px, 2 * self.px + MAX_K * self.row_px)
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
        draw.rectangle((bar_left, area_top, bar_left, area_top + MAX_K * self.row_px), fill="black")
        for i, ((word, p), kind) in enumerate(zip(panel.top[:k], panel.kinds)):
            middle = area_top + i * self.row_px + self.row_px // 2
            end = bar_left + round(full * p / widest)
            half = self.row_px * 3 // 8  # half a bar's thickness
            draw.rectangle((bar_left, middle - half, end, middle + half), fill=self.colors[kind])
            draw.text((bar_left - self.px // 3, middle), word, fill="black", font=self.font, anchor="rm")
            draw.text((end + self.px // 3, middle), _probability(p), fill="black", font=self.font, anchor="lm")


def _probability(p: float) -> str:
    return f"{p:.3f}" if p >= 5e-4 else f"{p:.0e}"


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


class NextWordDemo(ExamplesWithAccount, Demo):
    """A context box, example contexts and k; one bar panel per model beside the oracle's.

    ``models`` maps names to language models with the course's LM interface, all over ``vocab``;
    ``oracle`` is the course language that says what may come next. With no arguments: notebook
    04's models (``default_models()``), ``course_vocab()`` and the full course language.
    After each redraw, ``shown`` maps each panel's name to its bars: (word, probability, colour key).
    """

    def __init__(self, models: dict | None = None, vocab: Vocab | None = None, oracle: CourseLanguage | None = None,
                 *, top_k: int = 8, context: str = EXAMPLES[0]):  # fmt: skip
        if vocab is None:
            from course_utils.language.vocab import course_vocab

            vocab = course_vocab()
        self.models = default_models() if models is None else models
        self.vocab, self.oracle = vocab, CourseLanguage() if oracle is None else oracle
        self._check_arguments()
        missing = sorted(self.oracle.vocabulary - set(vocab.itos))
        if missing:
            raise CourseInputError(f"the vocabulary lacks words of the course language, e.g. {missing[:5]}")
        top_k = check_int("top_k", top_k, minimum=1, maximum=MAX_K)
        self._cache: dict[tuple[str, ...], Prediction] = {}
        self._account: str | None = None
        self.shown: dict[str, list[tuple[str, float, str]]] = {}
        self._build_figure()
        self.examples = widgets.Dropdown(options=EXAMPLES, value=context if context in EXAMPLES else None)
        self.examples.observe(self._on_example, names="value")
        controls = {
            "context": text_box(context, "context", "the start of a sentence; Enter to predict"),
            "k": widgets.IntSlider(value=top_k, min=1, max=MAX_K, description="top k words"),
        }
        super().__init__(controls, title="What comes next? Each model's guess beside the truth (the oracle)")
        controls["context"].observe(self._on_typed, names="value")

    def _check_arguments(self) -> None:
        if not isinstance(self.vocab, Vocab):
            raise CourseInputError(
                f"vocab must be a course_utils.language.text_pipeline.Vocab, got {type(self.vocab).__name__}"
            )
        if not isinstance(self.oracle, CourseLanguage):
            raise CourseInputError(f"oracle must be a CourseLanguage, got {type(self.oracle).__name__}")
        if not isinstance(self.models, dict) or not self.models or len(self.models) > MAX_MODELS:
            raise CourseInputError(
                f"models must be a dict of 1 to {MAX_MODELS} entries name -> model, got {self.models!r:.80}"
            )
        for name, model in self.models.items():
            if not isinstance(model, torch.nn.Module):
                kind = type(model).__name__
                raise CourseInputError(f"models[{name!r}] must be a language model (a torch.nn.Module), got {kind}")
            size = getattr(model, "vocab_size", len(self.vocab))
            if size != len(self.vocab):
                raise CourseInputError(
                    f"models[{name!r}] predicts {size} token types; the vocabulary has {len(self.vocab)}"
                )

    def _build_figure(self) -> None:
        """A figure whose only content is the painted picture, at PNG_DPI so it is pasted 1:1."""
        self.panel_names = ["oracle (the truth)", *self.models]
        self.painter = Painter(len(self.panel_names), self.vocab.itos)
        width, height = self.painter.size
        self.figure = Figure(figsize=(width / PNG_DPI, height / PNG_DPI), dpi=PNG_DPI)
        FigureCanvasAgg(self.figure)
        self.layer = PixelLayer(np.full((height, width, 4), 255, dtype=np.uint8))
        self.figure.add_artist(self.layer)
        self.plot_height = f"{height + 12}px"

    def _on_example(self, change) -> None:
        if change["new"] is not None:
            self.controls["context"].value = change["new"]

    def predict(self, words: tuple[str, ...]) -> Prediction:
        """The models' and the oracle's next-word distributions after ``words``, and their panels (cached)."""
        if words not in self._cache:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[words] = self._prediction(words)
        return self._cache[words]

    def _prediction(self, words: tuple[str, ...]) -> Prediction:
        models = {name: window_probs(model, self.vocab, list(words)) for name, model in self.models.items()}
        try:
            oracle, account = oracle_probs(self.oracle, self.vocab, words).numpy(), None
        except CourseInputError as failure:
            oracle, account = None, str(failure)
        if oracle is None:
            panels = [Panel(self.panel_names[0], note="not in the course language:\nno word can come next")]
        else:
            panels = [self._panel(self.panel_names[0], oracle, lambda word: "oracle")]
        lines = []
        for name, probs in models.items():
            panel, line = self._model_panel(name, probs, oracle)
            panels.append(panel)
            lines.append(line)
        return Prediction(models, oracle, account, panels, self._readout(words, oracle, lines))

    def _panel(self, title: str, probs: np.ndarray, kind) -> Panel:
        """The ``MAX_K`` most likely words of ``probs`` (V,) (those with p > 0); ``kind(word)`` is the colour key of each."""
        top = [(word, p) for word, p in lm.top_k(torch.from_numpy(probs), self.vocab, MAX_K) if p > 0]
        return Panel(title, top, [kind(word) for word, _ in top])

    def _model_panel(self, name: str, probs: np.ndarray, oracle: np.ndarray | None) -> tuple[Panel, str]:
        """One model's panel, and its part of the readout."""
        if probs.sum() == 0:  # an unsmoothed model that never saw this context
            note = "every word has probability 0:\nthis context never occurred in training"
            return Panel(name, note=note), f"{name}: no distribution (an unseen context)"
        if oracle is None:
            return self._panel(name, probs, lambda word: "possible"), name
        comparison = compare_to_oracle(probs, oracle)
        possible = lambda word: "possible" if oracle[self.vocab.stoi[word]] > 0 else "impossible"  # noqa: E731
        best = self.vocab.itos[int(np.argmax(oracle))]
        line = (f"{name}: P({best}) = {comparison.p_top:.3f}, TV {comparison.tv:.2f}, KL {comparison.kl:.2f} nats, "
                f"{comparison.impossible:.0%} on impossible words")  # fmt: skip
        return self._panel(f"{name}  (TV {comparison.tv:.2f})", probs, possible), line

    def _readout(self, words: tuple[str, ...], oracle: np.ndarray | None, lines: list[str]) -> str:
        after = f"after '{' '.join(words)}'" if words else "at the start of a sentence"
        if oracle is None:
            return f"{after}: the oracle has no next word (see the message) · models shown: {', '.join(lines)}"
        best = int(np.argmax(oracle))
        most_likely = f"the oracle's most likely word is '{self.vocab.itos[best]}' ({oracle[best]:.3f})"
        return f"{after}, {most_likely}. " + " · ".join(lines)

    def draw(self, context: str, k: int) -> Figure:
        k = check_int("k", k, minimum=1, maximum=MAX_K)
        words = tuple(tokenize(context))
        unknown = unknown_words_message(self.vocab, words)
        if unknown:
            raise CourseInputError(unknown)
        prediction = self.predict(words)
        if prediction.account is not None:
            self._account = f"{prediction.account}. The models' guesses are shown; the oracle has no next word."
        picture, canvas = self.painter.new_picture()
        for index, panel in enumerate(prediction.panels):
            self.painter.paint(canvas, index, panel, k)
        self.layer.set_pixels(np.asarray(picture))
        self.shown = {name: [(word, p, kind) for (word, p), kind in zip(panel.top[:k], panel.kinds)]
                      for name, panel in zip(self.panel_names, prediction.panels)}  # fmt: skip
        self.show_readout(prediction.readout)
        return self.figure
