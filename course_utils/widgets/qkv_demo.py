"""Widget: the slide's Q·K·V numbers (Thinking / Machines) step by step, with editable vectors and the √d_k toggle.

``QKVDemo`` is the CMU slide "A More Detailed Look at Self-Attention": the query of "Thinking" meets
the keys of "Thinking" and "Machines" (q₁·k₁ = 112, q₁·k₂ = 96), the scores are divided by
√d_k = 8 (14 and 12), a softmax turns them into weights (0.88 and 0.12), and the output z₁ is the
weighted sum of the value vectors. Type any vectors (runs like "2*48, 1*16": the number 2, 48
times); switch the division off to see why it is there: softmax(112, 96) is already 0.9999999 and
1.1e-07, one key takes everything and its gradient all but vanishes.

Speed: a redraw computes two dot products; the picture is painted with Pillow (matplotlib text is
slow) and reaches the figure as one bitmap (``painting.PaintedDemo``).
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from course_utils.lecture import is_lecture_mode
from course_utils.models.transformer.attention import THINKING_MACHINES, parse_runs
from course_utils.validation import CourseInputError, check_int
from course_utils.widgets import palette
from course_utils.widgets.painting import PaintedDemo, fit_text, pillow_font, rgb, text_scale

WORDS = ("Thinking", "Machines")
STEPS = {1: "score q·k", 2: "÷√d_k", 3: "softmax", 4: "weighted sum"}  # step -> its button
STEP_TITLES = {
    1: "score: how well the query q₁ of 'Thinking' matches each key",
    2: "scale: divide the scores by √d_k, to keep the softmax soft",
    3: "softmax: the scores become weights that sum to 1",
    4: "weighted sum: z₁ = Σ weight × value, the output for 'Thinking'",
}
FIELDS = {"q1": "q₁", "k1": "k₁", "k2": "k₂", "v1": "v₁", "v2": "v₂"}  # control -> its name on the slide
WORD_COLORS = (palette.BLUE, palette.ORANGE)  # Thinking, Machines
SHORT_STEP_TITLES = {  # in lecture mode, where the picture must fit a projector's right column (about 740 px)
    1: "score: q₁ · each key",
    2: "scale: ÷√d_k keeps the softmax soft",
    3: "softmax: weights that sum to 1",
    4: "weighted sum: z₁ = Σ weight × value",
}
MAX_COMPONENTS = 6  # components of z₁ drawn as bars
LECTURE_COMPONENTS = 3  # in lecture mode
HIGHLIGHT = "#fff3b0"  # the row of the current step
PENDING = palette.PENDING  # rows of later steps, labelled "at step n"


def number_text(x: float) -> str:
    """A score as the slide writes it: 112, 14, 12.5, 1.23e+05."""
    if float(x).is_integer() and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.4g}"


def weight_text(p: float) -> str:
    """A softmax weight: 0.88 and 0.12, but 0.9999999 and 1.1e-07 when one key takes (almost) everything."""
    if 0.01 <= p <= 0.99:
        return f"{p:.2f}"
    if p < 0.01:
        return "0" if p == 0 else f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"
    gap = 1 - p
    if gap < 1e-15:
        return "1"
    return f"{p:.{min(15, math.ceil(-math.log10(gap)))}f}"


def vector_text(v) -> str:
    """A vector in the run notation of the text fields: [2,2,…,2,1,…] as "2*48, 1*16"."""
    runs: list[list] = []
    for x in np.asarray(v, dtype=float).tolist():
        if runs and runs[-1][0] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    return ", ".join(f"{x:.3g}" + (f"*{n}" if n > 1 else "") for x, n in runs)


def qkv_numbers(vectors: dict[str, torch.Tensor], divide: bool) -> dict:
    """Scores, scaled scores, weights and output of the slide's computation, from q1, k1, k2, v1, v2 (float64)."""
    q, v = vectors["q1"], torch.stack([vectors["v1"], vectors["v2"]])  # (d_k,), (2, d_v)
    keys = torch.stack([vectors["k1"], vectors["k2"]])  # (2, d_k)
    d_k = q.numel()
    scores = keys @ q  # (2,): q₁·k₁, q₁·k₂
    divisor = math.sqrt(d_k) if divide else 1.0
    scaled = scores / divisor  # (2,)
    if not bool(torch.isfinite(scaled).all()):
        raise CourseInputError("the dot products overflow: use smaller numbers")
    weights = torch.softmax(scaled, dim=0)  # (2,)
    parts = weights[:, None] * v  # (2, d_v): each value vector times its weight
    return {"d_k": d_k, "divisor": divisor, "scores": scores.tolist(), "scaled": scaled.tolist(),
            "weights": weights.tolist(), "parts": parts.numpy(), "z": parts.sum(0).numpy()}  # fmt: skip


