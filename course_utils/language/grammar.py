"""The course language: a probabilistic grammar whose probabilities are known exactly.

The grammar is written as rules: a symbol (a tuple such as ``("PRED", "sg", "animal")``)
rewrites, with a probability, to a sequence of symbols and words. Rules only ever recurse at
the right end, so the language is regular: the state of a derivation is the stack of symbols
still to expand, and there are finitely many stacks. From that follow:

* ``sample``: expand the top symbol until a word comes out, emit it, repeat until ``</s>``;
* ``next_distribution``: the exact next-word distribution after any prefix. A prefix can be
  reached by several derivations ("the" starts many kinds of sentence), so the oracle keeps
  every live stack with its probability and sums over them (the forward algorithm);
* ``score``: the exact log-probability of a sentence; an ungrammatical one gets probability 0
  and an account of where and why it fails, never an exception.

Words are chosen within their class with Zipf weights (``course_utils.language.lexicon``).
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field
from functools import lru_cache

from course_utils.language import lexicon as lx
from course_utils.validation import CourseInputError

EOS = "</s>"
NUMBERS = ("sg", "pl")


class Tagged(str):
    """A word that carries a label: a word sense, a sentiment, a role."""

    def __new__(cls, text: str, tag: tuple):
        word = super().__new__(cls, text)
        word.tag = tag
        return word

    # Two stacks that differ only in a word's tag must stay different states.
    def __eq__(self, other) -> bool:
        return str.__eq__(self, other) and getattr(other, "tag", None) == self.tag

    def __hash__(self) -> int:
        return hash((str(self), self.tag))


Rule = tuple[float, tuple]  # (weight, right-hand side)


def _zipf(items, make) -> list[Rule]:
    """One rule per item, weighted 1/rank: ``make(item)`` gives its right-hand side."""
    return [(w, make(item)) for w, item in zip(lx.zipf_weights(len(items)), items)]


def _words(phrase: str) -> tuple[str, ...]:
    return tuple(phrase.split())


# ---------------------------------------------------------------- the rules, one function per symbol


def _sentence(include_held_out: bool) -> list[Rule]:
    return [
        (0.42, (("DECL",),)),
        (0.10, (("PASSIVE",),)),
        (0.08, (("GETS", include_held_out),)),
        (0.18, (("REVIEW",),)),
        (0.22, (("SENSE",),)),
    ]


def _decl() -> list[Rule]:
    rules: list[Rule] = []
    for number, p_num in (("sg", 0.55), ("pl", 0.45)):
        for cls, p_cls in (("person", 0.5), ("animal", 0.5)):
            rhs = (("NP", number, cls), ("MODS", number, cls), ("PRED", number, cls), ".")
            rules.append((0.7 * p_num * p_cls, rhs))
    rules.append((0.15, (("NAME",), ("MODS", "sg", "person"), ("PRED", "sg", "person"), ".")))
    for pronoun, number in lx.SUBJECT_PRONOUNS.items():
        rules.append((0.15 / len(lx.SUBJECT_PRONOUNS), (pronoun, ("PRED", number, "person"), ".")))
    return rules


_DET_WEIGHTS = {"the": 10, "a": 3, "my": 1, "his": 0.7, "her": 0.7, "their": 0.5, "this": 0.6,
                "that": 0.5, "these": 0.5, "those": 0.4, "our": 0.4, "your": 0.4}  # fmt: skip


def _det(number: str) -> list[Rule]:
    return [(_DET_WEIGHTS[d], (d,)) for d, numbers in lx.DETERMINERS.items() if number in numbers]


def _np(number: str, cls: str) -> list[Rule]:
    """Determiner, an optional adjective, the noun."""
    noun = ("N", cls, number)
    return [(0.75, (("DET", number), noun)), (0.25, (("DET", number), ("ADJ",), noun))]


def _noun(cls: str, number: str, exclude: str | None = None) -> list[Rule]:
    return [(w, (n.form(number),)) for w, n in zip(lx.zipf_weights(len(lx.NOUNS[cls])), lx.NOUNS[cls])
            if n.singular != exclude]  # fmt: skip


def _any_np() -> list[Rule]:
    """A noun phrase of any number, inside a modifier: a possible attractor."""
    classes = {"place": 0.4, "animal": 0.2, "person": 0.2, "thing": 0.1, "vehicle": 0.1}
    return [(0.5 * p, (("NP", number, cls),)) for number in NUMBERS for cls, p in classes.items()]


def _mods(number: str, cls: str) -> list[Rule]:
    """Zero or more modifiers of the subject: prepositional phrases and relative clauses."""
    more = ("MODS", number, cls)
    return [
        (0.65, ()),
        (0.22, (("PREP",), ("ANY_NP",), more)),
        (0.09, ("that", ("VT", number, cls, False), more)),
        (0.04, ("which", ("BE_PAST", number), ("PART", cls), ("RPREP",), ("NP", "sg", "place"), more)),
    ]


def _pred(number: str, cls: str) -> list[Rule]:
    return [
        (0.30, (("VI", number),)),
        (0.50, (("VT", number, cls, True),)),
        (0.20, (("BE", number), ("FEELING",))),
    ]


def _intransitive(number: str) -> list[Rule]:
    rules = []
    for w, verb in zip(lx.zipf_weights(len(lx.INTRANSITIVE)), lx.INTRANSITIVE):
        for form, p in ((verb.present(number), 0.6), (verb.past, 0.4)):
            rules.append((w * p * 0.7, (form,)))
            rules.append((w * p * 0.3, (form, ("LOCPREP",), ("NP", "sg", "place"))))
    return rules


def _transitive(number: str, cls: str, main_clause: bool) -> list[Rule]:
    """A verb that ``cls`` can do, its object, and (main clauses) an optional instrument."""
    verbs = [v for v in lx.VERBS if cls in v.subjects]
    rules = []
    for w, verb in zip(lx.zipf_weights(len(verbs)), verbs):
        for form, p in ((verb.present(number), 0.6), (verb.past, 0.4)):
            for obj in verb.objects:
                rest = (("INSTR", verb.base),) if main_clause and verb.instruments and cls == "person" else ()
                rules.append((w * p / len(verb.objects), (form, ("OBJ", obj)) + rest))
    return rules


def _object(cls: str) -> list[Rule]:
    if cls == "drink":
        dets = ("the", "my", "his", "her", "their", "some")
        return [(w * d, (det, drink)) for w, drink in zip(lx.zipf_weights(len(lx.DRINKS)), lx.DRINKS)
                for d, det in zip((4, 1, 1, 1, 1, 2), dets)]  # fmt: skip
    return [(0.6, (("NP", "sg", cls),)), (0.4, (("NP", "pl", cls),))]


def _instrument(verb_base: str) -> list[Rule]:
    """Rules for "... with the fork": the instrument depends on the verb."""
    verb = next(v for v in lx.VERBS if v.base == verb_base)
    rules: list[Rule] = [(0.6, ())]
    for noun in verb.instruments:
        rules.append((0.4 / len(verb.instruments), ("with", ("DET", "sg"), noun)))
    return rules


def _be(number: str, past_only: bool = False) -> list[Rule]:
    present = "is" if number == "sg" else "are"
    past = "was" if number == "sg" else "were"
    return [(1.0, (past,))] if past_only else [(0.5, (present,)), (0.5, (past,))]


def _participle_of(cls: str) -> list[Rule]:
    """The participle of a verb that can take ``cls`` as object: "(was) raced"."""
    verbs = [v for v in lx.VERBS if cls in v.objects]
    return _zipf(verbs, lambda v: (v.participle,))


def _passive() -> list[Rule]:
    """Rules for "the ball was kicked by kayla": the object class first, then a verb that takes it."""
    classes = {"food": 0.3, "thing": 0.25, "vehicle": 0.15, "animal": 0.15, "readable": 0.15}
    return [(0.5 * p, (("NP", number, cls), ("BE_PAST", number), ("PASSIVE_VP", cls), "."))
            for number in NUMBERS for cls, p in classes.items()]  # fmt: skip


def _passive_vp(cls: str) -> list[Rule]:
    verbs = [v for v in lx.VERBS if cls in v.objects]
    return _zipf(verbs, lambda v: (v.participle, "by", ("AGENT", v.subjects)))


def _agent(classes: tuple[str, ...]) -> list[Rule]:
    rules: list[Rule] = [(0.4, (("NAME",),))]
    for cls in classes:
        for number, p in (("sg", 0.6), ("pl", 0.4)):
            rules.append((0.6 * p / len(classes), (("NP", number, cls),)))
    return rules


def _gets(include_held_out: bool) -> list[Rule]:
    """Rules for "i have to make sure that the cat gets fed": what happens depends on the noun's class."""
    rules = []
    for w, intro in zip(lx.zipf_weights(len(lx.GETS_INTROS)), lx.GETS_INTROS):
        for cls in lx.GETS_PARTICIPLES:
            for number, p in (("sg", 0.7), ("pl", 0.3)):
                rhs = _words(intro) + (
                    ("GETS_DET", number),
                    ("GETS_N", cls, number, include_held_out),
                    "gets" if number == "sg" else "get",
                    ("GETS_PART", cls),
                    ".",
                )
                rules.append((w * p / len(lx.GETS_PARTICIPLES), rhs))
    return rules


