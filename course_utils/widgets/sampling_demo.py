"""Widget: temperature, top-k and top-p sliders reshape a model's next-word distribution; sample, and the oracle judges.

Notebook 10's sampling knobs. Left: the model's next-word distribution after ``<s>`` + the prompt, its
``top_n`` most likely words; a wide grey bar is the model's own probability, a thin coloured bar the
probability after the warp (``generation.warp``: temperature → top-k → top-p, ``generate()``'s
order). Blue: a word the oracle allows; red: one it rules out. Words the cut removes are greyed,
bar and label. Right: the oracle's exact probabilities of the same words, row for row (red
"impossible" where it gives 0). The readout says how many words survive the cut, the model's mass
they hold, and the mass on impossible words before and after. T = 0 is greedy (all mass on the
argmax), not an error (nanoGPT#738). The "sample" button draws continuations (``generation.sample``,
at most ``MAX_NEW_TOKENS`` tokens), each judged by the oracle: ✓ with its log-probability given the
prompt (and per token), or ✗ with where it fails; beside it the model's own log-probability.

The prompt is the words after ``<s>``. An empty prompt, or one of spaces only (said in the readout),
means unconditional generation from ``<s>`` alone. An unknown word is named inline with the closest
known ones; a prompt the oracle rejects still shows the model's distribution, and the message says
the oracle gives it probability 0. The top-p slider starts at 0.05: 0 lies outside (0, 1] (and every
value a slider offers must be valid: tests/demo_driving.py); ``distribution(top_p=0)`` raises
``warp``'s message, which a widened slider would show inline.

Speed: the model's logits and the oracle's distribution are computed once per prompt and kept, so
moving a knob only warps 610 numbers and repaints; the panels are painted with Pillow
(``painting``'s fonts and colour key) and reach the figure as one bitmap (``PaintedDemo``).
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from course_utils.language.grammar import CourseLanguage
from course_utils.language.text_pipeline import Vocab, tokenize
from course_utils.lecture import font_px, is_lecture_mode
from course_utils.models import generation as g
from course_utils.evaluation.lm_probes import oracle_probs
from course_utils.validation import CourseInputError, check_int
from course_utils.widgets import palette
from course_utils.widgets.painting import PaintedDemo, Painter, fit_text, probability_text, rgb
from course_utils.widgets.widget_kit import (
    ERROR_STYLE,
    ExamplesWithAccount,
    check_models,
    label,
    text_box,
    unknown_words_message,
)

EXAMPLES = {  # prompt -> what it shows
    "the": "a subject comes next",
    "": "empty: unconditional, from <s> alone",
    "kayla ate the": "an object comes next",
    "the cat near the dogs": "agreement: a singular verb",
    "he ate the cake with the": "an instrument or a companion",
    "i have to make sure that the dog gets": "a composition held out of training",
}
DEFAULT_MODEL = "gpt_lm"
MAX_ROWS = 25  # the most words a panel has room for
MAX_SAMPLES = 20  # the most continuations one click draws
MAX_NEW_TOKENS = 30  # a continuation's length limit (</s> included)
MAX_TOP_K = 50
KNOB_COLORS = {"raw": palette.SKY_BLUE, "dim": palette.MUTED}  # the model's own bar (outlined when cut), muted text
KNOB_KEY = (("raw", "the model's probability"), ("possible", "after the knobs (T, top-k, top-p)"),
            ("impossible", "after the knobs, a word the oracle rules out"), ("oracle", "the oracle's probability"))  # fmt: skip
# Lecture mode (a projector: the picture fits about 750 × 400 px at 22 px text under the readout and the samples):
# LECTURE_ROWS words, bars 6 text heights long (10 normally), the oracle's panel without the words (the same rows as
# the model's), a shorter key; LECTURE_SAMPLES continuations a click, one line each.
LECTURE_KEY = (("raw", "the model's p"), ("possible", "after the knobs"),
               ("impossible", "ruled out by the oracle"), ("oracle", "the oracle's p"))  # fmt: skip
LECTURE_ROWS = 8
LECTURE_BAR_EM = 6
LECTURE_SAMPLES = 3
LECTURE_NOTE = "the prompt is\nnot in the course\nlanguage: the\noracle gives it\nprobability 0"  # a narrow panel's
OK_COLOR = palette.RIGHT  # a grammatical sample's ✓
_CACHE_SIZE = 256  # prompts whose logits and oracle distribution are kept


def default_model() -> torch.nn.Module:
    """Notebook 08's shipped ``gpt_lm``, the best course LM."""
    from course_utils import zoo

    return zoo.load(DEFAULT_MODEL)


