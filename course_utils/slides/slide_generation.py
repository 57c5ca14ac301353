"""The CSE538 slides "How to use an LM for Generation", run as written, on the slide's own search tree.

**The tree** (Jurafsky & Martin, *Speech and Language Processing*, 3rd ed. draft, ch. 13 "Machine
Translation", Fig. 13.7; the slide shows it as a picture): V = {yes, ok, </s>}. Greedy takes *yes*,
*yes* (p = .20), the most probable sequence is *ok*, *ok* (p = .28). ``JM_TREE`` gives every branch:

* on the slide, as text: p(<s> ok ok </s>) = .28 and p(<s> yes yes </s>) = .20;
* from the book's figure (read from a text extraction of the 3rd-edition draft, where the same figure is
  Fig. 10.11; its prose says ".4 × .7 × 1.0" and "highest local probability (0.5)"): p(· | <s>) =
  ok .4, yes .5, </s> .1; p(· | ok) = ok .7, yes .2, </s> .1; p(· | yes) = ok .3, yes .4, </s> .2;
  p(</s> | any two words) = 1.0 (the figure has four such leaves). Then .4 × .7 × 1.0 = .28,
  .5 × .4 × 1.0 = .20, and greedy's second step prefers yes (.4);
* inferred: which of .3 and .2 under *yes* is ok and which is </s> (the extraction lists the numbers
  without labels; we read them in the order the two other nodes fix). Neither choice changes greedy,
  beam or the best path;
* as printed, the *yes* node sums to .9, not 1 (.2 + .4 + .3): the figure is a made-up example. We
  keep the book's numbers, so the seven complete paths sum to .95, not 1 (``MISSING_MASS``).

``enumerate_paths`` lists every complete path with its probability: the check.

**The pseudocode.** ``GREEDY_SOURCE`` and ``BEAM_SOURCES`` are the slides' code, character for
character. ``run_slide_greedy`` and ``run_slide_beam`` execute that text (with ``BEAM_FIXES`` applied
one at a time) on a model with the slide's ``getNextProbs`` and report what happened (and
``run_slide_random_walk`` the random walk's, ``RANDOM_WALK_SOURCE``). What they show:

* ``generateGreedy`` stops only when ``</s>`` is the argmax. On a model that never puts ``</s>`` first
  it recurses until the step bound (``DidNotStop``), or, without one, until Python's recursion limit.
  With the default ``history='<s>'`` (a string) it never stops at all: ``history[-1]`` is then one
  character, never the token ``'</s>'``;
* ``while path, path_p in frontier:`` is a SyntaxError; the second slide's version also builds
  ``s+w`` from an undefined ``s`` (NameError);
* ``generateRandWalk`` calls ``multinomial.draw``, which no library provides (NameError); with a stand-in
  (``Multinomial``) it is ancestral sampling, and like greedy it stops only at a drawn ``</s>``;
* with the loop fixed, nothing ever removes a hypothesis from ``frontier`` or keeps only k of them: the
  code expands the top-k children of *every* node, the whole k-ary tree (it counts nodes, not steps),
  and on a model with unbounded length it never ends.

``greedy`` and ``beam_search`` are the corrected versions (beam width k, J&M's shrinking beam).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from course_utils.validation import CourseInputError, check_int

BOS, EOS = "<s>", "</s>"
VOCAB = ("yes", "ok", EOS)

# prefix (words after <s>) -> next-word distribution
JM_TREE: dict[tuple[str, ...], dict[str, float]] = {
    (): {"ok": 0.4, "yes": 0.5, EOS: 0.1},  # the book's figure
    ("ok",): {"ok": 0.7, "yes": 0.2, EOS: 0.1},  # the book's figure
    ("yes",): {"ok": 0.3, "yes": 0.4, EOS: 0.2},  # the book's figure (sums to .9 as printed; ok/</s> order inferred)
    ("ok", "ok"): {EOS: 1.0},  # the book's figure
    ("yes", "yes"): {EOS: 1.0},  # the book's figure
    ("ok", "yes"): {EOS: 1.0},  # the book's figure
    ("yes", "ok"): {EOS: 1.0},  # the book's figure
}
MISSING_MASS = 0.05  # the yes node's missing .1, times p(yes) = .5: the paths sum to .95
SLIDE_NUMBERS = {("ok", "ok", EOS): 0.28, ("yes", "yes", EOS): 0.20}

LM = Callable[[tuple], Mapping[str, float]]  # prefix (words after <s>) -> {word: probability}


def jm_tree_lm(prefix) -> dict[str, float]:
    """The slide's tree as an LM: the next-word distribution after ``prefix`` (words after ``<s>``)."""
    prefix = tuple(w for w in prefix if w != BOS)
    if prefix not in JM_TREE:
        raise CourseInputError(f"the tree has no node {' '.join(prefix) or '(root)'}: its nodes are "
                               f"{', '.join(' '.join(p) or '(root)' for p in JM_TREE)}")  # fmt: skip
    return dict(JM_TREE[prefix])


