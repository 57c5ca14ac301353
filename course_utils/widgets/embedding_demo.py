"""Widget: a model's word embeddings in 2-D (PCA), coloured by word class; pick a word, see its neighbours.

The picture is a linear projection of the embeddings of the content words onto their first two
principal components, fitted once. The neighbours are found in the full d-dimensional space by
cosine similarity, so a neighbour can sit far away in the picture: two directions keep only part
of the variance (the axis labels say how much).
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from PIL import Image, ImageDraw

from course_utils.language import lexicon as lx
from course_utils.lecture import is_lecture_mode
from course_utils.widgets import palette
from course_utils.widgets.backdrop import FrozenBackdrop, overlay_axes
from course_utils.widgets.painting import PixelLayer, pillow_font, text_scale
from course_utils.language.text_pipeline import SPECIALS, Vocab
from course_utils.validation import CourseInputError, check_int
from course_utils.widgets.widget_kit import PNG_DPI, Demo, unknown_words_message

OTHER = "other"
MAX_K = 10  # the most neighbours shown (more labels clutter the map)
MARKERS = ("o", "s", "^")  # with the palette's six colours: 18 classes told apart by colour or by shape
MAX_CLASSES = len(MARKERS) * len(palette.CATEGORIES)
# In lecture mode (a projector's 1280 × 720) the picture must be shown near its own size: 736 × 520 pixels, every text
# at 20 pt, 22 px at PNG_DPI (lecture mode's matplotlib sizes are 13-19 pt: the key, "small", was 13.3 pt, 14.8 px;
# the tick labels 16 px). The key goes under the map in four columns, the map loses its tick labels (PCA coordinates
# have no unit) and its title (the axis label says PCA); the neighbours' labels are 22 px (19 px before).
LECTURE_SIZE = (9.2, 6.5)  # inches at PNG_DPI
LECTURE_TEXT_PT = 20


# ---------------------------------------------------------------- word classes


def _class_lists() -> list[tuple[str, list[str]]]:
    """The lexicon's word lists as (class, words), in priority order."""
    verbs = [form for v in lx.VERBS + lx.INTRANSITIVE for form in (v.base, v.third, v.past, v.participle)]
    verbs += [w for words in lx.GETS_PARTICIPLES.values() for w in words]
    verbs += [w for words in lx.LOVE_VERBS.values() for w in words]
    nouns = [(cls, [form for n in nouns for form in (n.singular, n.plural)]) for cls, nouns in lx.NOUNS.items()]
    return nouns + [
        ("drink", list(lx.DRINKS)),
        ("name", list(lx.NAMES)),
        ("verb", verbs),
        ("adjective", list(lx.ADJECTIVES)),
        ("feeling", list(lx.FEELINGS)),
        ("positive", list(lx.POSITIVE)),
        ("negative", list(lx.NEGATIVE)),
        ("review topic", list(lx.REVIEWED + lx.ASPECTS)),
    ]


def course_word_classes() -> dict[str, str]:
    """Each word of the course language -> its class ("animal", "food", "verb", ...), "other" for the rest.

    Classes come from ``course_utils.language.lexicon``: the noun classes (both forms), drinks, names, all
    verb forms, adjectives, feelings, positive and negative words, review topics. A word in two
    lists ("saw": a utensil and a verb; "water": a drink and a verb) keeps the first in that order.
    """
    from course_utils.language.grammar import CourseLanguage

    classes: dict[str, str] = {}
    for cls, words in _class_lists():
        for word in words:
            classes.setdefault(word, cls)
    return {word: classes.get(word, OTHER) for word in sorted(CourseLanguage().vocabulary)}


# ---------------------------------------------------------------- PCA and neighbours


