"""Widget: pick an activation and a depth; see g(z), g'(z) and the gradient each layer of a deep net gets."""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

from course_utils.activations import ACTIVATIONS, Activation, get_activation
from course_utils.feedforward import layer_gradient_norms
from course_utils.validation import check_int
from course_utils.widget_kit import Demo

COLORS = {"sigmoid": "tab:blue", "tanh": "tab:orange", "relu": "tab:green", "gelu": "tab:red"}
PICTURE_WIDTH, PLOT_WIDTH, HEIGHT = 4.0, 6.0, 3.8  # inches: left panel, right panel, both
DPI = 80  # the resolution the demo frame renders at
Z = torch.linspace(-5, 5, 201, dtype=torch.float64)  # (201,) where g and g' are drawn


def function_picture(activation: Activation) -> np.ndarray:
    """g(z) and g'(z) drawn once, as an RGBA picture (HEIGHT·DPI, PICTURE_WIDTH·DPI, 4)."""
    figure = Figure(figsize=(PICTURE_WIDTH, HEIGHT), dpi=DPI)
    canvas = FigureCanvasAgg(figure)
    ax = figure.add_axes((0.16, 0.15, 0.8, 0.75))
    derivative = activation.derivative(Z)  # (201,)
    ax.plot(Z, activation.function(Z), color="black", label="g(z)")
    ax.plot(Z, derivative, "--", color="tab:purple", label="g'(z)")
    ax.axhline(derivative.max().item(), color="tab:purple", linestyle=":", linewidth=1)
    ax.set(xlabel="z", xlim=(-5, 5), ylim=(-1.2, 3), title=f"{activation.formula}, max g' = {derivative.max():.3f}")
    ax.legend(loc="upper left")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


class ActivationDemo(Demo):
    """g(z) and g'(z) on the left; on the right the gradient norm of every layer of a deep net, for
    all four activations (the chosen one bold).

    Precomputed: the gradient norms for every depth, and the left panel as one picture per
    activation (it does not depend on the depth), so a redraw only redraws the right panel.
    """

    plot_height = "340px"

    def __init__(self, activation: str = "sigmoid", depth: int = 20, *, max_depth: int = 30):
        self.norms = {(name, d): self._compute_norms(name, d) for name in ACTIVATIONS for d in range(2, max_depth + 1)}
        self.pictures = {name: function_picture(a) for name, a in ACTIVATIONS.items()}
        self.peaks = {name: a.derivative(Z).max().item() for name, a in ACTIVATIONS.items()}
        self.figure = Figure(figsize=(PICTURE_WIDTH + PLOT_WIDTH, HEIGHT), dpi=DPI)
        FigureCanvasAgg(self.figure)  # one canvas kept across redraws, so text sizes stay cached
        share = PICTURE_WIDTH / (PICTURE_WIDTH + PLOT_WIDTH)
        picture_ax = self.figure.add_axes((0, 0, share, 1))
        picture_ax.set_axis_off()
        self.picture = picture_ax.imshow(self.pictures["sigmoid"], interpolation="none", aspect="auto")
        self.ax = self.figure.add_axes((share + 0.08, 0.15, 0.98 - share - 0.08, 0.75))
        self.lines = {name: self.ax.plot([], [], "o-", color=color, markersize=3)[0] for name, color in COLORS.items()}
        self.names = {  # coloured names above the plot instead of a legend, which is slow to redraw
            name: self.ax.text(0.1 + 0.22 * i, 1.03, name, color=color, transform=self.ax.transAxes)
            for i, (name, color) in enumerate(COLORS.items())
        }
        self.ax.set(xlabel="layer l (1 = next to the input)", ylabel="gradient norm of W[l]", yscale="log")
        self.ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
        self.ax.yaxis.set_major_locator(LogLocator(numticks=5))  # few ticks and no minor ones: quick to draw
        self.ax.yaxis.set_minor_locator(NullLocator())
        self.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0e}"))
        controls = {
            "activation": widgets.Dropdown(options=list(ACTIVATIONS), value=activation, description="activation g"),
            "depth": widgets.IntSlider(value=depth, min=2, max=max_depth, description="depth (layers)"),
        }
        super().__init__(controls, title="Activation functions and vanishing gradients")

    @staticmethod
    def _compute_norms(name: str, depth: int) -> np.ndarray:
        return layer_gradient_norms(name, depth).numpy()  # numpy: matplotlib draws it faster than a tensor

    def _layer_norms(self, name: str, depth: int) -> np.ndarray:
        """The per-layer gradient norms, from the precomputed table when it has them."""
        if (name, depth) not in self.norms:
            self.norms[(name, depth)] = self._compute_norms(name, depth)
        return self.norms[(name, depth)]

    def draw(self, activation: str, depth: int) -> Figure:
        chosen = get_activation(activation).name
        depth = check_int("depth", depth, minimum=2)  # a ratio between layers needs two of them
        every = {name: self._layer_norms(name, depth) for name in ACTIVATIONS}
        self.picture.set_data(self.pictures[chosen])
        for name, line in self.lines.items():
            line.set_data(np.arange(1, depth + 1), every[name])
            line.set(linewidth=3 if name == chosen else 1, alpha=1 if name == chosen else 0.3)
            self.names[name].set_fontweight("bold" if name == chosen else "normal")
        low = min(n.min() for n in every.values())
        high = max(n.max() for n in every.values())
        self.ax.set(xlim=(0.5, depth + 0.5), ylim=(low / 3, high * 3))
        ratio = float(every[chosen][0] / every[chosen][-1])
        self.show_readout(
            f"{chosen}, {depth} layers: layer 1 gets {ratio:.1e} × the gradient of layer {depth} "
            f"(≈ {ratio ** (1 / (depth - 1)):.2f} per layer); max g'(z) = {self.peaks[chosen]:.3f}"
        )
        return self.figure
