"""Tarevi, a second, invented "target language": translation with reordering and known word alignments.

The source side is a well-defined part of the course language: simple clauses without subject
modifiers ("the farmer fixed the old car with the hammer .", "the dog runs in the park .",
"they are happy .") and passives ("the ball was kicked by kayla ."). ``parse`` finds their
constituents, each word with its position. A ``TargetLanguage`` is plain data: a word order,
where adjectives, determiners, prepositions and auxiliaries go, three suffixes, and a seed for
its invented lexicon. It reorders the constituents and translates word by word (plural, past
and participle are suffixes), so every target word knows its source word: the alignment is
exact, a bijection between source and target positions. Another target language is one more
``TargetLanguage(...)``.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import cached_property, lru_cache

from course_utils.language import lexicon as lx
from course_utils.language.grammar import CourseLanguage
from course_utils.validation import CourseInputError, check_choice, check_int

SUPPORTED = (
    "translation supports two constructions: simple clauses, SUBJECT VERB [OBJECT] "
    "[with/in/at/near/behind NOUN-PHRASE] . or SUBJECT is/are/was/were FEELING . "
    "('the farmer fixed the old car with the hammer .'), and passives, NOUN-PHRASE was/were "
    "PARTICIPLE by AGENT . ('the ball was kicked by kayla .'); a subject is a name, he/she/they/we "
    "or a noun phrase (determiner, optional adjective, noun), with no modifiers after it"
)
WORD_ORDERS = tuple("".join(p) for p in itertools.permutations("SVO"))
FUNCTION_CATEGORIES = ("det", "pron", "prep", "aux")  # these get short (one-syllable) words
COPIED_CATEGORIES = ("name", "punct")  # written the same in the target, as names are in real translation


# ---------------------------------------------------------------- reading the source words


@dataclass(frozen=True)
class Analysis:
    """One reading of a source word: its lexicon entry and the inflection the form shows."""

    category: str  # noun, verb, adj, det, pron, name, prep, aux, punct, word
    lemma: str
    inflection: str = ""  # "", "plural", "past" or "participle"
    number: str | None = None  # "sg" or "pl" where the form shows it

    @property
    def key(self) -> str:
        """The lexicon entry, e.g. ``"noun:dog"``."""
        return f"{self.category}:{self.lemma}"


def _noun_readings():
    for noun in itertools.chain.from_iterable(lx.NOUNS.values()):
        yield noun.singular, Analysis("noun", noun.singular, "", "sg")
        yield noun.plural, Analysis("noun", noun.singular, "plural", "pl")
    for drink in lx.DRINKS:
        yield drink, Analysis("noun", drink, "", "sg")


def _verb_readings():
    for verb in lx.VERBS + lx.INTRANSITIVE:
        yield verb.base, Analysis("verb", verb.base, "", "pl")
        yield verb.third, Analysis("verb", verb.base, "", "sg")
        yield verb.past, Analysis("verb", verb.base, "past")
        yield verb.participle, Analysis("verb", verb.base, "participle")
    be_forms = (("is", "", "sg"), ("are", "", "pl"), ("was", "past", "sg"), ("were", "past", "pl"))
    for form, inflection, number in be_forms:
        yield form, Analysis("aux", "be", inflection, number)


def _other_readings():
    for det, numbers in list(lx.DETERMINERS.items()) + [("some", ("sg",))]:
        yield det, Analysis("det", det, "", numbers[0] if len(numbers) == 1 else None)
    for pronoun, number in lx.SUBJECT_PRONOUNS.items():
        yield pronoun, Analysis("pron", pronoun, "", number)
    prepositions = ("with", "by") + lx.LOCATION_PREPOSITIONS + lx.MODIFIER_PREPOSITIONS + lx.RELATIVE_PREPOSITIONS
    for prep in dict.fromkeys(prepositions):
        yield prep, Analysis("prep", prep)
    for adjective in lx.ADJECTIVES + lx.FEELINGS:
        yield adjective, Analysis("adj", adjective)
    for name in lx.NAMES:
        yield name, Analysis("name", name, "", "sg")
    for mark in ".!":
        yield mark, Analysis("punct", mark)


@lru_cache(maxsize=None)
def _readings() -> dict[str, tuple[Analysis, ...]]:
    """Every course-language word's readings; a word outside the classes above is its own entry."""
    table: dict[str, list[Analysis]] = {}
    for word, analysis in itertools.chain(_noun_readings(), _verb_readings(), _other_readings()):
        if analysis not in table.setdefault(word, []):
            table[word].append(analysis)
    for word in sorted(CourseLanguage().vocabulary - table.keys()):
        table[word] = [Analysis("word", word)]
    return {word: tuple(entries) for word, entries in table.items()}