def _check_embeddings(embeddings, rows: int | None = None) -> torch.Tensor:
    """``embeddings`` as a float64 tensor (V, d), with ``rows`` rows if given."""
    if isinstance(embeddings, torch.nn.Module):
        raise CourseInputError("give the embedding matrix, e.g. model.embedding.weight, not a model or layer")
    if not isinstance(embeddings, torch.Tensor) or embeddings.dim() != 2 or not embeddings.is_floating_point():
        got = getattr(embeddings, "shape", type(embeddings).__name__)
        raise CourseInputError(f"embeddings must be a float tensor (V, d), got {got}")
    if rows is not None and len(embeddings) != rows:
        raise CourseInputError(
            f"embeddings has {len(embeddings)} rows but the vocabulary has {rows} words; they must match"
        )
    if not bool(torch.isfinite(embeddings).all()):
        raise CourseInputError("embeddings holds NaN or infinite values")
    return embeddings.detach().to("cpu", torch.float64)  # (V, d)


@dataclass(frozen=True)
class PCA:
    """Principal components fitted to some points: project other points onto them."""

    mean: torch.Tensor  # (d,)
    components: torch.Tensor  # (dims, d), one unit direction per row, largest variance first
    explained: torch.Tensor  # (dims,) the share of the total variance along each direction

    def project(self, points: torch.Tensor) -> torch.Tensor:
        """Coordinates of ``points`` (N, d) along the components: (N, dims), float64."""
        return (_check_embeddings(points) - self.mean) @ self.components.T  # (N, dims)


def fit_pca(points: torch.Tensor, dims: int = 2) -> PCA:
    """PCA by SVD of the centred points (float64).

    Sign convention: in each direction, the coordinate of largest magnitude is positive, so the
    same points always give the same picture.
    """
    x = _check_embeddings(points)  # (N, d)
    if len(x) < 2:
        raise CourseInputError("PCA needs at least two points")
    dims = check_int("dims", dims, minimum=1, maximum=min(x.shape))
    mean = x.mean(dim=0)  # (d,)
    _, singular, vh = torch.linalg.svd(x - mean, full_matrices=False)  # (r,), (r, d)
    components = vh[:dims]  # (dims, d)
    biggest = components.abs().argmax(dim=1)  # (dims,)
    signs = torch.sign(components[torch.arange(dims), biggest])  # (dims,)
    variance = singular**2  # (r,)
    return PCA(mean, components * signs[:, None], variance[:dims] / variance.sum())


def pca_2d(embeddings: torch.Tensor) -> torch.Tensor:
    """The embeddings (V, d) projected onto their first two principal components: (V, 2), float64."""
    return fit_pca(embeddings, 2).project(embeddings)


def check_word(vocab: Vocab, word) -> int:
    """The id of ``word``, a word of ``vocab`` (not a special token)."""
    if not isinstance(word, str) or not word.strip():
        raise CourseInputError(f"type a word, e.g. 'cat'; got {word!r}")
    word = word.strip().lower()
    if word in SPECIALS:
        raise CourseInputError(f"'{word}' is a special token, not a word; pick a word such as 'cat'")
    unknown = unknown_words_message(vocab, [word])
    if unknown:
        raise CourseInputError(unknown)
    return vocab.stoi[word]


def unit_rows(embeddings: torch.Tensor) -> torch.Tensor:
    """Each row scaled to length 1 (a zero row stays 0), so dot products are cosine similarities."""
    return embeddings / embeddings.norm(dim=1, keepdim=True).clamp_min(1e-12)  # (V, d)


def nearest_words(embeddings: torch.Tensor, vocab: Vocab, word: str, k: int = 8) -> list[tuple[str, float]]:
    """The ``k`` words whose embeddings have the largest cosine similarity with ``word``'s (special tokens left out)."""
    e = _check_embeddings(embeddings, len(vocab))
    index = check_word(vocab, word)
    candidates = len(vocab) - len(SPECIALS) - 1
    k = check_int("k", k, minimum=1, maximum=candidates)
    unit = unit_rows(e)  # (V, d)
    return _ranked((unit @ unit[index]).tolist(), vocab, index, k)