def _gets_noun(cls: str, number: str, include_held_out: bool) -> list[Rule]:
    return _noun(cls, number, exclude=None if include_held_out else lx.HELD_OUT_IN_GETS_FRAME[cls])


def _review() -> list[Rule]:
    return [(0.5, (("CLAUSE", pol), ("REVIEW_END", pol))) for pol in ("pos", "neg")]


_OPPOSITE = {"pos": "neg", "neg": "pos"}


def _review_end(pol: str) -> list[Rule]:
    """Stop, or add a clause: "and" keeps the sentiment, "but" turns it."""
    opp = _OPPOSITE[pol]
    return [
        (0.45, (("STOP", pol),)),
        (0.30, ("and", ("CLAUSE", pol), ("STOP", pol))),
        (0.25, ("but", ("CLAUSE", opp), ("STOP", opp))),
    ]


def _stop(pol: str) -> list[Rule]:
    """The review's label is the sentiment of its last clause; it rides on the final mark."""
    p_bang = 0.4 if pol == "pos" else 0.25
    return [(1 - p_bang, (Tagged(".", ("sentiment", pol)),)), (p_bang, (Tagged("!", ("sentiment", pol)),))]


def _clause(pol: str) -> list[Rule]:
    opp = _OPPOSITE[pol]
    topic = ("TOPIC",)
    rules: list[Rule] = [
        (0.40, ("the", topic, "was", ("POLAR", pol))),
        (0.15, ("the", topic, "was", "not", ("POLAR", opp))),
        (0.25, ("i", ("LOVE", pol), "the", topic)),
        (0.10, ("you", "will", "love" if pol == "pos" else "hate", "it")),
    ]
    if pol == "pos":
        rules.append((0.10, _words("i have no complaints")))
    else:
        rules.append((0.10, ("there", "was", "no", ("MISSING",))))
    return rules