def analyses(word: str) -> tuple[Analysis, ...]:
    """The readings of a course-language word, present tense first (empty for an unknown word)."""
    return _readings().get(word, ())


_TRANSITIVE = frozenset(verb.base for verb in lx.VERBS)
_NUMBER_NAMES = {"sg": "singular", "pl": "plural", None: "singular or plural"}


# ---------------------------------------------------------------- parsing the supported subset


@dataclass(frozen=True)
class Token:
    """A source word in a parse: its position and the reading the parser chose."""

    index: int
    word: str
    analysis: Analysis


@dataclass(frozen=True)
class NounPhrase:
    """A name, a pronoun, or determiner + optional adjective + noun."""

    head: Token
    determiner: Token | None = None
    adjective: Token | None = None


@dataclass(frozen=True)
class PrepPhrase:
    """A preposition and its noun phrase: an instrument, a place or a passive's agent."""

    preposition: Token
    phrase: NounPhrase


@dataclass(frozen=True)
class Clause:
    """The constituents of a supported sentence, every word with its source position."""

    subject: NounPhrase
    verb: tuple[Token, ...]  # the verb; or auxiliary and participle; or the copula
    complement: NounPhrase | Token | None  # the object, or the feeling after a copula
    oblique: PrepPhrase | None
    end: Token
    voice: str  # "active" or "passive"


class _Parser:
    """Reads the supported subset left to right; an error says where it stopped and why."""

    def __init__(self, words: tuple[str, ...]):
        self.words, self.i = words, 0

    def peek(self, category: str, accept=lambda a: True) -> bool:
        """Whether the next word has a reading of ``category`` that ``accept`` allows."""
        return self.i < len(self.words) and any(
            a.category == category and accept(a) for a in analyses(self.words[self.i])
        )

    def take(self, category: str, wanted: str, accept=lambda a: True) -> Token:
        """The next word in its first reading of ``category`` that ``accept`` allows."""
        if self.peek(category, accept):
            word = self.words[self.i]
            analysis = next(a for a in analyses(word) if a.category == category and accept(a))
            self.i += 1
            return Token(self.i - 1, word, analysis)
        self.fail(f"expected {wanted}")

    def fail(self, problem: str):
        where = f"word {self.i + 1} ({self.words[self.i]!r})" if self.i < len(self.words) else "the end"
        raise CourseInputError(f"cannot translate {' '.join(self.words)!r}: {problem} at {where}. {SUPPORTED}")

    def noun_phrase(self, pronoun: bool = False) -> NounPhrase:
        if pronoun and self.peek("pron"):
            return NounPhrase(self.take("pron", "a pronoun"))
        if self.peek("name"):
            return NounPhrase(self.take("name", "a name"))
        det = self.take("det", "a determiner, a name or a pronoun" if pronoun else "a determiner or a name")
        adjective = self.take("adj", "an adjective") if self.peek("adj") else None
        number = det.analysis.number
        head = self.take("noun", f"a {_NUMBER_NAMES[number]} noun", lambda a: number in (None, a.number))
        return NounPhrase(head, det, adjective)

    def prep_phrase(self, prepositions: tuple[str, ...]) -> PrepPhrase:
        wanted = " or ".join(f"'{p}'" for p in prepositions)
        preposition = self.take("prep", wanted, lambda a: a.lemma in prepositions)
        return PrepPhrase(preposition, self.noun_phrase())

    def clause(self) -> Clause:
        subject = self.noun_phrase(pronoun=True)
        number = subject.head.analysis.number
        if self.peek("aux"):
            return self.after_auxiliary(subject, number)
        verb = self.take("verb", f"a verb agreeing with a {_NUMBER_NAMES[number]} subject",
                         lambda a: a.inflection == "past" or (a.inflection == "" and a.number == number))  # fmt: skip
        if verb.analysis.lemma in _TRANSITIVE:
            obj, oblique = self.noun_phrase(), self.optional_prep_phrase(("with",))
        else:
            obj, oblique = None, self.optional_prep_phrase(lx.LOCATION_PREPOSITIONS)
        return Clause(subject, (verb,), obj, oblique, self.end(), "active")

    def after_auxiliary(self, subject: NounPhrase, number: str) -> Clause:
        """A passive ("was kicked by kayla") or a copula with a feeling ("is happy")."""
        aux = self.take("aux", f"a form of 'be' agreeing with a {_NUMBER_NAMES[number]} subject",
                        lambda a: a.number == number)  # fmt: skip
        if self.peek("adj", lambda a: a.lemma in lx.FEELINGS):
            return Clause(subject, (aux,), self.take("adj", "a feeling"), None, self.end(), "active")
        participle = self.take("verb", "a participle or a feeling",
                               lambda a: a.inflection == "participle" and a.lemma in _TRANSITIVE)  # fmt: skip
        return Clause(subject, (aux, participle), None, self.prep_phrase(("by",)), self.end(), "passive")

    def optional_prep_phrase(self, prepositions: tuple[str, ...]) -> PrepPhrase | None:
        return self.prep_phrase(prepositions) if self.peek("prep", lambda a: a.lemma in prepositions) else None

    def end(self) -> Token:
        token = self.take("punct", "'.'", lambda a: a.lemma == ".")
        if self.i < len(self.words):
            self.fail("expected nothing after '.'")
        return token


