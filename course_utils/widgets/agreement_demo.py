"""Widget: does the verb agree with its subject, across attractors? Asked of each model.

In "the cooks behind the station that chased the owl ___" the verb must be plural ("cry"), to agree
with "cooks", although the nearer nouns "station" and "owl" (the attractors) are singular. Pick the
subject's number and the number of attractors, and step through the agreement items of that kind
(``corpus.load_eval("agreement")``). For each model: P(singular verb form) against P(plural verb
form) after the prefix, as paired bars, and its accuracy (how often P(right form) > P(wrong form))
over all the items with that many attractors, whatever the subject's number (the measurement is
``evaluation.agreement``'s).

Every item is scored once per model when the widget is made (batched by prefix length), so a
redraw only paints. As in the other demos, the picture is painted with Pillow (``painting``).
"""

from __future__ import annotations

import collections
import random
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from course_utils.evaluation.agreement import NUMBERS, accuracy_by_attractors, check_items, form_probs
from course_utils.language.text_pipeline import Vocab
from course_utils.lecture import is_lecture_mode
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets import palette
from course_utils.widgets.painting import PaintedDemo, pillow_font, rgb, text_scale
from course_utils.widgets.widget_kit import check_models, models_and_vocab

COLORS = {"correct": palette.MODEL, "wrong": palette.WRONG, "subject": palette.MODEL, "attractor": palette.SECOND,
          "chance": palette.MUTED, "right": palette.RIGHT}  # fmt: skip
KEY = (
    ("correct", "the form that agrees with the subject"),
    ("wrong", "the form that does not"),
    ("chance", "50%: chance"),
)
# In lecture mode (a projector's 1280 × 720) the picture must be shown near its own size, about 720 × 470 pixels at
# 22-pixel text: shorter bars, "sg"/"pl" for the numbers, the accuracy as a percentage only (the readout says over how
# many items), and a shorter key.
LECTURE_KEY = (
    ("correct", "agrees with the subject"),
    ("wrong", "does not agree"),
    ("chance", "chance (50%)"),
)
NUMBER_SHORT = {"singular": "sg", "plural": "pl"}
MAX_MODELS = 6


# ---------------------------------------------------------------- painting


@dataclass(frozen=True)
class Verdict:
    """One model on one item: its probabilities of the two verb forms and its accuracy on items of that kind."""

    singular: tuple[str, float]  # (form, probability)
    plural: tuple[str, float]
    correct: str  # "singular" or "plural"
    accuracy: float  # over every item with this many attractors
    items: int  # how many

    @property
    def right(self) -> bool:
        p = {"singular": self.singular[1], "plural": self.plural[1]}
        return p[self.correct] > p[_other(self.correct)]


def _other(number: str) -> str:
    return "plural" if number == "singular" else "singular"