def _ranked(values: list[float], vocab: Vocab, index: int, k: int) -> list[tuple[str, float]]:
    """The ``k`` words with the largest ``values`` (ties: smaller id first), word ``index`` and specials left out."""
    skip = {vocab.stoi[s] for s in SPECIALS} | {index}
    order = sorted((i for i in range(len(vocab)) if i not in skip), key=lambda i: (-values[i], i))
    return [(vocab.itos[i], values[i]) for i in order[:k]]


# ---------------------------------------------------------------- the widget


def default_embeddings() -> torch.Tensor:
    """The embedding matrix E (V, d) of the shipped feed-forward LM with N = 3."""
    from course_utils import zoo

    return zoo.load("ffnn_n3").embedding.weight.detach()


def _overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _free_place(pen, word: str, font, position: tuple[float, float], taken: list,
                within: tuple[float, float] | None = None) -> tuple[float, float]:  # fmt: skip
    """``position``, or the nearest one a line above or below it where the label overlaps no earlier label (and,
    given ``within`` = (top, bottom) pixels, lies between them)."""
    x, y = position
    step = 1.1 * font.size
    for shift in (0, *(k * sign for k in range(1, 2 * MAX_K) for sign in (1, -1))):
        left, top, right, bottom = pen.textbbox((x, y + shift * step), word, font=font, anchor="lm")
        if within is not None and (top < within[0] or bottom > within[1]):
            continue
        box = (left - font.size / 3, top, right + font.size / 3, bottom)  # a gap between neighbouring words
        if not any(_overlaps(box, other) for other in taken):
            taken.append(box)
            return x, y + shift * step
    taken.append(pen.textbbox(position, word, font=font, anchor="lm"))
    return position  # crowded everywhere: keep its own place


