"""Widget: type a sentence and watch recurrent language models read it, one token at a time.

Top: a heatmap of one model's hidden state h_t at every token (for an LSTM also a gate or the
cell state c_t), units × tokens on a fixed colour scale. A column of h_t is everything the model
carries forward after reading that token. A box marks the chosen position t. Bottom: the model's next-word
distribution at t beside the oracle's exact one; red bars are words the oracle rules out. The
readout gives P(the actual next word) under every model and under the oracle.

Speed: each sentence is read once and kept: one forward pass per model, its hidden states and
gates, and the oracle's distribution at every position. Moving t or switching the model or the
view only repaints. As in ``next_word_demo``, the picture is painted with Pillow (matplotlib
text is slow) and reaches the figure as one bitmap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from course_utils.language.grammar import CourseLanguage
from course_utils.lecture import is_lecture_mode
from course_utils.evaluation.lm_probes import oracle_probs
from course_utils.language.text_pipeline import BOS, EOS, Vocab, tokenize
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.evaluation.lm_probes import compare_to_oracle
from course_utils.widgets import palette
from course_utils.widgets.painting import (
    MAX_K,
    SHORT_KEY,
    PaintedDemo,
    Painter,
    Panel,
    fit_text,
    pillow_font,
    text_scale,
    top_panel,
)
from course_utils.widgets.widget_kit import (
    ExamplesWithAccount,
    check_models,
    models_and_vocab,
    text_box,
    unknown_words_message,
)

EXAMPLES = {  # a sentence of the course language -> the position shown first: just before the word that tests a model
    "the horse which was raced past the barn tripped .": 8,  # garden path: "raced" starts a reduced relative clause
    "the cats near the dog are happy .": 5,  # agreement across one attractor ("dog")
    "the dog near the cats is happy .": 5,
    "the girl that saw the boys near the cats smiles .": 9,  # two attractors
    "the teacher behind the children that fed the dogs laughs .": 9,
    "i have to make sure that the dog gets fed .": 9,  # a composition held out of the training data
    "he ate the cake with the fork .": 6,
}
HIDDEN = "hidden state"
LSTM_VIEWS = {
    "input gate": "input",
    "forget gate": "forget",
    "output gate": "output",
    "candidate": "candidate",
    "cell state": "cell",
}  # view -> key of RecurrentLM.gates(idx)
MAX_UNITS = 32  # rows of the heatmap: the first 32 units of a larger hidden state
MAX_WORDS = 30  # the longest sentence the heatmap has room for
TOP_K = MAX_K  # bars per panel: as many as the panels have room for
ORACLE = "oracle (the truth)"
NEXT = "next word"  # the third panel: P(the word that actually comes next) under each model
NEXT_COLOR = palette.RIGHT  # the label of the word that actually comes next
_CACHE_SIZE = 64  # sentences whose readings are kept
# In lecture mode (a projector's 1280 × 720) the picture must be shown near its own size, about 750 × 530 pixels at
# 22-pixel text: 16 units in thinner rows, token labels cut at 5.5 text heights, the oracle's and the model's panels
# with 5 shorter bars and a one-line key; P(the actual next word) is in the readout only (no third panel).
LECTURE_UNITS = 16
LECTURE_UNIT_PX = 6  # the height of a unit's row
LECTURE_LABEL_EM = 5.5  # the token labels' height, in text heights
LECTURE_BARS = 5
LECTURE_BAR_EM = 6.5


def has_gates(model) -> bool:
    """True for a model whose ``gates(idx)`` shows an LSTM's gates."""
    return getattr(model, "cell", None) == "lstm" and callable(getattr(model, "gates", None))


def views(model) -> list[str]:
    """What the heatmap can show for ``model``: its hidden state, and an LSTM's four gates and cell state."""
    return [HIDDEN, *LSTM_VIEWS] if has_gates(model) else [HIDDEN]


