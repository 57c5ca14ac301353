"""Widget: type or pick a source passage; watch a translation model write it, one decoder step at a time.

With attention, the picture is the attention matrix growing row by row: at step t, rows 1..t are the
weights each decoder step gave the source words (columns), darker = more weight, and the current row
is boxed. Hollow orange squares are the true alignment (from ``translate_passage``): where each
reference word comes from. A row label is green when the model's word equals the reference's word
at that position, red when it differs. Without attention there is no matrix to show: the decoder
starts from the encoder's final state h_S and never looks at the source again, and the picture says
so. The readout gives the step's word, where the attention looked, and how the whole output compares
with the reference (exact match, token accuracy, argmax against the true alignment).

Speed: each (model, passage) is decoded once (greedy) and kept; moving the step only repaints. As in
``sequence_demo``, the picture is painted with Pillow (matplotlib text is slow) and reaches the
figure as one bitmap.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from PIL import Image, ImageDraw

from course_utils.language.text_pipeline import Vocab, tokenize
from course_utils.language.tarevi import Translation, translate_passage
from course_utils.lecture import font_px, is_lecture_mode
from course_utils.evaluation import translation_metrics as metrics
from course_utils.models.recurrent.seq2seq import Seq2Seq
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets import palette
from course_utils.widgets.painting import (
    PaintedDemo,
    fit_text,
    paste_colour_bar,
    pillow_font,
    text_scale,
    upright_words,
)
from course_utils.widgets.widget_kit import labelled, set_range, text_box, unknown_words_message

EXAMPLES = {  # passage -> what it shows
    "the ball was kicked by kayla .": "the slide's passive",
    "kayla kicked the ball .": "its active",
    "kayla runs . the dog ate the cake .": "two sentences as one input",
    "the ball was kicked by kayla . the dog runs in the park . the farmer fixed the old car with the hammer .":
        "24 words: beyond the training length 14",
}  # fmt: skip
SHIPPED = {"no attention": "none_128", "additive": "additive_128", "dot": "dot_128"}  # label -> checkpoint
MAX_WORDS = 42  # the longest source passage the picture has room for (the longest test bucket)
EOS = "</s>"
MAX_MODELS = 4
MARK_COLOR = palette.SECOND  # the true alignment's hollow squares
RIGHT_COLOR, WRONG_COLOR = palette.RIGHT, palette.WRONG  # a word equal to / different from the reference's
CMAP = "Blues"  # attention weight 0 (white) .. 1 (dark blue)
_CACHE_SIZE = 256  # (model, passage) decodings kept


def default_models() -> dict[str, Seq2Seq]:
    """Notebook 07's shipped models of hidden size 128: no attention, additive and dot attention."""
    from course_utils import zoo

    return {label: zoo.load(name) for label, name in SHIPPED.items()}


def check_models(models, source_vocab: Vocab, target_vocab: Vocab) -> None:
    """``models`` must be a dict of 1 to ``MAX_MODELS`` ``Seq2Seq`` over the translation vocabularies."""
    if not isinstance(models, dict) or not models or len(models) > MAX_MODELS:
        raise CourseInputError(f"models must be a dict of 1 to {MAX_MODELS} entries name -> Seq2Seq, "
                               f"got {models!r:.80}")  # fmt: skip
    for name, model in models.items():
        if not isinstance(model, Seq2Seq):
            kind = type(model).__name__
            raise CourseInputError(f"models[{name!r}] must be a translation model (a Seq2Seq), got {kind}")
        sizes = (model.source_embed.num_embeddings, model.out.out_features)
        if sizes != (len(source_vocab), len(target_vocab)):
            vocabularies = f"{len(source_vocab)} and {len(target_vocab)}"
            raise CourseInputError(f"models[{name!r}] reads {sizes[0]} source and writes {sizes[1]} target token "
                                   f"types; the vocabularies have {vocabularies}")  # fmt: skip


