"""Widget: type a sentence with one [MASK]; see BERT's guesses for the gap beside the oracle's exact answer.

The cloze task of notebook 09. The oracle (``CourseLanguage.masked_distribution``) gives the exact
P(word | left ___ right), so every one of BERT's bars can be judged: a red bar is a word that cannot fill
the gap. A WordPiece model is told how many pieces the hidden word has (the gap is k ``[MASK]`` s), so
the "pieces" buttons choose k, and both sides then show only words of k pieces: BERT's scores come from
``bert_mlm.WordScorer`` and the oracle's distribution is restricted with ``given_piece_count``, as in
the notebook's scoring. The readout gives the probability each puts on the oracle's most likely word,
the mass BERT puts on impossible words, the total variation distance between the two, how much of the
oracle's probability words of k pieces hold, and the pieces BERT reads.

Speed: a distribution is computed once per (sentence, k) and kept (the examples at construction), so
moving top k only repaints. The panels are painted with Pillow by ``painting.Painter``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from course_utils.language.grammar import CourseLanguage
from course_utils.language.text_pipeline import Vocab, tokenize
from course_utils.lecture import is_lecture_mode
from course_utils.models.bert import bert_mlm
from course_utils.validation import CourseInputError, check_int
from course_utils.widgets.painting import MAX_K, PaintedDemo, Painter, Panel, wrapped
from course_utils.widgets.widget_kit import ExamplesWithAccount, text_box, unknown_words_message

EXAMPLES = {  # sentence -> the pieces of the word that was hidden
    "he ate the cake [MASK] the fork .": 1,
    "lucas ate the [MASK] .": 2,
    "the [MASK] near the tiger sleep .": 1,
    "the movie was [MASK] and you will love it .": 1,
    "the dogs [MASK] .": 2,
    "she paid the [MASK] .": 1,
}
MASK = re.compile(r"\[\s*mask\s*\]", re.IGNORECASE)
MAX_PIECES = 3  # the pieces buttons: 1..3 (nine in ten of the language's running words are one piece)
ORACLE, BERT = "oracle", "BERT"  # the panels' keys in ``shown``
GAP_KEY = (("oracle", "the oracle's distribution"), ("possible", "BERT's guess, a word that fits"),
           ("impossible", "BERT's guess, a word that cannot fill the gap"))  # fmt: skip
# Lecture mode (a projector: the picture must fit about 750 px at 22 px text): the key on one line, bars 6 text heights
# long (10 normally), so the two panels side by side are 730 px wide rather than 906.
LECTURE_GAP_KEY = (("oracle", "the oracle"), ("possible", "BERT, fits"), ("impossible", "BERT, cannot fill the gap"))
LECTURE_BAR_EM = 6
_CACHE_SIZE = 256  # (sentence, pieces) whose distributions are kept


def default_model():
    """The shipped tokenizer and ``bert_mlm`` (notebook 09)."""
    from course_utils import zoo

    return zoo.load("bert_mlm"), zoo.load("tokenizer")


def split_at_mask(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words left and right of the one ``[MASK]`` in ``text`` (any case), tokenized as the course does."""
    if not isinstance(text, str):
        raise CourseInputError(f"the sentence must be a string, got {type(text).__name__}")
    if not text.strip():
        raise CourseInputError("type a sentence with one [MASK] where the hidden word goes, "
                               f"e.g. '{next(iter(EXAMPLES))}'")  # fmt: skip
    parts = MASK.split(text)
    if len(parts) == 1:
        raise CourseInputError("no [MASK] in the sentence: write [MASK] where the hidden word goes")
    if len(parts) > 2:
        raise CourseInputError(f"{len(parts) - 1} [MASK]s: hide exactly one word (its pieces are masked for you; "
                               "choose how many with the pieces buttons)")  # fmt: skip
    return tuple(tokenize(parts[0])), tuple(tokenize(parts[1]))


