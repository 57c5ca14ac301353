"""Widget: type the start of a sentence; see each model's next-word distribution beside the oracle's.

The oracle (``CourseLanguage.next_distribution``) is the truth, so every bar can be judged: a red
bar is a word the oracle says cannot come next. The readout compares each model with the oracle:
the probability it gives the oracle's most likely word, the total variation distance
TV = ½ Σ |p − q| (the share of probability in the wrong places), KL(oracle ‖ model) in nats (the
extra cost per word of coding the truth with the model) and the mass on impossible words.

Speed: distributions are computed once per context and kept, so moving k only redraws. The
panels are painted with Pillow, not with matplotlib artists: matplotlib 3.11 lays out and
renders every glyph in Python (about 0.2 ms a glyph), and six panels of words and numbers hold
some 700 glyphs. The picture reaches the figure as one bitmap (``painting.PaintedDemo``).
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from course_utils.lecture import is_lecture_mode
from course_utils.models import lm
from course_utils.language.grammar import CourseLanguage
from course_utils.evaluation.lm_probes import oracle_probs
from course_utils.language.text_pipeline import Vocab, tokenize
from course_utils.validation import CourseInputError, check_int
from course_utils.evaluation.lm_probes import compare_to_oracle
from course_utils.widgets.painting import MAX_K, SHORT_KEY, PaintedDemo, Painter, Panel, top_panel
from course_utils.widgets.widget_kit import ExamplesWithAccount, check_models, text_box, unknown_words_message

EXAMPLES = (
    "the cat near the dogs",
    "he ate the cake with the",
    "i have to make sure that the dog gets",
    "kayla ate the",
    "the horse which was raced past the barn",
    "",
)
MAX_MODELS = 7  # panels: the oracle's and up to seven models', in two rows
# In lecture mode (a projector's 1280 × 720) the picture must be shown near its own size, about 750 × 520 pixels at
# 22-pixel text: the panels in two columns, shorter bars, as many as the rows leave room for (6 for the oracle and up
# to three models, 3 for up to five), and a colour key on one line.
LECTURE_BARS = 6
LECTURE_HEIGHT = 520  # pixels: the panels and the key
LECTURE_BAR_EM = 6.5  # the longest bar, in text heights (10 otherwise)
_CACHE_SIZE = 256  # contexts whose distributions are kept


def default_models() -> dict[str, torch.nn.Module]:
    """Notebook 04's models: n-grams counted on the training split and the shipped FFNNs (N = 3, 5)."""
    from course_utils import zoo
    from course_utils.zoo.lm_checkpoints import ngram_models

    return {**ngram_models(), "FFNN N=3": zoo.load("ffnn_n3"), "FFNN N=5": zoo.load("ffnn_n5")}


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
class Prediction:
    """Everything the widget shows for one context, computed once."""

    models: dict[str, np.ndarray]  # name -> (V,) next-word probabilities
    oracle: np.ndarray | None  # (V,); None when the prefix is not in the language
    account: str | None  # the oracle's account of where an ungrammatical prefix fails
    panels: list[Panel]  # the oracle's, then one per model
    readout: str