def never_ending_lm(prefix) -> dict[str, float]:
    """A model that never puts ``</s>`` first: the same distribution after every prefix."""
    return {"yes": 0.5, "ok": 0.3, EOS: 0.2}


def bounded_lm(depth: int) -> LM:
    """``never_ending_lm`` until ``depth`` words, then ``</s>`` for sure: a finite tree, 2^depth paths through yes/ok."""
    depth = check_int("depth", depth, minimum=0)

    def lm(prefix) -> dict[str, float]:
        prefix = tuple(w for w in prefix if w != BOS)
        return {EOS: 1.0} if len(prefix) >= depth else never_ending_lm(prefix)

    return lm


def _as_lm(model) -> LM:
    if callable(model):
        return model
    if isinstance(model, Mapping):
        return lambda prefix: model[tuple(prefix)]
    raise CourseInputError("a model is a function prefix -> {word: probability}, or a dict prefix -> that")


def enumerate_paths(model=JM_TREE, max_length: int = 20) -> list[tuple[tuple[str, ...], float]]:
    """Every complete path (ending with ``</s>``) of a tree LM with its probability, most probable first.

    ``model`` is a dict prefix -> distribution (``JM_TREE``) or a function of the prefix. A path still
    open after ``max_length`` words raises: the tree is not finite within that bound.
    """
    lm = _as_lm(model)
    paths, todo = [], [((), 1.0)]
    while todo:
        prefix, p = todo.pop()
        if len(prefix) > max_length:
            raise CourseInputError(f"a path is still open after max_length={max_length} words: {' '.join(prefix)}")
        for word, q in lm(prefix).items():
            if q <= 0.0:
                continue
            if word == EOS:
                paths.append((prefix + (EOS,), p * q))
            else:
                todo.append((prefix + (word,), p * q))
    return sorted(paths, key=lambda item: (-item[1], item[0]))


# ---------------------------------------------------------------- the slides' code, as written

GREEDY_SOURCE = """\
def generateGreedy(model, history='<s>'):
    vocabProbs = model.getNextProbs(history)
    history += argmax(vocabProbs)
                #word with maximum prob
    if history[-1] == '</s>': return history
    else: return generateGreedy(model, history)
"""

BEAM_SOURCES = (
    """\
def generateBeam(model, history='<s>', init_prob=1, k=4):
    frontier = [(history, init_prob)]
    max_path = []
    max_path_p = -1.0
    while path, path_p in frontier:
        if path[-1] == "</s>": #current max
            if path_p > max_path_p:
                max_path = path
                max_path_p = path_p
        else:
            vocabProbs = model.getNextProbs(path)
            nextWPs = topK(vocabProbs, k)
            for w, p in nextWPs.items():
                frontier.append((path+w, path_p*p))
    return max_path, max_path_p
""",
    """\
def generateBeam(model, history, k):
    frontier = [(history, 1.0)]
    max_path = []
    max_path_p = -1.0
    while path, path_p in frontier:
        if path[-1] == "</s>": #current potential end
            if path_p > max_path_p:
                max_path = path
                max_path_p = path_p
        else:
            vocabProbs = model.getNextProbs(path)
            nextWPs = topK(vocabProbs, k)
            for w, p in nextWPs.items():
                frontier.append((s+w, path_p*p))
    return max_path, max_path_p
""",
)


RANDOM_WALK_SOURCE = """\
def generateRandWalk(model, history='<s>'):
    vocabProbs = model.getNextProbs(history)
    history += multinomial.draw(vocabProbs)
    #random multinomial draw by probs
    if history[-1] == '</s>': return history
    else: return generateRandWalk(model, history)
"""


@dataclass(frozen=True)
class Fix:
    """One bug of the slide's code: what is wrong, and the text replaced."""

    bug: str
    old: str
    new: str


BEAM_FIXES = (
    Fix("`while path, path_p in frontier:` is not Python (SyntaxError). The closest valid reading is a `for` "
        "loop over the list, which also visits what the loop appends: nothing is ever pruned",
        "while path, path_p in frontier:", "for path, path_p in frontier:"),
    Fix("`s` is not defined (second slide only): the new path is `path+w`", "(s+w,", "(path+w,"),
)  # fmt: skip