class GapPainter(Painter):
    """``painting.Painter``'s panels, with a colour key about a gap instead of a next word; ``compact`` (lecture
    mode): shorter bars and a shorter key, so that the picture fits a projector."""

    key = GAP_KEY

    def __init__(self, words: list[str], *, compact: bool = False):
        self.compact = compact
        if compact:
            self.key = LECTURE_GAP_KEY
        super().__init__(2, words)

    def _key(self):
        """The colour key; first, when compact, the shorter panels and the picture's size (``Painter.__init__``
        calls it last)."""
        if self.compact:
            self.panel = (self.label_px + round(LECTURE_BAR_EM * self.px) + self.value_px, self.panel[1])
            width = self.cols * self.panel[0] + self.px
            self.key_lines = self._key_lines(width)
            self.size = (width, self.rows * self.panel[1] + round((0.7 + 1.5 * len(self.key_lines)) * self.px))
        return super()._key()

    def paint(self, draw, index: int, panel: Panel, k: int) -> None:
        """``Painter.paint``; a compact panel's note is wrapped to the panel's width."""
        if self.compact and panel.note:
            panel = replace(panel, note=wrapped(self.font, panel.note, self.panel[0] - self.px))
        super().paint(draw, index, panel, k)


@dataclass(frozen=True)
class Filling:
    """Everything the widget shows for one (sentence, pieces), computed once."""

    bert: dict[str, float]  # BERT's P(word | gap of k pieces), most likely first
    oracle: dict[str, float] | None  # the oracle's, restricted to words of k pieces; None if none fits
    account: str | None  # why no word at all fits the gap (the oracle's words), else None
    panels: list[Panel]  # the oracle's, then BERT's
    numbers: dict  # top word and its probabilities, mass on impossible words, TV, share of k-piece words
    readout: str