class NextWordDemo(ExamplesWithAccount, PaintedDemo):
    """A context box, example contexts and k; one bar panel per model beside the oracle's.

    ``models`` maps names to language models with the course's LM interface, all over ``vocab``;
    ``oracle`` is the course language that says what may come next. With no arguments: notebook
    04's models (``default_models()``), ``course_vocab()`` and the full course language.
    After each redraw, ``shown`` maps each panel's name to its bars: (word, probability, colour key). Made in
    lecture mode, the picture fits a projector: the panels in two columns, up to ``LECTURE_BARS`` shorter bars each
    (k goes up to that), a short readout.
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
        self._lecture = is_lecture_mode()  # the projector's layout: fewer, shorter bars and a short readout
        self._cache: dict[tuple[str, ...], Prediction] = {}
        self._account: str | None = None
        self.shown: dict[str, list[tuple[str, float, str]]] = {}
        self._build_figure()
        bars = self.painter.max_bars  # MAX_K, or fewer in lecture mode
        self.examples = widgets.Dropdown(options=EXAMPLES, value=context if context in EXAMPLES else None)
        self.examples.observe(self._on_example, names="value")
        controls = {
            "context": text_box(context, "context", "the start of a sentence; Enter to predict"),
            "k": widgets.IntSlider(value=min(top_k, bars), min=1, max=bars, description="top k words"),
        }
        super().__init__(controls, title="What comes next? Each model's guess beside the truth (the oracle)")
        controls["context"].observe(self._on_typed, names="value")

    def _check_arguments(self) -> None:
        check_models(self.models, self.vocab, limit=MAX_MODELS)
        if not isinstance(self.oracle, CourseLanguage):
            raise CourseInputError(f"oracle must be a CourseLanguage, got {type(self.oracle).__name__}")

    def _build_figure(self) -> None:
        """The painter of one panel per model beside the oracle's, and a canvas its size."""
        self.panel_names = ["oracle (the truth)", *self.models]
        if self._lecture:  # as many bars as fit the height, two at least
            for bars in range(LECTURE_BARS, 1, -1):
                self.painter = Painter(len(self.panel_names), self.vocab.itos, max_bars=bars, bar_em=LECTURE_BAR_EM,
                                       columns=2, key=SHORT_KEY)  # fmt: skip
                if self.painter.size[1] <= LECTURE_HEIGHT:
                    break
        else:
            self.painter = Painter(len(self.panel_names), self.vocab.itos)
        self.make_canvas(*self.painter.size)

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
            panels = [top_panel(self.panel_names[0], oracle, self.vocab, lambda word: "oracle")]
        lines = []
        for name, probs in models.items():
            panel, line = self._model_panel(name, probs, oracle)
            panels.append(panel)
            lines.append(line)
        return Prediction(models, oracle, account, panels, self._readout(words, oracle, lines))

    def _model_panel(self, name: str, probs: np.ndarray, oracle: np.ndarray | None) -> tuple[Panel, str]:
        """One model's panel, and its part of the readout."""
        if probs.sum() == 0:  # an unsmoothed model that never saw this context
            note = "every word has probability 0:\nthis context never occurred in training"
            line = f"{name}: none" if self._lecture else f"{name}: no distribution (an unseen context)"
            return Panel(name, note=note), line
        if oracle is None:
            return top_panel(name, probs, self.vocab, lambda word: "possible"), name
        comparison = compare_to_oracle(probs, oracle)
        possible = lambda word: "possible" if oracle[self.vocab.stoi[word]] > 0 else "impossible"  # noqa: E731
        best = self.vocab.itos[int(np.argmax(oracle))]
        line = (f"{name}: P({best}) = {comparison.p_top:.3f}, TV {comparison.tv:.2f}, KL {comparison.kl:.2f} nats, "
                f"{comparison.impossible:.0%} on impossible words")  # fmt: skip
        if self._lecture:  # the panels' titles give TV; the readout the share of the red bars' kind
            line = f"{name} {comparison.impossible:.0%}"
        return top_panel(f"{name}  (TV {comparison.tv:.2f})", probs, self.vocab, possible), line

    def _readout(self, words: tuple[str, ...], oracle: np.ndarray | None, lines: list[str]) -> str:
        after = f"after '{' '.join(words)}'" if words else "at the start of a sentence"
        if self._lecture:  # one or two lines: on a projector the readout takes the picture's height
            if oracle is None:
                return f"{after}: the oracle has no next word (see the message)"
            return f"{after} · P(a word that cannot come next): " + " · ".join(lines)
        if oracle is None:
            return f"{after}: the oracle has no next word (see the message) · models shown: {', '.join(lines)}"
        best = int(np.argmax(oracle))
        most_likely = f"the oracle's most likely word is '{self.vocab.itos[best]}' ({oracle[best]:.3f})"
        return f"{after}, {most_likely}. " + " · ".join(lines)

    def legends(self) -> list[dict[str, str]]:
        return [self.painter.legend()]

    def draw(self, context: str, k: int) -> Figure:
        k = check_int("k", k, minimum=1, maximum=self.painter.max_bars)
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