@dataclass(frozen=True)
class Decoding:
    """One model's greedy translation of one passage, with its attention."""

    tokens: tuple[str, ...]  # one per decoder step: the words written, then </s> if it wrote one
    weights: np.ndarray | None  # (steps, S): step t's attention over the source; None without attention
    hidden_size: int

    @property
    def steps(self) -> int:
        return len(self.tokens)

    @property
    def output(self) -> tuple[str, ...]:
        """The translation: the words written before </s>."""
        return self.tokens[:-1] if self.tokens and self.tokens[-1] == EOS else self.tokens


def max_steps(length: int) -> int:
    """Greedy decoding's own limit (``Seq2Seq.greedy``): a model that never writes </s> stops after 2S + 5 words."""
    return 2 * length + 5


def plot_alignment(ax, weights, pair: Translation, title: str) -> None:
    """Notebook 07's static heatmap: attention weights (M, S) of ``pair`` on ``ax``, from 0 to 1, with the source
    words under the columns, the target words beside the rows and a white square on each true link."""
    ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
    for s, t in pair.alignment:
        ax.add_patch(Rectangle((s - 0.5, t - 0.5), 1, 1, fill=False, edgecolor="white", lw=1.5))
    ax.set_xticks(range(len(pair.source)), pair.source, rotation=90)
    ax.set_yticks(range(len(pair.target)), pair.target)
    ax.set_title(title)


@torch.no_grad()
def decode(model: Seq2Seq, source_vocab: Vocab, target_vocab: Vocab, words: tuple[str, ...]) -> Decoding:
    """Greedy decoding of ``words`` (as ``translate_words`` does it): every step's word and attention weights."""
    device = next(model.parameters()).device
    source = torch.tensor([source_vocab.encode(words)], device=device)  # (1, S)
    max_len = max_steps(len(words))
    ids, matrices = model.greedy(source, max_len=max_len)
    tokens = tuple(target_vocab.itos[i] for i in ids[0])
    weights = None if matrices[0] is None else matrices[0].float().cpu().numpy()  # (steps, S)
    if weights is not None and len(weights) > len(tokens):  # the last row is the step that wrote </s>
        tokens += (EOS,)
    elif weights is None and len(tokens) < max_len:
        tokens += (EOS,)
    return Decoding(tokens, weights, model.encoder.hidden_size)


@dataclass(frozen=True)
class Grid:
    """Where one passage's attention matrix goes: the source labels' height, the grid's top, a cell's side, the label
    size, and the rows shown (``start`` and how many: in lecture mode a long decoding shows a window of its rows)."""

    label_h: int
    top: int
    cell: int
    size: int
    start: int
    shown: int


KEY = (("true alignment (the reference's)   ", "black"), ("row label: same word as the reference   ", RIGHT_COLOR),
       ("different word", WRONG_COLOR))  # fmt: skip
SHORT_KEY = (("true alignment   ", "black"), ("same word as the reference   ", RIGHT_COLOR),
             ("different word", WRONG_COLOR))  # fmt: skip


