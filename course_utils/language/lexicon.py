"""The words of the course language, grouped by what they mean (their class).

Each class is an ordered list; a word's rank in its list sets its frequency (Zipf weights,
``1 / rank``), so the corpus has a few common words and a long tail of rare ones, like English.
The grammar in ``course_utils.language.grammar`` decides which classes may go together.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Noun:
    """A countable noun: its singular and plural forms."""

    singular: str
    plural: str

    def form(self, number: str) -> str:
        """The form for ``number`` ("sg" or "pl")."""
        return self.singular if number == "sg" else self.plural


@dataclass(frozen=True)
class Verb:
    """A verb's four forms and what it combines with."""

    base: str  # plural present: "they eat"
    third: str  # singular present: "she eats"
    past: str
    participle: str
    subjects: tuple[str, ...] = ("person", "animal")  # classes that can do it
    objects: tuple[str, ...] = ()  # classes it can take as object (empty: intransitive)
    instruments: tuple[str, ...] = ()  # nouns for "with the ..."

    def present(self, number: str) -> str:
        """The present-tense form agreeing with a ``number`` subject."""
        return self.third if number == "sg" else self.base


def regular_plural(singular: str) -> str:
    """English's regular plural: -ch/-sh/-s/-x/-z take -es, consonant + y becomes -ies, the rest take -s."""
    if singular.endswith(("ch", "sh", "s", "x", "z")):
        return singular + "es"
    if singular.endswith("y") and len(singular) > 1 and singular[-2] not in "aeiou":
        return singular[:-1] + "ies"
    return singular + "s"


def _nouns(spec: str) -> tuple[Noun, ...]:
    """Parse "cat, mouse/mice": a plural is ``regular_plural(word)`` unless an irregular one follows a slash."""
    nouns = []
    for item in spec.split(","):
        singular, _, plural = item.strip().partition("/")
        nouns.append(Noun(singular, plural or regular_plural(singular)))
    return tuple(nouns)


NOUNS: dict[str, tuple[Noun, ...]] = {
    "person": _nouns(
        "man/men, woman/women, child/children, girl, boy, teacher, student, doctor, farmer, baker, "
        "king, queen, friend, neighbor, cook, driver, pilot, nurse, artist, singer, hunter, sailor, "
        "lawyer, soldier"
    ),
    "animal": _nouns(
        "cat, dog, horse, bird, fox, rabbit, cow, goat, duck, wolf/wolves, bear, pig, lion, "
        "tiger, mouse/mice, frog, owl, monkey"
    ),
    "food": _nouns(
        "cake, apple, pie, cookie, banana, sandwich, pizza, carrot, egg, orange, pear, "
        "peach, plum, potato/potatoes, tomato/tomatoes, muffin, pancake, biscuit, onion, lemon, "
        "cherry, melon, loaf/loaves"
    ),
    "vehicle": _nouns("car, bus, truck, bike, boat, train, van, tractor, taxi, wagon"),
    "thing": _nouns(
        "ball, stone, box, rock, bottle, toy, bag, basket, bucket, kite, drum, bell, key, chair, "
        "lamp, cup, hat, coat, shoe, clock"
    ),
    "readable": _nouns(
        "book, letter, note, poem, story, map, newspaper, menu, report, card, sign, list, recipe, message"
    ),
    "place": _nouns(
        "barn, house, river, park, school, garden, bridge, station, market, hill, forest, lake, shop, "
        "tower, church, farm, field, road, village, castle, beach, library, kitchen"
    ),
    "plant": _nouns("tree, flower, plant, rose, bush, tulip, vine"),
    "utensil": _nouns("fork, spoon, knife/knives, saw, pen, pencil, marker, hammer, wrench, sponge, brush, hose"),
}

# Drinks are mass nouns: only one form ("the tea").
DRINKS = ("tea", "milk", "coffee", "juice", "water", "soup", "lemonade", "cocoa")
NAMES = (
    "kayla", "eleni", "anqi", "omar", "lucas", "maria", "chris", "sam", "nina", "leo",
    "ava", "noah", "mia", "ivan", "zara", "tom", "lily", "raj", "emma", "yuki",
)  # fmt: skip

CONCRETE = ("person", "animal", "food", "vehicle", "thing", "readable", "place", "plant")

