"""Widget: pick an activation and a depth; see g(z), g'(z) and the gradient each layer of a deep net gets."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

from course_utils.lecture import is_lecture_mode
from course_utils.models.basics.activations import ACTIVATIONS, get_activation
from course_utils.widgets.backdrop import figure_rgba
from course_utils.models.basics.feedforward import gradient_norm_table
from course_utils.validation import check_int
from course_utils.widgets import palette
from course_utils.widgets.widget_kit import PNG_DPI, Demo, smallest_figure_text_px

COLORS = dict(zip(("sigmoid", "tanh", "relu", "gelu"), palette.CATEGORIES))
DPI = PNG_DPI  # the resolution the PNG is encoded at, so the backdrop fits pixel for pixel
# (figure size in inches, the left and the right axes' positions in figure fractions, where the four names sit above
# the right axes in its fractions): normally one wide row; on a projector 750 × 500 px, the names on two lines
LAYOUT = {"normal": ((10, 3.8), (0.065, 0.15, 0.3, 0.75), (0.48, 0.15, 0.5, 0.75),
                     [(0.1 + 0.22 * i, 1.03) for i in range(4)]),
          "lecture": ((9.4, 6.0), (0.1, 0.13, 0.33, 0.68), (0.6, 0.13, 0.38, 0.68),
                      [(0.5 * (i % 2), 1.12 - 0.09 * (i // 2)) for i in range(4)])}  # fmt: skip
Z = torch.linspace(-5, 5, 201, dtype=torch.float64)  # (201,) where g and g' are drawn


class ActivationDemo(Demo):
    """g(z) and g'(z) on the left; on the right the gradient norm of every layer of a deep net, for
    all four activations (the chosen one bold), on fixed axes so that depths compare at a glance.

    Precomputed: the gradient norms for every depth up to ``max_depth``, and, per activation, a picture
    of everything except the four gradient lines. A redraw shows that picture and draws only the lines.
    """

    def __init__(self, activation: str = "sigmoid", depth: int = 20, *, max_depth: int = 30):
        activation = get_activation(activation).name
        max_depth = check_int("max_depth", max_depth, minimum=2, maximum=100)
        depth = check_int("depth", depth, minimum=2, maximum=max_depth)
        self.tables = {name: gradient_norm_table(name, max_depth).numpy() for name in ACTIVATIONS}  # (D, D) each
        every = np.concatenate([table[np.tril_indices(max_depth)] for table in self.tables.values()])
        self.limits = {"xlim": (0.5, max_depth + 0.5), "ylim": (every.min() / 3, every.max() * 3), "yscale": "log"}
        self.peaks = {name: a.derivative(Z).max().item() for name, a in ACTIVATIONS.items()}
        self.size, self.left_box, self.right_box, self.name_at = LAYOUT["lecture" if is_lecture_mode() else "normal"]
        self.title_break = "\n" if is_lecture_mode() else " "
        self.backdrops = {name: self._backdrop(name) for name in ACTIVATIONS}
        self.plot_height = f"{round(self.size[1] * DPI) + 36}px"
        self.figure = Figure(figsize=self.size, dpi=DPI)
        FigureCanvasAgg(self.figure)  # one canvas kept across redraws, so text sizes stay cached
        back = self.figure.add_axes((0, 0, 1, 1))
        back.set_axis_off()
        self.backdrop = back.imshow(self.backdrops[activation], interpolation="none", aspect="auto")
        self.ax = self.figure.add_axes(self.right_box, **self.limits)
        self.ax.set_axis_off()  # transparent: only the lines are drawn over the backdrop's axes
        self.lines = {name: self.ax.plot([], [], "o-", color=color, markersize=3)[0] for name, color in COLORS.items()}
        controls = {
            "activation": widgets.Dropdown(options=list(ACTIVATIONS), value=activation, description="activation g"),
            "depth": widgets.IntSlider(value=depth, min=2, max=max_depth, description="depth (layers)"),
        }
        super().__init__(controls, title="Activation functions and vanishing gradients")

    def _backdrop(self, chosen: str) -> np.ndarray:
        """The figure without the gradient lines, drawn once, as an RGBA picture (H, W, 4)."""
        figure = Figure(figsize=self.size, dpi=DPI)
        ax_g, ax_n = figure.add_axes(self.left_box), figure.add_axes(self.right_box, **self.limits)
        act = get_activation(chosen)
        ax_g.plot(Z, act.function(Z), color="black", label="g(z)")
        ax_g.plot(Z, act.derivative(Z), "--", color=palette.REDDISH_PURPLE, label="g'(z)")
        ax_g.axhline(self.peaks[chosen], color=palette.REDDISH_PURPLE, linestyle=":", linewidth=1.5)
        ax_g.set(
            xlabel="z",
            xlim=(-5, 5),
            ylim=(-1.2, 3),
            title=f"{act.formula},{self.title_break}max g' = {self.peaks[chosen]:.3f}",
        )
        ax_g.legend(loc="upper left")
        ax_n.set(
            xlabel="layer l (1 = next to the input)" if self.title_break == " " else "layer l (1 = input side)",
            ylabel="gradient norm of W[l]",
        )
        ax_n.xaxis.set_major_locator(MaxNLocator(6, integer=True))
        ax_n.yaxis.set_major_locator(LogLocator(numticks=8))
        ax_n.yaxis.set_minor_locator(NullLocator())
        ax_n.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0e}"))
        for i, (name, color) in enumerate(COLORS.items()):
            weight = "bold" if name == chosen else "normal"
            ax_n.text(*self.name_at[i], name, color=color, fontweight=weight, transform=ax_n.transAxes)
        self.static_text_px = min(self.static_text_px, smallest_figure_text_px(figure, DPI))
        return figure_rgba(figure)

    def legends(self) -> list[dict[str, str]]:
        return [dict(COLORS), {"g(z)": palette.BLACK, "g'(z)": palette.REDDISH_PURPLE}]

    def draw(self, activation: str, depth: int) -> Figure:
        chosen = get_activation(activation).name
        max_depth = len(self.tables[chosen])
        depth = check_int("depth", depth, minimum=2, maximum=max_depth)  # a ratio between layers needs two of them
        self.backdrop.set_data(self.backdrops[chosen])
        for name, line in self.lines.items():
            line.set_data(np.arange(1, depth + 1), self.tables[name][depth - 1, :depth])
            line.set(linewidth=3 if name == chosen else 1, alpha=1 if name == chosen else 0.3)
        norms = self.tables[chosen][depth - 1, :depth]
        ratio = float(norms[0] / norms[-1])
        self.show_readout(
            f"{chosen}, {depth} layers: layer 1 gets {ratio:.1e} × the gradient of layer {depth} "
            f"(≈ {ratio ** (1 / (depth - 1)):.2f} per layer); max g'(z) = {self.peaks[chosen]:.3f}"
        )
        return self.figure
