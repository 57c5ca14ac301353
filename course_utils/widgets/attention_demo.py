"""Widget: self-attention step by step (the slide's Thinking / Machines), then the course transformer's own attention.

``QKVDemo`` is the CMU slide "A More Detailed Look at Self-Attention": the query of "Thinking" meets
the keys of "Thinking" and "Machines" (q₁·k₁ = 112, q₁·k₂ = 96), the scores are divided by
√d_k = 8 (14 and 12), a softmax turns them into weights (0.88 and 0.12), and the output z₁ is the
weighted sum of the value vectors. Type any vectors (runs like "2*48, 1*16": the number 2, 48
times); switch the division off to see why it is there: softmax(112, 96) is already 0.9999999 and
1.1e-07, one key takes everything and its gradient all but vanishes.

``AttentionDemo`` shows where each head of the course's GPT-style language model looks in a
sentence (notebook 08): a layer, a head or the mean of the heads, as a heatmap (rows: the token
that asks, columns: the tokens it looks at; beside it the "from" word's row as numbered bars) or
as arcs over the words. With the causal mask (the model as trained and used), position t sees
only positions ≤ t. Without it the picture shows what the same queries and keys would give if
every position could see the whole sentence: softmax over all the keys, with the edge the mask
cuts along drawn in red. Only the mask is taken away, in that one layer (its input is still the
masked model's): it is what the mask hides, not another model, and the title says so.

Speed: ``QKVDemo`` computes two dot products; ``AttentionDemo`` runs the model (and its scratch
twin, for the queries and keys) once per sentence and keeps every layer's and head's weights,
with and without the mask, so moving the layer, the head, the view, the mask or the word only
repaints. Both pictures are painted with Pillow (matplotlib text
is slow) and reach the figure as one bitmap, as in ``sequence_demo``.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import matplotlib
import numpy as np
import torch
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from PIL import Image, ImageDraw, ImageFont

from course_utils.language.text_pipeline import BOS, tokenize
from course_utils.models.transformer.attention import THINKING_MACHINES, parse_runs
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets.next_word_demo import pillow_font, paste_colour_bar, unknown_words_message, upright_words
from course_utils.widgets.sequence_demo import PaintedDemo
from course_utils.widgets.widget_kit import labelled

# ---------------------------------------------------------------- shared painting helpers


def _rgb(name: str) -> tuple[int, int, int]:
    return tuple(round(255 * c) for c in to_rgb(name))


def _scale() -> float:
    """1 normally, larger in lecture mode (matplotlib's font size grows with it)."""
    return matplotlib.rcParams["font.size"] / 10


def _fit(font: ImageFont.FreeTypeFont, text: str, width: float) -> str:
    """``text``, cut with "…" so that it is at most ``width`` pixels wide in ``font``."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "…") > width:
        text = text[:-1]
    return text + "…"


# ---------------------------------------------------------------- QKVDemo: the slide's numbers

WORDS = ("Thinking", "Machines")
STEPS = {1: "score q·k", 2: "÷√d_k", 3: "softmax", 4: "weighted sum"}  # step -> its button
STEP_TITLES = {
    1: "score: how well the query q₁ of 'Thinking' matches each key",
    2: "scale: divide the scores by √d_k, to keep the softmax soft",
    3: "softmax: the scores become weights that sum to 1",
    4: "weighted sum: z₁ = Σ weight × value, the output for 'Thinking'",
}
FIELDS = {"q1": "q₁", "k1": "k₁", "k2": "k₂", "v1": "v₁", "v2": "v₂"}  # control -> its name on the slide
WORD_COLORS = ("tab:blue", "tab:orange")  # Thinking, Machines
MAX_COMPONENTS = 6  # components of z₁ drawn as bars
HIGHLIGHT = "#fff3b0"  # the row of the current step
PENDING = "#f2f2f2"  # rows of later steps


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
    """Paints the slide's table (rows up to the current step), the weight bars and z₁'s components as bars."""

    def __init__(self):
        self.px = px = round(14 * _scale())
        self.font, self.bold = pillow_font(px), pillow_font(px, "bold")
        self.big_bold = pillow_font(round(1.2 * px), "bold")
        self.colors = [_rgb(c) for c in WORD_COLORS]
        self.row_h = round(2.0 * px)
        self.title_h = round(2.6 * px)
        self.label_w = round(12.5 * px)  # "Divide by √d_k = 8"
        self.col_w = round(15 * px)  # one word's column
        self.table_top = self.title_h
        self.rows = ("Input", "Query", "Key", "Value", "Score", "Divide", "Softmax", "Softmax × Value", "Sum")
        self.table_h = len(self.rows) * self.row_h
        self.bars_left = px // 2 + self.label_w + 2 * self.col_w + 2 * px  # the weight bars, right of the table
        self.bars_w = round(15 * px)
        self.width = self.bars_left + self.bars_w + px
        self.sum_top = self.table_top + self.table_h + px
        self.sum_row = round(1.6 * px)
        self.height = self.sum_top + round(2.2 * px) + MAX_COMPONENTS * self.sum_row + round(2.4 * px)

    def paint(self, texts: dict[str, str], numbers: dict, step: int, divide: bool) -> Image.Image:
        """The whole picture: ``texts`` the five vectors in run notation, ``numbers`` from ``qkv_numbers``."""
        picture = Image.new("RGBA", (self.width, self.height), "white")
        pen = ImageDraw.Draw(picture)
        pen.text((self.px // 2, self.title_h // 2), f"Step {step} of 4 · {STEP_TITLES[step]}", fill="black",
                 font=self.big_bold, anchor="lm")  # fmt: skip
        self._table(pen, texts, numbers, step, divide)
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
        return [
            ("Input", WORDS[0], WORDS[1], 0),
            ("Query", f"q₁ = {texts['q1']}", "", 0),
            ("Key", f"k₁ = {texts['k1']}", f"k₂ = {texts['k2']}", 0),
            ("Value", f"v₁ = {texts['v1']}", f"v₂ = {texts['v2']}", 0),
            ("Score", f"q₁·k₁ = {number_text(s[0])}", f"q₁·k₂ = {number_text(s[1])}", 1),
            (divide_label, number_text(c[0]), number_text(c[1]), 2),
            ("Softmax", weight_text(w[0]), weight_text(w[1]), 3),
            ("Softmax × Value", f"{weight_text(w[0])}·v₁ = {parts[0]}", f"{weight_text(w[1])}·v₂ = {parts[1]}", 4),
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
            colour = "#b00020" if filled == 2 and not divide else "black"
            pen.text((x_label + px // 3, middle), _fit(font, label, self.label_w - px // 2), fill=colour, font=font,
                     anchor="lm")  # fmt: skip
            if label == "Sum" and shown:  # z₁ spans both columns
                pen.text((x_cols + px // 3, middle), _fit(font, first, 2 * self.col_w - px // 2), fill="black",
                         font=font, anchor="lm")  # fmt: skip
            elif shown:
                for i, text in enumerate((first, second)):
                    colour = self.colors[i] if r == 0 else "black"
                    cell_font = self.bold if r == 0 else font
                    pen.text((x_cols + i * self.col_w + px // 3, middle), _fit(cell_font, text, self.col_w - px // 2),
                             fill=colour, font=cell_font, anchor="lm")  # fmt: skip
            pen.line((x_label, y1, right, y1), fill="#c8c8c8", width=1)
        for x in (x_cols, x_cols + self.col_w):
            pen.line((x, top, x, top + self.table_h), fill="#c8c8c8", width=1)

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
                pen.text((x0 + bar_w // 2, (top + base) // 2), "step 3", fill="#777777", font=self.font, anchor="mm")
                continue
            weight = numbers["weights"][i]
            y = base - round(height * weight)
            pen.rectangle((x0, min(y, base - 1), x0 + bar_w, base), fill=self.colors[i])
            pen.text((x0 + bar_w // 2, y - px // 2), weight_text(weight), fill="black", font=self.bold, anchor="mb")

    def _sum_bars(self, pen: ImageDraw.ImageDraw, numbers: dict, step: int) -> None:
        """z₁ component by component: w₁·v₁ (blue) then w₂·v₂ (orange) laid end to end; z₁ is where they end."""
        px, top = self.px, self.sum_top
        d_v = numbers["z"].size
        shown_n = min(d_v, MAX_COMPONENTS)
        more = f" (the first {shown_n} of {d_v})" if d_v > shown_n else ""
        pen.text((px // 2, top + px // 2), f"z₁ = w₁·v₁ + w₂·v₂, component by component{more}", fill="black",
                 font=self.bold, anchor="lm")  # fmt: skip
        rows_top = top + round(1.8 * px)
        name_w, value_w = round(3.5 * px), round(6 * px)
        left, right = px // 2 + name_w, self.width - value_w
        if step < 4:
            pen.rectangle((left, rows_top, right, rows_top + shown_n * self.sum_row), fill=PENDING)
            pen.text(((left + right) // 2, rows_top + shown_n * self.sum_row // 2), "at step 4", fill="#777777",
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
        self.painter = QKVPainter()
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

    def draw(self, q1: str, k1: str, k2: str, v1: str, v2: str, divide: bool, step: int) -> Figure:
        step = check_int("step", step, minimum=1, maximum=4)
        vectors = self.vectors({"q1": q1, "k1": k1, "k2": k2, "v1": v1, "v2": v2})
        numbers = qkv_numbers(vectors, bool(divide))
        texts = {name: vector_text(v) for name, v in vectors.items()}
        self.layer.set_pixels(np.asarray(self.painter.paint(texts, numbers, step, bool(divide))))
        self.shown = {**numbers, "step": step}
        self.show_readout(self.readout_text(numbers, step, bool(divide)))
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


# ---------------------------------------------------------------- AttentionDemo: the course GPT's heads

EXAMPLES = {  # sentence -> (the word shown first as "from"; what to look for)
    "the goat behind the parks from the boys near the children hides .":
        ("children", "'children' predicts the verb: does it look back past three attractors to 'goat'?"),
    "the movie was good and you will love it .": ("it", "'it' is the movie: does a head link them?"),
    "kayla which was seen behind the village behind the ball runs .":
        ("ball", "'ball' predicts the verb: 'kayla' is nine words back"),
    "the men that see the horse which were seen behind the blue garden carry the small cups .":
        ("garden", "'garden' predicts 'carry', which agrees with 'men'"),
    "i have to make sure that the dog gets fed .": ("gets", "'gets' predicts 'fed': the dog gets fed"),
    "the cats near the dog are happy .": ("dog", "'dog' predicts 'are', which agrees with 'cats'"),
}  # fmt: skip
EVERY_WORD = -1  # the "from" value that shows every row
MEAN_OF_HEADS = -1  # the "head" value that averages the heads
MAX_TOKENS = 41  # the picture has room for <s> and 40 words
BACK_COLOR, AHEAD_COLOR = "#1f77b4", "#ff7f0e"  # an arc to an earlier word (or itself) / to a later word
HIDDEN_COLOR = (224, 224, 224, 255)  # heatmap cells the causal mask hides
MASK_LINE = "#d62728"  # without the mask: the line the mask would cut along
ATTENTION_CMAP = "Blues"  # weight 0 (white) .. 1 (dark blue)
MIN_ARC = 0.04  # arcs of smaller weights are not drawn ("every word")
_READINGS = 64  # sentences whose attention is kept


def default_model():
    """Notebook 08's shipped GPT language model (``transformer_checkpoints.load_lm("gpt_lm")``)."""
    from course_utils.zoo.transformer_checkpoints import load_lm

    return load_lm("gpt_lm")


def scratch_twin(model):
    """The ``ScratchGPT`` computing what ``model`` does, its queries and keys in reach (``model`` if it is one)."""
    from course_utils.models.transformer.transformer_lm import CourseGPT, ScratchGPT

    if isinstance(model, ScratchGPT):
        return model
    if isinstance(model, CourseGPT):
        return ScratchGPT.from_hf(model).eval()
    raise CourseInputError(f"model must be the course's GPT (a CourseGPT or a ScratchGPT), got {type(model).__name__}")


@torch.no_grad()
def layer_attention(scratch, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each layer's attention on ``idx`` (1, T) with and without the causal mask: two (L, H, T, T).

    Without the mask is softmax(q kᵀ / √d_k) over every key, with the very queries and keys of that
    layer: its input is the real (masked) model's, so only the mask is taken away, one layer at a time.
    """
    from course_utils.models.transformer.attention import attention_weights, causal_mask

    was_training = scratch.training
    scratch.eval()
    try:
        T = idx.shape[1]
        positions = torch.arange(T, device=idx.device)  # (T,)
        x = scratch.token_embedding(idx) + scratch.position_embedding(positions)  # (1, T, C)
        masked, open_ = [], []
        for block in scratch.blocks:
            parts = block.qkv(block.ln_1(x)).split(x.shape[-1], dim=-1)  # 3 × (1, T, C)
            q, k = block.heads(parts[0]), block.heads(parts[1])  # (1, H, T, d_k) each
            masked.append(attention_weights(q, k, causal_mask(T, device=idx.device))[0])  # (H, T, T)
            open_.append(attention_weights(q, k)[0])  # (H, T, T): every key
            x = block(x)[0]  # (1, T, C): the next layer reads the masked model's output
    finally:
        scratch.train(was_training)
    return torch.stack(masked).float().cpu(), torch.stack(open_).float().cpu()  # (L, H, T, T) each


class AttentionPainter:
    """Paints one (T, T) attention matrix as a heatmap, or as arcs over the words; one fixed canvas for both."""

    def __init__(self, words: list[str]):
        self.px = px = round(14 * _scale())
        self.font, self.bold = pillow_font(px), pillow_font(px, "bold")
        self.width = round(62 * px)
        self.title_h = round(2.2 * px)
        self.left = round(max(self.bold.getlength(w) for w in words)) + px  # the row labels
        self.label_h = round(max(self.bold.getlength(w) for w in words)) + px // 2  # the column labels
        self.grid_top = self.title_h + self.label_h + 4
        self.grid_h = round(26 * px)  # the heatmap is a square of at most grid_h × grid_h
        self.max_cell = round(3 * px)
        self.bar_x = self.left + self.grid_h + px  # the colour bar
        self.panel_x = self.bar_x + round(4.5 * px)  # the bars of one row, right of the heatmap
        self.key_top = self.grid_top + self.grid_h + px
        self.height = self.key_top + round(2.2 * px)
        self.lut = matplotlib.colormaps[ATTENTION_CMAP](np.linspace(0.0, 1.0, 256), bytes=True)  # (256, 4)
        self.colors = {"back": _rgb(BACK_COLOR), "ahead": _rgb(AHEAD_COLOR), "line": _rgb(MASK_LINE)}

    def canvas(self, title: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
        picture = Image.new("RGBA", (self.width, self.height), "white")
        pen = ImageDraw.Draw(picture, "RGBA")  # RGBA: the arcs blend
        pen.text((self.px // 2, self.title_h // 2), _fit(self.bold, title, self.width - self.px), fill="black",
                 font=self.bold, anchor="lm")  # fmt: skip
        return picture, pen

    # -- the heatmap
    def cell(self, tokens: int) -> int:
        return max(4, min(self.max_cell, self.grid_h // tokens))

    def heatmap(self, picture: Image.Image, pen: ImageDraw.ImageDraw, words: tuple[str, ...], weights: np.ndarray,
                masked: bool, focus: int) -> None:  # fmt: skip
        """Rows: the word that looks; columns: the words it looks at. Masked cells grey, or the mask's edge in red."""
        T = len(words)
        cell = self.cell(T)
        x0, y0 = self.left, self.grid_top
        shade = self.lut[np.clip(np.rint(weights * 255), 0, 255).astype(np.intp)]  # (T, T, 4)
        if masked:
            shade[np.triu_indices(T, 1)] = HIDDEN_COLOR
        cells = np.repeat(np.repeat(shade, cell, axis=0), cell, axis=1)  # (T·cell, T·cell, 4)
        if cell >= 6:  # thin white lines between cells
            cells[::cell, :, :3] = 255
            cells[:, ::cell, :3] = 255
        picture.paste(Image.fromarray(cells, "RGBA"), (x0, y0))
        line = max(2, cell // 10)
        if not masked:  # the staircase right of the diagonal: what the mask would hide
            points = [(x0 + cell, y0)]
            for t in range(T - 1):
                points += [(x0 + (t + 1) * cell, y0 + (t + 1) * cell), (x0 + (t + 2) * cell, y0 + (t + 1) * cell)]
            pen.line(points, fill=self.colors["line"], width=line)
        if focus != EVERY_WORD:
            pen.rectangle((x0 - 2, y0 + focus * cell - 2, x0 + T * cell + 1, y0 + (focus + 1) * cell + 1),
                          outline="black", width=line)  # fmt: skip
        size = min(self.px, max(8, round(0.85 * cell)))
        font, bold = pillow_font(size), pillow_font(size, "bold")
        for t, word in enumerate(words):
            pen.text((x0 - self.px // 3, y0 + t * cell + cell // 2), word, fill="black",
                     font=bold if t == focus else font, anchor="rm")  # fmt: skip
        picture.paste(upright_words(words, cell, size, self.label_h), (x0, y0 - self.label_h - 4))
        pen.text((self.px // 2, self.grid_top - self.px // 2), "from ↓  to →", fill="#555555", font=self.font,
                 anchor="ls")  # fmt: skip
        self._colour_bar(picture, pen, self.bar_x, min(T * cell, self.grid_h))
        self._row_bars(pen, words, weights, masked, focus, cell, size)

    def _row_bars(self, pen: ImageDraw.ImageDraw, words: tuple[str, ...], weights: np.ndarray, masked: bool,
                  focus: int, cell: int, size: int) -> None:  # fmt: skip
        """Right of the heatmap, the "from" word's row as numbered bars, one per word at its row's height (or,
        for every word, the mean weight each word gets)."""
        px, T = self.px, len(words)
        if focus == EVERY_WORD:
            values, title = weights.mean(axis=0), "mean weight each word gets"  # (T,): column means
        else:
            values, title = weights[focus], f"'{words[focus]}' looks at"  # (T,)
        left, right = self.panel_x, self.width - px // 2
        pen.text((left, self.grid_top - px // 2), _fit(self.bold, title, right - left), fill="black", font=self.bold,
                 anchor="ls")  # fmt: skip
        font, bold = pillow_font(size), pillow_font(size, "bold")
        label_w = round(max(bold.getlength(w) for w in words)) + px // 3
        number_w = round(font.getlength("0.00")) + px // 2
        x0, bar_w = left + label_w, right - left - label_w - number_w
        half = max(1, cell * 3 // 8)
        for s, (word, value) in enumerate(zip(words, values)):
            middle = self.grid_top + s * cell + cell // 2
            hidden = masked and focus != EVERY_WORD and s > focus
            pen.text((x0 - px // 4, middle), word, fill="#9e9e9e" if hidden else "black",
                     font=bold if s == int(values.argmax()) else font, anchor="rm")  # fmt: skip
            end = x0 + round(bar_w * value)  # on the colour bar's scale: weight 1 fills the width
            colour = self.colors["ahead"] if focus != EVERY_WORD and s > focus else self.colors["back"]
            if end > x0:
                pen.rectangle((x0, middle - half, end, middle + half), fill=colour)
            if cell >= 10:
                pen.text((end + px // 4, middle), f"{value:.2f}", fill="black", font=font, anchor="lm")
        pen.line((x0, self.grid_top, x0, self.grid_top + T * cell), fill="black", width=1)

    def _colour_bar(self, picture: Image.Image, pen: ImageDraw.ImageDraw, x: int, height: int) -> None:
        """A vertical ramp from weight 1 (top) to 0, numbered at both ends."""
        paste_colour_bar(picture, self.lut, x, self.grid_top, height, self.px, self.font)

    # -- the arcs
    def arcs(self, picture: Image.Image, pen: ImageDraw.ImageDraw, words: tuple[str, ...], weights: np.ndarray,
             focus: int) -> None:  # fmt: skip
        """The words along a line; an arc from each word to each word it looks at, thicker and darker for more
        weight (blue: back or itself, orange: ahead). With a "from" word, only its arcs, numbered."""
        T, px = len(words), self.px
        slot = (self.width - px) / T
        xs = [round(px // 2 + slot * (t + 0.5)) for t in range(T)]
        widest = max(words, key=len)
        size = next(
            (size for size in (px, round(0.8 * px)) if pillow_font(size, "bold").getlength(widest) <= slot - 2), None
        )
        fits = size is not None  # side by side; else written downwards, the slot as the line height
        size = size or min(px, max(8, round(0.8 * slot)))
        font, bold = pillow_font(size), pillow_font(size, "bold")
        base = self.grid_top + self.grid_h - (2 * px if fits else self.label_h)  # the line the words hang from
        room = base - (self.title_h + 2 * px)  # the highest arc
        rows = range(T) if focus == EVERY_WORD else [focus]
        links = [(weights[t, s], t, s) for t in rows for s in range(T)
                 if weights[t, s] >= (MIN_ARC if focus == EVERY_WORD else 0.01)]  # fmt: skip
        for w, t, s in sorted(links):  # the strongest last, on top
            colour = self.colors["ahead" if s > t else "back"]
            alpha = round(255 * min(1.0, 0.25 + 0.75 * math.sqrt(w)))
            width = round(1 + w * px)
            if s == t:  # itself: a dot above the word
                r = max(3, round(0.7 * px * math.sqrt(w)))
                pen.ellipse((xs[t] - r, base - 2 * r - 2, xs[t] + r, base - 2), fill=(*colour, alpha))
                continue
            a, b = sorted((xs[t], xs[s]))
            h = max(px, round(room * abs(t - s) / max(T - 1, 1)))
            pen.arc((a, base - h, b, base + h), 180, 360, fill=(*colour, alpha), width=width)
            if focus != EVERY_WORD and w >= 0.1:
                pen.text(((a + b) // 2, base - h - 2), f"{w:.2f}", fill="black", font=self.font, anchor="mb")
        if focus != EVERY_WORD and weights[focus, focus] >= 0.1:
            pen.text((xs[focus], base - round(1.6 * px) - 4), f"{weights[focus, focus]:.2f}", fill="black",
                     font=self.font, anchor="mb")  # fmt: skip
        pen.line((px // 2, base, self.width - px // 2, base), fill="#9e9e9e", width=1)
        for t, word in enumerate(words):
            f = bold if t == focus else font
            if fits:
                pen.text((xs[t], base + px // 3), word, fill="black", font=f, anchor="ma")
            else:  # written downwards
                label = Image.new("RGBA", (round(f.getlength(word)) + 4, size + 6), (255, 255, 255, 0))
                ImageDraw.Draw(label).text((2, 3), word, fill="black", font=f, anchor="lt")
                turned = label.rotate(-90, expand=True)
                picture.paste(turned, (xs[t] - turned.width // 2, base + px // 3), turned)

    def key(self, pen: ImageDraw.ImageDraw, view: str, masked: bool) -> None:
        """What the colours mean, along the bottom."""
        px, y = self.px, self.key_top + self.px // 2
        if view == "heatmap":
            items = [(HIDDEN_COLOR[:3], "hidden by the causal mask (weight 0)")] if masked else \
                [(self.colors["line"], "right of the red line: what the causal mask hides")]  # fmt: skip
        else:
            items = [(self.colors["back"], "looks back (or at itself)")]
            if not masked:
                items.append((self.colors["ahead"], "looks ahead: only without the mask"))
        x = px // 2
        for colour, text in items:
            pen.rectangle((x, y - px // 3, x + px, y + px // 3), fill=colour)
            x += round(1.4 * px)
            pen.text((x, y), text, fill="black", font=self.font, anchor="lm")
            x += round(self.font.getlength(text)) + 2 * px


class AttentionDemo(PaintedDemo):
    """A sentence (typed, or from the examples), the layer, the head or the mean of the heads, the view
    (heatmap or arcs), the word whose attention is shown ("from") and the causal mask on or off.

    ``model`` is the course's GPT (a ``CourseGPT`` or a ``ScratchGPT``) over ``vocab``; with no
    arguments, notebook 08's shipped ``gpt_lm`` and ``course_vocab()``. After each redraw ``shown``
    holds the tokens (with <s>), the (T, T) weights drawn and the settings.
    """

    def __init__(self, model=None, vocab=None, *, sentence: str = next(iter(EXAMPLES)), layer: int = 0, head: int = 0):
        from course_utils.language.text_pipeline import Vocab
        from course_utils.language.vocab import course_vocab

        self.vocab = course_vocab() if vocab is None else vocab
        if not isinstance(self.vocab, Vocab):
            raise CourseInputError(f"vocab must be a course_utils.language.text_pipeline.Vocab, got "
                                   f"{type(self.vocab).__name__}")  # fmt: skip
        self.model = default_model() if model is None else model
        self.scratch = scratch_twin(self.model)
        if self.model.vocab_size != len(self.vocab):
            raise CourseInputError(f"the model predicts {self.model.vocab_size} token types; the vocabulary has "
                                   f"{len(self.vocab)}")  # fmt: skip
        if not isinstance(sentence, str):
            raise CourseInputError(f"sentence must be a string, got {type(sentence).__name__}")
        self.layers, self.heads = len(self.scratch.blocks), self.scratch.blocks[0].n_head
        layer = check_int("layer (counted from 0)", layer, minimum=0, maximum=self.layers - 1)
        head = check_int("head (counted from 0)", head, minimum=0, maximum=self.heads - 1)
        self._cache: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._tokens: tuple[str, ...] = ()  # the tokens the "from" list was made for
        self.shown: dict = {}
        self.painter = AttentionPainter([*self.vocab.itos, "from ↓  to →"])
        self.make_canvas(self.painter.width, self.painter.height)
        self.examples = widgets.Dropdown(options=[(f"{text}   ({note})", text) for text, (_, note) in EXAMPLES.items()],
                                         value=sentence if sentence in EXAMPLES else None)  # fmt: skip
        controls = {
            "sentence": widgets.Text(value=sentence, description="sentence", continuous_update=False,
                                     placeholder="a sentence of the course language; Enter to read it",
                                     layout=widgets.Layout(width="44em")),
            "layer": widgets.ToggleButtons(options=[(str(n + 1), n) for n in range(self.layers)], value=layer,
                                           description="layer"),
            "head": widgets.ToggleButtons(options=[*((str(n + 1), n) for n in range(self.heads)),
                                                   ("mean of heads", MEAN_OF_HEADS)], value=head, description="head",
                                         style={"button_width": "auto"}),
            "view": widgets.ToggleButtons(options=["heatmap", "arcs"], value="heatmap", description="view"),
            "mask": widgets.Checkbox(value=True, description="causal mask", indent=False),
            "focus": widgets.Dropdown(options=[("every word", EVERY_WORD)], value=EVERY_WORD, description="from"),
        }  # fmt: skip
        self.controls = controls
        self._fit_focus(sentence)
        # Registered before the Demo's own observers: the "from" list fits the sentence before the redraw.
        controls["sentence"].observe(self._on_sentence, names="value")
        self.examples.observe(self._on_example, names="value")
        super().__init__(controls, title="Attention explorer: where does each head of the course GPT look?")

    def _control_rows(self) -> widgets.Widget:
        rows = super()._control_rows().children  # sentence, layer, head, view, mask, focus
        return widgets.VBox([labelled("examples", self.examples), rows[0], widgets.HBox(rows[1:3]),
                             widgets.HBox(rows[3:6])])  # fmt: skip

    # -- keeping the "from" list on the sentence's tokens
    def _fit_focus(self, sentence: str) -> None:
        """The "from" list: every word, then each token of ``sentence`` (an example's word chosen, else every
        word); kept as it is while the sentence cannot be read."""
        words = tuple(tokenize(sentence))
        if not words or unknown_words_message(self.vocab, words) or len(words) + 1 > MAX_TOKENS:
            return
        tokens = (BOS, *words)
        control = self.controls["focus"]
        if tokens != self._tokens:
            focus = tokens.index(EXAMPLES[sentence][0]) if sentence in EXAMPLES else EVERY_WORD
            with self.quietly():
                control.options = [("every word", EVERY_WORD), *((f"{t}: {w}", t) for t, w in enumerate(tokens))]
                control.value = focus
            self._tokens = tokens

    def _on_sentence(self, change) -> None:
        self._fit_focus(change["new"])
        self.examples.value = change["new"] if change["new"] in EXAMPLES else None

    def _on_example(self, change) -> None:
        if change["new"] is not None:
            self.controls["sentence"].value = change["new"]

    # -- reading a sentence (once) and drawing
    def words(self, sentence: str) -> tuple[str, ...]:
        """The sentence's words, if the model knows them all and can read (and the picture show) that many."""
        words = tuple(tokenize(sentence))
        if not words:
            raise CourseInputError(f"type a sentence, e.g. '{next(iter(EXAMPLES))}'")
        unknown = unknown_words_message(self.vocab, words, "the model knows")
        if unknown:
            raise CourseInputError(unknown)
        limit = self.model.max_len
        if len(words) + 1 > limit:
            raise CourseInputError(f"the model reads at most max_len = {limit} tokens; with <s> this sentence has "
                                   f"{len(words) + 1}. Shorten it.")  # fmt: skip
        if len(words) + 1 > MAX_TOKENS:
            raise CourseInputError(f"the picture has room for {MAX_TOKENS - 1} words; this sentence has {len(words)}")
        return words

    def reading(self, words: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The model's attention on ``<s> + words`` with the causal mask (as it runs) and without: (L, H, T, T) each."""
        if words not in self._cache:
            from course_utils.models.transformer.transformer_lm import attention_maps

            if len(self._cache) >= _READINGS:
                self._cache.clear()
            ids = [self.vocab.bos_id, *self.vocab.encode(list(words))]
            masked = attention_maps(self.model, ids).numpy()  # (L, H, T, T): the model's own weights
            device = next(self.scratch.parameters()).device
            open_ = layer_attention(self.scratch, torch.tensor([ids], device=device))[1].numpy()  # (L, H, T, T)
            self._cache[words] = (masked, open_)
        return self._cache[words]

    def draw(self, sentence: str, layer: int, head: int, view: str, mask: bool, focus: int) -> Figure:
        words = self.words(sentence)
        self._fit_focus(sentence)  # a sentence typed while another could not be read
        focus = self.controls["focus"].value
        tokens = (BOS, *words)
        view = check_choice("view", view, ["heatmap", "arcs"])
        layer = check_int("layer", layer, minimum=0, maximum=self.layers - 1)
        head = check_int("head", head, minimum=MEAN_OF_HEADS, maximum=self.heads - 1)
        focus = check_int("from", focus, minimum=EVERY_WORD, maximum=len(tokens) - 1)
        masked, open_ = self.reading(words)
        maps = (masked if mask else open_)[layer]  # (H, T, T)
        weights = maps.mean(axis=0) if head == MEAN_OF_HEADS else maps[head]  # (T, T)
        which = "mean of the heads" if head == MEAN_OF_HEADS else f"head {head + 1}"
        how = "causal mask on: the model as it runs" if mask else \
            "causal mask off: the same q and k over every word (the model never does this)"  # fmt: skip
        picture, pen = self.painter.canvas(f"layer {layer + 1}, {which} · {how}")
        if view == "heatmap":
            self.painter.heatmap(picture, pen, tokens, weights, bool(mask), focus)
        else:
            self.painter.arcs(picture, pen, tokens, weights, focus)
        self.painter.key(pen, view, bool(mask))
        self.layer.set_pixels(np.asarray(picture))
        self.shown = {"tokens": tokens, "weights": weights, "layer": layer, "head": head, "view": view,
                      "mask": bool(mask), "focus": focus}  # fmt: skip
        self.show_readout(self.readout_text(tokens, weights, bool(mask), focus, masked[layer], head))
        return self.figure

    @staticmethod
    def readout_text(tokens, weights: np.ndarray, mask: bool, focus: int, real: np.ndarray, head: int) -> str:
        """Where the "from" word looks most, or where the attention goes on average; and what the mask takes away."""
        T = len(tokens)
        if focus != EVERY_WORD:
            order = np.argsort(-weights[focus], kind="stable")[:3]
            top = ", ".join(f"'{tokens[s]}' {weights[focus, s]:.2f}" for s in order)
            text = f"'{tokens[focus]}' (position {focus}) looks most at {top}"
            ahead = float(weights[focus, focus + 1 :].sum())
        else:
            after = np.triu(weights, 1).sum(axis=1)  # (T,): weight on later words, per row
            distance = float((weights * np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])).sum(axis=1).mean())
            text = (f"on average {weights[:, 0].mean():.0%} of a word's attention goes to <s>, "
                    f"{np.diag(weights).mean():.0%} to itself; mean distance looked {distance:.1f} words")  # fmt: skip
            ahead = float(after[:-1].mean()) if T > 1 else 0.0
        if not mask:
            text += f" · without the mask {ahead:.0%} would go to later words"
            if focus != EVERY_WORD:
                shown = real.mean(axis=0) if head == MEAN_OF_HEADS else real[head]  # (T, T)
                text += f" (with it, '{tokens[int(shown[focus].argmax())]}' gets the most)"
        return text