class FillMaskDemo(ExamplesWithAccount, PaintedDemo):
    """A sentence with one ``[MASK]``, the number of pieces of the hidden word, and top k; two bar panels.

    ``model`` is a ``bert_mlm.CourseBERT`` over ``tokenizer``'s pieces; ``oracle`` the course language
    (default: the training language, ``CourseLanguage(include_held_out=False)``), whose words are the
    candidates. With no arguments: the shipped ``bert_mlm`` and tokenizer. After each redraw ``shown`` maps
    "oracle" and "BERT" to their bars (word, probability, colour key) and ``numbers`` holds the readout's numbers.
    """

    def __init__(self, model=None, tokenizer=None, *, sentence: str = next(iter(EXAMPLES)), top_k: int = 8,
                 pieces: int = 1, oracle: CourseLanguage | None = None):  # fmt: skip
        if model is None:
            model, shipped_tokenizer = default_model()
            tokenizer = tokenizer or shipped_tokenizer
        elif tokenizer is None:
            from course_utils import zoo

            tokenizer = zoo.load("tokenizer")
        self.model, self.tokenizer = model, tokenizer
        self.oracle = CourseLanguage(include_held_out=False) if oracle is None else oracle
        self._check_arguments()
        if not isinstance(sentence, str):
            raise CourseInputError(f"sentence must be a string, got {type(sentence).__name__}")
        top_k = check_int("top_k", top_k, minimum=1, maximum=MAX_K)
        pieces = check_int("pieces", pieces, minimum=1, maximum=MAX_PIECES)
        self.words = sorted(self.oracle.vocabulary)
        self.vocab = Vocab(self.words)  # for unknown_words_message
        self.scorer = bert_mlm.WordScorer(self.model, self.tokenizer, self.words)
        self.piece_counts = {word: len(ids) for group in self.scorer.by_count.values() for word, ids in group}
        self.max_pieces = getattr(getattr(self.model.hf, "config", None), "max_position_embeddings", None)
        self._cache: dict[tuple, Filling] = {}
        self._oracle_cache: dict[tuple, tuple[dict | None, str | None]] = {}
        self._account: str | None = None
        self.shown: dict[str, list[tuple[str, float, str]]] = {}
        self.numbers: dict = {}
        self.painter = GapPainter(self.words, compact=is_lecture_mode())
        self.make_canvas(*self.painter.size)
        for example in EXAMPLES:  # precomputed: choosing an example only paints
            for k in range(1, MAX_PIECES + 1):
                self.fill(*split_at_mask(example), k)
        self.examples = widgets.Dropdown(options=list(EXAMPLES), value=sentence if sentence in EXAMPLES else None,
                                         layout=widgets.Layout(width="32em"))  # fmt: skip
        self.examples.observe(self._on_example, names="value")
        controls = {
            "sentence": text_box(sentence, "sentence", "a sentence with one [MASK]; Enter to fill it"),
            "pieces": widgets.ToggleButtons(
                options=[(str(k), k) for k in range(1, MAX_PIECES + 1)], value=pieces, description="pieces in the gap"
            ),
            "k": widgets.IntSlider(value=top_k, min=1, max=MAX_K, description="top k words"),
        }
        super().__init__(controls, title="Fill the [MASK]: BERT's guesses beside the truth (the oracle)")
        controls["sentence"].observe(self._on_typed, names="value")

    def _check_arguments(self) -> None:
        if not isinstance(self.model, bert_mlm.CourseBERT):
            kind = type(self.model).__name__
            raise CourseInputError(f"model must be a course_utils.models.bert.bert_mlm.CourseBERT, got {kind}")
        if not getattr(self.tokenizer, "is_fast", False) or self.tokenizer.mask_token_id is None:
            raise CourseInputError("tokenizer must be the course's WordPiece tokenizer (a fast tokenizer with [MASK]), "
                                   f"got {type(self.tokenizer).__name__}")  # fmt: skip
        size = self.model.hf.config.vocab_size
        if size != len(self.tokenizer):
            raise CourseInputError(f"the model predicts {size} pieces but the tokenizer has {len(self.tokenizer)}")
        if not isinstance(self.oracle, CourseLanguage):
            raise CourseInputError(f"oracle must be a CourseLanguage, got {type(self.oracle).__name__}")

    def _on_example(self, change) -> None:
        """An example sets the sentence and its word's piece count, in one redraw."""
        sentence = change["new"]
        if sentence is None:
            return
        with self.quietly():
            self.controls["pieces"].value = EXAMPLES[sentence]
        if self.controls["sentence"].value == sentence:
            self.refresh()
        else:
            self.controls["sentence"].value = sentence

    # ------------------------------------------------------------ the distributions

    def pieces_read(self, left, right, pieces: int) -> list[str]:
        """The pieces BERT reads: [CLS] left [MASK] × k right [SEP]."""
        tok = self.tokenizer
        return [tok.cls_token, *tok.tokenize(" ".join(left)), *[tok.mask_token] * pieces, *tok.tokenize(" ".join(right)),
                tok.sep_token]  # fmt: skip

    def _oracle(self, left: tuple, right: tuple) -> tuple[dict | None, str | None]:
        """The oracle's unrestricted distribution for the gap, or (None, why no word fits); cached."""
        if (left, right) not in self._oracle_cache:
            try:
                found = self.oracle.masked_distribution(left, right), None
            except CourseInputError as failure:
                hint = "" if right and right[-1] in (".", "!", "?") else " (a sentence of the language ends with '.')"
                found = None, f"the oracle: {failure}{hint}"
            self._oracle_cache[(left, right)] = found
        return self._oracle_cache[(left, right)]

    def fill(self, left, right, pieces: int) -> Filling:
        """BERT's and the oracle's distributions for ``left [MASK] right`` with a gap of ``pieces`` pieces (cached)."""
        key = (tuple(left), tuple(right), pieces)
        if key not in self._cache:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = self._filling(*key)
        return self._cache[key]

    def _filling(self, left: tuple, right: tuple, pieces: int) -> Filling:
        read = self.pieces_read(left, right, pieces)
        if self.max_pieces is not None and len(read) > self.max_pieces:
            raise CourseInputError(f"BERT would read {len(read)} pieces ([CLS] and [SEP] included); "
                                   f"it reads at most {self.max_pieces}: shorten the sentence")  # fmt: skip
        bert = self.scorer.distribution(left, right, pieces)
        full, account = self._oracle(left, right)
        oracle, share, counts = None, None, []
        if full is not None:
            counts = sorted({self.piece_counts[w] for w in full})
            share = sum(p for w, p in full.items() if self.piece_counts[w] == pieces)
            if share > 0:
                oracle = bert_mlm.given_piece_count(full, self.tokenizer, pieces)
        numbers = {"pieces": pieces, "share": share, "counts": counts, "top": None}
        bert_top = list(bert.items())[:MAX_K]
        if oracle is None:
            if full is None:
                note = "not in the course language:\nno word fits the gap"
            else:
                note = f"no word of {pieces} piece{'s' * (pieces > 1)} fits here;\n" + _counts_text(counts)
            panels = [Panel(f"oracle, {_pieces_text(pieces)}", note=note)]
            kinds = ["possible" if full is None else "impossible"] * len(bert_top)
        else:
            panels = [Panel(f"oracle, {_pieces_text(pieces)}", list(oracle.items())[:MAX_K],
                            ["oracle"] * min(len(oracle), MAX_K))]  # fmt: skip
            kinds = ["possible" if oracle.get(w, 0) > 0 else "impossible" for w, _ in bert_top]
            top = next(iter(oracle))
            q = np.array([bert.get(w, 0.0) for w in bert])  # (n,) BERT's, over the words of k pieces
            p = np.array([oracle.get(w, 0.0) for w in bert])  # (n,) the oracle's, the same words
            numbers.update(
                top=top,
                oracle_top=oracle[top],
                bert_top=bert.get(top, 0.0),
                tv=0.5 * float(np.abs(p - q).sum()),
                impossible=float(q[p == 0].sum()),
            )
        panels.append(Panel(f"BERT, {pieces} × [MASK]", bert_top, kinds))
        readout = (_short_readout if self.painter.compact else self._readout)(read, numbers, full is None)
        return Filling(bert, oracle, account, panels, numbers, readout)

    @staticmethod
    def _readout(read: list[str], numbers: dict, no_word: bool) -> str:
        k = numbers["pieces"]
        parts = []
        if numbers["top"] is not None:
            parts.append(
                f"the oracle's most likely {k}-piece word is '{numbers['top']}': "
                f"oracle {numbers['oracle_top']:.3f}, BERT {numbers['bert_top']:.3f}"
            )
            parts.append(
                f"BERT puts {numbers['impossible']:.0%} on words that cannot fill the gap, TV {numbers['tv']:.2f}"
            )
            parts.append(f"{k}-piece words hold {numbers['share']:.0%} of the oracle's probability here")
        elif no_word:
            parts.append("the oracle has no word for this gap (see the message); BERT's guesses are shown")
        else:
            parts.append(
                f"no {k}-piece word fits: {_counts_text(numbers['counts'])}; BERT's guesses are all impossible"
            )
        parts.append("BERT reads: " + " ".join(read))
        return " · ".join(parts)

    # ------------------------------------------------------------ drawing

    def legends(self) -> list[dict[str, str]]:
        return [self.painter.legend()]

    def draw(self, sentence: str, pieces: int, k: int) -> Figure:
        k = check_int("k", k, minimum=1, maximum=MAX_K)
        pieces = check_int("pieces", pieces, minimum=1, maximum=MAX_PIECES)
        left, right = split_at_mask(sentence)
        unknown = unknown_words_message(self.vocab, left + right, "of the course language")
        if unknown:
            raise CourseInputError(unknown)
        filling = self.fill(left, right, pieces)
        if filling.account is not None:
            self._account = filling.account
        picture, pen = self.painter.new_picture()
        for index, panel in enumerate(filling.panels):
            self.painter.paint(pen, index, panel, k)
        self.layer.set_pixels(np.asarray(picture))
        self.shown = {name: [(word, p, kind) for (word, p), kind in zip(panel.top[:k], panel.kinds)]
                      for name, panel in zip((ORACLE, BERT), filling.panels)}  # fmt: skip
        self.numbers = filling.numbers
        self.show_readout(filling.readout)
        return self.figure