def _source_words(sentence) -> tuple[str, ...]:
    if isinstance(sentence, str):
        return tuple(sentence.split())
    if not isinstance(sentence, (list, tuple)) or not all(isinstance(w, str) for w in sentence):
        raise CourseInputError(f"a sentence must be a string or a list of word strings, got {sentence!r}")
    return tuple(sentence)


def parse(sentence) -> Clause:
    """The constituents of a supported sentence; anything else raises ``CourseInputError``."""
    words = _source_words(sentence)
    if not words:
        raise CourseInputError(f"cannot translate an empty sentence. {SUPPORTED}")
    return _Parser(words).clause()


# ---------------------------------------------------------------- the target language


@dataclass(frozen=True)
class Translation:
    """A sentence pair and its word alignment: (source index, target index) pairs."""

    source: tuple[str, ...]
    target: tuple[str, ...]
    alignment: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class TargetLanguage:
    """An invented language, as data: its word order, its morphology and its lexicon's seed."""

    name: str
    seed: int
    word_order: str = "SOV"  # the order of subject, verb and object
    adjective_after_noun: bool = True
    determiner_after_noun: bool = False
    postpositions: bool = True  # "the fork with" instead of "with the fork"
    oblique_before_verb: bool = True  # prepositional phrases just before the verb, else last
    auxiliary_after_verb: bool = True  # "kicked was" instead of "was kicked"
    plural_suffix: str = "ri"
    past_suffix: str = "ta"
    participle_suffix: str = "no"
    consonants: str = "bdfgklmnprstvz"
    vowels: str = "aeiou"

    def __post_init__(self):
        check_int("seed", self.seed)
        check_choice("word_order", self.word_order, WORD_ORDERS)
        suffixes = (self.plural_suffix, self.past_suffix, self.participle_suffix)
        for text in suffixes + (self.consonants, self.vowels):
            if not (text.isalpha() and text.islower()):
                raise CourseInputError(f"suffixes and letters must be lowercase letters, got {text!r}")
        if len(set(suffixes)) < 3 or set(self.consonants) & set(self.vowels):
            raise CourseInputError("the three suffixes must differ, and no letter may be both consonant and vowel")

    @property
    def suffixes(self) -> dict[str, str]:
        """The suffix of each inflection ("" for the bare form)."""
        return {"": "", "plural": self.plural_suffix, "past": self.past_suffix, "participle": self.participle_suffix}

    @cached_property
    def lexicon(self) -> dict[str, str]:
        """Each lexicon entry ("noun:dog") -> its stem; all stems and inflected forms are unique."""
        readings = itertools.chain.from_iterable(_readings().values())
        keys = sorted({a.key for a in readings if a.category not in COPIED_CATEGORIES},
                      key=lambda key: (key.split(":")[0] not in FUNCTION_CATEGORIES, key))  # fmt: skip
        taken = set(_readings())  # no target word is also a source word (names and marks are copied)
        stems = {}
        for key in keys:
            stems[key] = self._fresh_stem(key, taken)
            taken.update(stems[key] + suffix for suffix in self.suffixes.values())
        return stems

    def _fresh_stem(self, key: str, taken: set[str]) -> str:
        """Seeded syllables (one for a function word, two otherwise) none of whose forms is taken."""
        syllables = 1 if key.split(":")[0] in FUNCTION_CATEGORIES else 2
        for attempt in itertools.count():
            rng = random.Random(f"{self.name}:{self.seed}:{key}:{attempt}")
            count = syllables + attempt // 20  # grow when short words run out
            stem = "".join(rng.choice(self.consonants) + rng.choice(self.vowels) for _ in range(count))
            if not {stem + suffix for suffix in self.suffixes.values()} & taken:
                return stem

    def word(self, token: Token) -> str:
        """The target word for one source word: its stem and suffix (names and marks are copied)."""
        analysis = token.analysis
        if analysis.category in COPIED_CATEGORIES:
            return token.word
        return self.lexicon[analysis.key] + self.suffixes[analysis.inflection]

    def order(self, clause: Clause) -> list[Token]:
        """The source tokens in target order."""
        parts = {"S": self._noun_phrase(clause.subject), "V": self._verb(clause.verb), "O": self._complement(clause)}
        roles = list(self.word_order)
        if clause.oblique:
            parts["X"] = self._prep_phrase(clause.oblique)
            roles.insert(roles.index("V") if self.oblique_before_verb else len(roles), "X")
        return [token for role in roles for token in parts[role]] + [clause.end]

    def _noun_phrase(self, phrase: NounPhrase) -> list[Token]:
        core = [phrase.head, phrase.adjective] if self.adjective_after_noun else [phrase.adjective, phrase.head]
        ordered = core + [phrase.determiner] if self.determiner_after_noun else [phrase.determiner] + core
        return [token for token in ordered if token is not None]

    def _prep_phrase(self, phrase: PrepPhrase) -> list[Token]:
        words = self._noun_phrase(phrase.phrase)
        return words + [phrase.preposition] if self.postpositions else [phrase.preposition] + words

    def _verb(self, verb: tuple[Token, ...]) -> list[Token]:
        return list(reversed(verb)) if self.auxiliary_after_verb else list(verb)

    def _complement(self, clause: Clause) -> list[Token]:
        if isinstance(clause.complement, NounPhrase):
            return self._noun_phrase(clause.complement)
        return [clause.complement] if clause.complement else []

    def translate(self, sentence) -> Translation:
        """Translate a supported sentence (words or a string) and give the word alignment."""
        source = _source_words(sentence)
        tokens = self.order(parse(source))
        target = tuple(self.word(token) for token in tokens)
        return Translation(source, target, tuple((token.index, j) for j, token in enumerate(tokens)))


