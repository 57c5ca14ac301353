"""Labelled evaluation sets for the phenomena planted in the course language.

Each builder is seeded and returns a list of plain dicts (JSON-ready). Every item is checked
against the oracle: the sentence it stands for is in the language (and, for agreement, the
wrong verb form is not), so an evaluation never asks a model about an impossible string.

a. ``agreement_items``: subject-verb agreement across 0..5 attractors of the other number.
b. ``selection_items``: what a verb can take as object; its instrument; P(with | ... <mask> the fork).
c. ``composition_items``: "the dog gets fed", held out of training, beside seen controls.
d. ``sense_items``: polysemous words with their sense in context.
e. ``voice_pairs``: active and passive forms of the same event.
f. ``review_items``: short reviews with their sentiment.
"""

from __future__ import annotations

import random

from course_utils.language import lexicon as lx
from course_utils.language.grammar import CourseLanguage
from course_utils.validation import CourseInputError

_OTHER = {"sg": "pl", "pl": "sg"}
_ANIMATE = ("person", "animal")


def _noun(rng: random.Random, cls: str, number: str) -> str:
    return rng.choice(lx.NOUNS[cls]).form(number)


def _check(lang: CourseLanguage, words: list[str]) -> None:
    """Fail loudly if a builder produced a sentence outside the language (a bug in the builder)."""
    score = lang.score(words)
    if not score.grammatical:
        raise AssertionError(f"evaluation item not in the language: {' '.join(words)}: {score.failure}")


def _attractor(rng: random.Random, number: str, cls: str) -> list[str]:
    """One modifier holding one noun of ``number``: a prepositional phrase or a relative clause."""
    if rng.random() < 0.5:
        return [rng.choice(lx.MODIFIER_PREPOSITIONS), "the", _noun(rng, rng.choice(("place",) + _ANIMATE), number)]
    verbs = [v for v in lx.VERBS if cls in v.subjects and set(v.objects) & set(_ANIMATE + ("thing",))]
    verb = rng.choice(verbs)
    obj = rng.choice([c for c in verb.objects if c in _ANIMATE + ("thing",)])
    return ["that", verb.past, "the", _noun(rng, obj, number)]


def agreement_items(per_count: int = 100, max_attractors: int = 5, seed: int = 0) -> list[dict]:
    """Prefixes ending just before the main verb, with its right and wrong form."""
    lang, rng = CourseLanguage(include_held_out=False), random.Random(seed)
    verbs = [v for v in lx.INTRANSITIVE if v.base != v.past]
    items = []
    for count in range(max_attractors + 1):
        for _ in range(per_count):
            number, cls = rng.choice(("sg", "pl")), rng.choice(_ANIMATE)
            prefix = ["the", _noun(rng, cls, number)]
            for _ in range(count):
                prefix += _attractor(rng, _OTHER[number], cls)
            verb = rng.choice(verbs)
            right, wrong = verb.present(number), verb.present(_OTHER[number])
            _check(lang, prefix + [right, "."])
            if lang.prefix_logprob(prefix + [wrong]) != float("-inf"):
                raise AssertionError(f"wrong form is grammatical: {' '.join(prefix + [wrong])}")
            items.append({"prefix": prefix, "correct": right, "wrong": wrong, "attractors": count,
                          "number": number})  # fmt: skip
    return items


def selection_items(per_verb: int = 10, seed: int = 0) -> list[dict]:
    """Objects and instruments a verb selects, plus masked 'with' items.

    ``kind="object"``: after "<subject> <verb> the", which nouns can come (``allowed``)?
    ``kind="instrument"``: after "... with the", which instruments? ``kind="mask"``: the
    word between the object and "the <instrument>" (always "with").
    """
    lang, rng = CourseLanguage(include_held_out=False), random.Random(seed)
    items = []
    for verb in lx.VERBS:
        objects = [c for c in verb.objects if c != "drink"]
        if not objects or "person" not in verb.subjects:
            continue
        allowed = sorted({n.form(num) for c in objects for n in lx.NOUNS[c] for num in ("sg", "pl")})
        for _ in range(per_verb):
            subject = rng.choice(lx.NAMES)
            obj_cls = rng.choice(objects)
            obj = _noun(rng, obj_cls, "sg")
            _check(lang, [subject, verb.past, "the", obj, "."])
            items.append({"kind": "object", "prefix": [subject, verb.past, "the"], "allowed": allowed,
                          "verb": verb.base})  # fmt: skip
            if verb.instruments:
                tool = rng.choice(verb.instruments)
                _check(lang, [subject, verb.past, "the", obj, "with", "the", tool, "."])
                items.append({"kind": "instrument", "prefix": [subject, verb.past, "the", obj, "with", "the"],
                              "allowed": list(verb.instruments), "verb": verb.base})  # fmt: skip
                items.append({"kind": "mask", "left": [subject, verb.past, "the", obj], "target": "with",
                              "right": ["the", tool, "."], "verb": verb.base})  # fmt: skip
    return items