def value_range(view: str) -> tuple[float, float]:
    """The fixed colour scale of a view: tanh outputs lie in (-1, 1), sigmoid gates in (0, 1).

    The cell state is a running sum, not squashed: its colours are clipped at ±3.
    """
    return {HIDDEN: (-1.0, 1.0), "candidate": (-1.0, 1.0), "cell state": (-3.0, 3.0)}.get(view, (0.0, 1.0))


@torch.no_grad()
def model_maps(model, idx: torch.Tensor) -> tuple[dict[str, np.ndarray], int]:
    """Each view of ``model`` on ``idx`` (1, T) as view -> (units, T), the first ``MAX_UNITS`` units; and H."""
    maps = {HIDDEN: model.hidden_states(idx)[0]}  # (T, H)
    if has_gates(model):
        gates = model.gates(idx)  # gate -> (1, T, H)
        maps.update({view: gates[gate][0] for view, gate in LSTM_VIEWS.items()})  # (T, H) each
    shown = {view: states[:, :MAX_UNITS].T.float().cpu().numpy() for view, states in maps.items()}  # (units, T)
    return shown, maps[HIDDEN].shape[-1]


@dataclass(frozen=True)
class Reading:
    """Everything the widget shows for one sentence, computed once."""

    words: tuple[str, ...]
    probs: dict[str, np.ndarray]  # model -> (T, V) next-token probabilities after each prefix; T = words + 1
    maps: dict[str, dict[str, np.ndarray]]  # model -> view -> (units, T)
    hidden_size: dict[str, int]  # model -> H
    oracle: list[np.ndarray]  # (V,) per position, for the positions whose prefix is in the language
    account: str | None  # the oracle's account of where the sentence leaves the language

    def next_word(self, t: int) -> str:
        """The word that actually follows position ``t`` (``</s>`` after the last word)."""
        return self.words[t] if t < len(self.words) else EOS


@torch.no_grad()
def read_sentence(models: dict, vocab: Vocab, oracle: CourseLanguage, words: tuple[str, ...]) -> Reading:
    """Run every model over ``<s> + words`` and ask the oracle at every position it can answer."""
    ids = [vocab.bos_id, *vocab.encode(list(words))]
    probs, maps, sizes = {}, {}, {}
    for name, model in models.items():
        device = next(model.parameters()).device
        idx = torch.tensor([ids], device=device)  # (1, T)
        logits, _ = model(idx)  # (1, T, V)
        probs[name] = torch.softmax(logits[0].double(), dim=-1).cpu().numpy()  # (T, V)
        maps[name], sizes[name] = model_maps(model, idx)
    failure = oracle.score(words).failure
    answerable = failure.position if failure else len(words)  # prefixes words[:t] in the language: t <= this
    answers = [oracle_probs(oracle, vocab, words[:t]).numpy() for t in range(answerable + 1)]  # (V,) each
    account = None if failure is None else f"the sentence is not in the course language: {failure}"
    return Reading(words, probs, maps, sizes, answers, account)