def _polar(pol: str) -> list[Rule]:
    words = lx.POSITIVE if pol == "pos" else lx.NEGATIVE
    return _zipf(words, lambda w: (Tagged(w, ("sense", "great", "good")) if w == "great" else w,))


def _sense_frames() -> list[Rule]:
    """Polysemous words, each sense in its own frame; the sense rides on the word as a tag."""

    def sense(word: str, label: str) -> Tagged:
        return Tagged(word, ("sense", word, label))

    subj = ("SIMPLE_SUBJ",)
    frames: list[tuple] = [
        (subj, ("FEEL",), sense("fine", "healthy"), "."),
        (subj, "paid", "the", sense("fine", "penalty"), "."),
        (
            "there",
            "was",
            "a",
            sense("great", "large"),
            ("ONE_OF", "storm crowd flood fire"),
            "near",
            "the",
            ("N", "place", "sg"),
            ".",
        ),
        (subj, ("ONE_OF", "won lost"), "the", sense("game", "match"), "."),
        (
            "the",
            ("ONE_OF", "hunter hunters"),
            "hunted",
            "the",
            sense("game", "wild animals"),
            "in",
            "the",
            "forest",
            ".",
        ),
        (subj, "rolled", "the", sense("die", "cube"), "."),
        (
            "the",
            ("ONE_OF", "flowers plants trees roses"),
            sense("die", "death"),
            "in",
            "the",
            ("ONE_OF", "winter cold dark"),
            ".",
        ),
        (subj, "took", "a", sense("rest", "break"), "."),
        (subj, "ate", "the", sense("rest", "remainder"), "of", "the", ("N", "food", "sg"), "."),
        (
            ("ONE_OF", "my her his"),
            "business",
            sense("partner", "business"),
            "sold",
            "the",
            ("ONE_OF", "shop house farm"),
            ".",
        ),
        (("ONE_OF", "my her his"), "dance", sense("partner", "dance"), ("ONE_OF", "smiled laughed danced"), "."),
        (subj, ("BE_NOW",), sense("lying", "resting"), "on", "the", ("ONE_OF", "bed grass beach sofa"), "."),
        (subj, ("BE_NOW",), sense("lying", "deceiving"), "to", ("ONE_OF", "me us them her him"), "."),
        (subj, sense("played", "music"), "the", ("ONE_OF", "piano guitar violin drums"), "."),
        (subj, sense("played", "sport"), ("ONE_OF", "chess tennis football cards"), "."),
    ]
    rules = []
    for frame in frames:
        if frame[0] == subj:  # the subject's number must reach "feel(s)" and "is/are"
            for number, p in (("sg", 0.6), ("pl", 0.4)):
                rhs = tuple(_with_number(sym, number) for sym in frame)
                rules.append((p / len(frames), rhs))
        else:
            rules.append((1 / len(frames), frame))
    return rules