class EmbeddingDemo(Demo):
    """Type or pick a word and a number of neighbours; the 2-D map shows where they are.

    ``embeddings`` (V, d) holds one row per word of ``vocab``; ``word_classes`` maps words to
    class names (words it leaves out are "other"). With no arguments: the shipped FFNN's
    embeddings, ``course_vocab()`` and ``course_word_classes()``. Made in lecture mode, the picture fits a
    projector (``LECTURE_SIZE``, every text 22 px or more) and the readout is shorter.
    """

    def __init__(self, embeddings: torch.Tensor | None = None, vocab: Vocab | None = None,
                 word_classes: dict[str, str] | None = None, *, word: str = "cat", k: int = 8):  # fmt: skip
        if vocab is None:
            from course_utils.language.vocab import course_vocab

            vocab = course_vocab()
        if not isinstance(vocab, Vocab):
            raise CourseInputError(
                f"vocab must be a course_utils.language.text_pipeline.Vocab, got {type(vocab).__name__}"
            )
        self.vocab = vocab
        self.embeddings = _check_embeddings(default_embeddings() if embeddings is None else embeddings, len(vocab))
        classes = course_word_classes() if word_classes is None else word_classes
        if not isinstance(classes, dict) or not all(isinstance(c, str) for c in classes.values()):
            raise CourseInputError("word_classes must be a dict word -> class name, e.g. {'cat': 'animal'}")
        self.words = [i for i, w in enumerate(vocab.itos) if w not in SPECIALS]  # ids of the words drawn
        self.classes = [classes.get(vocab.itos[i], OTHER) for i in self.words]
        content = [i for i, cls in zip(self.words, self.classes) if cls != OTHER]
        if len(content) < 3:
            raise CourseInputError("word_classes must give a class to at least 3 words of the vocabulary")
        self.pca = fit_pca(self.embeddings[content])
        self.unit = unit_rows(self.embeddings).numpy()  # (V, d); numpy: a redraw runs no torch op
        self.points = self.pca.project(self.embeddings).numpy()  # (V, 2); specials are projected but not drawn
        k = check_int("k", k, minimum=1, maximum=MAX_K)
        self._build_figure()
        controls = {
            "word": widgets.Combobox(
                value=word,
                options=sorted(vocab.itos[i] for i in content),
                description="word",
                ensure_option=False,
                continuous_update=False,
                placeholder="a word, e.g. cat; Enter",
            ),
            "k": widgets.IntSlider(value=k, min=1, max=MAX_K, description="neighbours k"),
        }
        super().__init__(controls, title="Word embeddings: similar words get similar vectors")

    def _colors(self) -> dict[str, tuple[str, str]]:
        """A (colour, marker) per class, the course's classes in the lexicon's order, then others by name: the
        palette's six colours as circles, then as squares, then as triangles; small muted dots for "other"."""
        order = {cls: rank for rank, (cls, _) in enumerate(_class_lists())}
        names = sorted(set(self.classes) - {OTHER}, key=lambda cls: (order.get(cls, len(order)), cls))
        if len(names) > MAX_CLASSES:
            raise CourseInputError(f"at most {MAX_CLASSES} word classes can get distinct colours; got {len(names)}")
        colours, shapes = palette.CATEGORIES, len(palette.CATEGORIES)
        marks = {name: (colours[i % shapes], MARKERS[i // shapes]) for i, name in enumerate(names)}
        return {**marks, OTHER: (palette.MUTED, ".")}

    def legends(self) -> list[dict[str, str]]:
        """The classes' key: "colour marker" for each class, told apart by colour or by shape."""
        return [{cls: f"{color} {marker}" for cls, (color, marker) in self._colors().items()}]

    def _build_figure(self) -> None:
        """The coloured map and its legend once, as a bitmap; transparent axes on top for the chosen word."""
        scale = text_scale()  # larger in lecture mode
        self.lecture = lecture = is_lecture_mode()
        size = LECTURE_SIZE if lecture else (10.0 * min(scale, 1.4), 5.6 * scale)
        colors = self._colors()
        backdrop = Figure(figsize=size)
        ax = backdrop.add_axes((0.045, 0.37, 0.945, 0.615) if lecture else (0.07, 0.1, 0.62, 0.84))
        classes = np.array(self.classes)
        points = self.points[self.words]  # (W, 2)
        for cls, (color, marker) in colors.items():
            chosen = classes == cls
            ax.scatter(*points[chosen].T, s=(8 if cls == OTHER else 22) * scale, color=color, marker=marker, label=cls,
                       zorder=1 if cls == OTHER else 2)  # fmt: skip
        explained = self.pca.explained.tolist()
        if lecture:
            self._lecture_axes(ax, explained)
        else:
            ax.set(xlabel=f"PC 1 ({explained[0]:.0%} of the variance)", ylabel=f"PC 2 ({explained[1]:.0%})")
            ax.set_title("embeddings of the words, projected with PCA", loc="left")
            ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), ncol=2, fontsize="small", markerscale=1.6,
                      handletextpad=0.2, columnspacing=0.8, frameon=False)  # fmt: skip
        self.figure = Figure(figsize=size, dpi=PNG_DPI)  # so a data point's display position is its PNG pixel
        self.figure.add_artist(FrozenBackdrop(backdrop))
        self.ax = overlay_axes(self.figure, ax)
        self.links = LineCollection([], colors="black", linewidths=1.0 * scale, alpha=0.6)
        self.ax.add_collection(self.links)
        (self.neighbours,) = self.ax.plot([], [], "o", markersize=8 * scale, markerfacecolor="none",
                                          markeredgecolor="black", markeredgewidth=1.5 * scale)  # fmt: skip
        self.chosen = Line2D([], [], marker="*", markersize=18 * scale, color="gold", markeredgecolor="black",
                             linestyle="none")  # fmt: skip
        self.ax.add_line(self.chosen)
        sizes = (18, 14) if lecture else (18, 12)  # the chosen word, its neighbours (22 px on a projector)
        self.fonts = [pillow_font(round(px * scale), "bold") for px in sizes]
        width, height = (round(inches * PNG_DPI) for inches in size)
        self.labels = PixelLayer(np.zeros((height, width, 4), dtype=np.uint8))  # transparent; painted per redraw
        self.labels.set_zorder(3)  # above the axes
        self.figure.add_artist(self.labels)
        self.labelled: list[str] = []
        self.plot_height = f"{round(size[1] * PNG_DPI) + 12}px"

    @staticmethod
    def _lecture_axes(ax, explained: list[float]) -> None:
        """The projector's map: no tick labels or title, 20-pt axis labels, the key under the map in four columns."""
        ax.set(xticks=[], yticks=[])
        ax.set_xlabel(f"PCA of the embeddings: PC 1 ({explained[0]:.0%} of the variance)", fontsize=LECTURE_TEXT_PT)
        ax.set_ylabel(f"PC 2 ({explained[1]:.0%})", fontsize=LECTURE_TEXT_PT)
        ax.legend(loc="upper left", bbox_to_anchor=(-0.02, -0.115), ncol=4, fontsize=LECTURE_TEXT_PT, markerscale=1.6,
                  handletextpad=0.1, columnspacing=0.6, labelspacing=0.25, borderaxespad=0, frameon=False)  # fmt: skip

    def _paint_labels(self, labels: list[tuple[str, np.ndarray]]) -> None:
        """Write the words beside their points, clipped to the map (Pillow: several times faster than matplotlib text)."""
        width, height = self.figure.canvas.get_width_height()
        picture = Image.new("RGBA", (width, height), (0, 0, 0, 0))
        pen = ImageDraw.Draw(picture)
        pixels = self.ax.transData.transform(np.array([point for _, point in labels]))  # (n, 2), y up
        placed = []  # (word, font, position): the chosen word first, so it keeps its place
        taken: list[tuple[float, float, float, float]] = []
        (_, y0), (_, y1) = self.ax.bbox.get_points()  # the map's bottom and top in pixels, y up
        within = (height - y1, height - y0) if self.lecture else None  # a projector's map is small: keep labels in
        for i, ((word, _), (x, y)) in enumerate(zip(labels, pixels)):
            font = self.fonts[0 if i == 0 else 1]
            position = _free_place(pen, word, font, (x + 0.9 * font.size, height - y), taken, within)
            placed.append((word, font, position))
        for word, font, position in reversed(placed):  # the chosen word last, on top
            pen.text(
                position,
                word,
                fill="black",
                font=font,
                anchor="lm",
                stroke_width=max(1, font.size // 8),
                stroke_fill="white",
            )  # a halo keeps it readable over dots
        (x0, y0), (x1, y1) = self.ax.bbox.get_points()  # the map's box in pixels, y up
        rgba = np.array(picture)  # (H, W, 4)
        outside = np.ones((height, width), dtype=bool)
        outside[round(height - y1) : round(height - y0), round(x0) : round(x1)] = False
        rgba[outside] = 0
        self.labels.set_pixels(rgba)
        self.labelled = [word for word, _ in labels]

    def draw(self, word: str, k: int) -> Figure:
        k = check_int("k", k, minimum=1, maximum=MAX_K)
        index = check_word(self.vocab, word)
        near = _ranked((self.unit @ self.unit[index]).tolist(), self.vocab, index, k)  # cosine similarities
        here = self.points[index]  # (2,)
        there = self.points[[self.vocab.stoi[w] for w, _ in near]]  # (k, 2)
        self.chosen.set_data([here[0]], [here[1]])
        self.neighbours.set_data(*there.T)
        self.links.set_segments([np.stack([here, point]) for point in there])
        self._paint_labels([(self.vocab.itos[index], here)] + [(w, p) for (w, _), p in zip(near, there)])
        shown = ", ".join(f"{w} {cos:.2f}" for w, cos in near)
        if self.lecture:  # one or two lines: the axis labels give the variance each direction keeps
            self.show_readout(f"nearest to '{self.vocab.itos[index]}' by cosine: {shown}")
            return self.figure
        kept = float(self.pca.explained.sum())
        self.show_readout(f"nearest to '{self.vocab.itos[index]}' by cosine similarity (in all "
                          f"{self.embeddings.shape[1]} dimensions): {shown} · the map keeps {kept:.0%} of the variance")  # fmt: skip
        return self.figure