def _short_readout(read: list[str], numbers: dict, no_word: bool) -> str:
    """Lecture mode's readout, in two or three lines above the picture: the oracle's top word, BERT's mass on impossible
    words and the TV, the share of k-piece words when they do not hold it all, and the pieces BERT reads."""
    k = numbers["pieces"]
    if numbers["top"] is not None:
        parts = [f"top word '{numbers['top']}': oracle {numbers['oracle_top']:.3f}, BERT {numbers['bert_top']:.3f}",
                 f"BERT on impossible words {numbers['impossible']:.0%}, TV {numbers['tv']:.2f}"]  # fmt: skip
        if numbers["share"] < 0.995:
            parts.append(f"{k}-piece words hold {numbers['share']:.0%} of the oracle's probability")
    elif no_word:
        parts = ["the oracle has no word for this gap (see the message)"]
    else:
        parts = [f"no {k}-piece word fits: {_counts_text(numbers['counts'])}"]
    return " · ".join([*parts, "BERT reads: " + " ".join(read)])


def _pieces_text(pieces: int) -> str:
    return f"{pieces}-piece words"


def _counts_text(counts: list[int]) -> str:
    """The readout's line: "the words that fit have 1 or 3 pieces"."""
    if not counts:
        return "no word fits"
    listed = (
        " or ".join(map(str, counts)) if len(counts) <= 2 else ", ".join(map(str, counts[:-1])) + f" or {counts[-1]}"
    )
    return f"the words that fit have {listed} piece{'s' * (counts != [1])}"