def _with_number(symbol, number: str):
    """Give a sense frame's subject-dependent symbols the subject's number."""
    if isinstance(symbol, tuple) and symbol[0] in ("SIMPLE_SUBJ", "FEEL", "BE_NOW"):
        return (symbol[0], number)
    return symbol


def _simple_subject(number: str) -> list[Rule]:
    pronouns = [p for p, n in lx.SUBJECT_PRONOUNS.items() if n == number]
    rules = [(0.5 / len(pronouns), (p,)) for p in pronouns]
    if number == "sg":
        rules.append((0.5, (("NAME",),)))
    else:
        rules.append((0.5, ("the", ("N", "person", "pl"))))
    return rules


_LEAVES = {  # symbols that rewrite to one word from a list, with Zipf weights
    "NAME": lx.NAMES,
    "ADJ": lx.ADJECTIVES,
    "FEELING": lx.FEELINGS,
    "PREP": lx.MODIFIER_PREPOSITIONS,
    "LOCPREP": lx.LOCATION_PREPOSITIONS,
    "RPREP": lx.RELATIVE_PREPOSITIONS,
    "TOPIC": lx.REVIEWED + lx.ASPECTS,
    "MISSING": lx.MISSING,
}


@lru_cache(maxsize=None)
def rules(symbol: tuple) -> tuple[tuple[float, tuple], ...]:
    """The rules for ``symbol`` as (probability, right-hand side); probabilities sum to 1."""
    kind, args = symbol[0], symbol[1:]
    if kind in _LEAVES:
        raw = _zipf(_LEAVES[kind], lambda w: (w,))
    else:
        raw = _RULES[kind](*args)
    total = sum(w for w, _ in raw)
    return tuple((w / total, rhs) for w, rhs in raw)


_RULES = {
    "S": _sentence,
    "DECL": _decl,
    "DET": _det,
    "NP": _np,
    "N": _noun,
    "ANY_NP": _any_np,
    "MODS": _mods,
    "PRED": _pred,
    "VI": _intransitive,
    "VT": _transitive,
    "OBJ": _object,
    "INSTR": _instrument,
    "BE": _be,
    "BE_PAST": lambda number: _be(number, past_only=True),
    "BE_NOW": lambda number: [(1.0, ("is" if number == "sg" else "are",))],
    "PART": _participle_of,
    "PASSIVE": _passive,
    "PASSIVE_VP": _passive_vp,
    "AGENT": _agent,
    "GETS": _gets,
    "GETS_DET": lambda number: [(w, (d,)) for d, w in (("the", 4), ("my", 1), ("our", 1), ("your", 1))],
    "GETS_N": _gets_noun,
    "GETS_PART": lambda cls: _zipf(lx.GETS_PARTICIPLES[cls], lambda w: (w,)),
    "REVIEW": _review,
    "REVIEW_END": _review_end,
    "STOP": _stop,
    "CLAUSE": _clause,
    "POLAR": _polar,
    "LOVE": lambda pol: _zipf(lx.LOVE_VERBS[pol], lambda w: (w,)),
    "SENSE": _sense_frames,
    "SIMPLE_SUBJ": _simple_subject,
    "FEEL": lambda number: [(1.0, ("feels" if number == "sg" else "feel",))],
    "ONE_OF": lambda words: [(1.0, (w,)) for w in words.split()],
}