def slide_syntax_error(source: str) -> SyntaxError | None:
    """The SyntaxError that compiling ``source`` raises, or None."""
    try:
        compile(source, "<slide>", "exec")
    except SyntaxError as error:
        return error
    return None


class DidNotStop(RuntimeError):
    """The generation did not stop within its step bound."""


class Tokens(tuple):
    """A token sequence that reads the slides' ``history + word`` as "append the word" (their intent)."""

    def __add__(self, other):
        if isinstance(other, str):
            return Tokens(tuple(self) + (other,))
        return Tokens(tuple(self) + tuple(other))

    def text(self) -> str:
        return " ".join(self)


_TOKEN = re.compile(r"</s>|<s>|yes|ok")


class SlideModel:
    """The slides' model interface, ``getNextProbs(history)``, around an LM; it counts and bounds the calls.

    ``history`` may be ``Tokens`` or the slides' plain string ("<s>yesyes": split on the tree's words).
    """

    def __init__(self, lm: LM, max_calls: int | None = 200):
        self.lm = _as_lm(lm)
        self.max_calls = max_calls
        self.calls = 0
        self.histories: list[tuple[str, ...]] = []

    def getNextProbs(self, history) -> dict[str, float]:  # noqa: N802 - the slides' name
        words = tuple(_TOKEN.findall(history)) if isinstance(history, str) else tuple(history)
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise DidNotStop(f"did not stop after {self.calls} steps (history: {' '.join(words[:12])} …)")
        self.calls += 1
        self.histories.append(words)
        if EOS in words:
            raise CourseInputError(f"asked for the word after </s> in {' '.join(words)!r}: "
                                   "the end test `history[-1] == '</s>'` did not see the end")  # fmt: skip
        return dict(self.lm(tuple(w for w in words if w != BOS)))


def argmax(vocabProbs: Mapping[str, float]) -> str:  # noqa: N803 - the slides' name
    """The word with maximum probability (the first one on ties)."""
    return max(vocabProbs, key=vocabProbs.__getitem__)


def topK(vocabProbs: Mapping[str, float], k: int) -> dict[str, float]:  # noqa: N802,N803 - the slides' names
    """The ``k`` most probable words with their probabilities (zero-probability words dropped)."""
    ranked = sorted(((w, p) for w, p in vocabProbs.items() if p > 0), key=lambda wp: -wp[1])
    return dict(ranked[:k])


@dataclass(frozen=True)
class SlideRun:
    """What running the slide's code did: an error (type and message) or a result, and the model calls."""

    error: str | None
    error_type: type | None
    result: object
    calls: int  # getNextProbs calls: the nodes expanded


class Multinomial:
    """What the random-walk slide calls ``multinomial``: ``draw(vocabProbs)`` → one word, drawn by probability."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def draw(self, vocabProbs: Mapping[str, float]) -> str:  # noqa: N803 - the slides' name
        words = list(vocabProbs)
        return self.rng.choices(words, weights=[vocabProbs[w] for w in words])[0]


def _run(source: str, entry: str, model: SlideModel, *args, extra: dict | None = None) -> SlideRun:
    namespace = {"argmax": argmax, "topK": topK, **(extra or {})}
    try:
        exec(compile(source, "<slide>", "exec"), namespace)  # noqa: S102 - the slide's own code
        result = namespace[entry](model, *args)
    except Exception as error:  # noqa: BLE001 - reporting the slide's errors is the point
        return SlideRun(f"{type(error).__name__}: {error}", type(error), None, model.calls)
    return SlideRun(None, None, result, model.calls)


def run_slide_greedy(lm: LM = jm_tree_lm, history=None, max_steps: int | None = 200) -> SlideRun:
    """Run ``GREEDY_SOURCE`` as written. ``history=None`` passes ``Tokens(('<s>',))``; pass ``'<s>'`` for the
    slide's string default. ``max_steps=None`` lets it recurse until Python stops it."""
    history = Tokens((BOS,)) if history is None else history
    return _run(GREEDY_SOURCE, "generateGreedy", SlideModel(lm, max_steps), history)


