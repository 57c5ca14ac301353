"""Widget: beam search drawn step by step, as a tree: running beams, pruned branches dashed, finished hypotheses scored.

The picture reads left to right, one column per step. Each node is a word with, below it, its running
probability (the slide's tree: p = exp of the summed log-probabilities) or its log P (a course model). Running
beams are blue; pruned branches (not among the best k) and dropped hypotheses (they ended, but were not kept)
are muted and dashed; a finished hypothesis kept by the search is boxed in green with its rank and its normalised
score; the winner's path is orange once the whole search is drawn. The examples are J&M's yes/ok tree (Fig.
13.7: width 1 is greedy, *yes yes* .20; width 2 finds *ok ok* .28) and prompts for the course model, whose
vocabulary has hundreds of words: each step then shows only the 2k candidates ``beam_search`` considers. On the
slide's tree every branch is drawn, also those outside the 2k.

The readout ranks the finished hypotheses (raw log P, length, normalised score; for the course model the
oracle's verdict) and says whether widening the beam changes the winner (width 1 = greedy against the width
chosen). An empty prompt is allowed: the model generates from ``<s>`` alone, and the readout says so. An
unknown word or a too-long prompt is an inline message.

Speed: every (example or prompt, width, normalisation) is searched once (``generation.traced_beam_search``)
and kept; the step slider only repaints. The tree (``beam_tree``) is painted with Pillow (matplotlib
text is slow) and reaches the figure as one bitmap, as in ``sequence_demo``.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from course_utils.language.grammar import CourseLanguage
from course_utils.language.text_pipeline import Vocab, tokenize
from course_utils.lecture import font_px, is_lecture_mode
from course_utils.models import generation as g
from course_utils.slides.slide_generation import jm_tree_lm
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets.beam_tree import (
    ALL_BRANCHES_VOCAB,
    IDLE,
    KEY,
    MAX_WIDTH,
    Hypothesis,
    Node,
    Search,
    TreePainter,
    probability_text,
    tree_nodes,
)
from course_utils.widgets.painting import PaintedDemo
from course_utils.widgets.widget_kit import (
    PNG_DPI,
    ExamplesWithAccount,
    check_models,
    set_range,
    unknown_words_message,
)

TREE = "the slide's yes/ok tree (J&M Fig. 13.7)"  # the examples dropdown's value for the slide's tree
TREE_WORDS = ("<s>", "yes", "ok", "</s>")
EXAMPLES = {  # dropdown label -> prompt for the course model (TREE: the slide's tree)
    TREE: TREE,
    "course model: 'the' (the normalisation changes the winner)": "the",
    "course model: 'the horse which was raced past the barn' (greedy rambles)": "the horse which was raced past the barn",
    "course model: no prompt (from <s> alone)": "",
    "course model: 'the hunter' (every width agrees)": "the hunter",
}
NORMALISATIONS = {  # button -> (generation.beam_search's normalisation, length_penalty α)
    "none (sum of log P)": ("none", 1.0),
    "eq. 13.16: mean": ("mean", 1.0),
    "GNMT α=0.6": ("gnmt", 0.6),
}
TREE_MAX_WIDTH = 7  # width 7 keeps all seven complete paths of the slide's tree
MAX_NEW_TOKENS = 12  # the most steps the picture has room for
MAX_PROMPT_WORDS = 20
_CACHE_SIZE = 256  # searches kept


def tree_model() -> g.TableLM:
    """The slide's tree (J&M Fig. 13.7) as a language model; its prefix is ``[bos_id]``."""
    return g.TableLM(jm_tree_lm, list(TREE_WORDS))


def traced_search(model, prefix: list[int], width: int, normalisation: str, max_new_tokens: int):
    """``generation.traced_beam_search``: (Generation, [BeamStep])."""
    kind, alpha = NORMALISATIONS[normalisation]
    trace: list[g.BeamStep] = []
    found = g.traced_beam_search(model, prefix, width=width, max_new_tokens=max_new_tokens, normalisation=kind,
                                 length_penalty=alpha, trace=trace)  # fmt: skip
    return found, trace