# What each kind of symbol is, for the account of an ungrammatical sentence.
_DESCRIPTIONS = {
    "DET": "a determiner", "ADJ": "an adjective", "N": "a noun (class: {1}, {2})", "NAME": "a name",
    "MODS": "a modifier of the subject (a preposition or 'that'/'which') or its verb",
    "PRED": "a verb agreeing with a {1} subject", "VI": "an intransitive verb ({1} subject)",
    "VT": "a verb whose subject can be of class {2} ({1})", "BE": "'is/are' or 'was/were' agreeing with a {1} subject",
    "BE_PAST": "'was' or 'were' agreeing with a {1} subject", "BE_NOW": "'is' or 'are' agreeing with a {1} subject",
    "OBJ": "an object of the verb (class: {1})", "INSTR": "'with' and an instrument for '{1}', or the end",
    "PART": "a participle of a verb whose object can be of class {1}",
    "PASSIVE_VP": "a participle of a verb whose object can be of class {1}", "AGENT": "who did it",
    "FEELING": "a word for a feeling", "PREP": "a preposition", "LOCPREP": "a preposition of place",
    "RPREP": "a preposition of place", "CLAUSE": "a {1} clause of a review", "STOP": "the end of the review ('.' or '!')",
    "REVIEW_END": "'and', 'but' or the end of the review", "POLAR": "a {1} adjective",
    "TOPIC": "what a review is about", "LOVE": "a verb of liking or disliking", "MISSING": "what the review missed",
    "S": "the start of a sentence", "DECL": "the start of a statement", "SENSE": "the start of a sentence",
    "GETS": "the 'make sure that ... gets' frame", "GETS_DET": "a determiner",
    "GETS_N": "a noun that can take 'gets' here (class: {1}, {2})", "GETS_PART": "what happens to it (class: {1})",
    "SIMPLE_SUBJ": "a simple {1} subject", "FEEL": "'feel(s)' agreeing with a {1} subject",
    "ONE_OF": "one of: {1}",
}  # fmt: skip


def describe(symbol) -> str:
    """A short English description of what ``symbol`` stands for."""
    if isinstance(symbol, str):
        return f"'{symbol}'"
    template = _DESCRIPTIONS.get(symbol[0])
    if template is None:
        return f"a {symbol[0].lower().replace('_', ' ')}"
    names = {"sg": "singular", "pl": "plural"}
    args = [names.get(a, a) if isinstance(a, str) else a for a in symbol]
    return template.format(*args)


# ---------------------------------------------------------------- the derivation machine


@dataclass(frozen=True)
class Edge:
    """One way to emit ``word`` from a stack, with its probability and the stack after it."""

    word: str
    prob: float
    next_stack: tuple
    tag: tuple | None
    source: tuple | str  # the symbol that produced the word (for error accounts)


@dataclass(frozen=True)
class Sentence:
    """A sampled sentence: its words and, per word, a tag (or None)."""

    words: tuple[str, ...]
    tags: tuple

    def text(self) -> str:
        return " ".join(self.words)


@dataclass
class Failure:
    """Where and why a string is not in the language."""

    position: int
    word: str
    prefix: tuple[str, ...]
    expected_words: list[tuple[str, float]]
    expected: list[str]
    reason: str

    def __str__(self) -> str:
        shown = ", ".join(w for w, _ in self.expected_words[:8])
        before = " ".join(self.prefix) if self.prefix else "the start of a sentence"
        return (f"'{self.word}' (word {self.position + 1}) cannot follow '{before}': {self.reason}. "
                f"Expected {' or '.join(self.expected[:3])}; for example: {shown}")  # fmt: skip