class TranslationPainter:
    """Paints either the attention matrix (rows = decoder steps, columns = source words) or, for a model
    without attention, the source squeezed through one vector. One fixed canvas for both.

    ``compact`` (lecture mode) fits a projector: a canvas of 770 × 528 pixels at 22 px text, where the normal one is
    1364 × 899. The source labels take the room this passage's words need, the cells are as large as the rest allows
    (a label as high as its cell, at most the text size), a decoding with more rows than fit at that size shows the
    window of rows around the current step, and the key is shorter."""

    def __init__(self, source_words: list[str], target_words: list[str], compact: bool = False):
        self.compact = compact
        scale = text_scale()  # larger in lecture mode
        self.px = round(14 * scale)  # text size in pixels
        self.smallest = self.px  # the smallest text of the last picture
        self.font, self.bold = pillow_font(self.px), pillow_font(self.px, "bold")
        self.left = round(max(self.bold.getlength(w) for w in target_words)) + self.px  # the target words
        self.label_h = round(max(self.bold.getlength(w) for w in source_words)) + self.px // 2  # source words
        self.max_cell = round(3 * self.px)
        if compact:
            self.width, self.height = round(35 * self.px), round(24 * self.px)
            self.right = round(3 * self.px)  # the colour bar and its numbers
            self.title_h = round(2.0 * self.px)
            self.key_top = self.height - round(1.6 * self.px)
            self.grid_w = self.width - self.left - self.right
            self.key_entries = SHORT_KEY
        else:
            self.width = round(62 * self.px)
            self.right = round(5 * self.px)  # the colour bar and its numbers
            self.title_h = round(2.2 * self.px)
            self.grid_top = self.title_h + self.label_h + 4
            self.grid_w, self.grid_h = self.width - self.left - self.right, round(28 * self.px)
            self.key_top = self.grid_top + self.grid_h + self.px
            self.height = self.key_top + round(2.2 * self.px)
            self.key_entries = KEY
        self.lut = matplotlib.colormaps[CMAP](np.linspace(0.0, 1.0, 256), bytes=True)  # (256, 4)
        self.blank = Image.new("RGBA", (self.width, self.height), "white")
        self.keyed = self.blank.copy()  # the key, which never changes, painted once
        self._key(ImageDraw.Draw(self.keyed))

    def canvas(self, key: bool) -> tuple[Image.Image, ImageDraw.ImageDraw]:
        """A fresh picture to paint on, with the key along the bottom (for the matrix) or blank."""
        picture = (self.keyed if key else self.blank).copy()
        return picture, ImageDraw.Draw(picture)

    def title(self, pen: ImageDraw.ImageDraw, text: str) -> None:
        if self.compact:
            text = fit_text(self.bold, text, self.width - self.px)
        pen.text((self.px // 2, self.px // 2), text, fill="black", font=self.bold, anchor="lt")

    # -- with attention
    def cell(self, columns: int, rows: int) -> int:
        """The side of a square cell so that columns × rows cells fit the grid area."""
        return max(2, min(self.max_cell, self.grid_w // columns, self.grid_h // rows))

    def grid(self, source: tuple[str, ...], total: int, t: int) -> Grid:
        """The matrix's geometry for ``source`` and ``total`` rows at step ``t``: every row in the fixed grid area
        normally; in compact mode, cells no smaller than the text where the columns allow, and the rows that fit."""
        columns = len(source)
        if not self.compact:
            cell = self.cell(columns, total)
            return Grid(self.label_h, self.grid_top, cell, min(self.px, max(7, round(0.85 * cell))), 0, total)
        label_h = round(max(self.bold.getlength(w) for w in source)) + self.px // 2
        top = self.title_h + label_h + 4
        grid_h = self.key_top - self.px // 2 - top
        widest = max(2, min(self.max_cell, self.grid_w // columns))  # the columns' limit
        cell = max(2, min(widest, max(grid_h // total, self.px + 2)))  # rows thinner than the text: a window
        shown = min(total, grid_h // cell)
        start = min(max(0, t + 1 - shown), total - shown)  # the current row second from the bottom, where it can be
        return Grid(label_h, top, cell, min(self.px, max(7, cell - 2)), start, shown)

    def attention(self, picture: Image.Image, pen: ImageDraw.ImageDraw, source: tuple[str, ...],
                  rows: list[tuple[str, str]], weights: np.ndarray, t: int, marks: list[tuple[int, int]],
                  focus: tuple[int | None, int | None]) -> None:  # fmt: skip
        """The matrix: ``rows`` (label, colour) of all steps, ``weights`` (t, S) of the steps so far, step
        ``t`` boxed, ``marks`` (source, row) hollow squares; ``focus`` = (argmax column, true column) of step t.
        Only the rows ``grid`` says are shown (all of them, but in lecture mode for a long decoding)."""
        columns, total = len(source), len(rows)
        grid = self.grid(source, total, t)
        cell, size, start, shown = grid.cell, grid.size, grid.start, grid.shown
        x0, y0 = self.left, grid.top
        shade = np.full((total, columns, 4), 255, dtype=np.uint8)  # (R, S, 4)
        shade[:] = (236, 236, 236, 255)  # rows not reached yet
        shade[:t] = self.lut[np.clip(np.rint(weights[:t] * 255), 0, 255).astype(np.intp)]  # (t, S, 4)
        shade = shade[start : start + shown]  # (shown, S, 4)
        cells = np.repeat(np.repeat(shade, cell, axis=0), cell, axis=1)  # (shown·cell, S·cell, 4)
        if cell >= 6:  # thin white lines between cells
            cells[::cell, :, :3] = 255
            cells[:, ::cell, :3] = 255
        picture.paste(Image.fromarray(cells, "RGBA"), (x0, y0))
        line = max(2, min(3, cell // 8))
        for s, r in marks:  # the true alignment, on the rows written so far
            if not start <= r < start + shown:
                continue
            inset, y = max(1, cell // 6), y0 + (r - start) * cell
            pen.rectangle((x0 + s * cell + inset, y + inset, x0 + (s + 1) * cell - inset, y + cell - inset),
                          outline=MARK_COLOR, width=line)  # fmt: skip
        y = y0 + (t - 1 - start) * cell
        pen.rectangle((x0 - 2, y - 2, x0 + columns * cell + 1, y + cell + 1), outline="black", width=line)
        font, bold = pillow_font(size), pillow_font(size, "bold")
        every = -(-8 // cell)  # rows thinner than 8 pixels: label every few rows, and the current one
        for r, (word, colour) in enumerate(rows[:t]):
            if r % every and r != t - 1 or not start <= r < start + shown:
                continue
            pen.text((x0 - self.px // 3, y0 + (r - start) * cell + cell // 2), word, fill=colour,
                     font=bold if r == t - 1 else font, anchor="rm")  # fmt: skip
        picture.paste(self._source_labels(source, cell, size, focus, grid.label_h), (x0, y0 - grid.label_h - 4))
        height = shown * cell if self.compact else min(shown * cell, self.grid_h)
        self._colour_bar(picture, pen, x0 + columns * cell + self.px, y0, height)
        self.smallest = min(self.px, size)

    def _source_labels(self, source: tuple[str, ...], cell: int, size: int, focus, label_h: int) -> Image.Image:
        """The source words written upwards, one per column; the step's argmax bold, its true word orange."""
        labels = upright_words(source, cell, size, label_h).copy()  # cached: only focus repaints
        argmax, true = focus
        for i in dict.fromkeys(i for i in (argmax, true) if i is not None):  # repaint only these one or two words
            word = Image.new("RGBA", (label_h, cell), "white")
            font = pillow_font(size, "bold") if i == argmax else pillow_font(size)
            ImageDraw.Draw(word).text((2, cell // 2), source[i], fill=MARK_COLOR if i == true else "black", font=font,
                                      anchor="lm")  # fmt: skip
            labels.paste(word.rotate(90, expand=True), (i * cell, 0))
        return labels

    def _colour_bar(self, picture: Image.Image, pen: ImageDraw.ImageDraw, x: int, top: int, height: int) -> None:
        """A vertical ramp from weight 1 (top) to 0, numbered at both ends."""
        paste_colour_bar(picture, self.lut, x, top, height, self.px, self.font)

    def _key(self, pen: ImageDraw.ImageDraw) -> None:
        """What the marks and colours mean, along the bottom."""
        x, y, half = self.px // 2, self.key_top + self.px // 2, self.px // 2
        pen.rectangle((x, y - half, x + self.px, y + half), outline=MARK_COLOR, width=max(2, self.px // 7))
        x += round(1.5 * self.px)
        for text, colour in self.key_entries:
            pen.text((x, y), text, fill=colour, font=self.font, anchor="lm")
            x += round(self.font.getlength(text))

    def legend(self) -> dict[str, str]:
        """What the key names: {its text: its colour}."""
        return {text.strip(): MARK_COLOR if colour == "black" else colour for text, colour in self.key_entries}

    # -- without attention
    def bottleneck(self, pen: ImageDraw.ImageDraw, source: tuple[str, ...], rows: list[tuple[str, str]], t: int,
                   hidden: int) -> None:  # fmt: skip
        """Every source word feeds one box, h_S; the decoder's words so far come out of it."""
        source_boxes, bottom = self._layout(source, self.title_h + self.px, current=None)
        box_text = f"h_S: the encoder's final state, one vector of {hidden} numbers"
        box_w, box_h = round(self.font.getlength(box_text)) + 2 * self.px, 2 * self.px
        fan = (2 if self.compact else 3) * self.px  # the lines' height, into h_S and out of it
        box = ((self.width - box_w) // 2, bottom + fan, (self.width + box_w) // 2, bottom + fan + box_h)
        centre = (box[0] + box[2]) // 2
        out_top = box[3] + fan
        output_boxes, _ = self._layout([word for word, _ in rows[:t]], out_top + self.px // 2, current=t - 1)
        for left, _, right, lower in source_boxes:  # the lines first: the boxes cover their ends
            pen.line(((left + right) // 2, lower, centre, box[1]), fill=palette.MUTED, width=2)
        for left, upper, right, _ in output_boxes:
            pen.line((centre, box[3], (left + right) // 2, upper), fill=palette.MUTED, width=2)
        self._paint_boxes(pen, [(w, "black") for w in source], source_boxes, current=None)
        pen.rectangle(box, outline="black", fill="#dbe9f6", width=2)
        pen.text((centre, (box[1] + box[3]) // 2), box_text, fill="black", font=self.font, anchor="mm")
        caption = ((self.px // 2, out_top - self.px), "the decoder writes, starting from h_S:")
        if self.compact:  # the lines out of h_S pass close by: the caption on white
            pen.rectangle(pen.textbbox(*caption, font=self.font, anchor="ls"), fill="white")
        pen.text(*caption, fill="black", font=self.font, anchor="ls")
        self._paint_boxes(pen, rows[:t], output_boxes, current=t - 1)
        self.smallest = self.px

    def _layout(self, words: list[str], top: int, current: int | None) -> tuple[list[tuple[int, int, int, int]], int]:
        """Boxes for ``words`` left to right from ``top``, wrapped at the picture's width; and their bottom."""
        gap, height = self.px // 2, round((1.6 if self.compact else 1.8) * self.px)
        x, y, boxes = gap, top, []
        for i, word in enumerate(words):
            width = round((self.bold if i == current else self.font).getlength(word)) + self.px
            if x + width > self.width - gap and x > gap:
                x, y = gap, y + height + gap
            boxes.append((x, y, x + width, y + height))
            x += width + gap
        return boxes, y + height

    def _paint_boxes(self, pen: ImageDraw.ImageDraw, words: list[tuple[str, str]], boxes, current: int | None) -> None:
        """Each (word, colour) in its box; the ``current`` one bold, in a black frame."""
        for i, ((word, colour), box) in enumerate(zip(words, boxes)):
            here = i == current
            pen.rectangle(box, outline="black" if here else palette.MUTED, fill="white", width=2 if here else 1)
            pen.text(((box[0] + box[2]) // 2, (box[1] + box[3]) // 2), word, fill=colour,
                     font=self.bold if here else self.font, anchor="mm")  # fmt: skip


class TranslationDemo(PaintedDemo):
    """A passage box with examples, the model (no attention / additive / dot) and the decoder step.

    ``models`` maps names to ``Seq2Seq`` translators over ``translation_checkpoints.vocabularies()``;
    with no argument, the shipped ``none_128``, ``additive_128`` and ``dot_128``. ``step`` is the step
    shown first (clipped to the number of decoder steps); a new passage starts at step 1.
    After each redraw ``shown`` holds what the picture shows: the source, the rows written so far,
    their weights (t, S) or None, the alignment marks (source, row), the reference and the output, and the
    rows of the matrix in the picture (``window``: (first, end); all of them but in lecture mode; None without
    attention).
    """

    def __init__(self, models: dict | None = None, *, sentence: str = next(iter(EXAMPLES)), step: int = 1):
        self.key_shown = False  # the key is drawn under an attention matrix only
        from course_utils.zoo.translation_checkpoints import vocabularies

        self.source_vocab, self.target_vocab = vocabularies()
        self.models = default_models() if models is None else models
        check_models(self.models, self.source_vocab, self.target_vocab)
        if not isinstance(sentence, str):
            raise CourseInputError(f"sentence must be a string, got {type(sentence).__name__}")
        self._next_step = check_int("step", step, minimum=1)  # the step a passage not shown before starts at
        self._decodings: dict[tuple[str, tuple[str, ...]], Decoding] = {}
        self._references: dict[tuple[str, ...], Translation] = {}
        self._shown_words: tuple[str, ...] | None = None
        self.shown: dict = {}
        self.lecture = is_lecture_mode()  # a projector's layout: a smaller picture, a two-line readout
        self.painter = TranslationPainter(self.source_vocab.itos, [*self.target_vocab.itos, EOS], compact=self.lecture)
        self.make_canvas(self.painter.width, self.painter.height)
        self.examples = widgets.Dropdown(options=[(f"{text}   ({note})", text) for text, note in EXAMPLES.items()],
                                         value=sentence if sentence in EXAMPLES else None)  # fmt: skip
        self.next_button = widgets.Button(description="next step ▶",
                                          tooltip="one more decoder step (after the last: back to 1)")  # fmt: skip
        controls = {
            "sentence": text_box(
                sentence, "source", "one or more sentences, each ending in ' .'; Enter to translate", width="48em"
            ),
            "model": widgets.ToggleButtons(
                options=list(self.models), value=next(iter(self.models)), description="model"
            ),
            "step": widgets.IntSlider(value=1, min=1, max=1, description="decoder step"),
        }
        if self.lecture:  # the narrow column of a projector: whole button labels ("no attention")
            controls["model"].style.button_width = "auto"
        controls["sentence"].observe(self._on_typed, names="value")
        self.examples.observe(self._on_example, names="value")
        self.next_button.on_click(self._on_next)
        super().__init__(controls, title="Translation, one decoder step at a time: where does the attention look?")

    def _control_rows(self) -> widgets.Widget:
        rows = super()._control_rows()
        *others, step_row = rows.children  # "step" is the last control
        step_row.children = (*step_row.children, self.next_button)
        rows.children = (labelled("examples", self.examples), *others, step_row)
        return rows

    # -- the controls
    def _on_example(self, change) -> None:
        if change["new"] is not None:
            self.controls["sentence"].value = change["new"]

    def _on_typed(self, change) -> None:
        """Typed by hand: the dropdown shows the example typed, or none."""
        self.examples.value = change["new"] if change["new"] in EXAMPLES else None

    def _on_next(self, _button=None) -> None:
        slider = self.controls["step"]
        slider.value = slider.value + 1 if slider.value < slider.max else slider.min

    def _fit_step(self, words: tuple[str, ...], steps: int, step: int) -> int:
        """The step to show (a passage not shown before starts at ``_next_step``), clipped to 1..steps; the
        slider is set to it without a second redraw."""
        if words != self._shown_words:
            step, self._next_step = self._next_step, 1
        step = min(max(step, 1), steps)
        slider = self.controls["step"]
        with self.quietly():
            set_range(slider, step, steps)
        return step

    # -- the passage, its reference and each model's decoding (cached)
    def words(self, sentence: str) -> tuple[str, ...]:
        """The passage's words, if the translatable fragment has them and the picture has room for them."""
        words = tuple(tokenize(sentence))
        if not words:
            raise CourseInputError(f"type a passage, e.g. '{next(iter(EXAMPLES))}'")
        if len(words) > MAX_WORDS:
            raise CourseInputError(f"the picture has room for {MAX_WORDS} source words; this passage has {len(words)}")
        return words

    def reference(self, words: tuple[str, ...]) -> Translation:
        """``translate_passage(words)``: the true translation and alignment; the parser's explanation if none."""
        if words not in self._references:
            try:
                translation = translate_passage(words)
            except CourseInputError as failure:
                unknown = unknown_words_message(self.source_vocab, words)
                if unknown:
                    unknown = unknown.replace("not a word the models know", "not a source word the models know")
                    raise CourseInputError(f"{unknown}. The parser says: {failure}") from None
                raise
            if len(self._references) >= _CACHE_SIZE:
                self._references.clear()
            self._references[words] = translation
        return self._references[words]

    def decoding(self, name: str, words: tuple[str, ...]) -> Decoding:
        """Model ``name``'s greedy translation of ``words`` (decoded once)."""
        key = (name, words)
        if key not in self._decodings:
            if len(self._decodings) >= _CACHE_SIZE:
                self._decodings.clear()
            self._decodings[key] = decode(self.models[name], self.source_vocab, self.target_vocab, words)
        return self._decodings[key]

    # -- drawing
    def legends(self) -> list[dict[str, str]]:
        """The key along the bottom, drawn under an attention matrix (a model without attention has none)."""
        return [self.painter.legend()] if self.key_shown else []

    def painted_text_px(self) -> float:
        """The smallest text of the last picture: a passage with many words or rows has smaller labels."""
        return self.painter.smallest

    def draw(self, sentence: str, model: str, step: int) -> Figure:
        model = check_choice("model", model, list(self.models))
        words = self.words(sentence)
        reference = self.reference(words)
        decoding = self.decoding(model, words)
        t = self._fit_step(words, decoding.steps, check_int("step", step, minimum=0))
        target = (*reference.target, EOS)
        rows = [(word, RIGHT_COLOR if r < len(target) and word == target[r] else WRONG_COLOR)
                for r, word in enumerate(decoding.tokens)]  # fmt: skip
        true_source = {r: s for s, r in reference.alignment}  # reference position -> its source word
        self.key_shown = decoding.weights is not None
        picture, pen = self.painter.canvas(key=self.key_shown)
        if decoding.weights is None:
            note = "" if "no attention" in model else " (no attention)"
            if self.lecture:
                self.painter.title(pen, f"{model}: the decoder knows the source only as h_S{note}")
            else:
                self.painter.title(pen, f"{model}: all the decoder knows of the source is one vector, h_S{note}")
            self.painter.bottleneck(pen, words, rows, t, decoding.hidden_size)
            marks, argmax, window = [], None, None
        else:
            total = max(decoding.steps, len(target))  # the reference's rows fit even if the model stops early
            title = f"{model} attention: decoder step {t} of {decoding.steps}"
            grid = self.painter.grid(words, total, t)
            window = (grid.start, grid.start + grid.shown)  # the rows in the picture
            if grid.shown < total:  # lecture mode: a window of the rows
                title += f" (rows {grid.start + 1}–{grid.start + grid.shown})"
            self.painter.title(pen, title)
            rows_all = rows + [("", "black")] * (total - len(rows))
            marks = sorted((s, r) for s, r in reference.alignment if r < t)
            argmax = int(decoding.weights[t - 1].argmax())
            self.painter.attention(picture, pen, words, rows_all, decoding.weights, t, marks,
                                   (argmax, true_source.get(t - 1)))  # fmt: skip
        self.layer.set_pixels(np.asarray(picture))
        self._shown_words = words
        self.shown = {"source": words, "rows": decoding.tokens[:t], "reference": reference.target,
                      "output": decoding.output, "marks": marks, "window": window,
                      "weights": None if decoding.weights is None else decoding.weights[:t]}  # fmt: skip
        show = self._show_lecture_readout if self.lecture else self._show_readout
        show(words, reference, decoding, t, argmax, true_source)
        return self.figure

    @staticmethod
    def _right_words(reference: Translation, decoding: Decoding, true_source: dict[int, int]) -> tuple[int, int | None]:
        """How many output words equal the reference's at their position, and in how many reference rows the
        attention's argmax is the true source word (None without attention)."""
        right = sum(a == b for a, b in zip(decoding.output, reference.target))
        if decoding.weights is None:
            return right, None
        rows = min(len(reference.target), len(decoding.weights))
        return right, sum(int(decoding.weights[r].argmax()) == true_source[r] for r in range(rows))

    def _show_lecture_readout(self, words, reference: Translation, decoding: Decoding, t: int, argmax: int | None,
                              true_source: dict[int, int]) -> None:  # fmt: skip
        """Lecture mode: two lines, this step and the whole output's scores (the picture colours the model's words
        against the reference's, and marks where each reference word comes from)."""
        step = f"step {t} of {decoding.steps}: '{decoding.tokens[t - 1]}'"
        if argmax is None:
            step += " · no attention: h_S is all it has of the source"
        else:
            step += f" · looks most at '{words[argmax]}' {decoding.weights[t - 1, argmax]:.2f}"
            true = true_source.get(t - 1)  # the reference's word t comes from there
            step += "" if true is None else " ✓" if true == argmax else f" ✗, not '{words[true]}'"
        output, ref = decoding.output, reference.target
        right, hits = self._right_words(reference, decoding, true_source)
        scores = f"exact match {'yes' if output == ref else 'no'} · token accuracy {right}/{len(ref)}"
        if hits is not None:
            scores += f" · argmax right {hits}/{len(ref)}"
        lines = "<br>".join(html.escape(line) for line in (step, scores))
        self.readout.value = f"<div style='font-size:{font_px(14)}px;line-height:1.35'>{lines}</div>"

    def _show_readout(self, words, reference: Translation, decoding: Decoding, t: int, argmax: int | None,
                      true_source: dict[int, int]) -> None:  # fmt: skip
        """Three lines: this step, the output so far beside the reference, and the whole output's scores."""
        word = decoding.tokens[t - 1]
        step = f"step {t} of {decoding.steps}: wrote '{word}'"
        if argmax is None:
            step += ". No attention: the decoder never looks at the source words again; h_S is all it has of them."
        else:
            step += f", looking most at '{words[argmax]}' ({decoding.weights[t - 1, argmax]:.2f})"
            if t - 1 in true_source:
                true = words[true_source[t - 1]]
                verdict = " ✓" if true_source[t - 1] == argmax else " ✗"
                step += f"; the reference's word {t} comes from '{true}'{verdict}"
        target = (*reference.target, EOS)
        colours = [RIGHT_COLOR if r < len(target) and w == target[r] else WRONG_COLOR
                   for r, w in enumerate(decoding.tokens[:t])]  # fmt: skip
        coloured = " ".join(f"<span style='color:{c}'>{html.escape(w)}</span>"
                            for w, c in zip(decoding.tokens, colours))  # fmt: skip
        output, ref = decoding.output, reference.target
        right, hits = self._right_words(reference, decoding, true_source)
        scores = (f"whole output: exact match {'yes' if output == ref else 'no'} · token accuracy {right}/{len(ref)} "
                  f"({metrics.token_accuracy([output], [ref]):.0%})")  # fmt: skip
        if hits is not None:
            scores += f" · attention argmax on the true source word in {hits}/{len(ref)} rows"
        size = font_px(16)
        lines = [html.escape(step), f"model so far: {coloured}",
                 f"reference: {html.escape(' '.join(reference.target))}", html.escape(scores)]  # fmt: skip
        self.readout.value = f"<div style='font-size:{size}px;line-height:1.35'>{'<br>'.join(lines)}</div>"