VERBS: tuple[Verb, ...] = (
    Verb("eat", "eats", "ate", "eaten", objects=("food",), instruments=("fork", "spoon")),
    Verb("see", "sees", "saw", "seen", objects=("person", "animal", "vehicle", "thing", "plant")),
    Verb("like", "likes", "liked", "liked", objects=("food", "animal", "person", "thing")),
    Verb("chase", "chases", "chased", "chased", objects=("animal", "person")),
    Verb("find", "finds", "found", "found", objects=("thing", "food", "readable", "animal")),
    Verb("carry", "carries", "carried", "carried", objects=("thing", "food", "readable")),
    Verb("drink", "drinks", "drank", "drunk", objects=("drink",)),
    Verb("read", "reads", "read", "read", subjects=("person",), objects=("readable",)),
    Verb("write", "writes", "wrote", "written", subjects=("person",), objects=("readable",),
         instruments=("pen", "pencil", "marker")),
    Verb("kick", "kicks", "kicked", "kicked", subjects=("person",), objects=("thing",)),
    Verb("feed", "feeds", "fed", "fed", subjects=("person",), objects=("animal", "person")),
    Verb("wash", "washes", "washed", "washed", subjects=("person",), objects=("vehicle", "animal", "thing"),
         instruments=("sponge", "brush", "hose")),
    Verb("fix", "fixes", "fixed", "fixed", subjects=("person",), objects=("vehicle", "thing"),
         instruments=("hammer", "wrench")),
    Verb("cut", "cuts", "cut", "cut", subjects=("person",), objects=("food", "plant"),
         instruments=("knife", "saw")),
    Verb("throw", "throws", "threw", "thrown", subjects=("person",), objects=("thing",)),
    Verb("drive", "drives", "drove", "driven", subjects=("person",), objects=("vehicle",)),
    Verb("ride", "rides", "rode", "ridden", subjects=("person",), objects=("vehicle", "animal")),
    Verb("bake", "bakes", "baked", "baked", subjects=("person",), objects=("food",)),
    Verb("buy", "buys", "bought", "bought", subjects=("person",), objects=("food", "thing", "readable", "vehicle")),
    Verb("paint", "paints", "painted", "painted", subjects=("person",), objects=("thing", "vehicle"),
         instruments=("brush",)),
    Verb("hunt", "hunts", "hunted", "hunted", objects=("animal",)),
    Verb("race", "races", "raced", "raced", subjects=("person",), objects=("animal", "vehicle")),
    Verb("water", "waters", "watered", "watered", subjects=("person",), objects=("plant",)),
)  # fmt: skip

INTRANSITIVE: tuple[Verb, ...] = tuple(
    Verb(*forms)
    for forms in (
        ("run", "runs", "ran", "run"), ("sleep", "sleeps", "slept", "slept"), ("walk", "walks", "walked", "walked"),
        ("jump", "jumps", "jumped", "jumped"), ("wait", "waits", "waited", "waited"),
        ("swim", "swims", "swam", "swum"), ("sing", "sings", "sang", "sung"), ("trip", "trips", "tripped", "tripped"),
        ("fall", "falls", "fell", "fallen"), ("sit", "sits", "sat", "sat"), ("smile", "smiles", "smiled", "smiled"),
        ("dance", "dances", "danced", "danced"), ("laugh", "laughs", "laughed", "laughed"),
        ("cry", "cries", "cried", "cried"), ("hide", "hides", "hid", "hidden"),
    )
)  # fmt: skip

ADJECTIVES = ("big", "small", "old", "new", "red", "green", "blue", "brown", "black", "white", "little")
FEELINGS = ("happy", "hungry", "tired", "sad", "angry", "busy", "sleepy", "calm", "brave", "quiet", "lonely", "sick")

# "the": either number; "a", "this", "that": singular; "these", "those": plural.
DETERMINERS = {
    "the": ("sg", "pl"), "a": ("sg",), "my": ("sg", "pl"), "his": ("sg", "pl"), "her": ("sg", "pl"),
    "their": ("sg", "pl"), "this": ("sg",), "that": ("sg",), "these": ("pl",), "those": ("pl",),
    "our": ("sg", "pl"), "your": ("sg", "pl"),
}  # fmt: skip
SUBJECT_PRONOUNS = {"he": "sg", "she": "sg", "they": "pl", "we": "pl"}
MODIFIER_PREPOSITIONS = ("near", "behind", "beside", "under", "above", "from")
LOCATION_PREPOSITIONS = ("in", "at", "near", "behind")
RELATIVE_PREPOSITIONS = ("past", "near", "behind")  # "the horse which was raced past the barn"

# The "gets fed" frame: what happens to each class.
GETS_PARTICIPLES = {
    "animal": ("fed", "walked", "brushed"),
    "person": ("paid", "invited", "hired"),
    "vehicle": ("washed", "fixed", "parked"),
    "plant": ("watered", "trimmed"),
    "readable": ("sent", "signed", "printed"),
}
# One noun per class never appears in the frame in training: "the dog gets fed" is held out.
HELD_OUT_IN_GETS_FRAME = {
    "animal": "dog",
    "person": "teacher",
    "vehicle": "truck",
    "plant": "rose",
    "readable": "letter",
}
GETS_INTROS = (
    "i have to make sure that", "i forgot to make sure that", "we made sure that",
    "please make sure that", "you have to check that",
)  # fmt: skip

# Reviews: a subject that is reviewed, aspects of it, and a polarity lexicon.
REVIEWED = ("movie", "film", "show", "album", "meal", "concert", "restaurant", "series")
ASPECTS = ("acting", "plot", "music", "ending", "food", "service", "dialogue", "cast", "script", "soundtrack")
POSITIVE = ("good", "great", "wonderful", "fun", "amazing", "excellent", "lovely", "brilliant", "funny", "perfect")
NEGATIVE = ("bad", "boring", "awful", "terrible", "dull", "poor", "slow", "weak", "silly", "messy")
LOVE_VERBS = {"pos": ("loved", "liked", "enjoyed"), "neg": ("hated", "disliked")}
MISSING = ("plot", "story", "humor", "point", "tension")  # "there was no plot"


def zipf_weights(n: int, exponent: float = 1.0) -> list[float]:
    """Weights 1, 1/2^s, 1/3^s, ... for the ``n`` items of a class, most frequent first."""
    return [1.0 / (rank**exponent) for rank in range(1, n + 1)]