@dataclass
class Score:
    """The oracle's verdict on a sentence: exact log-probability (natural log) per token."""

    words: tuple[str, ...]
    token_logprobs: list[float] = field(default_factory=list)  # one per word, then one for </s>
    failure: Failure | None = None

    @property
    def grammatical(self) -> bool:
        return self.failure is None

    @property
    def logprob(self) -> float:
        return -math.inf if self.failure else sum(self.token_logprobs)

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)


class CourseLanguage:
    """The course language: sample it, and ask it for exact probabilities.

    ``include_held_out=False`` is the training language: the held-out compositions
    ("the dog gets fed") have probability 0 in it. The full language includes them.
    """

    def __init__(self, include_held_out: bool = True):
        self.include_held_out = bool(include_held_out)
        self.start = (("S", self.include_held_out), EOS)
        self._edges: dict[tuple, tuple[Edge, ...]] = {}
        self._by_word: dict[tuple, dict[str, tuple[tuple[float, tuple], ...]]] = {}
        self._sampler: dict[tuple, tuple[list[float], tuple[Edge, ...]]] = {}

    # -- expansion
    def edges(self, stack: tuple) -> tuple[Edge, ...]:
        """Every word that can come next from ``stack``, with probability and next stack."""
        if stack not in self._edges:
            merged: dict[tuple, list] = {}
            for edge in self._expand(stack, 1.0, None, stack[0] if stack else None):
                key = (edge.word, edge.next_stack, edge.tag)
                if key in merged:
                    merged[key][1] += edge.prob
                else:
                    merged[key] = [edge, edge.prob]
            self._edges[stack] = tuple(Edge(e.word, p, e.next_stack, e.tag, e.source) for e, p in merged.values())
        return self._edges[stack]

    def _expand(self, stack: tuple, prob: float, tag, source):
        """Rewrite the top symbol until a word is on top (depth-first), yielding edges."""
        if not stack:
            return
        top, rest = stack[0], stack[1:]
        if isinstance(top, str):
            yield Edge(str(top), prob, rest, getattr(top, "tag", tag), source)
            return
        for p, rhs in rules(top):
            yield from self._expand(rhs + rest, prob * p, tag, top)

    def _word_table(self, stack: tuple) -> dict[str, tuple[tuple[float, tuple], ...]]:
        if stack not in self._by_word:
            table: dict[str, list] = {}
            for edge in self.edges(stack):
                table.setdefault(edge.word, []).append((edge.prob, edge.next_stack))
            self._by_word[stack] = {w: tuple(v) for w, v in table.items()}
        return self._by_word[stack]

    # -- sampling
    def sample(self, rng: random.Random) -> Sentence:
        """One sentence, drawn with its exact probability."""
        stack, words, tags = self.start, [], []
        while True:
            cumulative, edges = self._sampler_for(stack)
            edge = edges[min(bisect.bisect_right(cumulative, rng.random() * cumulative[-1]), len(edges) - 1)]
            if edge.word == EOS:
                return Sentence(tuple(words), tuple(tags))
            words.append(edge.word)
            tags.append(edge.tag)
            stack = edge.next_stack

    def _sampler_for(self, stack: tuple):
        if stack not in self._sampler:
            edges = self.edges(stack)
            cumulative, total = [], 0.0
            for edge in edges:
                total += edge.prob
                cumulative.append(total)
            self._sampler[stack] = (cumulative, edges)
        return self._sampler[stack]

    def sample_many(self, n: int, seed: int) -> list[Sentence]:
        """``n`` sentences from a seeded generator."""
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]

    # -- the oracle
    def _belief(self, prefix) -> tuple[dict[tuple, float], list[float], Failure | None]:
        """Live stacks after ``prefix`` with their (normalised) probabilities, and each word's log-prob."""
        belief: dict[tuple, float] = {self.start: 1.0}
        logprobs: list[float] = []
        for position, word in enumerate(prefix):
            step: dict[tuple, float] = {}
            for stack, weight in belief.items():
                for p, next_stack in self._word_table(stack).get(word, ()):
                    step[next_stack] = step.get(next_stack, 0.0) + weight * p
            total = sum(step.values())
            if total == 0.0:
                return belief, logprobs, self._failure(belief, tuple(prefix), position)
            logprobs.append(math.log(total))
            belief = {s: w / total for s, w in step.items()}
        return belief, logprobs, None

    def next_distribution(self, prefix=()) -> dict[str, float]:
        """The exact distribution of the next word after ``prefix`` (words), ``</s>`` included.

        An ungrammatical prefix raises ``CourseInputError`` that says where it fails.
        """
        prefix = self._words(prefix)
        belief, _, failure = self._belief(prefix)
        if failure:
            raise CourseInputError(f"the prefix is not in the course language: {failure}")
        dist: dict[str, float] = {}
        for stack, weight in belief.items():
            for word, options in self._word_table(stack).items():
                dist[word] = dist.get(word, 0.0) + weight * sum(p for p, _ in options)
        return dict(sorted(dist.items(), key=lambda kv: -kv[1]))

    def score(self, sentence) -> Score:
        """Exact log-probability of a whole sentence (``</s>`` is added); 0 probability with an account."""
        words = self._words(sentence)
        belief, logprobs, failure = self._belief(words + (EOS,))
        return Score(words, logprobs, failure)

    def prefix_logprob(self, prefix) -> float:
        """Log-probability that a sentence starts with ``prefix`` (-inf if it cannot)."""
        _, logprobs, failure = self._belief(self._words(prefix))
        return -math.inf if failure else sum(logprobs)

    def masked_distribution(self, left, right) -> dict[str, float]:
        """Exact P(word | left <mask> right) for a complete sentence ``left + [word] + right``."""
        left, right = self._words(left), self._words(right)
        first = self.next_distribution(left)
        scores = {}
        for word, p in first.items():
            if word == EOS:
                continue
            rest = self.score(left + (word,) + right)
            if rest.grammatical:
                scores[word] = rest.prob
        total = sum(scores.values())
        if total == 0.0:
            raise CourseInputError("no word fits the mask: the sentence around it is not in the course language")
        return dict(sorted(((w, s / total) for w, s in scores.items()), key=lambda kv: -kv[1]))

    def _failure(self, belief, prefix, position) -> Failure:
        word = prefix[position]
        dist: dict[str, float] = {}
        kinds: dict[str, float] = {}
        for stack, weight in belief.items():
            for edge in self.edges(stack):
                dist[edge.word] = dist.get(edge.word, 0.0) + weight * edge.prob
                text = describe(edge.source)
                kinds[text] = kinds.get(text, 0.0) + weight * edge.prob
        expected = sorted(dist.items(), key=lambda kv: -kv[1])
        if word == EOS:
            reason = "the sentence is not finished"
        elif word not in self.vocabulary:
            reason = f"'{word}' is not a word of the course language"
        else:
            reason = "the grammar does not allow it here"
        return Failure(position, word, prefix[:position], expected, sorted(kinds, key=lambda k: -kinds[k]), reason)

    @staticmethod
    def _words(text) -> tuple[str, ...]:
        if isinstance(text, str):
            return tuple(text.split())
        try:
            words = tuple(text)
        except TypeError:
            words = None
        if words is None or not all(isinstance(w, str) for w in words):
            raise CourseInputError("a sentence must be a string or a list of word strings")
        return words

    # -- the vocabulary
    @property
    def vocabulary(self) -> frozenset[str]:
        """Every word the grammar can emit (``</s>`` excluded)."""
        if not hasattr(self, "_vocabulary"):
            self._vocabulary = frozenset(w for stack in self.reachable_stacks() for w in self._word_table(stack)) - {
                EOS
            }
        return self._vocabulary

    def reachable_stacks(self) -> list[tuple]:
        """Every stack a derivation can reach (finite: the rules recurse only at the right end)."""
        seen, todo = {self.start}, [self.start]
        while todo:
            for edge in self.edges(todo.pop()):
                if edge.next_stack and edge.next_stack not in seen:
                    seen.add(edge.next_stack)
                    todo.append(edge.next_stack)
        return sorted(seen, key=repr)
