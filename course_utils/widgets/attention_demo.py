"""Widget: where each head of the course GPT looks in a sentence, by layer and head, the causal mask on or off.

``AttentionDemo`` shows a layer, a head or the mean of the heads of the course's GPT-style language
model, as a heatmap (rows: the token that asks, columns: the tokens it looks at; beside it the "from"
word's row as numbered bars) or as arcs over the words. With the causal mask (the model as trained
and used), position t sees only positions ≤ t. Without it the picture shows what the same queries
and keys would give if every position could see the whole sentence: softmax over all the keys, with
the edge the mask cuts along drawn in red. Only the mask is taken away, in that one layer (its input
is still the masked model's): it is what the mask hides, not another model, and the title says so.
The slide's Q·K·V numbers step by step are ``qkv_demo``'s.

Speed: the model (and its scratch twin, for the queries and keys) runs once per sentence, and every
layer's and head's weights are kept, with and without the mask, so moving the layer, the head, the
view, the mask or the word only repaints. The picture is painted with Pillow (matplotlib text is
slow) and reaches the figure as one bitmap (``painting.PaintedDemo``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from course_utils.language.text_pipeline import BOS, tokenize
from course_utils.lecture import is_lecture_mode
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets.painting import (
    PaintedDemo,
    fit_text,
    paste_colour_bar,
    pillow_font,
    rgb,
    text_scale,
    upright_words,
)
from course_utils.widgets import palette
from course_utils.widgets.widget_kit import labelled, unknown_words_message

EXAMPLES = {  # sentence -> (the word shown first as "from"; what to look for)
    "the goat behind the parks from the boys near the children hides .":
        ("children", "'children' predicts the verb: does it look back past three attractors to 'goat'?"),
    "the movie was good and you will love it .": ("it", "'it' is the movie: does a head link them?"),
    "kayla which was seen behind the village behind the ball runs .":
        ("ball", "'ball' predicts the verb: 'kayla' is nine words back"),
    "the men that see the horse which were seen behind the blue garden carry the small cups .":
        ("garden", "'garden' predicts 'carry', which agrees with 'men'"),
    "i have to make sure that the dog gets fed .": ("gets", "'gets' predicts 'fed': the dog gets fed"),
    "the cats near the dog are happy .": ("dog", "'dog' predicts 'are', which agrees with 'cats'"),
}  # fmt: skip
EVERY_WORD = -1  # the "from" value that shows every row
MEAN_OF_HEADS = -1  # the "head" value that averages the heads
MAX_TOKENS = 41  # the picture has room for <s> and 40 words
BACK_COLOR, AHEAD_COLOR = palette.MODEL, palette.SECOND  # an arc to an earlier word (or itself) / to a later word
MASK_LINE = palette.ALERT  # without the mask: the line the mask would cut along
ATTENTION_CMAP = "Blues"  # weight 0 (white) .. 1 (dark blue)
MIN_ARC = 0.04  # arcs of smaller weights are not drawn ("every word")
CORNER = ("from ↓", "to →")  # lecture mode: the heatmap's corner, on two lines


def hatch(rows: np.ndarray, cols: np.ndarray, cell: int) -> np.ndarray:
    """RGBA pixels (..., 4) at these pixel rows and columns: stripes of the hatch colour over a pale ground, one stripe
    every third of a cell, the pattern every cell the causal mask hides carries."""
    stride = max(4, cell // 3)
    striped = (rows + cols) % stride < max(1, stride // 3)  # (...,)
    pixels = np.empty((*rows.shape, 4), dtype=np.uint8)
    pixels[...] = (*rgb(palette.PENDING), 255)
    pixels[striped] = (*rgb(palette.HATCH), 255)
    return pixels


def key_items(view: str, masked: bool, compact: bool = False) -> dict[str, str]:
    """What the colour key along the bottom names, {text: colour}, for this view (``compact``: lecture mode's
    shorter heatmap key, on the title's line)."""
    if view == "heatmap":
        if masked:
            return {"masked (weight 0)" if compact else "hidden by the causal mask (weight 0)": palette.HATCH}
        return {"the mask's edge" if compact else "right of the red line: what the causal mask hides": MASK_LINE}
    items = {"looks back (or at itself)": BACK_COLOR}
    if not masked:
        items["looks ahead: only without the mask"] = AHEAD_COLOR
    return items


_READINGS = 64  # sentences whose attention is kept


def default_model():
    """Notebook 08's shipped GPT language model (``zoo.load("gpt_lm")``)."""
    from course_utils import zoo

    return zoo.load("gpt_lm")


def scratch_twin(model):
    """The ``ScratchGPT`` computing what ``model`` does, its queries and keys in reach (``model`` if it is one)."""
    from course_utils.models.transformer.transformer_lm import CourseGPT, ScratchGPT

    if isinstance(model, ScratchGPT):
        return model
    if isinstance(model, CourseGPT):
        return ScratchGPT.from_hf(model).eval()
    raise CourseInputError(f"model must be the course's GPT (a CourseGPT or a ScratchGPT), got {type(model).__name__}")


@torch.no_grad()
def layer_attention(scratch, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each layer's attention on ``idx`` (1, T) with and without the causal mask: two (L, H, T, T).

    Without the mask is softmax(q kᵀ / √d_k) over every key, with the very queries and keys of that
    layer: its input is the real (masked) model's, so only the mask is taken away, one layer at a time.
    """
    from course_utils.models.transformer.attention import attention_weights, causal_mask

    was_training = scratch.training
    scratch.eval()
    try:
        T = idx.shape[1]
        positions = torch.arange(T, device=idx.device)  # (T,)
        x = scratch.token_embedding(idx) + scratch.position_embedding(positions)  # (1, T, C)
        masked, open_ = [], []
        for block in scratch.blocks:
            parts = block.qkv(block.ln_1(x)).split(x.shape[-1], dim=-1)  # 3 × (1, T, C)
            q, k = block.heads(parts[0]), block.heads(parts[1])  # (1, H, T, d_k) each
            masked.append(attention_weights(q, k, causal_mask(T, device=idx.device))[0])  # (H, T, T)
            open_.append(attention_weights(q, k)[0])  # (H, T, T): every key
            x = block(x)[0]  # (1, T, C): the next layer reads the masked model's output
    finally:
        scratch.train(was_training)
    return torch.stack(masked).float().cpu(), torch.stack(open_).float().cpu()  # (L, H, T, T) each


@dataclass(frozen=True)
class HeatmapLayout:
    """Where the heatmap of one sentence goes: the row labels' width, the column labels' height, the grid's top, a
    cell's side, the label size, the colour bar's and the row bars' left edges, and the row bars' word column."""

    left: int
    label_h: int
    grid_top: int
    cell: int
    size: int
    bar_x: int
    panel_x: int
    panel_labels: bool  # the row bars repeat each word (normal), or sit on the heatmap's rows without (compact)


class AttentionPainter:
    """Paints one (T, T) attention matrix as a heatmap, or as arcs over the words; one fixed canvas for both.

    ``compact`` (lecture mode) fits a projector: a canvas of 770 × 539 pixels at 22 px text, where the normal one is
    1364 × 858. The heatmap's labels take the room this sentence's words need (not the longest word of the vocabulary),
    its cells are as large as that leaves, its colour key shares the title's line, and the row bars beside it sit on
    the heatmap's rows without repeating the words; the arcs' words and key take the room under them."""

    def __init__(self, words: list[str], compact: bool = False):
        self.compact = compact
        self.px = px = round(14 * text_scale())
        self.font, self.bold = pillow_font(px), pillow_font(px, "bold")
        self.title_h = round(2.2 * px)
        self.left = round(max(self.bold.getlength(w) for w in words)) + px  # the row labels
        self.label_h = round(max(self.bold.getlength(w) for w in words)) + px // 2  # the column labels
        self.max_cell = round(3 * px)
        if compact:
            self.width, self.height = round(35 * px), round(24.5 * px)
            self.title_h = round(2.0 * px)  # the grid's place is the sentence's own (``layout``)
            self.key_top = self.height - round(1.5 * px)  # the arcs' key, along the bottom
            self.smallest = px  # the smallest text of the last picture
        else:
            self.width = round(62 * px)
            self.grid_top = self.title_h + self.label_h + 4
            self.grid_h = round(26 * px)  # the heatmap is a square of at most grid_h × grid_h
            self.bar_x = self.left + self.grid_h + px  # the colour bar
            self.panel_x = self.bar_x + round(4.5 * px)  # the bars of one row, right of the heatmap
            self.key_top = self.grid_top + self.grid_h + px
            self.height = self.key_top + round(2.2 * px)
        self.lut = matplotlib.colormaps[ATTENTION_CMAP](np.linspace(0.0, 1.0, 256), bytes=True)  # (256, 4)
        self.colors = {"back": rgb(BACK_COLOR), "ahead": rgb(AHEAD_COLOR), "line": rgb(MASK_LINE)}

    def canvas(self, title: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
        picture = Image.new("RGBA", (self.width, self.height), "white")
        pen = ImageDraw.Draw(picture, "RGBA")  # RGBA: the arcs blend
        pen.text((self.px // 2, self.title_h // 2), fit_text(self.bold, title, self.width - self.px), fill="black",
                 font=self.bold, anchor="lm")  # fmt: skip
        return picture, pen

    # -- the heatmap
    def cell(self, tokens: int) -> int:
        return max(4, min(self.max_cell, self.grid_h // tokens))

    def layout(self, words: tuple[str, ...]) -> HeatmapLayout:
        """The heatmap's geometry for ``words``: fixed by the vocabulary normally, fitted to the sentence in compact
        mode (its longest word sets the labels' room, and the cells fill what is left, down to 4 pixels)."""
        px, T = self.px, len(words)
        if not self.compact:
            cell = self.cell(T)
            size = min(px, max(8, round(0.85 * cell)))
            return HeatmapLayout(self.left, self.label_h, self.grid_top, cell, size, self.bar_x, self.panel_x, True)
        longest = round(max(self.bold.getlength(w) for w in words))
        corner = round(max(self.font.getlength(text) for text in CORNER))  # "from ↓" over "to →"
        left = max(longest, corner) + px
        label_h = max(longest + px // 2, round(2.6 * px))  # room for the two corner lines too
        grid_top = self.title_h + label_h + 4
        side = round(3 * px) + round(9.5 * px)  # the colour bar; the row bars, "each word gets" in bold above them
        cell = max(4, min(self.max_cell, (self.height - grid_top - px // 3) // T,
                          (self.width - left - px // 2 - side) // T))  # fmt: skip
        size = min(px, max(8, cell - 2))  # a label as high as its row or column allows, at most the text size
        bar_x = left + T * cell + px // 2
        return HeatmapLayout(left, label_h, grid_top, cell, size, bar_x, bar_x + round(3 * px), False)

    def heatmap(self, picture: Image.Image, pen: ImageDraw.ImageDraw, words: tuple[str, ...], weights: np.ndarray,
                masked: bool, focus: int) -> None:  # fmt: skip
        """Rows: the word that looks; columns: the words it looks at. Masked cells hatched, or the mask's edge in red."""
        T = len(words)
        layout = self.layout(words)
        cell, size = layout.cell, layout.size
        x0, y0 = layout.left, layout.grid_top
        shade = self.lut[np.clip(np.rint(weights * 255), 0, 255).astype(np.intp)]  # (T, T, 4)
        cells = np.repeat(np.repeat(shade, cell, axis=0), cell, axis=1)  # (T·cell, T·cell, 4)
        if masked:  # hatched, so that no one reads a hidden cell as a weight near 0
            rows, cols = np.indices(cells.shape[:2])  # (T·cell, T·cell) each
            hidden = cols // cell > rows // cell
            cells[hidden] = hatch(rows[hidden], cols[hidden], cell)
        if cell >= 6:  # thin white lines between cells
            cells[::cell, :, :3] = 255
            cells[:, ::cell, :3] = 255
        picture.paste(Image.fromarray(cells, "RGBA"), (x0, y0))
        line = max(2, cell // 10)
        if not masked:  # the staircase right of the diagonal: what the mask would hide
            points = [(x0 + cell, y0)]
            for t in range(T - 1):
                points += [(x0 + (t + 1) * cell, y0 + (t + 1) * cell), (x0 + (t + 2) * cell, y0 + (t + 1) * cell)]
            pen.line(points, fill=self.colors["line"], width=line)
        if focus != EVERY_WORD:
            pen.rectangle((x0 - 2, y0 + focus * cell - 2, x0 + T * cell + 1, y0 + (focus + 1) * cell + 1),
                          outline="black", width=line)  # fmt: skip
        font, bold = pillow_font(size), pillow_font(size, "bold")
        for t, word in enumerate(words):
            pen.text((x0 - self.px // 3, y0 + t * cell + cell // 2), word, fill="black",
                     font=bold if t == focus else font, anchor="rm")  # fmt: skip
        picture.paste(upright_words(words, cell, size, layout.label_h), (x0, y0 - layout.label_h - 4))
        if self.compact:  # two short lines in the corner, left of the column labels
            pen.text((self.px // 2, y0 - self.px // 2), CORNER[1], fill=palette.MUTED, font=self.font, anchor="ls")
            pen.text((self.px // 2, y0 - round(1.7 * self.px)), CORNER[0], fill=palette.MUTED, font=self.font,
                     anchor="ls")  # fmt: skip
        else:
            pen.text((self.px // 2, self.grid_top - self.px // 2), "from ↓  to →", fill=palette.MUTED, font=self.font,
                     anchor="ls")  # fmt: skip
        self._colour_bar(picture, pen, layout.bar_x, y0, T * cell if self.compact else min(T * cell, self.grid_h))
        self._row_bars(pen, words, weights, masked, focus, layout)
        self.smallest = min(self.px, size)

    def _row_bars(self, pen: ImageDraw.ImageDraw, words: tuple[str, ...], weights: np.ndarray, masked: bool,
                  focus: int, layout: HeatmapLayout) -> None:  # fmt: skip
        """Right of the heatmap, the "from" word's row as numbered bars, one per word at its row's height (or,
        for every word, the mean weight each word gets)."""
        px, T, cell, size, top = self.px, len(words), layout.cell, layout.size, layout.grid_top
        if focus == EVERY_WORD:
            values, title = weights.mean(axis=0), "mean weight each word gets"  # (T,): column means
            first, second = "mean weight", "each word gets"  # compact: the title on two lines
        else:
            values, title = weights[focus], f"'{words[focus]}' looks at"  # (T,)
            first, second = f"'{words[focus]}'", "looks at"
        left, right = layout.panel_x, self.width - px // 2
        if self.compact:  # the panel is narrow
            pen.text((left, top - round(1.7 * px)), fit_text(self.bold, first, right - left), fill="black",
                     font=self.bold, anchor="ls")  # fmt: skip
            title = second
        pen.text((left, top - px // 2), fit_text(self.bold, title, right - left), fill="black", font=self.bold,
                 anchor="ls")  # fmt: skip
        font, bold = pillow_font(size), pillow_font(size, "bold")
        label_w = round(max(bold.getlength(w) for w in words)) + px // 3 if layout.panel_labels else 0
        number_w = round(font.getlength("0.00")) + px // 2
        x0, bar_w = left + label_w, right - left - label_w - number_w
        half = max(1, cell * 3 // 8)
        for s, (word, value) in enumerate(zip(words, values)):
            middle = top + s * cell + cell // 2
            hidden = masked and focus != EVERY_WORD and s > focus
            if layout.panel_labels:
                pen.text((x0 - px // 4, middle), word, fill=palette.MUTED if hidden else "black",
                         font=bold if s == int(values.argmax()) else font, anchor="rm")  # fmt: skip
            end = x0 + round(bar_w * value)  # on the colour bar's scale: weight 1 fills the width
            colour = self.colors["ahead"] if focus != EVERY_WORD and s > focus else self.colors["back"]
            if end > x0:
                pen.rectangle((x0, middle - half, end, middle + half), fill=colour)
            if cell >= 10:
                pen.text((end + px // 4, middle), f"{value:.2f}", fill="black", font=font, anchor="lm")
        pen.line((x0, top, x0, top + T * cell), fill="black", width=1)

    def _colour_bar(self, picture: Image.Image, pen: ImageDraw.ImageDraw, x: int, top: int, height: int) -> None:
        """A vertical ramp from weight 1 (top) to 0, numbered at both ends."""
        paste_colour_bar(picture, self.lut, x, top, height, self.px, self.font)

    # -- the arcs
    def arcs(self, picture: Image.Image, pen: ImageDraw.ImageDraw, words: tuple[str, ...], weights: np.ndarray,
             focus: int) -> None:  # fmt: skip
        """The words along a line; an arc from each word to each word it looks at, thicker and darker for more
        weight (blue: back or itself, orange: ahead). With a "from" word, only its arcs, numbered."""
        T, px = len(words), self.px
        slot = (self.width - px) / T
        xs = [round(px // 2 + slot * (t + 0.5)) for t in range(T)]
        widest = max(words, key=len)
        sizes = (px,) if self.compact else (px, round(0.8 * px))  # compact: no words side by side below the text size
        size = next((size for size in sizes if pillow_font(size, "bold").getlength(widest) <= slot - 2), None)
        fits = size is not None  # side by side; else written downwards, the slot as the line height
        size = size or (min(px, max(8, round(slot) - 2)) if self.compact else min(px, max(8, round(0.8 * slot))))
        font, bold = pillow_font(size), pillow_font(size, "bold")
        if self.compact:  # the words under the line take the room they need, above the key
            below = 2 * px if fits else round(max(bold.getlength(w) for w in words)) + px // 2
            base = self.key_top - px // 2 - below
        else:
            base = self.grid_top + self.grid_h - (2 * px if fits else self.label_h)  # the line the words hang from
        room = base - (self.title_h + 2 * px)  # the highest arc
        rows = range(T) if focus == EVERY_WORD else [focus]
        links = [(weights[t, s], t, s) for t in rows for s in range(T)
                 if weights[t, s] >= (MIN_ARC if focus == EVERY_WORD else 0.01)]  # fmt: skip
        for w, t, s in sorted(links):  # the strongest last, on top
            colour = self.colors["ahead" if s > t else "back"]
            alpha = round(255 * min(1.0, 0.25 + 0.75 * math.sqrt(w)))
            width = round(1 + w * px)
            if s == t:  # itself: a dot above the word
                r = max(3, round(0.7 * px * math.sqrt(w)))
                pen.ellipse((xs[t] - r, base - 2 * r - 2, xs[t] + r, base - 2), fill=(*colour, alpha))
                continue
            a, b = sorted((xs[t], xs[s]))
            reach = abs(t - s) / max(T - 1, 1)  # compact: short arcs spread higher, so that their numbers stay apart
            h = max(px, round(room * (math.sqrt(reach) if self.compact else reach)))
            pen.arc((a, base - h, b, base + h), 180, 360, fill=(*colour, alpha), width=width)
            if focus != EVERY_WORD and w >= 0.1:
                pen.text(((a + b) // 2, base - h - 2), f"{w:.2f}", fill="black", font=self.font, anchor="mb")
        if focus != EVERY_WORD and weights[focus, focus] >= 0.1:
            pen.text((xs[focus], base - round(1.6 * px) - 4), f"{weights[focus, focus]:.2f}", fill="black",
                     font=self.font, anchor="mb")  # fmt: skip
        pen.line((px // 2, base, self.width - px // 2, base), fill=palette.MUTED, width=max(2, px // 8))
        for t, word in enumerate(words):
            f = bold if t == focus else font
            if fits:
                pen.text((xs[t], base + px // 3), word, fill="black", font=f, anchor="ma")
            else:  # written downwards
                label = Image.new("RGBA", (round(f.getlength(word)) + 4, size + 6), (255, 255, 255, 0))
                ImageDraw.Draw(label).text((2, 3), word, fill="black", font=f, anchor="lt")
                turned = label.rotate(-90, expand=True)
                picture.paste(turned, (xs[t] - turned.width // 2, base + px // 3), turned)
        self.smallest = min(self.px, size)

    def key(self, picture: Image.Image, pen: ImageDraw.ImageDraw, view: str, masked: bool) -> None:
        """What the colours mean, along the bottom (compact: the heatmap's on the title's line, at its right end)."""
        px, y = self.px, self.key_top + self.px // 2
        items = key_items(view, masked, self.compact)
        x = px // 2
        if self.compact and view == "heatmap":
            y = self.title_h // 2
            x = self.width - px // 2 - sum(round(1.4 * px) + round(self.font.getlength(text)) for text in items)
        for text, colour in items.items():
            if colour == palette.HATCH:  # a hatched square, as the hidden cells are
                rows, cols = np.indices((2 * (px // 3), px))  # (h, w) each
                picture.paste(Image.fromarray(hatch(rows, cols, px), "RGBA"), (x, y - px // 3))
            else:
                pen.rectangle((x, y - px // 3, x + px, y + px // 3), fill=rgb(colour))
            x += round(1.4 * px)
            pen.text((x, y), text, fill="black", font=self.font, anchor="lm")
            x += round(self.font.getlength(text)) + 2 * px

    def key_width(self, view: str, masked: bool) -> int:
        """How wide the compact heatmap's key is on the title's line (its title must leave that much room)."""
        items = key_items(view, masked, self.compact)
        return sum(round(1.4 * self.px) + round(self.font.getlength(text)) for text in items) + self.px


class AttentionDemo(PaintedDemo):
    """A sentence (typed, or from the examples), the layer, the head or the mean of the heads, the view
    (heatmap or arcs), the word whose attention is shown ("from") and the causal mask on or off.

    ``model`` is the course's GPT (a ``CourseGPT`` or a ``ScratchGPT``) over ``vocab``; with no
    arguments, notebook 08's shipped ``gpt_lm`` and ``course_vocab()``. After each redraw ``shown``
    holds the tokens (with <s>), the (T, T) weights drawn and the settings.
    """

    def __init__(self, model=None, vocab=None, *, sentence: str = next(iter(EXAMPLES)), layer: int = 0, head: int = 0):
        from course_utils.language.text_pipeline import Vocab
        from course_utils.language.vocab import course_vocab

        self.vocab = course_vocab() if vocab is None else vocab
        if not isinstance(self.vocab, Vocab):
            raise CourseInputError(f"vocab must be a course_utils.language.text_pipeline.Vocab, got "
                                   f"{type(self.vocab).__name__}")  # fmt: skip
        self.model = default_model() if model is None else model
        self.scratch = scratch_twin(self.model)
        if self.model.vocab_size != len(self.vocab):
            raise CourseInputError(f"the model predicts {self.model.vocab_size} token types; the vocabulary has "
                                   f"{len(self.vocab)}")  # fmt: skip
        if not isinstance(sentence, str):
            raise CourseInputError(f"sentence must be a string, got {type(sentence).__name__}")
        self.layers, self.heads = len(self.scratch.blocks), self.scratch.blocks[0].n_head
        layer = check_int("layer (counted from 0)", layer, minimum=0, maximum=self.layers - 1)
        head = check_int("head (counted from 0)", head, minimum=0, maximum=self.heads - 1)
        self._cache: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._tokens: tuple[str, ...] = ()  # the tokens the "from" list was made for
        self.shown: dict = {}
        self.lecture = is_lecture_mode()  # a projector's layout: a smaller picture, a shorter readout
        self.painter = AttentionPainter([*self.vocab.itos, "from ↓  to →"], compact=self.lecture)
        self.make_canvas(self.painter.width, self.painter.height)
        self.examples = widgets.Dropdown(options=[(f"{text}   ({note})", text) for text, (_, note) in EXAMPLES.items()],
                                         value=sentence if sentence in EXAMPLES else None)  # fmt: skip
        controls = {
            "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                     placeholder="a sentence of the course language; Enter to read it",
                                     layout=widgets.Layout(width="44em")),
            "layer": widgets.ToggleButtons(options=[(str(n + 1), n) for n in range(self.layers)], value=layer,
                                           description="layer"),
            "head": widgets.ToggleButtons(options=[*((str(n + 1), n) for n in range(self.heads)),
                                                   ("mean of heads", MEAN_OF_HEADS)], value=head, description="head",
                                         style={"button_width": "auto"}),
            "view": widgets.ToggleButtons(options=["heatmap", "arcs"], value="heatmap", description="view"),
            "mask": widgets.Checkbox(value=True, description="causal mask", indent=False),
            "focus": widgets.Dropdown(options=[("every word", EVERY_WORD)], value=EVERY_WORD, description="from"),
        }  # fmt: skip
        if self.lecture:  # the narrow column of a projector: the buttons of a row side by side where they fit
            for name in ("layer", "view"):
                controls[name].style.button_width = "auto"
        self.controls = controls
        self._fit_focus(sentence)
        # Registered before the Demo's own observers: the "from" list fits the sentence before the redraw.
        controls["sentence"].observe(self._on_sentence, names="value")
        self.examples.observe(self._on_example, names="value")
        super().__init__(controls, title="Attention explorer: where does each head of the course GPT look?")

    def _control_rows(self) -> widgets.Widget:
        rows = super()._control_rows().children  # sentence, layer, head, view, mask, focus
        return widgets.VBox([labelled("examples", self.examples), rows[0], widgets.HBox(rows[1:3]),
                             widgets.HBox(rows[3:6])])  # fmt: skip

    # -- keeping the "from" list on the sentence's tokens
    def _fit_focus(self, sentence: str) -> None:
        """The "from" list: every word, then each token of ``sentence`` (an example's word chosen, else every
        word); kept as it is while the sentence cannot be read."""
        words = tuple(tokenize(sentence))
        if not words or unknown_words_message(self.vocab, words) or len(words) + 1 > MAX_TOKENS:
            return
        tokens = (BOS, *words)
        control = self.controls["focus"]
        if tokens != self._tokens:
            focus = tokens.index(EXAMPLES[sentence][0]) if sentence in EXAMPLES else EVERY_WORD
            with self.quietly():
                control.options = [("every word", EVERY_WORD), *((f"{t}: {w}", t) for t, w in enumerate(tokens))]
                control.value = focus
            self._tokens = tokens

    def _on_sentence(self, change) -> None:
        self._fit_focus(change["new"])
        self.examples.value = change["new"] if change["new"] in EXAMPLES else None

    def _on_example(self, change) -> None:
        if change["new"] is not None:
            self.controls["sentence"].value = change["new"]

    # -- reading a sentence (once) and drawing
    def words(self, sentence: str) -> tuple[str, ...]:
        """The sentence's words, if the model knows them all and can read (and the picture show) that many."""
        words = tuple(tokenize(sentence))
        if not words:
            raise CourseInputError(f"type a sentence, e.g. '{next(iter(EXAMPLES))}'")
        unknown = unknown_words_message(self.vocab, words, "the model knows")
        if unknown:
            raise CourseInputError(unknown)
        limit = self.model.max_len
        if len(words) + 1 > limit:
            raise CourseInputError(f"the model reads at most max_len = {limit} tokens; with <s> this sentence has "
                                   f"{len(words) + 1}. Shorten it.")  # fmt: skip
        if len(words) + 1 > MAX_TOKENS:
            raise CourseInputError(f"the picture has room for {MAX_TOKENS - 1} words; this sentence has {len(words)}")
        return words

    def reading(self, words: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The model's attention on ``<s> + words`` with the causal mask (as it runs) and without: (L, H, T, T) each."""
        if words not in self._cache:
            from course_utils.models.transformer.transformer_lm import attention_maps

            if len(self._cache) >= _READINGS:
                self._cache.clear()
            ids = [self.vocab.bos_id, *self.vocab.encode(list(words))]
            masked = attention_maps(self.model, ids).numpy()  # (L, H, T, T): the model's own weights
            device = next(self.scratch.parameters()).device
            open_ = layer_attention(self.scratch, torch.tensor([ids], device=device))[1].numpy()  # (L, H, T, T)
            self._cache[words] = (masked, open_)
        return self._cache[words]

    def legends(self) -> list[dict[str, str]]:
        values = self.values()
        return [key_items(values["view"], bool(values["mask"]), self.lecture)]

    def painted_text_px(self) -> float:
        """The smallest text of the last picture: in lecture mode, a long sentence's labels shrink with its cells."""
        return self.painter.smallest if self.lecture else self.painter.px

    def draw(self, sentence: str, layer: int, head: int, view: str, mask: bool, focus: int) -> Figure:
        words = self.words(sentence)
        self._fit_focus(sentence)  # a sentence typed while another could not be read
        focus = self.controls["focus"].value
        tokens = (BOS, *words)
        view = check_choice("view", view, ["heatmap", "arcs"])
        layer = check_int("layer", layer, minimum=0, maximum=self.layers - 1)
        head = check_int("head", head, minimum=MEAN_OF_HEADS, maximum=self.heads - 1)
        focus = check_int("from", focus, minimum=EVERY_WORD, maximum=len(tokens) - 1)
        masked, open_ = self.reading(words)
        maps = (masked if mask else open_)[layer]  # (H, T, T)
        weights = maps.mean(axis=0) if head == MEAN_OF_HEADS else maps[head]  # (T, T)
        which = "mean of the heads" if head == MEAN_OF_HEADS else f"head {head + 1}"
        if self.lecture:  # short, and beside the heatmap's key; the readout says what the mask's absence means
            which = which.replace("of the heads", "of heads")
            title = f"layer {layer + 1}, {which} · causal mask {'on' if mask else 'off'}"
            if view == "heatmap":
                room = self.painter.width - self.painter.px - self.painter.key_width(view, bool(mask))
                if self.painter.bold.getlength(title) > room:
                    title = title.replace("causal mask", "mask")
                title = fit_text(self.painter.bold, title, room)
        else:
            how = "causal mask on: the model as it runs" if mask else \
                "causal mask off: the same q and k over every word (the model never does this)"  # fmt: skip
            title = f"layer {layer + 1}, {which} · {how}"
        picture, pen = self.painter.canvas(title)
        if view == "heatmap":
            self.painter.heatmap(picture, pen, tokens, weights, bool(mask), focus)
        else:
            self.painter.arcs(picture, pen, tokens, weights, focus)
        self.painter.key(picture, pen, view, bool(mask))
        self.layer.set_pixels(np.asarray(picture))
        self.shown = {"tokens": tokens, "weights": weights, "layer": layer, "head": head, "view": view,
                      "mask": bool(mask), "focus": focus}  # fmt: skip
        if self.lecture:
            self.show_readout(self.lecture_readout_text(tokens, weights, bool(mask), focus))
        else:
            self.show_readout(self.readout_text(tokens, weights, bool(mask), focus, masked[layer], head))
        return self.figure

    @staticmethod
    def readout_text(tokens, weights: np.ndarray, mask: bool, focus: int, real: np.ndarray, head: int) -> str:
        """Where the "from" word looks most, or where the attention goes on average; and what the mask takes away."""
        T = len(tokens)
        if focus != EVERY_WORD:
            order = np.argsort(-weights[focus], kind="stable")[:3]
            top = ", ".join(f"'{tokens[s]}' {weights[focus, s]:.2f}" for s in order)
            text = f"'{tokens[focus]}' (position {focus}) looks most at {top}"
            ahead = float(weights[focus, focus + 1 :].sum())
        else:
            after = np.triu(weights, 1).sum(axis=1)  # (T,): weight on later words, per row
            distance = float((weights * np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])).sum(axis=1).mean())
            text = (f"on average {weights[:, 0].mean():.0%} of a word's attention goes to <s>, "
                    f"{np.diag(weights).mean():.0%} to itself; mean distance looked {distance:.1f} words")  # fmt: skip
            ahead = float(after[:-1].mean()) if T > 1 else 0.0
        if not mask:
            text += f" · without the mask {ahead:.0%} would go to later words"
            if focus != EVERY_WORD:
                shown = real.mean(axis=0) if head == MEAN_OF_HEADS else real[head]  # (T, T)
                text += f" (with it, '{tokens[int(shown[focus].argmax())]}' gets the most)"
        return text

    @staticmethod
    def lecture_readout_text(tokens, weights: np.ndarray, mask: bool, focus: int) -> str:
        """Lecture mode's readout, one or two lines: where the "from" word looks most (its weights of 0.01 or more,
        three at most), or where the attention goes on average; without the mask, how much goes to later words (the
        normal readout's comparison with the masked head is left out)."""
        T = len(tokens)
        if focus != EVERY_WORD:
            order = [s for s in np.argsort(-weights[focus], kind="stable")[:3] if weights[focus, s] >= 0.01]
            top = ", ".join(f"'{tokens[s]}' {weights[focus, s]:.2f}" for s in order)  # the largest is 1/T or more
            text = f"'{tokens[focus]}' looks most at {top}"
            ahead = float(weights[focus, focus + 1 :].sum())
        else:
            distance = float((weights * np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])).sum(axis=1).mean())
            text = (f"on average {weights[:, 0].mean():.0%} to <s>, {np.diag(weights).mean():.0%} to itself, "
                    f"{distance:.1f} words away")  # fmt: skip
            ahead = float(np.triu(weights, 1).sum(axis=1)[:-1].mean()) if T > 1 else 0.0
        if not mask:
            text += f" · without the mask {ahead:.0%} would go to later words"
        return text