TAREVI = TargetLanguage("tarevi", seed=0)  # subject-object-verb, nouns before adjectives, postpositions


def translate(sentence, target: TargetLanguage = TAREVI) -> Translation:
    """Translate a supported course-language sentence into ``target`` (default: Tarevi)."""
    return target.translate(sentence)


def split_sentences(words) -> list[tuple[str, ...]]:
    """Cut a passage after each '.'; words after the last '.' form a final (unfinished) sentence."""
    words = _source_words(words)
    sentences, current = [], []
    for word in words:
        current.append(word)
        if word == ".":
            sentences.append(tuple(current))
            current = []
    return sentences + ([tuple(current)] if current else [])


def translate_passage(passage, target: TargetLanguage = TAREVI) -> Translation:
    """Translate one or more supported sentences given as one input ("kayla runs . the dog ate the cake .").

    Each sentence is translated on its own; the alignment indexes the whole passage.
    """
    sentences = split_sentences(passage)
    if not sentences:
        raise CourseInputError(f"cannot translate an empty sentence. {SUPPORTED}")
    source, target_words, alignment = [], [], []
    for sentence in sentences:
        part = target.translate(sentence)
        alignment += [(s + len(source), t + len(target_words)) for s, t in part.alignment]
        source += part.source
        target_words += part.target
    return Translation(tuple(source), tuple(target_words), tuple(alignment))