class AgreementPainter:
    """Paints the prefix (subject and attractors coloured), then per model paired bars and an accuracy bar."""

    def __init__(self, names: list[str], forms: list[str], *, lecture: bool = False,
                 prefixes: list[list[str]] = ()):  # fmt: skip
        """Room for each model of ``names`` and each verb form of ``forms``. ``lecture``: the projector's layout,
        with room for as many lines as the longest of ``prefixes`` takes, a little closer together."""
        self.lecture = lecture
        self.key = LECTURE_KEY if lecture else KEY
        self.px = px = round(14 * text_scale())
        self.font, self.bold = pillow_font(px), pillow_font(px, "bold")
        self.big, self.big_bold = pillow_font(round(1.3 * px)), pillow_font(round(1.3 * px), "bold")
        self.colors = {key: rgb(color) for key, color in COLORS.items()}
        self.row = round(1.5 * px)  # one bar and its gap
        self.name_w = round(max(self.bold.getlength(n) for n in names)) + px
        self.label_w = round(max(self.font.getlength(self._form(f, "singular")) for f in forms)) + px
        self.bar_w, self.value_w = (6 if lecture else 11) * px, round((5 if lecture else 4.5) * px)  # bars, numbers
        self.acc_left = px // 2 + self.name_w + self.label_w + self.bar_w + self.value_w + 2 * px
        self.acc_w = (5 if lecture else 9) * px
        self.block = 2 * self.row + px // 2  # one model
        width = self.acc_left + self.acc_w + px + round(self.font.getlength(self._accuracy(1.0, 1000)))
        self.line = round((1.35 if lecture else 1.6) * self.big.size)  # the prefix's lines
        if lecture:  # the lines of prefix
            self.header = max([self._lines(p, width)[-1][2] + 1 for p in prefixes], default=3) * self.line + px // 2
        else:
            self.header = round(3 * 1.6 * self.big.size) + px // 2  # up to three lines of prefix
        self.key_lines = self._key_lines(width)
        key_h = round((0.5 + 1.5 * len(self.key_lines)) * px)
        self.size = (width, self.header + 2 * px + len(names) * self.block + key_h)

    def _form(self, form: str, number: str) -> str:
        """A verb form's label: "laughs (singular)", or "laughs (sg)" in lecture mode."""
        return f"{form} ({NUMBER_SHORT[number] if self.lecture else number})"

    def _accuracy(self, accuracy: float, items: int) -> str:
        """The accuracy's text: "28% of 100 items", or "28%" in lecture mode (the readout gives the items)."""
        return f"{accuracy:.0%}" if self.lecture else f"{accuracy:.0%} of {items} items"

    def _key_entry_w(self, text: str) -> int:
        return round(1.4 * self.px) + round(self.font.getlength(text)) + 2 * self.px

    def _key_lines(self, width: int) -> list[list[tuple[str, str]]]:
        """The key's entries, on as many lines as ``width`` needs (one, outside lecture mode)."""
        lines: list[list[tuple[str, str]]] = [[]]
        used = self.px // 2
        for entry in self.key:
            if lines[-1] and used + self._key_entry_w(entry[1]) - 2 * self.px > width - self.px // 2:
                lines.append([])
                used = self.px // 2
            lines[-1].append(entry)
            used += self._key_entry_w(entry[1])
        return lines

    def paint(self, prefix: list[str], verdicts: dict[str, Verdict], attractors: int) -> Image.Image:
        """The whole picture for one item."""
        picture = Image.new("RGBA", self.size, "white")
        pen = ImageDraw.Draw(picture)
        self._prefix(pen, prefix)
        top = self.header + self.px // 2
        px = self.px
        pen.text((px // 2, top), "P(next word) after the prefix", fill="black", font=self.bold, anchor="lm")
        header = "accuracy" if self.lecture else f"accuracy, {attractors} attractor{'s' * (attractors != 1)}"
        pen.text((self.acc_left, top), header, fill="black", font=self.bold, anchor="lm")
        widest = max(max(v.singular[1], v.plural[1]) for v in verdicts.values()) or 1.0
        for i, (name, verdict) in enumerate(verdicts.items()):
            self._model(pen, top + px + i * self.block, name, verdict, widest)
        self._key(pen)
        return picture

    def _lines(self, prefix: list[str], width: int) -> list[tuple[str, float, int]]:
        """The prefix and a blank, wrapped within ``width``: (word, x, line number) for each, the subject bold."""
        subject, _ = noun_positions(prefix)
        x, line, placed = self.px // 2, 0, []
        space = self.big.getlength(" ")
        for i, word in enumerate([*prefix, "___"]):
            size = (self.big_bold if i == subject else self.big).getlength(word)
            if x + size > width - self.px:
                x, line = self.px // 2, line + 1
            placed.append((word, x, line))
            x += size + space
        return placed

    def _prefix(self, pen: ImageDraw.ImageDraw, prefix: list[str]) -> None:
        """The prefix word by word, wrapped; the subject bold blue, the attractor nouns orange; then a blank."""
        subject, attractors = noun_positions(prefix)
        for i, (word, x, line) in enumerate(self._lines(prefix, self.size[0])):
            font, color = (self.big_bold, self.colors["subject"]) if i == subject else (self.big, "black")
            if i in attractors:
                color = self.colors["attractor"]
            y = self.px // 2 + line * self.line  # the ascender line: bold and plain words align
            pen.text((x, y), word, fill=color, font=font, anchor="la")

    def _model(self, pen: ImageDraw.ImageDraw, top: int, name: str, verdict: Verdict, widest: float) -> None:
        """One model: its name, a bar per verb form (blue: agrees, red: does not), ✓/✗, and its accuracy bar."""
        px, half = self.px, self.row * 3 // 8
        pen.text((px // 2, top + self.row), name, fill="black", font=self.bold, anchor="lm")
        left = px // 2 + self.name_w + self.label_w
        for row, number in enumerate(("singular", "plural")):
            form, p = getattr(verdict, number)
            middle = top + row * self.row + self.row // 2
            kind = "correct" if number == verdict.correct else "wrong"
            end = left + round(self.bar_w * p / widest)
            pen.rectangle((left, middle - half, end, middle + half), fill=self.colors[kind])
            pen.text((left - px // 3, middle), self._form(form, number), fill="black", font=self.font, anchor="rm")
            pen.text((end + px // 3, middle), f"{p:.3g}", fill="black", font=self.font, anchor="lm")
        pen.line((left, top, left, top + 2 * self.row), fill="black", width=1)
        mark, color = ("✓", self.colors["right"]) if verdict.right else ("✗", self.colors["wrong"])
        pen.text((self.acc_left - px, top + self.row), mark, fill=color, font=self.big_bold, anchor="rm")
        middle = top + self.row
        end = self.acc_left + round(self.acc_w * verdict.accuracy)
        pen.rectangle((self.acc_left, middle - half, end, middle + half), fill=self.colors["correct"])
        pen.rectangle((self.acc_left, middle - half, self.acc_left + self.acc_w, middle + half), outline="black")
        chance = self.acc_left + self.acc_w // 2
        pen.line((chance, middle - 2 * half, chance, middle + 2 * half), fill=self.colors["chance"], width=2)
        pen.text((self.acc_left + self.acc_w + px // 2, middle), self._accuracy(verdict.accuracy, verdict.items),
                 fill="black", font=self.font, anchor="lm")  # fmt: skip

    def _key(self, pen: ImageDraw.ImageDraw) -> None:
        for row, entries in enumerate(self.key_lines):
            x, y = self.px // 2, self.size[1] - self.px - round(1.5 * self.px) * (len(self.key_lines) - 1 - row)
            for kind, text in entries:
                pen.rectangle((x, y - self.px // 3, x + self.px, y + self.px // 3), fill=self.colors[kind])
                x += round(1.4 * self.px)
                pen.text((x, y), text, fill="black", font=self.font, anchor="lm")
                x += round(self.font.getlength(text)) + 2 * self.px


def noun_positions(prefix: list[str]) -> tuple[int | None, set[int]]:
    """Where the subject noun is (the word after the first "the") and the attractor nouns (after each later "the")."""
    nouns = [i + 1 for i, word in enumerate(prefix[:-1]) if word == "the"]
    return (nouns[0] if nouns else None), set(nouns[1:])


# ---------------------------------------------------------------- the widget


class AgreementDemo(PaintedDemo):
    """The subject's number, the number of attractors, and which example: each model's verdict on it.

    ``models`` maps names to language models over ``vocab``; ``items`` are agreement items (by
    default ``corpus.load_eval("agreement")``); ``seed`` shuffles the order in which the examples
    of each kind are shown. With no arguments: the shipped RNN, GRU and LSTM and ``course_vocab()``.
    After each redraw, ``shown`` maps each model to its ``Verdict`` and ``item`` is the item shown. Made in lecture
    mode, the picture fits a projector (``AgreementPainter``'s ``lecture``) and the readout is shorter.
    """

    def __init__(self, models: dict | None = None, vocab: Vocab | None = None, *, items: list[dict] | None = None,
                 seed: int = 0):  # fmt: skip
        self.models, self.vocab = models_and_vocab(models, vocab)
        check_models(self.models, self.vocab, limit=MAX_MODELS)
        seed = check_int("seed", seed, minimum=0)
        if items is None:
            from course_utils.language.corpus import load_eval

            items = load_eval("agreement")
        self.items = check_items(items, self.vocab)
        self.probs = {name: form_probs(m, self.vocab, self.items) for name, m in self.models.items()}  # (N, 2) each
        self.accuracy = {name: accuracy_by_attractors(p, self.items) for name, p in self.probs.items()}
        self.counts = collections.Counter(item["attractors"] for item in self.items)  # items per number of attractors
        self.groups = self._groups(seed)
        self.shown: dict[str, Verdict] = {}
        self.item: dict | None = None
        forms = [form for item in self.items for form in (item["correct"], item["wrong"])]
        self.painter = AgreementPainter(list(self.models), forms, lecture=is_lecture_mode(),
                                        prefixes=[item["prefix"] for item in self.items])  # fmt: skip
        self.make_canvas(*self.painter.size)
        most = max(item["attractors"] for item in self.items)
        controls = {
            "number": widgets.ToggleButtons(options=list(NUMBERS), value="plural", description="subject"),
            "attractors": widgets.IntSlider(value=min(2, most), min=0, max=most, description="attractors"),
            "example": widgets.IntSlider(value=0, min=0, max=0, description="example"),
        }
        for name in ("number", "attractors"):  # before the Demo's own observers: the example slider fits first
            controls[name].observe(self._fit_example, names="value")
        self.controls = controls
        self._fit_example()
        super().__init__(controls, title="Agreement: does the verb agree with its subject, past the attractors?")

    def _groups(self, seed: int) -> dict[tuple[str, int], list[int]]:
        """Item indices by (number, attractors), each list in an order shuffled with ``seed``."""
        groups: dict[tuple[str, int], list[int]] = collections.defaultdict(list)
        for i, item in enumerate(self.items):
            groups[item["number"], item["attractors"]].append(i)
        rng = random.Random(seed)
        for key in sorted(groups):
            rng.shuffle(groups[key])
        return dict(groups)

    def _fit_example(self, _change=None) -> None:
        """The example slider runs over the items of the chosen kind."""
        group = self.groups.get((NUMBERS[self.controls["number"].value], self.controls["attractors"].value), [])
        slider = self.controls["example"]
        with self.quietly():
            slider.max = max(len(group) - 1, 0)

    def verdicts(self, index: int) -> dict[str, Verdict]:
        """Each model's verdict on item ``index``."""
        item = self.items[index]
        number = "singular" if item["number"] == "sg" else "plural"
        forms = {number: item["correct"], _other(number): item["wrong"]}
        verdicts = {}
        for name, probs in self.probs.items():
            p = {number: probs[index, 0], _other(number): probs[index, 1]}
            count = item["attractors"]
            verdicts[name] = Verdict((forms["singular"], float(p["singular"])), (forms["plural"], float(p["plural"])),
                                     number, self.accuracy[name][count], self.counts[count])  # fmt: skip
        return verdicts

    def legends(self) -> list[dict[str, str]]:
        words = {"the subject": COLORS["subject"], "an attractor": COLORS["attractor"], "other words": palette.BLACK}
        return [{text: COLORS[kind] for kind, text in self.painter.key}, words]

    def draw(self, number: str, attractors: int, example: int) -> Figure:
        number = check_choice("subject", number, list(NUMBERS))
        attractors = check_int("attractors", attractors, minimum=0)
        group = self.groups.get((NUMBERS[number], attractors))
        if not group:
            raise CourseInputError(f"no agreement item has a {number} subject and {attractors} attractors")
        index = group[check_int("example", example, minimum=0, maximum=len(group) - 1)]
        item = self.items[index]
        verdicts = self.verdicts(index)
        self.layer.set_pixels(np.asarray(self.painter.paint(item["prefix"], verdicts, attractors)))
        self.shown, self.item = verdicts, item
        parts = [f"{name} prefers '{getattr(v, v.correct if v.right else _other(v.correct))[0]}' "
                 f"{'✓' if v.right else '✗'}" for name, v in verdicts.items()]  # fmt: skip
        if self.painter.lecture:  # one or two lines: the picture shows the prefix and each model's ✓ or ✗
            kind = f"{attractors} attractor{'s' * (attractors != 1)}"
            self.show_readout(f"the verb must be {number}: '{item['correct']}', not '{item['wrong']}' · accuracy "
                              f"over the {self.counts[attractors]} items with {kind}")  # fmt: skip
            return self.figure
        self.show_readout(f"'{' '.join(item['prefix'])} ___': the verb must be {number}, "
                          f"'{item['correct']}' (not '{item['wrong']}'). " + " · ".join(parts))  # fmt: skip
        return self.figure
