"""Widget: an ambiguous word's contextual vectors at one layer of a BERT, in 2-D, coloured by sense.

Pick a word of the senses set ("fine": a penalty, or healthy) and a layer (0 = the embedding layer, L = the
last). The picture shows the word's occurrences in the set projected to 2-D (PCA of that layer's vectors
of that word, ``contextual_embeddings.projection_2d``), one colour and marker per sense, and beside it, for
every layer, how well the senses can be told apart: a linear probe's cross-validated accuracy (one probe per
word, as ``contextual_embeddings.grouped_probe_accuracy`` fits them, copies of a sentence kept in one fold)
and the leave-one-out nearest-neighbour sense agreement (``nearest_neighbour_sense_accuracy``). Chance is
the share of the word's commonest sense (0.5 in the course's set). Copies of one sentence have the very same
vectors, so their points coincide; at layer 0 a word has one vector per position, so few points show.

Speed: every vector (480 items × L+1 layers), projection, probe and neighbour score is computed once at
construction (under a second for the course's 2-layer BERT on one core, about two for a 6-layer one), so a
callback only repaints. The picture is painted with Pillow, as in the other demos.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from course_utils.analysis import contextual_embeddings as ce
from course_utils.evaluation import linear_probe
from course_utils.lecture import is_lecture_mode
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets import palette
from course_utils.widgets.painting import PaintedDemo, fit_text, pillow_font, rgb, text_scale

SENSE_COLORS = palette.CATEGORIES[:6]
MARKERS = (
    "circle",
    "triangle",
    "square",
    "diamond",
    "circle",
    "triangle",
)  # a shape per sense too (colour-blind readers)
PROBE_COLOR, NEIGHBOUR_COLOR = palette.BLUE, palette.ORANGE
HIGHLIGHT = "#fff3b0"  # the chosen layer in the bar chart
CHANCE_COLOR = palette.BLACK  # dashed
FOLDS = 5  # the probe's cross-validation folds, as contextual_embeddings' default
LECTURE_WIDTH_PX = 740  # lecture mode's picture: a projector's 1280 × 720 window leaves it about 750 px


def default_model():
    """The shipped ``bert_mlm`` and its tokenizer (notebook 09)."""
    from course_utils import zoo

    return zoo.load("bert_mlm"), zoo.load("tokenizer")


@dataclass(frozen=True)
class WordLayer:
    """What the widget shows for one word at one layer, computed once."""

    points: np.ndarray  # (n, 2) the PCA coordinates of the word's occurrences
    variance: float  # the share of the variance the two axes keep
    probe: float  # cross-validated probe accuracy (senses of this word)
    neighbour: float  # leave-one-out 1-NN sense agreement
    alike: bool  # every occurrence has the same vector here: one point


def _check_items(items) -> list[dict]:
    if not isinstance(items, (list, tuple)) or not items:
        raise CourseInputError("items must be a non-empty list of sense items (corpus.load_eval('senses'))")
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not {"words", "position", "word", "sense"} <= set(item):
            raise CourseInputError(f"item {index} must be a dict with 'words', 'position', 'word' and 'sense'")
    return list(items)


def senses_by_word(items: list[dict]) -> dict[str, list[str]]:
    """Each ambiguous word (in order of first appearance) -> its senses (in order of first appearance)."""
    found: dict[str, dict[str, None]] = {}
    for item in items:
        found.setdefault(item["word"], {})[item["sense"]] = None
    return {word: list(senses) for word, senses in found.items()}


def all_alike(vectors: torch.Tensor) -> bool:
    """True if the rows of ``vectors`` (n, C) are one vector, up to rounding (e.g. a word at one position, layer 0)."""
    vectors = vectors.double()
    spread = float(((vectors - vectors.mean(0)) ** 2).sum())
    return spread <= 1e-10 * max(float((vectors**2).sum()), 1e-300)


def explained_share(vectors: torch.Tensor, points: torch.Tensor) -> float:
    """The share of the variance of ``vectors`` (n, C) that their 2-D PCA ``points`` (n, 2) keep (1 if there is none)."""
    if all_alike(vectors):
        return 1.0
    total = float(((vectors.double() - vectors.double().mean(0)) ** 2).sum())
    return min(1.0, float((points.double() ** 2).sum()) / total)


class ContextualPainter:
    """Paints the scatter of one word's occurrences, the senses' key and the accuracies of every layer.

    ``compact`` (lecture mode): a projector's picture, about 740 px wide at 22 px text (1466 × 843 otherwise): a
    smaller scatter, the bars beside it without their numbers (the readout gives the chosen layer's), all text at the
    text size, a shorter title and caption, one key line per sense with its shortest example."""

    def __init__(self, layers: int, *, compact: bool = False, senses: int = 3):
        scale = text_scale()  # larger in lecture mode
        self.px = px = round(14 * scale)
        self.compact = compact
        self.font, self.bold = pillow_font(px), pillow_font(px, "bold")
        self.small = self.font if compact else pillow_font(round(0.85 * px))
        self.layers = layers  # L + 1
        self.title_h = round(2.2 * px)
        self.side = round((14 if compact else 28) * px)  # the scatter's square
        self.plot_left, self.plot_top = px, self.title_h
        self.bars_left = self.plot_left + self.side + round((3 if compact else 4.5) * px)
        if compact:  # the bars share what the scatter leaves of LECTURE_WIDTH_PX
            self.bars_w = LECTURE_WIDTH_PX - px - self.bars_left
            self.group_w = self.bars_w // self.layers
        else:
            self.group_w = round(4.6 * px)
            self.bars_w = max(self.layers * self.group_w, round(13 * px))
        self.width = self.bars_left + self.bars_w + px
        self.key_top = self.plot_top + self.side + round((2.4 if compact else 2.6) * px)
        self.key_row = round(1.7 * px)
        self.key_rows = min(senses, 3) if compact else 3
        self.height = self.key_top + self.key_rows * self.key_row + px // 2
        self.colors = [rgb(c) for c in SENSE_COLORS]
        self.radius = max(4, round(0.45 * px))

    def paint(self, word: str, layer: int, shown: WordLayer, senses: list[str], labels: list[int],
              examples: list[str], counts: list[int], by_layer: list[WordLayer], chance: float,
              distinct: int) -> Image.Image:  # fmt: skip
        """The whole picture for ``word`` at ``layer``; ``labels`` the sense index of each point."""
        picture = Image.new("RGBA", (self.width, self.height), "white")
        pen = ImageDraw.Draw(picture)
        where = " (the embedding layer)" if layer == 0 else " (the last layer)" if layer == self.layers - 1 else ""
        title = f"'{word}' at layer {layer}{where}: {len(labels)} occurrences, {distinct} different sentences"
        if self.compact:
            title = fit_text(self.bold, f"'{word}', layer {layer}: {len(labels)} occurrences in {distinct} sentences",
                             self.width - 2 * self.px)  # fmt: skip
        pen.text((self.plot_left, self.title_h // 2), title, fill="black", font=self.bold, anchor="lm")
        self._scatter(pen, shown, labels)
        self._key(pen, senses, examples, counts)
        self._bars(pen, layer, by_layer, chance)
        return picture

    def _scatter(self, pen: ImageDraw.ImageDraw, shown: WordLayer, labels: list[int]) -> None:
        px, left, top, side = self.px, self.plot_left, self.plot_top, self.side
        pen.rectangle((left, top, left + side, top + side), outline="#999999", width=1)
        points = shown.points  # (n, 2)
        low, high = points.min(0), points.max(0)  # (2,), (2,)
        middle, span = (low + high) / 2, float((high - low).max())
        span = span if span > 1e-9 else 1.0  # all points at one place: draw them in the middle
        inner = side - 7 * self.radius  # room for the counts under the lowest points

        def place(x: float, y: float) -> tuple[int, int]:
            return (round(left + side / 2 + (x - middle[0]) / span * inner),
                    round(top + side / 2 - (y - middle[1]) / span * inner))  # fmt: skip

        stacks: list[
            tuple[tuple[int, int], dict[int, int]]
        ] = []  # (place, {sense: points there}), nearby points merged
        near = 1.5 * self.radius
        for (x, y), sense in zip(points.tolist(), labels):
            where = place(x, y)
            stack = next((found for centre, found in stacks
                          if abs(centre[0] - where[0]) <= near and abs(centre[1] - where[1]) <= near), None)  # fmt: skip
            if stack is None:
                stack = {}
                stacks.append((where, stack))
            stack[sense] = stack.get(sense, 0) + 1
        step = round(2.2 * self.radius)
        for (x, y), stack in stacks:  # the senses of a stack side by side; under it, how many of each, in their colours
            senses = sorted(stack)
            for j, sense in enumerate(senses):
                self._marker(pen, (x + round((j - (len(senses) - 1) / 2) * step), y), sense)
            if sum(stack.values()) > 1:
                texts = [str(stack[sense]) for sense in senses]
                gap = self.small.getlength(" ")
                at = x - (sum(self.small.getlength(t) for t in texts) + gap * (len(texts) - 1)) / 2
                for sense, text in zip(senses, texts):
                    pen.text((at, y + self.radius + 1), text, fill=self.colors[sense % len(self.colors)],
                             font=self.small, anchor="lt")  # fmt: skip
                    at += self.small.getlength(text) + gap
        caption = (f"PC 1 →   the two axes keep {shown.variance:.0%} of the variance; a number: how many points sit "
                   "there")  # fmt: skip
        if self.compact:  # the axes named under the square: inside, the large label would hide points
            caption = f"PC 1 →, PC 2 ↑:  the two axes keep {shown.variance:.0%} of the variance"
        else:
            pen.text((left + px // 3, top + px // 3), "PC 2 ↑", fill=palette.MUTED, font=self.small, anchor="lt")
        if shown.alike:
            caption = "every occurrence has the same vector at this layer: one point"
        if self.compact:
            caption = fit_text(self.small, caption, self.width - left - px // 2)
        pen.text((left, top + side + round(0.8 * px)), caption, fill=palette.MUTED, font=self.small, anchor="lm")

    def _marker(self, pen: ImageDraw.ImageDraw, centre: tuple[int, int], sense: int, radius: int | None = None) -> None:
        x, y = centre
        r = radius or self.radius
        color, shape = self.colors[sense % len(self.colors)], MARKERS[sense % len(MARKERS)]
        if shape == "circle":
            pen.ellipse((x - r, y - r, x + r, y + r), fill=color, outline="white")
        elif shape == "triangle":
            pen.polygon([(x, y - r - 1), (x - r - 1, y + r), (x + r + 1, y + r)], fill=color, outline="white")
        elif shape == "square":
            pen.rectangle((x - r + 1, y - r + 1, x + r - 1, y + r - 1), fill=color, outline="white")
        else:
            pen.polygon([(x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)], fill=color, outline="white")

    def _key(self, pen: ImageDraw.ImageDraw, senses: list[str], examples: list[str], counts: list[int]) -> None:
        """One line per sense (three at most fit): its marker, name, count and an example sentence."""
        px = self.px
        for i, (sense, example, count) in enumerate(list(zip(senses, examples, counts))[: self.key_rows]):
            y = self.key_top + i * self.key_row
            self._marker(pen, (self.plot_left + px // 2, y), i, radius=round(0.5 * px))
            pen.text(
                (self.plot_left + round(1.4 * px), y), f"{sense} ({count})", fill="black", font=self.bold, anchor="lm"
            )
            x = self.plot_left + round(1.4 * px) + round(self.bold.getlength(f"{sense} ({count})")) + px
            example = f"e.g. '{example}'"
            if self.compact:
                example = fit_text(self.font, example, self.width - self.px // 2 - x)
            pen.text((x, y), example, fill="black", font=self.font, anchor="lm")

    def _bars(self, pen: ImageDraw.ImageDraw, layer: int, by_layer: list[WordLayer], chance: float) -> None:
        """Probe and nearest-neighbour accuracy at each layer, 0..1, chance dashed, the chosen layer highlighted."""
        px, left = self.px, self.bars_left
        legend_row = 1.2 if self.compact else 1.1  # the legend's lines, in text heights
        top = self.plot_top + round((5.2 if self.compact else 5.4) * px)
        base = self.plot_top + self.side - round(1.6 * px)
        height = base - top
        pen.text((left, self.plot_top + px // 2), "sense accuracy by layer", fill="black", font=self.bold, anchor="lm")
        for i, (name, color) in enumerate((("probe (5-fold CV)", PROBE_COLOR), ("nearest neighbour", NEIGHBOUR_COLOR),
                                           (f"chance ({chance:.2f})", None))):  # fmt: skip
            y = self.plot_top + round((1.6 + legend_row * i) * px)
            if color is None:
                pen.line((left, y, left + px // 3, y), fill=CHANCE_COLOR, width=2)
                pen.line((left + 2 * px // 3, y, left + px, y), fill=CHANCE_COLOR, width=2)
            else:
                pen.rectangle((left, y - px // 3, left + px, y + px // 3), fill=color)
            pen.text((left + round(1.4 * px), y), name, fill="black", font=self.small, anchor="lm")
        x0 = left + self.group_w * layer
        pen.rectangle((x0, top - px // 2, x0 + self.group_w - 2, base + round(1.3 * px)), fill=HIGHLIGHT)
        y_of = lambda value: base - round(height * value)  # noqa: E731
        for value in (0.0, 0.5, 1.0):
            pen.text((left - px // 3, y_of(value)), f"{value:g}", fill="black", font=self.small, anchor="rm")
        pen.line((left, top, left, base), fill="black", width=1)
        pen.line((left, base, left + self.bars_w, base), fill="black", width=1)
        if self.compact:  # two bars filling the group but a gap; no numbers on them (the readout has the layer's)
            bar, margin = (self.group_w - 4) // 2, 2
            every = math.ceil((self.font.getlength(str(self.layers - 1)) + px // 2) / self.group_w)  # names fit
        else:
            bar, margin, every = round(1.75 * px), round(0.55 * px), 1
        for i, shown in enumerate(by_layer):
            x = left + self.group_w * i + margin
            for j, (value, color) in enumerate(((shown.probe, PROBE_COLOR), (shown.neighbour, NEIGHBOUR_COLOR))):
                a = x + j * bar
                pen.rectangle((a, min(y_of(value), base - 1), a + bar - 2, base), fill=color)
                if not self.compact:
                    pen.text((a + bar // 2, y_of(value) - 2), f"{value:.2f}"[1:] if value < 1 else "1", fill="black",
                             font=self.small, anchor="mb")  # fmt: skip
            if i % every == 0 or i == layer:
                name = "emb" if i == 0 and not self.compact else str(i)  # compact: 0, as the layer slider says
                pen.text((x + bar, base + round(0.7 * px)), name, fill="black",
                         font=self.bold if i == layer else self.font, anchor="mm")  # fmt: skip
        y = y_of(chance)
        for x in range(left, left + self.bars_w, px // 2 + 2):  # dashed: chance
            pen.line((x, y, min(x + px // 3, left + self.bars_w), y), fill=CHANCE_COLOR, width=2)


class ContextualEmbeddingDemo(PaintedDemo):
    """A word of the senses set and a layer; its occurrences in 2-D by sense, and how separable the senses are.

    ``model`` is a ``CourseBERT`` (or a Hugging Face BERT) and ``tokenizer`` its fast tokenizer; ``items``
    the sense items (default ``corpus.load_eval("senses")``). With no arguments: the shipped ``bert_mlm``.
    After each redraw ``shown`` holds the word, the layer, the points (n, 2), the senses of the points and
    the accuracies; ``results[(word, layer)]`` holds every precomputed ``WordLayer``.
    """

    def __init__(self, model=None, tokenizer=None, *, word: str = "fine", layer: int | None = None, items=None,
                 pooling: str = "first"):  # fmt: skip
        if model is None:
            model, shipped = default_model()
            tokenizer = tokenizer or shipped
        elif tokenizer is None:
            from course_utils import zoo

            tokenizer = zoo.load("tokenizer")
        if items is None:
            from course_utils.language.corpus import load_eval

            items = load_eval("senses")
        self.items = _check_items(items)
        self.senses = senses_by_word(self.items)
        too_few = [w for w, senses in self.senses.items() if len(senses) < 2]
        if too_few:
            raise CourseInputError(f"every word needs two senses or more; {too_few[0]!r} has one")
        word = check_choice("word", word, list(self.senses))
        pooling = check_choice("pooling", pooling, ce.POOLINGS)
        self.model, self.tokenizer = model, tokenizer
        self.vectors = ce.word_vectors(model, tokenizer, self.items, pooling=pooling)  # (L+1, N, C)
        self.depth = self.vectors.shape[0] - 1  # L
        layer = self.depth if layer is None else check_int("layer", layer, minimum=0, maximum=self.depth)
        self.results = self._precompute()
        self.shown: dict = {}
        self.painter = ContextualPainter(self.depth + 1, compact=is_lecture_mode(),
                                         senses=max(len(senses) for senses in self.senses.values()))  # fmt: skip
        self.make_canvas(self.painter.width, self.painter.height)
        controls = {
            "word": widgets.Dropdown(options=list(self.senses), value=word, description="ambiguous word"),
            "layer": widgets.IntSlider(value=layer, min=0, max=self.depth, description="layer (0 = embeddings)"),
        }
        super().__init__(controls, title="One word, many contexts: BERT's vectors of an ambiguous word, by sense")

    def _precompute(self) -> dict[tuple[str, int], WordLayer]:
        """Every word × layer: its PCA points, variance kept, probe and nearest-neighbour accuracies."""
        words = [item["word"] for item in self.items]
        labels = [item["sense"] for item in self.items]
        keys = ce.context_keys(self.items)
        self.rows = {w: [i for i, x in enumerate(words) if x == w] for w in self.senses}
        self.chance = {w: linear_probe.majority_accuracy([labels[i] for i in rows]) for w, rows in self.rows.items()}
        self.distinct = {w: len({tuple(self.items[i]["words"]) for i in rows}) for w, rows in self.rows.items()}
        results = {}
        for layer in range(self.depth + 1):
            _, probes = linear_probe.grouped_probe_accuracy(self.vectors[layer], labels, words, keys=keys, folds=FOLDS)
            for word, rows in self.rows.items():
                vectors = self.vectors[layer, rows]  # (n, C)
                points = ce.projection_2d(vectors)  # (n, 2)
                neighbour = ce.nearest_neighbour_sense_accuracy(vectors, [self.items[i] for i in rows])
                alike = all_alike(vectors)
                if alike:  # rounding noise only: put every point at the centre
                    points = torch.zeros_like(points)
                results[(word, layer)] = WordLayer(points.double().numpy(), explained_share(vectors, points),
                                                   probes[word], neighbour, alike)  # fmt: skip
        return results

    def painted_text_px(self) -> float:
        return self.painter.small.size  # the neighbours' words

    def legends(self) -> list[dict[str, str]]:
        senses = self.senses[self.values()["word"]]
        bars = {"probe (5-fold CV)": PROBE_COLOR, "nearest neighbour": NEIGHBOUR_COLOR, "chance (dashed)": CHANCE_COLOR}
        return [{sense: SENSE_COLORS[i % len(SENSE_COLORS)] for i, sense in enumerate(senses)}, bars]

    def draw(self, word: str, layer: int) -> Figure:
        word = check_choice("word", word, list(self.senses))
        layer = check_int("layer", layer, minimum=0, maximum=self.depth)
        shown = self.results[(word, layer)]
        senses = self.senses[word]
        rows = self.rows[word]
        labels = [senses.index(self.items[i]["sense"]) for i in rows]
        examples = [[" ".join(self.items[i]["words"]) for i in rows if self.items[i]["sense"] == s] for s in senses]
        pick = (lambda found: min(found, key=len)) if self.painter.compact else (lambda found: found[0])  # noqa: E731
        examples = [pick(found) for found in examples]  # a projector's key line has room for the shortest
        counts = [labels.count(i) for i in range(len(senses))]
        by_layer = [self.results[(word, i)] for i in range(self.depth + 1)]
        picture = self.painter.paint(word, layer, shown, senses, labels, examples, counts, by_layer, self.chance[word],
                                     self.distinct[word])  # fmt: skip
        self.layer.set_pixels(np.asarray(picture))
        self.shown = {"word": word, "layer": layer, "points": shown.points, "senses": [senses[i] for i in labels],
                      "probe": shown.probe, "neighbour": shown.neighbour, "variance": shown.variance,
                      "alike": shown.alike}  # fmt: skip
        mean = sum(self.results[(w, layer)].probe for w in self.senses) / len(self.senses)
        where = " (the embedding layer)" if layer == 0 else " (the last)" if layer == self.depth else ""
        pca = (
            "every occurrence has the same vector" if shown.alike else f"PCA keeps {shown.variance:.0%} of the variance"
        )
        if self.painter.compact:  # two lines above a projector's picture: its title and caption say the rest
            self.show_readout(f"layer {layer}{where}: sense probe {shown.probe:.2f}, nearest neighbour "
                              f"{shown.neighbour:.2f} (chance {self.chance[word]:.2f}) · all {len(self.senses)} "
                              f"words: probe {mean:.2f}")  # fmt: skip
        else:
            self.show_readout(f"'{word}' at layer {layer}{where}: sense probe {shown.probe:.2f} (chance "
                              f"{self.chance[word]:.2f}), nearest neighbour {shown.neighbour:.2f}; {pca} · all "
                              f"{len(self.senses)} words at this layer: probe {mean:.2f}")  # fmt: skip
        return self.figure