class QKVPainter:
    """Paints the slide's table (rows up to the current step), the weight bars and z₁'s components as bars.

    ``compact`` (lecture mode) fits a projector (760 × 524 pixels at 22 px text): the softmax weights are bars inside
    the table's softmax row instead of a panel beside the table, the step titles are shorter, a "Softmax × Value"
    cell too long for its column drops its "0.88·v₁ =" (the softmax row above it gives the weight), and z₁ shows at
    most three components as bars."""

    def __init__(self, compact: bool = False):
        self.compact = compact
        self.px = px = round(14 * text_scale())
        self.font, self.bold = pillow_font(px), pillow_font(px, "bold")
        self.big_bold = pillow_font(round(1.2 * px), "bold")
        self.colors = [rgb(c) for c in WORD_COLORS]
        self.rows = ("Input", "Query", "Key", "Value", "Score", "Divide", "Softmax", "Softmax × Value", "Sum")
        self.components = LECTURE_COMPONENTS if compact else MAX_COMPONENTS
        if compact:
            self.row_h = round(1.5 * px)
            self.title_h = round(2.0 * px)
            self.label_w = round(self.bold.getlength("Divide by 8 (√d_k)")) + px // 2  # the longest label, bold
            self.col_w = round(11.4 * px)
            self.width = px // 2 + self.label_w + 2 * self.col_w + px // 2  # no panel of weight bars beside it
            self.sum_row = round(1.4 * px)
        else:
            self.row_h = round(2.0 * px)
            self.title_h = round(2.6 * px)
            self.label_w = round(12.5 * px)  # "Divide by √d_k = 8"
            self.col_w = round(15 * px)  # one word's column
            self.bars_left = px // 2 + self.label_w + 2 * self.col_w + 2 * px  # the weight bars, right of the table
            self.bars_w = round(15 * px)
            self.width = self.bars_left + self.bars_w + px
            self.sum_row = round(1.6 * px)
        self.table_top = self.title_h
        self.table_h = len(self.rows) * self.row_h
        self.sum_top = self.table_top + self.table_h + px
        if compact:  # the sum's title 1.4 px above its bars, its key one px below them
            self.height = self.sum_top + round(3.1 * px) + self.components * self.sum_row
        else:
            self.height = self.sum_top + round(2.2 * px) + self.components * self.sum_row + round(2.4 * px)

    def paint(self, texts: dict[str, str], numbers: dict, step: int, divide: bool) -> Image.Image:
        """The whole picture: ``texts`` the five vectors in run notation, ``numbers`` from ``qkv_numbers``."""
        picture = Image.new("RGBA", (self.width, self.height), "white")
        pen = ImageDraw.Draw(picture)
        if self.compact:
            title = fit_text(self.big_bold, f"Step {step} of 4 · {SHORT_STEP_TITLES[step]}", self.width - self.px)
        else:
            title = f"Step {step} of 4 · {STEP_TITLES[step]}"
        pen.text((self.px // 2, self.title_h // 2), title, fill="black", font=self.big_bold, anchor="lm")
        self._table(pen, texts, numbers, step, divide)
        if self.compact:
            self._weights_in_row(pen, numbers, step)
        else:
            self._weight_bars(pen, numbers, step)
        self._sum_bars(pen, numbers, step)
        return picture

    def _cells(self, texts: dict[str, str], numbers: dict, divide: bool) -> list[tuple[str, str, str, int]]:
        """Each row of the table: (label, Thinking's cell, Machines' cell, the step that fills it)."""
        s, c, w = numbers["scores"], numbers["scaled"], numbers["weights"]
        d_v = numbers["z"].size
        divide_label = f"Divide by {number_text(numbers['divisor'])} (√d_k)" if divide else "not divided (÷1)"
        parts = [", ".join(f"{x:.3g}" for x in numbers["parts"][i][:4]) + (", …" if d_v > 4 else "") for i in (0, 1)]
        z = ", ".join(f"{x:.3g}" for x in numbers["z"][:6]) + (", …" if d_v > 6 else "")
        weighted = [f"{weight_text(w[i])}·v{'₁₂'[i]} = {parts[i]}" for i in (0, 1)]
        if self.compact:  # a cell too long for its column keeps the numbers: the softmax row above gives the weight
            room = self.col_w - self.px // 2
            weighted = [text if self.bold.getlength(text) <= room else parts[i] for i, text in enumerate(weighted)]
        return [
            ("Input", WORDS[0], WORDS[1], 0),
            ("Query", f"q₁ = {texts['q1']}", "", 0),
            ("Key", f"k₁ = {texts['k1']}", f"k₂ = {texts['k2']}", 0),
            ("Value", f"v₁ = {texts['v1']}", f"v₂ = {texts['v2']}", 0),
            ("Score", f"q₁·k₁ = {number_text(s[0])}", f"q₁·k₂ = {number_text(s[1])}", 1),
            (divide_label, number_text(c[0]), number_text(c[1]), 2),
            ("Softmax", weight_text(w[0]), weight_text(w[1]), 3),
            ("Softmax × Value", weighted[0], weighted[1], 4),
            ("Sum", f"z₁ = {z}", "", 4),
        ]

    def _table(self, pen: ImageDraw.ImageDraw, texts: dict[str, str], numbers: dict, step: int, divide: bool) -> None:
        px, top = self.px, self.table_top
        x_label, x_cols = px // 2, px // 2 + self.label_w
        right = x_cols + 2 * self.col_w
        for r, (label, first, second, filled) in enumerate(self._cells(texts, numbers, divide)):
            y0, y1 = top + r * self.row_h, top + (r + 1) * self.row_h
            middle = (y0 + y1) // 2
            shown = filled <= step
            if filled and filled == step:
                pen.rectangle((x_label, y0, right, y1), fill=HIGHLIGHT)
            elif not shown:
                pen.rectangle((x_cols, y0, right, y1), fill=PENDING)
            font = self.bold if filled and filled == step else self.font
            colour = palette.ALERT if filled == 2 and not divide else "black"
            pen.text((x_label + px // 3, middle), fit_text(font, label, self.label_w - px // 2), fill=colour, font=font,
                     anchor="lm")  # fmt: skip
            if label == "Sum" and shown:  # z₁ spans both columns
                pen.text((x_cols + px // 3, middle), fit_text(font, first, 2 * self.col_w - px // 2), fill="black",
                         font=font, anchor="lm")  # fmt: skip
            elif shown:
                for i, text in enumerate((first, second)):
                    colour = self.colors[i] if r == 0 else "black"
                    cell_font = self.bold if r == 0 else font
                    pen.text((x_cols + i * self.col_w + px // 3, middle), fit_text(cell_font, text, self.col_w - px // 2),
                             fill=colour, font=cell_font, anchor="lm")  # fmt: skip
            pen.line((x_label, y1, right, y1), fill="#c8c8c8", width=1)
        middle_end = top + self.table_h - (self.row_h if self.compact else 0)  # compact: z₁ is wider than a column
        for x, end in ((x_cols, top + self.table_h), (x_cols + self.col_w, middle_end)):
            pen.line((x, top, x, end), fill="#c8c8c8", width=1)

    def _weight_bars(self, pen: ImageDraw.ImageDraw, numbers: dict, step: int) -> None:
        """Two upright bars, the softmax weights of Thinking and Machines on a 0..1 scale (from step 3)."""
        px, left = self.px, self.bars_left
        pen.text((left, self.table_top + px // 2), "softmax weights", fill="black", font=self.bold, anchor="lm")
        base, height = self.table_top + self.table_h - round(2.2 * px), self.table_h - round(5.6 * px)
        top = base - height
        bar_w = round(4 * px)
        pen.line((left, top, left, base), fill="black", width=1)
        for value, y in ((1, top), (0.5, (top + base) // 2), (0, base)):
            pen.line((left - px // 3, y, left, y), fill="black", width=1)
            pen.text((left - px // 2, y), f"{value:g}", fill="black", font=self.font, anchor="rm")
        for i, word in enumerate(WORDS):
            x0 = left + px + i * (bar_w + 2 * px)
            pen.text((x0 + bar_w // 2, base + px), word, fill=self.colors[i], font=self.bold, anchor="mm")
            if step < 3:
                pen.rectangle((x0, top, x0 + bar_w, base), outline="#c8c8c8", fill=PENDING)
                pen.text(
                    (x0 + bar_w // 2, (top + base) // 2), "step 3", fill=palette.MUTED, font=self.font, anchor="mm"
                )
                continue
            weight = numbers["weights"][i]
            y = base - round(height * weight)
            pen.rectangle((x0, min(y, base - 1), x0 + bar_w, base), fill=self.colors[i])
            pen.text((x0 + bar_w // 2, y - px // 2), weight_text(weight), fill="black", font=self.bold, anchor="mb")

    def _weights_in_row(self, pen: ImageDraw.ImageDraw, numbers: dict, step: int) -> None:
        """Lecture mode: each softmax weight as a bar in its cell of the softmax row, right of its number, on one 0..1
        scale (from step 3), where the normal picture has a panel of two upright bars."""
        if step < 3:
            return
        px, row = self.px, self.rows.index("Softmax")
        font = self.bold if step == 3 else self.font  # the cell's own font
        texts = [weight_text(w) for w in numbers["weights"]]
        x_cols = px // 2 + self.label_w
        widest = max(font.getlength(text) for text in [*texts, "0.9999999"])  # one scale, but for longer numbers
        offset = px // 3 + round(widest) + px // 2  # the bars start here
        full = self.col_w - offset - px // 2  # pixels for weight 1
        middle = self.table_top + row * self.row_h + self.row_h // 2
        half = self.row_h // 4
        for i, weight in enumerate(numbers["weights"]):
            x0 = x_cols + i * self.col_w + offset
            pen.rectangle((x0, middle - half, x0 + full, middle + half), outline="#c8c8c8", width=1)  # the 0..1 scale
            if round(full * weight) > 0:
                pen.rectangle((x0, middle - half, x0 + round(full * weight), middle + half), fill=self.colors[i])

    def _sum_bars(self, pen: ImageDraw.ImageDraw, numbers: dict, step: int) -> None:
        """z₁ component by component: w₁·v₁ (blue) then w₂·v₂ (orange) laid end to end; z₁ is where they end."""
        px, top = self.px, self.sum_top
        d_v = numbers["z"].size
        shown_n = min(d_v, self.components)
        if self.compact:
            more = f" (the first {shown_n} of {d_v})" if d_v > shown_n else ", component by component"
            title = fit_text(self.bold, f"z₁ = w₁·v₁ + w₂·v₂{more}", self.width - px)
        else:
            more = f" (the first {shown_n} of {d_v})" if d_v > shown_n else ""
            title = f"z₁ = w₁·v₁ + w₂·v₂, component by component{more}"
        pen.text((px // 2, top + px // 2), title, fill="black", font=self.bold, anchor="lm")
        rows_top = top + round((1.4 if self.compact else 1.8) * px)
        name_w, value_w = round(3.5 * px), round(6 * px)
        left, right = px // 2 + name_w, self.width - value_w
        if step < 4:
            pen.rectangle((left, rows_top, right, rows_top + shown_n * self.sum_row), fill=PENDING)
            pen.text(((left + right) // 2, rows_top + shown_n * self.sum_row // 2), "at step 4", fill=palette.MUTED,
                     font=self.font, anchor="mm")  # fmt: skip
            return
        parts = numbers["parts"][:, :shown_n]  # (2, n)
        ends = np.stack([parts[0], parts[0] + parts[1]])  # (2, n): where each segment ends
        low, high = min(0.0, float(ends.min())), max(0.0, float(ends.max()))
        span = (high - low) or 1.0
        x_of = lambda value: left + round((value - low) / span * (right - left))  # noqa: E731
        zero = x_of(0.0)
        half = self.sum_row * 3 // 8
        for j in range(shown_n):
            middle = rows_top + j * self.sum_row + self.sum_row // 2
            pen.text((px // 2, middle), f"z[{j}]", fill="black", font=self.font, anchor="lm")
            start = 0.0
            for i in (0, 1):
                a, b = sorted((x_of(start), x_of(start + parts[i, j])))
                if b > a:
                    pen.rectangle((a, middle - half, b, middle + half), fill=self.colors[i])
                start += parts[i, j]
            end = x_of(start)
            pen.line((end, middle - half - 2, end, middle + half + 2), fill="black", width=2)
            pen.text((right + px // 2, middle), f"{numbers['z'][j]:.3g}", fill="black", font=self.bold, anchor="lm")
        pen.line((zero, rows_top, zero, rows_top + shown_n * self.sum_row), fill="black", width=1)
        key_y = rows_top + shown_n * self.sum_row + px
        x = px // 2
        w = numbers["weights"]
        for i, text in enumerate((f"{weight_text(w[0])} × v₁", f"{weight_text(w[1])} × v₂", "| z₁: where they end")):
            if i < 2:
                pen.rectangle((x, key_y - px // 3, x + px, key_y + px // 3), fill=self.colors[i])
                x += round(1.4 * px)
            pen.text((x, key_y), text, fill="black", font=self.font, anchor="lm")
            x += round(self.font.getlength(text)) + 2 * px


class QKVDemo(PaintedDemo):
    """The slide's q₁, k₁, k₂, v₁, v₂ as text fields, the √d_k division on or off, and the step shown.

    The defaults are ``THINKING_MACHINES`` (d_k = 64, so √d_k = 8 and q₁·k₁ = 112, q₁·k₂ = 96). After
    each redraw ``shown`` holds the numbers: d_k, divisor, scores, scaled, weights, parts (2, d_v), z (d_v,).
    """

    def __init__(self, *, step: int = 4, divide: bool = True):
        step = check_int("step", step, minimum=1, maximum=4)
        self.shown: dict = {}
        self.lecture = is_lecture_mode()  # a projector's layout: a smaller picture, a one-line readout
        self.painter = QKVPainter(compact=self.lecture)
        self.make_canvas(self.painter.width, self.painter.height)
        controls = {
            name: widgets.Text(
                value=THINKING_MACHINES[name],
                description=label,
                continuous_update=False,
                placeholder="numbers, e.g. 1, 0, 2, or runs value*count, e.g. 2*48, 1*16",
                layout=widgets.Layout(width="24em"),
            )
            for name, label in FIELDS.items()
        }
        controls["divide"] = widgets.Checkbox(value=bool(divide), description="divide by √d_k", indent=False)
        controls["step"] = widgets.ToggleButtons(options=[(f"{n} {text}", n) for n, text in STEPS.items()],
                                                 value=step, description="step")  # fmt: skip
        if self.lecture:  # the narrow column of a projector: a label and its field on one line, whole button labels
            for name in FIELDS:
                controls[name].layout.width = "15em"
            controls["step"].style.button_width = "auto"
        super().__init__(controls, title="Self-attention, step by step: q · k, ÷√d_k, softmax, weighted sum of v")

    def _control_rows(self) -> widgets.Widget:
        """The five vectors in two rows (query and keys, values), then the division and the step."""
        rows = super()._control_rows().children
        return widgets.VBox([widgets.HBox(rows[:3]), widgets.HBox(rows[3:5]), *rows[5:]])

    @staticmethod
    def vectors(texts: dict[str, str]) -> dict[str, torch.Tensor]:
        """The five vectors from their texts; a query and its keys of one size d_k, the values of one size d_v."""
        vectors = {}
        for name, label in FIELDS.items():
            try:
                vectors[name] = parse_runs(texts[name])  # (d,) float64
            except CourseInputError as failure:
                raise CourseInputError(f"{label}: {failure}") from None
        for key in ("k1", "k2"):
            if vectors[key].numel() != vectors["q1"].numel():
                raise CourseInputError(f"q₁ has {vectors['q1'].numel()} numbers but {FIELDS[key]} has "
                                       f"{vectors[key].numel()}: a query and a key need the same size d_k")  # fmt: skip
        if vectors["v1"].numel() != vectors["v2"].numel():
            raise CourseInputError(f"v₁ has {vectors['v1'].numel()} numbers but v₂ has {vectors['v2'].numel()}: "
                                   "the value vectors are added, so they need the same size d_v")  # fmt: skip
        return vectors

    def legends(self) -> list[dict[str, str]]:
        return [dict(zip(("Thinking", "Machines"), WORD_COLORS))]

    def draw(self, q1: str, k1: str, k2: str, v1: str, v2: str, divide: bool, step: int) -> Figure:
        step = check_int("step", step, minimum=1, maximum=4)
        vectors = self.vectors({"q1": q1, "k1": k1, "k2": k2, "v1": v1, "v2": v2})
        numbers = qkv_numbers(vectors, bool(divide))
        texts = {name: vector_text(v) for name, v in vectors.items()}
        self.layer.set_pixels(np.asarray(self.painter.paint(texts, numbers, step, bool(divide))))
        self.shown = {**numbers, "step": step}
        readout = self.lecture_readout_text if self.lecture else self.readout_text
        self.show_readout(readout(numbers, step, bool(divide)))
        return self.figure

    @staticmethod
    def readout_text(numbers: dict, step: int, divide: bool) -> str:
        """The chain of numbers up to ``step``: "q₁·k₁ = 112, q₁·k₂ = 96 → ÷8 → 14, 12 → softmax 0.88, 0.12 → …"."""
        s, c, w = numbers["scores"], numbers["scaled"], numbers["weights"]
        parts = [f"d_k = {numbers['d_k']}: q₁·k₁ = {number_text(s[0])}, q₁·k₂ = {number_text(s[1])}"]
        if step >= 2:
            how = f"÷{number_text(numbers['divisor'])}" if divide else "not divided"
            parts.append(f"{how} → {number_text(c[0])}, {number_text(c[1])}")
        if step >= 3:
            parts.append(f"softmax {weight_text(w[0])}, {weight_text(w[1])}")
        if step >= 4:
            z = ", ".join(f"{x:.3g}" for x in numbers["z"][:6]) + (", …" if numbers["z"].size > 6 else "")
            parts.append(f"z₁ = {weight_text(w[0])}·v₁ + {weight_text(w[1])}·v₂ = [{z}]")
        return " → ".join(parts)

    @staticmethod
    def lecture_readout_text(numbers: dict, step: int, divide: bool) -> str:
        """Lecture mode: the chain in one line, "d_k = 64 · q₁·k = 112, 96 → ÷8 → 14, 12 → softmax 0.88, 0.12" (the
        table's last row gives z₁)."""
        s, c, w = numbers["scores"], numbers["scaled"], numbers["weights"]
        parts = [f"d_k = {numbers['d_k']} · q₁·k = {number_text(s[0])}, {number_text(s[1])}"]
        if step >= 2:
            parts.append(f"÷{number_text(numbers['divisor'])} → {number_text(c[0])}, {number_text(c[1])}" if divide
                         else "not divided")  # fmt: skip
        if step >= 3:
            parts.append(f"softmax {weight_text(w[0])}, {weight_text(w[1])}")
        return " → ".join(parts)