@dataclass(frozen=True)
class Reshaped:
    """The numbers drawn for one prompt and one setting of the knobs; arrays over the vocabulary (V,)."""

    words: tuple[str, ...]  # the prompt's words (after <s>)
    model: np.ndarray  # (V,) the model's next-word probabilities
    warped: np.ndarray  # (V,) softmax(warp(logits, T, top-k, top-p)): 0 for a cut word
    kept: np.ndarray  # (V,) bool: the words that survive the cut
    oracle: np.ndarray | None  # (V,) the oracle's; None when the prompt is not in the language
    account: str | None  # the oracle's account of where the prompt leaves the language
    shown: np.ndarray  # (top_n,) ids of the model's most likely words, most likely first

    @property
    def mass_kept(self) -> float:
        """The model's own probability of the words that survive the cut."""
        return float(self.model[self.kept].sum())

    def impossible_mass(self) -> tuple[float, float] | None:
        """Probability on words the oracle rules out: (the model's, after the warp); None without an oracle."""
        if self.oracle is None:
            return None
        impossible = self.oracle == 0  # (V,)
        return float(self.model[impossible].sum()), float(self.warped[impossible].sum())


class KnobPainter(Painter):
    """Two panels of ``rows`` bars: the model's (own and warped probability) and the oracle's, the same words.

    ``compact`` (lecture mode): shorter bars and key, and the oracle's panel narrower, without the words (its rows are
    the model's panel's), so that the picture fits a projector."""

    key = KNOB_KEY

    def __init__(self, words: list[str], rows: int, *, compact: bool = False):
        self.bars, self.compact = rows, compact
        if compact:
            self.key = LECTURE_KEY
        super().__init__(2, words)

    def _key(self):
        """The colour key; first this painter's colours and panel height (``Painter.__init__`` calls it last)."""
        self.hex.update(KNOB_COLORS)
        self.colors.update({kind: rgb(color) for kind, color in KNOB_COLORS.items()})
        self.value_px = round(7.2 * self.px)  # "0.123 → 0.456"
        bars = round((LECTURE_BAR_EM if self.compact else 10) * self.px)
        self.panel = (self.label_px + bars + self.value_px, 2 * self.px + self.bars * self.row_px)
        # the oracle's panel: as wide as the model's, or (compact) without the words' column and room for "0.123"
        self.oracle_w = bars + round(3.6 * self.px) + self.px if self.compact else self.panel[0]
        width = self.panel[0] + self.oracle_w + self.px
        self.key_lines = self._key_lines(width)
        key_px = round((0.7 + 1.5 * len(self.key_lines)) * self.px)
        self.size = (width, self.panel[1] + key_px)
        return super()._key()

    def _oracle_frame(self) -> tuple[int, int]:
        """The top-left pixel of the oracle's panel."""
        return self.origin(1)

    def _frame(self, pen, index: int, title: str) -> tuple[int, int, int]:
        """Panel ``index``'s title and axis; the top of its first row, where its bars start and their full length."""
        left, top = self.origin(index)
        start = left + self.label_px
        if index == 1 and self.compact:  # no words' column: the bars start after a margin
            left, top = self._oracle_frame()
            start = left + self.px // 2
        if self.compact:
            title = fit_text(self.bold, title, (self.panel[0] if index == 0 else self.oracle_w) - self.px // 2)
        pen.text((left, top), title, fill="black", font=self.bold, anchor="lt")
        area = top + round(1.6 * self.px)
        pen.rectangle((start, area, start, area + self.bars * self.row_px), fill="black")
        if index == 1 and self.compact:
            return area, start, self.oracle_w - self.px // 2 - round(3.6 * self.px) - self.px
        return area, start, self.panel[0] - self.label_px - self.value_px - self.px

    def _word(self, pen, start: int, middle: int, word: str, color) -> None:
        pen.text((start - self.px // 3, middle), word, fill=color, font=self.font, anchor="rm")

    def paint_model(self, pen, title: str, rows: list[tuple[str, float, float, bool, str]]) -> None:
        """Rows (word, own p, warped p, kept, colour key): a wide sky-blue bar, a thin coloured one; a cut row's bar
        outlined, its words muted and its value saying "cut"."""
        area, start, full = self._frame(pen, 0, title)
        widest = max([max(p, w) for _, p, w, _, _ in rows] + [1e-12])
        half = self.row_px * 3 // 8  # half a bar's thickness
        for i, (word, p, w, kept, kind) in enumerate(rows):
            middle = area + i * self.row_px + self.row_px // 2
            end = start + round(full * p / widest)
            fill, width = (self.colors["raw"], 0) if kept else ("white", max(2, self.px // 8))
            pen.rectangle(
                (start, middle - half, end, middle + half), fill=fill, outline=self.colors["raw"], width=width
            )
            text = self.colors["dim"]
            if kept:
                warped_end = start + round(full * w / widest)
                pen.rectangle((start, middle - half // 2, warped_end, middle + half // 2), fill=self.colors[kind])
                end, text = max(end, warped_end), "black"
            self._word(pen, start, middle, word, text)
            value = f"{probability_text(p)} → {probability_text(w)}" if kept else f"{probability_text(p)} cut"
            pen.text((end + self.px // 3, middle), value, fill=text, font=self.font, anchor="lm")

    def paint_oracle(self, pen, title: str, rows: list[tuple[str, float]] | None, note: str) -> None:
        """The oracle's probability of each row's word (red "impossible" for 0), or ``note`` without an oracle."""
        left, top = self._oracle_frame()
        if rows is None:
            if self.compact:
                title = fit_text(self.bold, title, self.oracle_w - self.px // 2)
                note = LECTURE_NOTE
            pen.text((left, top), title, fill="black", font=self.bold, anchor="lt")
            middle = (left + self.oracle_w // 2, top + self.panel[1] // 2)
            pen.multiline_text(middle, note, fill=self.colors["note"], font=self.font, anchor="mm", align="center")
            return
        area, start, full = self._frame(pen, 1, title)
        widest = max([p for _, p in rows] + [1e-12])
        half = self.row_px * 3 // 8
        for i, (word, p) in enumerate(rows):
            middle = area + i * self.row_px + self.row_px // 2
            if not self.compact:
                self._word(pen, start, middle, word, "black")
            if p == 0:
                pen.text((start + self.px // 3, middle), "0: impossible", fill=self.colors["impossible"],
                         font=self.font, anchor="lm")  # fmt: skip
                continue
            end = start + round(full * p / widest)
            pen.rectangle((start, middle - half, end, middle + half), fill=self.colors["oracle"])
            pen.text((end + self.px // 3, middle), probability_text(p), fill="black", font=self.font, anchor="lm")


def knobs_text(temperature: float, top_k: int, top_p: float) -> str:
    """The knobs in one line, e.g. "T = 0.70, top-k off, top-p 0.90"."""
    t = "T = 0 (greedy)" if temperature == 0 else f"T = {temperature:.2f}"
    return f"{t}, top-k {top_k or 'off'}, top-p {'off' if top_p >= 1 else f'{top_p:.2f}'}"


def prompt_text(words: tuple[str, ...]) -> str:
    return " ".join(("<s>", *words))


class SamplingDemo(ExamplesWithAccount, PaintedDemo):
    """A prompt (with examples), temperature, top-k and top-p sliders, and a "sample" button.

    ``model``: any course LM over ``vocab`` (default: the shipped ``gpt_lm`` and ``course_vocab()``);
    ``oracle``: the course language (default: the full one). ``top_n`` words are drawn; each click of
    "sample" draws ``samples`` continuations with ``torch.Generator().manual_seed(seed + click)``, click
    0, 1, 2, … (so the sequence of samples is reproducible from ``seed``). After each redraw ``numbers``
    is the ``Reshaped`` drawn and ``shown`` holds the rows: "model" (word, own p, warped p, kept, colour
    key) and "oracle" (word, p), or None without an oracle. ``draw_samples`` is what the button runs.
    """

    def __init__(self, model=None, vocab: Vocab | None = None, oracle: CourseLanguage | None = None, *,
                 prompt: str = "the", top_n: int = 15, samples: int = 5, seed: int = 0):  # fmt: skip
        self.name = DEFAULT_MODEL if model is None else type(model).__name__
        if vocab is None:
            from course_utils.language.vocab import course_vocab

            vocab = course_vocab()
        self.model = default_model() if model is None else model
        self.vocab, self.oracle = vocab, CourseLanguage() if oracle is None else oracle
        self._check_arguments(prompt)
        self.top_n = check_int("top_n", top_n, minimum=1, maximum=MAX_ROWS)
        self.samples = check_int("samples", samples, minimum=1, maximum=MAX_SAMPLES)
        self.compact = is_lecture_mode()  # a projector: fewer rows and samples (LECTURE_ROWS, LECTURE_SAMPLES)
        if self.compact:
            self.top_n, self.samples = min(self.top_n, LECTURE_ROWS), min(self.samples, LECTURE_SAMPLES)
        self.seed = check_int("seed", seed, minimum=0)
        self.clicks = 0  # sample clicks so far: the next draws with seed + clicks
        self._logits: dict[tuple[str, ...], torch.Tensor] = {}
        self._oracle: dict[tuple[str, ...], tuple[np.ndarray | None, str | None]] = {}
        self._account: str | None = None
        self.numbers: Reshaped | None = None
        self.shown: dict = {}
        self.last_samples: list[dict] = []
        self.sample_latencies: list[float] = []  # seconds per click: sampling, judging, writing the list
        self.painter = KnobPainter(self.vocab.itos, self.top_n, compact=self.compact)
        self.make_canvas(*self.painter.size)
        self._make_widgets(prompt)
        controls = {
            "prompt": text_box(
                prompt, "prompt after <s>", "the words after <s> (empty: unconditional); Enter to predict"
            ),
            "temperature": widgets.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.05, description="temperature T"),
            "top_k": widgets.IntSlider(value=0, min=0, max=MAX_TOP_K, description="top-k (0: off)"),
            "top_p": widgets.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05, description="top-p (1: off)"),
        }
        super().__init__(
            controls, title="Sampling knobs: temperature, top-k and top-p reshape the next-word distribution"
        )
        controls["prompt"].observe(self._on_typed, names="value")

    def _picture_parts(self) -> list[widgets.Widget]:
        readout, message, plot = super()._picture_parts()
        return [readout, message, self.sample_list, plot]  # the samples above the plot

    def _check_arguments(self, prompt) -> None:
        check_models({self.name: self.model}, self.vocab, limit=1)
        if not isinstance(self.oracle, CourseLanguage):
            raise CourseInputError(f"oracle must be a CourseLanguage, got {type(self.oracle).__name__}")
        missing = sorted(self.oracle.vocabulary - set(self.vocab.itos))
        if missing:
            raise CourseInputError(f"the vocabulary lacks words of the course language, e.g. {missing[:5]}")
        if not isinstance(prompt, str):
            raise CourseInputError(f"prompt must be a string, got {type(prompt).__name__}")
        try:  # one forward pass after <s> alone: is it a course LM over this vocabulary?
            scores = g.next_logits(self.model, [self.vocab.bos_id])  # (V,)
        except CourseInputError:
            raise
        except Exception as error:  # noqa: BLE001 - say what was expected
            raise CourseInputError(f"{self.name} is not a course language model (model(idx) -> (logits, loss)): "
                                   f"{type(error).__name__}: {error}") from None  # fmt: skip
        if scores.shape != (len(self.vocab),):
            raise CourseInputError(f"{self.name} is not a course language model over this vocabulary: it gives "
                                   f"{tuple(scores.shape)} next-token scores for {len(self.vocab)} words")  # fmt: skip

    def _make_widgets(self, prompt: str) -> None:
        """The examples, the sample button and the list of samples (not controls: they do not redraw)."""
        options = [(f"{text or '(empty)'}   ({note})", text) for text, note in EXAMPLES.items()]
        self.examples = widgets.Dropdown(options=options, value=prompt if prompt in EXAMPLES else None,
                                         layout=widgets.Layout(width="32em"))  # fmt: skip
        self.examples.observe(self._on_example, names="value")
        self.sample_button = widgets.Button(description="sample ▶", tooltip="draw continuations with these knobs")
        self.sample_button.on_click(self._on_sample)
        hint = f"click 'sample' to draw {self.samples} continuations (at most {MAX_NEW_TOKENS} tokens each)"
        if self.compact:  # a line a sample, above the picture: the room is kept, so the picture does not move
            hint = f"click 'sample' to draw {self.samples} continuations"
            self.list_px = font_px()  # the readout's size (22 px on a projector)
            line = _LECTURE_LINE.format(px=self.list_px)
            room = widgets.Layout(min_height=f"{_LECTURE_LINE_EM * (self.samples + 1)}em", width="100%",
                                  overflow="hidden")  # fmt: skip
            hint = f"<div style='{line};color:{palette.MUTED}'>{html.escape(hint)}</div>"
            self.sample_list = widgets.HTML(f"<div style='{_LECTURE_LIST}'>{hint}</div>", layout=room)
            return
        self.sample_list = widgets.HTML(f"<span style='font-size:{font_px(15)}px;color:{palette.MUTED}'>{hint}</span>",
                                        layout=widgets.Layout(min_height=f"{1.5 * (self.samples + 1):.1f}em"))  # fmt: skip

    def _control_rows(self) -> widgets.Widget:
        rows = super()._control_rows()
        note = f"{self.samples} continuations; each click a new seed ({self.name})"
        button_row = widgets.HBox(
            [self.sample_button, label(note, size=14)], layout=widgets.Layout(align_items="center")
        )
        rows.children = (*rows.children, button_row)
        return rows

    def _on_example(self, change) -> None:
        if change["new"] is not None:
            self.controls["prompt"].value = change["new"]

    # ------------------------------------------------------------ the numbers

    def prompt_words(self, prompt) -> tuple[str, ...]:
        """The prompt's words (a string is tokenized; empty or spaces: no words), if the model can read them."""
        if isinstance(prompt, str):
            if "<s>" in prompt or "</s>" in prompt:
                raise CourseInputError(
                    "leave out <s> and </s>: the prompt is the words after <s>, which is added for you"
                )
            words = tuple(tokenize(prompt))
        elif isinstance(prompt, (list, tuple)) and all(isinstance(w, str) for w in prompt):
            words = tuple(prompt)
        else:
            raise CourseInputError(f"the prompt must be a string or a list of words, got {prompt!r:.60}")
        unknown = unknown_words_message(self.vocab, words, "the model knows")
        if unknown:
            raise CourseInputError(unknown)
        limit = getattr(self.model, "max_len", None)
        if limit is not None and getattr(self.model, "context_size", None) is None and len(words) + 1 > limit:
            raise CourseInputError(f"the model reads at most max_len = {limit} tokens; with <s> this prompt has "
                                   f"{len(words) + 1}. Shorten it.")  # fmt: skip
        return words

    def logits(self, words: tuple[str, ...]) -> torch.Tensor:
        """The model's next-token logits (V,) after ``<s>`` + ``words`` (computed once per prompt)."""
        if words not in self._logits:
            logits = g.next_logits(self.model, g.encode_prompt(self.vocab, words))  # (V,)
            if not torch.isfinite(logits).any():
                raise CourseInputError("the model gives every word probability 0 after this prompt: it never saw this "
                                       "context in training (an unsmoothed n-gram?); nothing to sample")  # fmt: skip
            _remember(self._logits, words, logits)
        return self._logits[words]

    def oracle_distribution(self, words: tuple[str, ...]) -> tuple[np.ndarray | None, str | None]:
        """The oracle's next-word probabilities (V,) after ``words``, or (None, where the prompt fails); cached."""
        if words not in self._oracle:
            try:
                found = oracle_probs(self.oracle, self.vocab, words).numpy(), None  # (V,)
            except CourseInputError as failure:
                found = None, str(failure)
            _remember(self._oracle, words, found)
        return self._oracle[words]

    def distribution(self, prompt="the", temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> Reshaped:
        """The model's distribution after ``prompt``, warped by ``generation.warp``, and the oracle's.

        Bad knobs raise ``warp``'s ``CourseInputError`` (e.g. top_p outside (0, 1]); T = 0 is greedy.
        """
        words = self.prompt_words(prompt)
        logits = self.logits(words)  # (V,)
        logprobs = g.warp(logits, temperature=temperature, top_k=top_k, top_p=top_p)  # (V,), -inf where cut
        model = torch.softmax(logits, dim=-1).numpy()  # (V,)
        warped = torch.softmax(logprobs, dim=-1).numpy()  # (V,)
        kept = torch.isfinite(logprobs).numpy()  # (V,)
        oracle, account = self.oracle_distribution(words)
        shown = np.argsort(-model, kind="stable")[: self.top_n]  # (top_n,)
        return Reshaped(words, model, warped, kept, oracle, account, shown)

    # ------------------------------------------------------------ drawing

    def legends(self) -> list[dict[str, str]]:
        return [self.painter.legend()]

    def draw(self, prompt: str, temperature: float, top_k: int, top_p: float) -> Figure:
        numbers = self.distribution(prompt, temperature, top_k, top_p)
        if numbers.account is not None:
            self._account = (f"{numbers.account}. The oracle gives this prompt probability 0: the model's "
                             "distribution is shown, the oracle has no next word.")  # fmt: skip
        words = [self.vocab.itos[i] for i in numbers.shown]
        model_rows = [(word, float(numbers.model[i]), float(numbers.warped[i]), bool(numbers.kept[i]),
                       self._kind(numbers, i)) for word, i in zip(words, numbers.shown)]  # fmt: skip
        oracle_rows = None
        if numbers.oracle is not None:
            oracle_rows = [(word, float(numbers.oracle[i])) for word, i in zip(words, numbers.shown)]
        picture, pen = self.painter.new_picture()
        titles = (f"{self.name}: its own p → after the knobs", "the oracle (the truth), the same words")
        if self.compact:
            titles = (f"{self.name}: p → after the knobs", "the oracle")
        self.painter.paint_model(pen, titles[0], model_rows)
        note = "the prompt is not in the course language:\nthe oracle gives it probability 0"
        self.painter.paint_oracle(pen, titles[1], oracle_rows, note)
        self.layer.set_pixels(np.asarray(picture))
        self.numbers, self.shown = numbers, {"model": model_rows, "oracle": oracle_rows}
        self.show_readout(self._readout(prompt, numbers, temperature, top_k, top_p, short=self.compact))
        return self.figure

    @staticmethod
    def _kind(numbers: Reshaped, index: int) -> str:
        """The colour key of a word's warped bar: red if the oracle rules it out."""
        return "impossible" if numbers.oracle is not None and numbers.oracle[index] == 0 else "possible"

    def _readout(self, prompt: str, numbers: Reshaped, temperature: float, top_k: int, top_p: float, *,
                 short: bool = False) -> str:  # fmt: skip
        """The prompt, the knobs, the words and mass that survive the cut, the mass on words the oracle rules out and
        its most likely word; ``short`` (lecture mode): two lines above the picture, without the prompt (it is in the
        controls) and the oracle's word."""
        parts = [f"after {prompt_text(numbers.words)}"]
        if not numbers.words:
            empty = "the prompt is only spaces, the same as an empty prompt" if prompt else "empty prompt"
            parts[0] = f"{empty}: the model starts from <s> alone" + ("" if short else " (unconditional generation)")
        elif short:
            parts = []
        survivors = int(numbers.kept.sum())
        if temperature == 0:
            best = self.vocab.itos[int(np.argmax(numbers.warped))]
            parts.append(f"T = 0: greedy, all mass on '{best}' (the model's own {numbers.model.max():.3f})")
        elif short:
            parts.append(f"{knobs_text(temperature, top_k, top_p)}: {survivors} of {len(self.vocab)} words survive, "
                         f"{numbers.mass_kept:.1%} of the model's p")  # fmt: skip
        else:
            parts.append(f"{knobs_text(temperature, top_k, top_p)}: {survivors} of {len(self.vocab)} words survive "
                         f"the cut, holding {numbers.mass_kept:.1%} of the model's probability")  # fmt: skip
        impossible = numbers.impossible_mass()
        if impossible is None:
            parts.append("the oracle has no next word (see the message)")
        elif short:
            parts.append(f"ruled out by the oracle: {impossible[0]:.1%} → {impossible[1]:.1%}")
        else:
            best = int(np.argmax(numbers.oracle))
            parts.append(
                f"on words the oracle rules out: {impossible[0]:.1%} before the warp, {impossible[1]:.1%} after"
            )
            parts.append(
                f"the oracle's most likely next word is '{self.vocab.itos[best]}' ({numbers.oracle[best]:.3f})"
            )
        return " · ".join(parts)

    # ------------------------------------------------------------ sampling

    def _on_sample(self, _button=None) -> None:
        """The button: draw and list samples; a bad setting becomes the inline message."""
        started = time.perf_counter()
        try:
            self.draw_samples()
        except Exception as error:  # noqa: BLE001 - a projected widget must never show a traceback
            self.show_error(error)
        self.sample_latencies.append(time.perf_counter() - started)

    def draw_samples(self, n: int | None = None) -> list[dict]:
        """Draw ``n`` (default ``samples``) continuations with the current knobs, judge and list them.

        Each is a dict: ``prompt`` and ``words`` (the generated words, ``</s>`` left out), ``text``,
        ``ended`` (``</s>`` was drawn), ``tokens`` (generated, ``</s>`` included), ``model_logprob``
        (the model's own log P(continuation | prompt)), ``grammatical``, ``oracle_logprob`` (the
        oracle's log P(continuation | prompt), -inf when ungrammatical), ``failure`` (where the
        sentence leaves the language, else None) and ``seed``. Bad knobs or prompt raise ``CourseInputError``.
        """
        n = self.samples if n is None else check_int("n", n, minimum=1, maximum=MAX_SAMPLES)
        values = self.values()
        knobs = {name: values[name] for name in ("temperature", "top_k", "top_p")}
        words = self.distribution(values["prompt"], **knobs).words  # checks the prompt and the knobs first
        seed = self.seed + self.clicks
        generator = torch.Generator().manual_seed(seed)
        prefix = g.encode_prompt(self.vocab, words)
        found = [self._judge(words, g.sample(self.model, prefix, max_new_tokens=MAX_NEW_TOKENS, generator=generator,
                                             **knobs), seed) for _ in range(n)]  # fmt: skip
        self.clicks += 1
        self.last_samples = found
        if self.compact:
            self.sample_list.value = _short_samples_html(words, knobs, found, seed, self.list_px)
        else:
            self.sample_list.value = self._samples_html(words, knobs, found, seed)
        return found

    def _judge(self, words: tuple[str, ...], generation: g.Generation, seed: int) -> dict:
        """One continuation, with the oracle's verdict on the whole sentence."""
        new = tuple(self.vocab.decode(generation.content))
        score = self.oracle.score(words + new)
        given_prompt = sum(score.token_logprobs[len(words) :]) if score.grammatical else -math.inf
        return {"prompt": words, "words": new, "text": " ".join(words + new), "ended": generation.ended,
                "tokens": len(generation.ids), "model_logprob": generation.logprob, "grammatical": score.grammatical,
                "oracle_logprob": given_prompt, "failure": None if score.grammatical else str(score.failure),
                "seed": seed}  # fmt: skip

    def _samples_html(self, words: tuple[str, ...], knobs: dict, found: list[dict], seed: int) -> str:
        """The samples as an HTML list: verdict, sentence (prompt greyed), log-probabilities."""
        good = sum(s["grammatical"] for s in found)
        head = (f"{len(found)} samples after {prompt_text(words)} · {knobs_text(**knobs)} · seed {seed} · "
                f"{good} of {len(found)} grammatical")  # fmt: skip
        items = "".join(f"<li>{_sample_html(s)}</li>" for s in found)
        return (f"<div style='font-size:{font_px(15)}px;line-height:1.45'><b>{html.escape(head)}</b>"
                f"<ol style='margin:0.2em 0'>{items}</ol></div>")  # fmt: skip


def _sample_html(sample: dict) -> str:
    """One sample: ✓ or ✗, the sentence, the oracle's and the model's log P(continuation | prompt)."""
    tokens = sample["tokens"]
    prompt = html.escape(" ".join(sample["prompt"]))
    sentence = f"<span style='color:{palette.MUTED}'>{prompt}</span> {html.escape(' '.join(sample['words']))}"
    if not sample["ended"]:
        sentence += f" <i style='color:{palette.MUTED}'>(no &lt;/s&gt; within {tokens} tokens)</i>"
    model = f"model log P {sample['model_logprob']:.2f} ({sample['model_logprob'] / tokens:.2f}/token)"
    if sample["grammatical"]:
        oracle = f"oracle log P {sample['oracle_logprob']:.2f} ({sample['oracle_logprob'] / tokens:.2f}/token)"
        return f"<span style='color:{OK_COLOR}'>✓</span> {sentence} — {oracle} · {model}"
    failure = f"<span style='{ERROR_STYLE}'>{html.escape(sample['failure'])}</span>"
    return f"<span style='color:{palette.WRONG}'>✗</span> {sentence} — {failure} · {model}"


_LECTURE_LINE_EM = 1.35  # a line of the lecture-mode list, in its font's size
_LECTURE_LINE = (f"font-size:{{px}}px;line-height:{_LECTURE_LINE_EM};white-space:nowrap;overflow:hidden;"
                 "text-overflow:ellipsis")  # fmt: skip
_LECTURE_LIST = (
    "contain:inline-size"  # the list's lines never widen the column (its width ignores theirs): they are cut
)


def _short_samples_html(words: tuple[str, ...], knobs: dict, found: list[dict], seed: int, px: int) -> str:
    """Lecture mode's list at ``px`` pixels: a line a sample (cut with "…" at the column's edge), the verdict and the
    sentence first, then the log-probabilities per token or where the oracle rejects it."""
    style = _LECTURE_LINE.format(px=px)
    good = sum(s["grammatical"] for s in found)
    head = f"{good} of {len(found)} grammatical · {knobs_text(**knobs)} · seed {seed}"
    lines = [html.escape(head)]  # bold as a whole line (below): no element of its own to reach past the edge
    for sample in found:
        prompt = html.escape(" ".join(sample["prompt"]))
        # plain text after the prompt: what the column's edge cuts has no element of its own
        sentence = f"<span style='color:{palette.MUTED}'>{prompt}</span> {html.escape(' '.join(sample['words']))}"
        if not sample["ended"]:
            sentence += " (no &lt;/s&gt;)"
        tokens = sample["tokens"]
        if sample["grammatical"]:
            per_token = (f"log P per token: oracle {sample['oracle_logprob'] / tokens:.2f}, "
                         f"model {sample['model_logprob'] / tokens:.2f}")  # fmt: skip
            lines.append(f"<span style='color:{OK_COLOR}'>✓</span> {sentence} — {per_token}")
        else:
            failure = html.escape(sample["failure"].split(": ", 1)[0])
            lines.append(f"<span style='color:{palette.WRONG}'>✗</span> {sentence} — {failure}")
    lines = "".join(f"<div style='{style}{';font-weight:600' * (i == 0)}'>{line}</div>" for i, line in enumerate(lines))
    return f"<div style='{_LECTURE_LIST}'>{lines}</div>"


def _remember(cache: dict, key, value) -> None:
    """``cache[key] = value``, the cache emptied first when full."""
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = value