class HeatmapPainter:
    """Paints a units × tokens heatmap: title, cells, unit numbers, rotated token labels and a colour bar."""

    def __init__(self, width: int, words: list[str], *, units: int = MAX_UNITS, unit_px: int | None = None,
                 label_em: float | None = None):  # fmt: skip
        """A heatmap ``width`` pixels wide whose token labels have room for each of ``words``; by default
        ``MAX_UNITS`` rows of half a text height each. A smaller picture (lecture mode): fewer ``units``, rows of
        ``unit_px`` pixels, labels cut at ``label_em`` text heights."""
        self.px = round(14 * text_scale())  # text size in pixels
        self.font, self.bold = pillow_font(self.px), pillow_font(self.px, "bold")
        self.width = width
        self.units = units
        self.left = round(self.font.getlength("000")) + self.px  # unit numbers
        self.right = round(4.5 * self.px)  # the colour bar and its numbers
        self.top = round(2.2 * self.px)  # the title
        self.rows = units * (unit_px or max(2, round(0.5 * self.px)))  # pixels for the units
        self.label_h = round(max(self.bold.getlength(w) for w in words)) + self.px // 2  # the token labels
        if label_em is not None:
            self.label_h = min(self.label_h, round(label_em * self.px))
        self.height = self.top + self.rows + self.label_h + self.px // 2

    def min_width(self, columns: int) -> int:
        """The width that gives ``columns`` tokens a column as wide as a line of text."""
        return self.left + columns * self.px + self.right

    def paint(self, picture: Image.Image, values: np.ndarray, tokens: list[str], t: int, title: str,
              vrange: tuple[float, float]) -> None:  # fmt: skip
        """The heatmap of ``values`` (units, T) over ``tokens`` (T labels), position ``t`` boxed."""
        pen = ImageDraw.Draw(picture)
        pen.text((self.px // 2, self.px // 2), title, fill="black", font=self.bold, anchor="lt")
        units, columns = values.shape
        cell_w = min(3 * self.px, (self.width - self.left - self.right) // columns)
        cell_h = self.rows // units
        cmap = matplotlib.colormaps["RdBu_r" if vrange[0] < 0 else "viridis"]  # diverging around 0, or 0..1
        rgba = cmap(Normalize(*vrange, clip=True)(values), bytes=True)  # (units, T, 4)
        cells = np.repeat(np.repeat(rgba, cell_h, axis=0), cell_w, axis=1)  # (units·cell_h, T·cell_w, 4)
        picture.paste(Image.fromarray(cells, "RGBA"), (self.left, self.top))
        bottom = self.top + units * cell_h
        for unit in range(0, units, max(1, units // 4, math.ceil(2 * self.px / cell_h))):  # numbers 2 lines apart
            pen.text((self.left - self.px // 3, self.top + unit * cell_h + cell_h // 2), str(unit), fill="black",
                     font=self.font, anchor="rm")  # fmt: skip
        box = (self.left + t * cell_w - 2, self.top - 3, self.left + (t + 1) * cell_w + 1, bottom + 2)
        pen.rectangle(box, outline="black", width=max(2, self.px // 6))
        picture.paste(self._labels(tokens, t, cell_w), (self.left, bottom + 4))
        self._colour_bar(pen, picture, self.left + columns * cell_w + self.px, cmap, vrange)

    def _labels(self, tokens: list[str], t: int, cell_w: int) -> Image.Image:
        """The tokens written upwards, one per column, the chosen one bold and the next one in green."""
        strip = Image.new("RGBA", (self.label_h, len(tokens) * cell_w), "white")
        pen = ImageDraw.Draw(strip)
        for i, token in enumerate(tokens):
            font, color = (self.bold, "black") if i == t else (self.font, NEXT_COLOR if i == t + 1 else "black")
            token = fit_text(font, token, self.label_h - 2)  # cut with "…" only where the labels' room is cut
            pen.text((self.label_h - 2, i * cell_w + cell_w // 2), token, fill=color, font=font, anchor="rm")
        return strip.rotate(90, expand=True)  # the end of each word now touches the heatmap

    def _colour_bar(self, pen: ImageDraw.ImageDraw, picture: Image.Image, x: int, cmap, vrange) -> None:
        """A vertical colour ramp at ``x``, high values on top, with its ends and middle numbered."""
        low, high = vrange
        ramp = cmap(np.linspace(1.0, 0.0, self.rows), bytes=True)[:, None, :]  # (rows, 1, 4), top = high
        picture.paste(Image.fromarray(np.repeat(ramp, self.px, axis=1), "RGBA"), (x, self.top))
        for value, y in ((high, self.top), ((low + high) / 2, self.top + self.rows // 2), (low, self.top + self.rows)):
            pen.text((x + round(1.3 * self.px), y), f"{value:g}", fill="black", font=self.font, anchor="lm")


class SequenceDemo(ExamplesWithAccount, PaintedDemo):
    """A sentence box with examples, the position t, the model and what to show of it.

    ``models`` maps names to recurrent LMs (``hidden_states(idx)``; an LSTM also ``gates(idx)``)
    over ``vocab``; ``oracle`` is the course language. With no arguments: the shipped RNN, GRU and
    LSTM (``lm_checkpoints.default_demo_models()``), ``course_vocab()`` and the full course language.
    After each redraw, ``shown`` maps each panel to its bars (word, probability, colour key) and
    ``shown_map`` holds the heatmap's values (units, T). Made in lecture mode, the picture fits a projector: the
    first ``LECTURE_UNITS`` units, the oracle's and the model's panels of ``LECTURE_BARS`` bars (no third panel: the
    readout gives P(the next word)), sentences of up to ``max_words`` words.
    """

    def __init__(self, models: dict | None = None, vocab: Vocab | None = None, oracle: CourseLanguage | None = None,
                 *, sentence: str = next(iter(EXAMPLES))):  # fmt: skip
        self.models, self.vocab = models_and_vocab(models, vocab)
        self.oracle = CourseLanguage() if oracle is None else oracle
        self._check_arguments()
        if not isinstance(sentence, str):
            raise CourseInputError(f"sentence must be a string, got {type(sentence).__name__}")
        self._cache: dict[tuple[str, ...], Reading] = {}
        self._account: str | None = None
        self.shown: dict[str, list[tuple[str, float, str]]] = {}
        self.shown_map: np.ndarray | None = None
        self._lecture = is_lecture_mode()  # the projector's layout: a smaller heatmap, two panels, a short readout
        self._build_figure()
        first = next(iter(self.models))
        self.examples = widgets.Dropdown(options=list(EXAMPLES), value=sentence if sentence in EXAMPLES else None)
        controls = {
            "sentence": text_box(
                sentence, "sentence", "a sentence of the course language; Enter to read it", width="36em"
            ),
            "position": widgets.IntSlider(
                value=EXAMPLES.get(sentence, 0), min=0, max=len(tokenize(sentence)), description="position t"
            ),
            "model": widgets.Dropdown(options=list(self.models), value=first, description="model"),
            "show": widgets.Dropdown(options=views(self.models[first]), value=HIDDEN, description="show"),
        }
        # Registered before the Demo's own observers, so the slider and the views fit before the redraw.
        controls["sentence"].observe(self._on_sentence, names="value")
        controls["model"].observe(self._on_model, names="value")
        self.examples.observe(self._on_example, names="value")
        super().__init__(controls, title="Inside a recurrent LM: its state at each token, and its next-word guess")

    def _check_arguments(self) -> None:
        check_models(self.models, self.vocab, limit=8)
        if not isinstance(self.oracle, CourseLanguage):
            raise CourseInputError(f"oracle must be a CourseLanguage, got {type(self.oracle).__name__}")
        for name, model in self.models.items():
            if not callable(getattr(model, "hidden_states", None)):
                raise CourseInputError(
                    f"models[{name!r}] must be a recurrent LM with hidden_states(idx), e.g. a RecurrentLM"
                )
        missing = sorted(self.oracle.vocabulary - set(self.vocab.itos))
        if missing:
            raise CourseInputError(f"the vocabulary lacks words of the course language, e.g. {missing[:5]}")

    def _build_figure(self) -> None:
        """The painters: the heatmap above, three bar panels below, as wide as the wider needs. In lecture mode two
        panels (the oracle's and the model's), as wide as they are; the heatmap has a column a text height wide
        for each token of the longest sentence that fits (``max_words``)."""
        tokens = [BOS, *self.vocab.itos]
        if self._lecture:
            self.bars = Painter(2, self.vocab.itos, max_bars=LECTURE_BARS, bar_em=LECTURE_BAR_EM, key=SHORT_KEY)
            self.heatmap = HeatmapPainter(self.bars.size[0], tokens, units=LECTURE_UNITS, unit_px=LECTURE_UNIT_PX,
                                          label_em=LECTURE_LABEL_EM)  # fmt: skip
            self.max_words = min(MAX_WORDS, (self.bars.size[0] - self.heatmap.min_width(0)) // self.heatmap.px - 1)
        else:
            self.bars = Painter(3, [*self.vocab.itos, *self.models, "oracle"])  # the names label the third panel
            probe = HeatmapPainter(0, tokens)
            width = max(self.bars.size[0], probe.min_width(MAX_WORDS + 1))
            self.heatmap = HeatmapPainter(width, tokens)
            self.max_words = MAX_WORDS
        width = self.heatmap.width
        self.size = (width, self.heatmap.height + self.bars.size[1])
        self.make_canvas(*self.size)

    # -- keeping the controls consistent
    def _fit_position(self, words: int, t: int) -> None:
        """The slider runs over 0..words (after the last word comes </s>); its value is ``t``, clipped."""
        slider = self.controls["position"]
        with self.quietly():
            slider.max = max(words, 0)
            slider.value = min(max(t, 0), slider.max)

    def _on_sentence(self, change) -> None:
        self._fit_position(len(tokenize(change["new"])), self.controls["position"].value)
        self._on_typed(change)

    def _on_example(self, change) -> None:
        sentence = change["new"]
        if sentence is None:
            return
        if self.controls["sentence"].value == sentence:
            self.controls["position"].value = EXAMPLES[sentence]
            return
        self._fit_position(len(tokenize(sentence)), EXAMPLES[sentence])
        self.controls["sentence"].value = sentence

    def _on_model(self, change) -> None:
        show = self.controls["show"]
        keep, options = show.value, views(self.models[change["new"]])
        with self.quietly():
            show.options = options  # resets the value
            show.value = keep if keep in options else HIDDEN

    # -- reading and drawing
    def reading(self, words: tuple[str, ...]) -> Reading:
        """The models' and the oracle's view of ``words`` (cached)."""
        if words not in self._cache:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[words] = read_sentence(self.models, self.vocab, self.oracle, words)
        return self._cache[words]

    def _words(self, sentence: str) -> tuple[str, ...]:
        """The sentence's words, if every model can read them and the heatmap has room for them."""
        words = tuple(tokenize(sentence))
        if not words:
            raise CourseInputError(f"type a sentence, e.g. '{next(iter(EXAMPLES))}'")
        unknown = unknown_words_message(self.vocab, words)
        if unknown:
            raise CourseInputError(unknown)
        for name, model in self.models.items():
            limit = getattr(model, "max_len", None)
            if limit is not None and len(words) + 1 > limit:
                raise CourseInputError(f"{name} reads at most max_len = {limit} tokens; with <s> this sentence has "
                                       f"{len(words) + 1}. Shorten it.")  # fmt: skip
        if len(words) > self.max_words:
            raise CourseInputError(f"the picture has room for {self.max_words} words; this sentence has {len(words)}")
        return words

    def _panels(self, reading: Reading, name: str, t: int) -> list[Panel]:
        """The oracle's bars at ``t`` (or a note), model ``name``'s coloured by the oracle, and P(next word)."""
        q = reading.probs[name][t]  # (V,)
        if t >= len(reading.oracle):
            note = Panel(ORACLE, note="not in the course language:\nno word can come next")
            return [note, top_panel(name, q, self.vocab, lambda word: "possible"), self._next_panel(reading, t)]
        p = reading.oracle[t]  # (V,)
        allowed = lambda word: "possible" if p[self.vocab.stoi[word]] > 0 else "impossible"  # noqa: E731
        title = f"{name}  (TV {compare_to_oracle(q, p).tv:.2f})"
        return [top_panel(ORACLE, p, self.vocab, lambda word: "oracle"), top_panel(title, q, self.vocab, allowed),
                self._next_panel(reading, t)]  # fmt: skip

    def next_word_probs(self, reading: Reading, t: int) -> dict[str, float | None]:
        """P(the word that follows position ``t``) under each model and the oracle (None if it has no answer)."""
        target = reading.next_word(t)
        index = self.vocab.eos_id if target == EOS else self.vocab.stoi[target]
        probs: dict[str, float | None] = {name: float(p[t, index]) for name, p in reading.probs.items()}
        probs["oracle"] = float(reading.oracle[t][index]) if t < len(reading.oracle) else None
        return probs

    def _next_panel(self, reading: Reading, t: int) -> Panel:
        """P(the actual next word) under every model and the oracle, largest first; red if the oracle rules it out."""
        probs = self.next_word_probs(reading, t)
        oracle = probs.pop("oracle")
        kinds = {name: "possible" if oracle is None or oracle > 0 else "impossible" for name in probs}
        if oracle is not None:
            probs["oracle"], kinds["oracle"] = oracle, "oracle"
        ranked = sorted(probs.items(), key=lambda item: -item[1])  # the painter scales bars to the first
        return Panel(f"P({reading.next_word(t)}), the actual next word", ranked, [kinds[name] for name, _ in ranked])

    def _readout(self, reading: Reading, t: int) -> str:
        target = reading.next_word(t)
        after = f"after '{' '.join(reading.words[:t])}'" if t else "at the start of the sentence"
        probs = self.next_word_probs(reading, t)
        parts = [f"{name} {p:.3g}" if p is not None else f"{name}: none" for name, p in probs.items()]
        if self._lecture:  # one or two lines: the heatmap's labels show the words read so far
            return f"t = {t}, the next word is '{target}'. P({target}): " + " · ".join(parts)
        return f"t = {t}, {after}: the next word is '{target}'. P({target}): " + " · ".join(parts)

    def painted_text_px(self) -> float:
        return min(self.bars.px, self.heatmap.px)

    def legends(self) -> list[dict[str, str]]:
        return [self.bars.legend()]

    def draw(self, sentence: str, position: int, model: str, show: str) -> Figure:
        model = check_choice("model", model, list(self.models))
        show = check_choice("show", show, views(self.models[model]))
        words = self._words(sentence)
        t = check_int("position t", position, minimum=0, maximum=len(words))
        reading = self.reading(words)
        if reading.account is not None:
            after = len(reading.oracle)
            beyond = f"; from t = {after} on the oracle has no next word" if after <= len(words) else ""
            self._account = f"{reading.account}. The models are drawn anyway{beyond}."
        picture = Image.new("RGBA", self.size, "white")
        values = reading.maps[model][show]  # (units, T)
        values = values[: self.heatmap.units]  # (units, T): the first 16 of them in lecture mode
        title = f"{model}: {show} after each token (units 0–{len(values) - 1} of {reading.hidden_size[model]})"
        self.heatmap.paint(picture, values, [BOS, *words], t, title, value_range(show))
        bars, pen = self.bars.new_picture()
        panels = self._panels(reading, model, t)[: 2 if self._lecture else 3]  # lecture: P(next word) in the readout
        for index, panel in enumerate(panels):
            self.bars.paint(pen, index, panel, self.bars.max_bars)  # TOP_K bars, or fewer in lecture mode
        picture.paste(bars, (0, self.heatmap.height))
        self.layer.set_pixels(np.asarray(picture))
        top = self.bars.max_bars
        self.shown = {panel_name: [(word, p, kind) for (word, p), kind in zip(panel.top[:top], panel.kinds)]
                      for panel_name, panel in zip((ORACLE, model, NEXT), panels)}  # fmt: skip
        self.shown_map = values
        self.show_readout(self._readout(reading, t))
        return self.figure