def composition_items(per_noun: int = 20, seed: int = 0) -> list[dict]:
    """The "gets" frame for held-out nouns (never in training) and for seen nouns of the same class."""
    full, rng = CourseLanguage(include_held_out=True), random.Random(seed)
    items = []
    for cls, held_out in lx.HELD_OUT_IN_GETS_FRAME.items():
        seen = [n.singular for n in lx.NOUNS[cls][:4] if n.singular != held_out][:2]
        for noun, is_held_out in [(held_out, True)] + [(n, False) for n in seen]:
            for _ in range(per_noun):
                intro = rng.choice(lx.GETS_INTROS).split()
                prefix = intro + ["the", noun, "gets"]
                target = rng.choice(lx.GETS_PARTICIPLES[cls])
                _check(full, prefix + [target, "."])
                items.append({"prefix": prefix, "target": target, "allowed": list(lx.GETS_PARTICIPLES[cls]),
                              "noun": noun, "class": cls, "held_out": is_held_out})  # fmt: skip
    return items


def sense_items(per_sense: int = 30, seed: int = 0, max_draws: int = 400_000) -> list[dict]:
    """Sentences containing a polysemous word, with the position and sense of that word."""
    lang, rng = CourseLanguage(include_held_out=False), random.Random(seed)
    counts: dict[tuple, int] = {}
    items = []
    for _ in range(max_draws):
        sentence = lang.sample(rng)
        for position, tag in enumerate(sentence.tags):
            if tag and tag[0] == "sense" and counts.get(tag[1:], 0) < per_sense:
                counts[tag[1:]] = counts.get(tag[1:], 0) + 1
                items.append({"words": list(sentence.words), "position": position, "word": tag[1],
                              "sense": tag[2]})  # fmt: skip
        if len(counts) == _N_SENSES and min(counts.values()) == per_sense:
            return items
    raise CourseInputError(f"could not find {per_sense} examples of every sense in {max_draws} sentences")


_N_SENSES = 16  # 8 words x 2 senses each (see language._sense_frames and _polar)


def _agent(rng: random.Random, verb: lx.Verb) -> list[str]:
    if rng.random() < 0.5:
        return [rng.choice(lx.NAMES)]
    return ["the", _noun(rng, rng.choice(verb.subjects), rng.choice(("sg", "pl")))]


def voice_pairs(n: int = 1000, seed: int = 0) -> list[dict]:
    """The same event in the active ("kayla kicked the ball .") and passive voice."""
    lang, rng = CourseLanguage(include_held_out=False), random.Random(seed)
    passive_classes = ("food", "thing", "vehicle", "animal", "readable")
    verbs = [v for v in lx.VERBS if set(v.objects) & set(passive_classes)]
    pairs = []
    for _ in range(n):
        verb = rng.choice(verbs)
        number = rng.choice(("sg", "pl"))
        theme_cls = rng.choice([c for c in verb.objects if c in passive_classes])
        theme = ["the"] + ([rng.choice(lx.ADJECTIVES)] if rng.random() < 0.3 else []) + [_noun(rng, theme_cls, number)]
        agent = _agent(rng, verb)
        active = agent + [verb.past] + theme + ["."]
        passive = theme + ["was" if number == "sg" else "were", verb.participle, "by"] + agent + ["."]
        _check(lang, active)
        _check(lang, passive)
        pairs.append({"active": active, "passive": passive, "agent": agent, "verb": verb.base, "theme": theme})
    return pairs


def review_items(n: int, seed: int) -> list[dict]:
    """Reviews sampled from the language; the label is the sentiment of the last clause."""
    lang, rng = CourseLanguage(include_held_out=False), random.Random(seed)
    items = []
    while len(items) < n:
        sentence = lang.sample(rng)
        last = sentence.tags[-1] if sentence.tags else None
        if last and last[0] == "sentiment":
            items.append({"words": list(sentence.words), "label": last[1]})
    return items