def oracle_verdict(oracle: CourseLanguage, prompt: tuple[str, ...], words: tuple[str, ...], limit: int) -> str:
    """The oracle's word on a finished hypothesis: grammatical (with its log P) or where it fails."""
    if not words or words[-1] != "</s>":
        return f"unfinished: no </s> within {limit} tokens"
    try:
        score = oracle.score(prompt + words[:-1])
    except CourseInputError:  # a vocabulary the oracle does not know
        return ""
    if score.grammatical:
        return f"oracle: ✓ a sentence (oracle log P {score.logprob:.2f})"
    return f"oracle: ✗ '{score.failure.word}' (word {score.failure.position + 1}) cannot come there"


class BeamSearchDemo(ExamplesWithAccount, PaintedDemo):
    """Examples (the slide's tree, course prompts), a prompt box, the beam width, the normalisation and the steps.

    ``model`` is a course LM over ``vocab`` (default: the shipped ``gpt_lm`` and ``course_vocab()``); ``oracle``
    the course language that judges its finished hypotheses. ``example``: a label of ``EXAMPLES`` (default: the
    slide's tree) or a prompt for the model. ``tree()`` returns the nodes drawn, ``shown_search`` their search,
    ``search(words, width, normalisation)`` any search (cached).
    """

    def __init__(self, model=None, vocab: Vocab | None = None, *, example: str = TREE, width: int = 2,
                 normalisation: str = next(iter(NORMALISATIONS)), max_new_tokens: int = MAX_NEW_TOKENS,
                 oracle: CourseLanguage | None = None):  # fmt: skip
        self.model, self.vocab, self.model_name = self._model_and_vocab(model, vocab)
        check_models({"model": self.model}, self.vocab, limit=1)
        self.oracle = CourseLanguage() if oracle is None else oracle
        self.max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1, maximum=MAX_NEW_TOKENS)
        if not isinstance(example, str):
            raise CourseInputError(f"example must be a string, got {type(example).__name__}")
        value = EXAMPLES.get(example, example)
        normalisation = check_choice("normalisation", normalisation, list(NORMALISATIONS))
        self._tree, self._syncing = value == TREE, False
        self._cache: dict[tuple, Search] = {}
        self._shown: tuple[Search | None, int] = (None, 0)
        self.tree_lm = tree_model()
        self.painter = TreePainter(compact=is_lecture_mode())  # compact: a canvas sized to each tree (a projector)
        self.make_canvas(self.painter.width, self.painter.height)
        course = [(label, prompt) for label, prompt in EXAMPLES.items() if prompt != TREE]
        self.examples = widgets.Dropdown(options=[(TREE, TREE), *course], layout=widgets.Layout(width="36em"),
                                         value=value if value in EXAMPLES.values() else None)  # fmt: skip
        width_cap = TREE_MAX_WIDTH if self._tree else MAX_WIDTH
        controls = {
            "prompt": widgets.Text(
                value="" if self._tree else value,
                description="prompt",
                continuous_update=False,
                placeholder=f"a prompt for {self.model_name}; Enter to search",
                layout=widgets.Layout(width="32em"),
            ),
            "width": widgets.IntSlider(
                value=check_int("width", width, minimum=1, maximum=width_cap),
                min=1,
                max=width_cap,
                description="beam width k",
            ),
            "normalisation": widgets.ToggleButtons(
                options=list(NORMALISATIONS), value=normalisation, description="rank finished by"
            ),
            "step": widgets.IntSlider(value=MAX_NEW_TOKENS, min=1, max=MAX_NEW_TOKENS, description="show steps 1…"),
        }
        self.examples.observe(self._on_example, names="value")
        controls["prompt"].observe(self._on_typed, names="value")  # before the Demo's redraw
        super().__init__(controls, title="Beam search, step by step: which hypotheses survive?")

    @staticmethod
    def _model_and_vocab(model, vocab):
        if vocab is None:
            from course_utils.language.vocab import course_vocab

            vocab = course_vocab()
        if model is None:
            from course_utils import zoo

            return zoo.load("gpt_lm"), vocab, "gpt_lm"
        return model, vocab, "the course model"

    # -- the controls
    def _on_example(self, change) -> None:
        """An example sets the source (tree or model) and the prompt, in one redraw."""
        if change["new"] is None or self._syncing:
            return
        self._tree = change["new"] == TREE
        with self.quietly():
            self._fit_width()
            self.controls["prompt"].value = "" if self._tree else change["new"]
        self.refresh()

    def _on_typed(self, change) -> None:
        """Typed by hand: the course model, and the dropdown shows the example typed, or none."""
        if self._quiet:
            return
        self._tree, self._syncing = False, True
        try:
            self.examples.value = change["new"] if change["new"] in list(EXAMPLES.values())[1:] else None
        finally:
            self._syncing = False
        with self.quietly():
            self._fit_width()

    def _fit_width(self) -> None:
        """The width slider's range: 1–4 on the slide's tree (4 follows every branch), else 1–8."""
        slider, cap = self.controls["width"], TREE_MAX_WIDTH if self._tree else MAX_WIDTH
        set_range(slider, min(slider.value, cap), cap)

    def _fit_step(self, steps: int, step: int) -> int:
        """The step slider's range is the search's steps; a slider at its end stays at the end."""
        slider = self.controls["step"]
        step = steps if step >= slider.max else min(max(step, 1), steps)
        with self.quietly():
            set_range(slider, step, steps)
        return step

    # -- the searches (cached)
    def prompt_words(self, prompt: str) -> tuple[str, ...]:
        """The prompt's words, if the model knows them and the picture has room; empty means from <s> alone."""
        if not isinstance(prompt, str):
            raise CourseInputError(f"the prompt must be a string, got {type(prompt).__name__}")
        words = tuple(tokenize(prompt))
        unknown = unknown_words_message(self.vocab, words, f"{self.model_name} knows")
        if unknown:
            raise CourseInputError(unknown)
        if len(words) > MAX_PROMPT_WORDS:
            raise CourseInputError(f"the prompt has {len(words)} words; the picture has room for {MAX_PROMPT_WORDS}")
        return words

    def search(self, words: tuple[str, ...] | None, width: int, normalisation: str) -> Search:
        """The search after the prompt ``words`` (None: the slide's tree) at this width and normalisation (cached)."""
        width = check_int("width", width, minimum=1, maximum=MAX_WIDTH)
        normalisation = check_choice("normalisation", normalisation, list(NORMALISATIONS))
        key = (words, width, normalisation)
        if key not in self._cache:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = self._search(words, width, normalisation)
        return self._cache[key]

    def _search(self, words: tuple[str, ...] | None, width: int, normalisation: str) -> Search:
        tree = words is None
        model = self.tree_lm if tree else self.model
        decode = self.tree_lm.decode if tree else self.vocab.decode
        prefix = [self.tree_lm.bos_id] if tree else g.encode_prompt(self.vocab, list(words))
        found, trace = traced_search(model, prefix, width, normalisation, self.max_new_tokens)
        ranked = [(tuple(ids), score) for ids, score in found.hypotheses if score > IDLE]
        kept = {ids: (rank, score) for rank, (ids, score) in enumerate(ranked, start=1)}
        small = getattr(model, "vocab_size", ALL_BRANCHES_VOCAB + 1) <= ALL_BRANCHES_VOCAB
        nodes = tree_nodes(model, prefix, trace, decode, kept, tuple(found.ids), all_branches=small)
        totals = {node.ids: node.total for node in nodes}
        hypotheses = []
        for ids, score in ranked:
            generated = tuple(decode(list(ids)))
            verdict = "" if tree else oracle_verdict(self.oracle, words, generated, self.max_new_tokens)
            hypotheses.append(Hypothesis(generated, totals.get(ids, found.logprob), score, verdict))
        return Search(tree, () if tree else words, width, normalisation, nodes, len(trace),
                      tuple(decode(found.ids)), found.logprob, hypotheses)  # fmt: skip

    @property
    def shown_search(self) -> Search | None:
        """The search the picture shows now."""
        return self._shown[0]

    def tree(self) -> list[Node]:
        """The nodes the picture shows now (steps 1 to the step slider's), with their status."""
        search, shown = self._shown
        return [] if search is None else [node for node in search.nodes if node.step <= shown]

    # -- drawing
    def legends(self) -> list[dict[str, str]]:
        return [{text: colour for colour, text, _, _ in KEY}]

    def draw(self, prompt: str, width: int, normalisation: str, step: int) -> Figure:
        words = None if self._tree else self.prompt_words(prompt)
        width = check_int("width", width, minimum=1, maximum=MAX_WIDTH)
        search = self.search(words, width, normalisation)
        shown = self._fit_step(search.steps, check_int("step", step, minimum=1))
        picture = self.painter.paint(search, self._root(search), shown, self._title(search, shown))
        if picture.size != tuple(round(inches * PNG_DPI) for inches in self.figure.get_size_inches()):  # compact
            self.figure.set_size_inches(picture.size[0] / PNG_DPI, picture.size[1] / PNG_DPI)
        self.layer.set_pixels(np.asarray(picture))
        self._shown = (search, shown)
        self._show_readout(search, shown)
        return self.figure

    def _root(self, search: Search) -> str:
        """The root's label: <s> and the prompt's last words."""
        words = ("<s>", *search.prompt)
        return " ".join(words) if len(words) <= 3 else "… " + " ".join(words[-2:])

    def _title(self, search: Search, shown: int) -> str:
        source = "the slide's tree" if search.tree else f"{self.model_name} after '{' '.join(('<s>', *search.prompt))}'"
        return (f"{source} · width {search.width} · ranked by: {search.normalisation} · "
                f"steps 1–{shown} of {search.steps}")  # fmt: skip

    @staticmethod
    def _value(search: Search, logprob: float, *, short: bool = False) -> str:
        """p=.28 (log P -1.27) on the slide's tree (p=.28 if ``short``), log P -5.88 for a course model."""
        log = f"log P {logprob:.2f}"
        if not search.tree:
            return log
        return f"p={probability_text(math.exp(logprob))}" + ("" if short else f" ({log})")

    def _show_readout(self, search: Search, shown: int) -> None:
        """The step shown, the finished hypotheses ranked, and what widening the beam changes."""
        if self.painter.compact:
            self._show_short_readout(search, shown)
            return
        lines = [f"showing steps 1–{shown} of {search.steps}"]
        if shown < search.steps:
            lines[0] += " (move to the last step to see the winner's path)"
        if not search.tree and not search.prompt:
            lines[0] += " · empty prompt: the model generates from <s> alone"
        if search.tree:
            lines[0] += " · the book's probabilities as printed (its yes node sums to .9)"
        for rank, hypothesis in enumerate(search.hypotheses, start=1):
            line = (f"#{rank} {' '.join(hypothesis.words)} · {self._value(search, hypothesis.logprob)} · "
                    f"{len(hypothesis.words)} tokens · score {hypothesis.score:.2f}")  # fmt: skip
            line += f" · {hypothesis.verdict}" if hypothesis.verdict else ""
            lines.append(line + (" ← winner" if rank == 1 else ""))
        lines.append(self._widening_note(search))
        escaped = "<br>".join(html.escape(line) for line in lines)
        self.readout.value = f"<div style='font-size:{font_px(16)}px;line-height:1.35'>{escaped}</div>"

    def _show_short_readout(self, search: Search, shown: int) -> None:
        """Lecture mode's readout, two lines above a projector's picture: the steps shown (a wide tree: the window the
        step slider moves), the winner's verdict (a course model's) and what widening the beam changes; the tree boxes
        each finished hypothesis with its rank and score."""
        first, last, _ = self.painter.window(search, self._root(search), shown)  # a wide tree: the steps that fit
        parts = [f"steps {first}–{last} of {search.steps}"]
        if shown < search.steps:
            parts[0] += " (the winner: at the last)"
        elif last < search.steps:
            parts[0] += ", the winner's path"
        if not search.tree and not search.prompt:
            parts.append("from <s> alone")
        verdict = search.hypotheses[0].verdict if search.hypotheses else ""
        if verdict.startswith("oracle: "):
            verdict = verdict.removeprefix("oracle: ").split(" (oracle log P")[0]
        if verdict:
            parts.append(f"#1: {verdict}")
        parts.append(self._widening_note(search, short=True))
        self.readout.value = f"<div style='font-size:{font_px(14)}px'>{html.escape(' · '.join(parts))}</div>"

    def _widening_note(self, search: Search, *, short: bool = False) -> str:
        """Greedy (width 1) against this width (or width 2 when this is greedy): does the winner change? ``short``:
        "greedy: … ; width 2: …"."""
        words = None if search.tree else search.prompt
        other = self.search(words, 2 if search.width == 1 else 1, search.normalisation)
        greedy, wide = (search, other) if search.width == 1 else (other, search)
        found = f"{' '.join(greedy.winner)} {self._value(search, greedy.winner_logprob, short=True)}"
        found = f"greedy: {found}" if short else f"width 1 = greedy: {found}"
        if greedy.winner == wide.winner:
            return f"{found}; width {wide.width}: the same" if short else f"{found}; width {wide.width} finds the same"
        better = f"{' '.join(wide.winner)} {self._value(search, wide.winner_logprob, short=True)}"
        return f"{found}; width {wide.width}: {better}" if short else f"{found}; width {wide.width} finds {better}"