def run_slide_random_walk(lm: LM = jm_tree_lm, *, seed: int | None = 0, max_steps: int | None = 200) -> SlideRun:
    """Run ``RANDOM_WALK_SOURCE`` as written from ``Tokens(('<s>',))``. The slide never defines ``multinomial``:
    ``seed=None`` runs it so (NameError); otherwise ``Multinomial(seed)`` stands in for it."""
    extra = None if seed is None else {"multinomial": Multinomial(seed)}
    return _run(RANDOM_WALK_SOURCE, "generateRandWalk", SlideModel(lm, max_steps), Tokens((BOS,)), extra=extra)


def beam_source(version: int = 0, fixed: int = 0) -> str:
    """The slides' ``generateBeam`` (``version`` 0 or 1) with its first ``fixed`` fixes applied."""
    version = check_int("version", version, minimum=0, maximum=len(BEAM_SOURCES) - 1)
    fixed = check_int("fixed", fixed, minimum=0, maximum=len(BEAM_FIXES))
    source = BEAM_SOURCES[version]
    for fix in BEAM_FIXES[:fixed]:
        source = source.replace(fix.old, fix.new, 1)  # the second fix does nothing to version 0
    return source


def run_slide_beam(lm: LM = jm_tree_lm, k: int = 4, *, version: int = 0, fixed: int = len(BEAM_FIXES),
                   max_calls: int | None = 10_000) -> SlideRun:  # fmt: skip
    """Run the slides' ``generateBeam`` (with ``fixed`` fixes) from ``Tokens(('<s>',))`` with width ``k``."""
    model = SlideModel(lm, max_calls)
    history = Tokens((BOS,))
    args = (history, 1, k) if version == 0 else (history, k)
    return _run(beam_source(version, fixed), "generateBeam", model, *args)


def full_tree_expansions(lm: LM, k: int, max_length: int = 30) -> int:
    """Nodes the unpruned slide code expands: every node reached through top-k children that is not an end."""
    lm = _as_lm(lm)
    count, todo = 0, [()]
    while todo:
        prefix = todo.pop()
        if len(prefix) > max_length:
            raise CourseInputError(f"still open after max_length={max_length} words")
        count += 1
        for word in topK(lm(prefix), k):
            if word != EOS:
                todo.append(prefix + (word,))
    return count


# ---------------------------------------------------------------- corrected


@dataclass(frozen=True)
class Hypothesis:
    words: tuple[str, ...]  # after <s>; ends with </s> when complete
    logprob: float

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)


def greedy(lm: LM, max_steps: int = 100) -> Hypothesis:
    """Always the most probable next word, until ``</s>``; ``DidNotStop`` after ``max_steps`` words."""
    lm, max_steps = _as_lm(lm), check_int("max_steps", max_steps, minimum=1)
    words, logprob = (), 0.0
    for _ in range(max_steps):
        dist = lm(words)
        word = argmax(dist)
        words, logprob = words + (word,), logprob + math.log(dist[word])
        if word == EOS:
            return Hypothesis(words, logprob)
    raise DidNotStop(f"greedy did not stop after {max_steps} steps: {' '.join(words[:12])} …")


@dataclass(frozen=True)
class BeamResult:
    best: Hypothesis
    finished: tuple[Hypothesis, ...]  # most probable first
    expansions: int  # model calls
    steps: int


def beam_search(lm: LM, k: int, max_steps: int = 100) -> BeamResult:
    """Beam search of width ``k`` (J&M Fig. 13.8): keep the ``k`` most probable hypotheses at each step;
    one that ends with ``</s>`` is set aside and the beam narrows by one. No length normalisation."""
    lm, k = _as_lm(lm), check_int("k", k, minimum=1)
    max_steps = check_int("max_steps", max_steps, minimum=1)
    beam, finished, expansions, width = [Hypothesis((), 0.0)], [], 0, k
    for step in range(1, max_steps + 1):
        candidates = []
        for hyp in beam:
            expansions += 1
            for word, p in lm(hyp.words).items():
                if p > 0:
                    candidates.append(Hypothesis(hyp.words + (word,), hyp.logprob + math.log(p)))
        candidates.sort(key=lambda h: (-h.logprob, h.words))
        beam = []
        for hyp in candidates[:width]:
            (finished if hyp.words[-1] == EOS else beam).append(hyp)
        width = k - len(finished)
        if width <= 0 or not beam:
            break
    else:
        if not finished:
            raise DidNotStop(f"beam search did not finish a hypothesis in {max_steps} steps")
    finished.sort(key=lambda h: (-h.logprob, h.words))
    if not finished:
        raise DidNotStop("beam search ended with no finished hypothesis")
    return BeamResult(finished[0], tuple(finished), expansions, step)
