"""Widget: gradient descent (plain, momentum, Adam) on the 2-D loss surface of a linear regression.

Each redraw reruns the descent (a few hundred cheap NumPy steps) and moves two lines: the path
over the surface and the loss curve. Everything that does not change (axes, ticks, contours,
labels) is drawn once into a bitmap, so a redraw renders only the lines and a few texts.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import blended_transform_factory

from course_utils.models.basics.regression import (
    RegressionData,
    analytic_solution,
    check_problem,
    gradient_descent,
    loss_grid,
    make_regression_data,
    max_stable_lr,
    mse_loss,
    random_start,
)
from course_utils.validation import CourseInputError
from course_utils.widgets import palette
from course_utils.lecture import is_lecture_mode
from course_utils.widgets.backdrop import FrozenBackdrop, overlay_axes
from course_utils.widgets.widget_kit import PNG_DPI, Demo

OPTIMIZERS = [("gradient descent", "gd"), ("momentum (μ = 0.9)", "momentum"), ("Adam", "adam")]
CONVERGED_TOL = 1e-3  # max |β − β*| that counts as "converged" in the readout
LOG_FLOOR = -16  # log10 of the smallest excess loss drawn (an exact 0 is lifted to it)
FIGSIZE = (9.0, 4.0)
LECTURE_FIGSIZE = (9.4, 5.6)  # 752 × 448 px: a projector's picture column, at 1:1
STEP_TICKS = MaxNLocator(nbins=5, integer=True)


def demo_problem() -> tuple[RegressionData, np.ndarray]:
    """Notebook 01's problem (a slightly elongated valley) and its random start."""
    data = make_regression_data(n_samples=100, beta=(2.0, -1.0), feature_mean=1.0, noise=0.5, seed=0)
    return data, random_start(2, seed=1)


def draw_loss_surface(ax, X, y, center, half_width: float, levels: int = 12, resolution: int = 80) -> None:
    """Contours of log10 of the loss in a square view of ±``half_width`` around ``center``."""
    b0 = np.linspace(center[0] - half_width, center[0] + half_width, resolution)  # (M,)
    b1 = np.linspace(center[1] - half_width, center[1] + half_width, resolution)  # (M,)
    ax.contour(
        b0,
        b1,
        np.log10(loss_grid(X, y, b0, b1)),
        levels=levels,
        colors=palette.MUTED,
        linewidths=1.2,
        linestyles="solid",
    )
    ax.set(xlim=(b0[0], b0[-1]), ylim=(b1[0], b1[-1]), aspect="equal")
    ax.set(xlabel="β₀ (intercept)", ylabel="β₁ (slope)")


def draw_steps_against_lr(ax, factors, measured, best_factor: float, tol: float) -> None:
    """Steps gradient descent needs to reach ``tol`` against α in units of the edge 2/λ_max (NaN: never), with the
    edge and theory's best α, 2/(λ_min + λ_max), marked."""
    ax.semilogy(factors, measured, "o-")
    ax.axvline(1.0, color="tab:red", linestyle="--", label="2/λ_max: the edge")
    ax.axvline(best_factor, color="tab:green", linestyle=":", label="2/(λ_min + λ_max): best in theory")
    ax.set(xlabel="α / (2/λ_max)", ylabel=f"steps to reach {tol:g}", title="Gradient descent: steps against α")
    ax.legend()


def draw_adam_edge(ax_error, errors, curvature, edge: float, crossings, lr: float) -> None:
    """Adam's error (on ``ax_error``, log scale) and the curvature S it meets (on a twin axis) in a run at learning
    rate ``lr``, with Adam's edge and a dotted line at each step where S rises past it."""
    ax_curvature = ax_error.twinx()
    ax_error.semilogy(errors, color="tab:blue", label="max |β − β*| (left axis)")
    ax_curvature.plot(curvature, color="tab:orange", label="S = λ_max(PH) (right axis)")
    ax_curvature.axhline(edge, color="tab:red", linestyle="--", label=f"Adam's edge 2(1+β₁)/(1−β₁) = {edge:.0f}")
    for i, step in enumerate(crossings):
        ax_error.axvline(step, color="0.5", linestyle=":", label="S rises past the edge" if i == 0 else None)
    ax_error.set(xlabel="step", ylabel="max |β − β*|  (log scale)", title=f"Adam (α = {lr:g}) long after convergence")
    ax_curvature.set_ylabel("S, the curvature Adam meets")
    handles = [h for axis in (ax_error, ax_curvature) for h in axis.get_legend_handles_labels()[0]]
    ax_error.legend(handles=handles, loc="center left", fontsize="small")


def clip_path(betas: np.ndarray, center, half_width: float, margin: float = 3.0) -> np.ndarray:
    """The path up to its first point beyond ``margin`` half-widths of the view, that point pulled back to that border.

    Diverging paths reach 1e150 and beyond; drawing them raw makes the renderer misbehave.
    """
    low, high = np.asarray(center) - margin * half_width, np.asarray(center) + margin * half_width
    outside = np.flatnonzero(((betas < low) | (betas > high)).any(axis=1))
    if outside.size == 0:
        return betas
    return np.clip(betas[: outside[0] + 1], low, high)  # (K, 2)


class DescentDemo(Demo):
    """Learning rate, steps and optimizer over the loss surface; the path and the loss curve are drawn."""

    plot_height = "440px"

    def __init__(self, data: RegressionData | None = None, beta0=None, *, lr: float = 0.1, steps: int = 100):
        if data is None:
            data, beta0 = demo_problem()
        self.X, self.y = check_problem(data.X, data.y)
        if self.X.shape[1] != 2 or beta0 is None or np.shape(beta0) != (2,):
            raise CourseInputError(
                "the descent demo needs X with 2 columns (intercept and one feature) and a 2-vector beta0"
            )
        self.beta_star = analytic_solution(self.X, self.y)  # (2,)
        self.beta0 = np.asarray(beta0, dtype=float)  # (2,)
        self.min_loss = mse_loss(self.X, self.y, self.beta_star)
        self.lr_max = max_stable_lr(self.X)
        self.center = (self.beta_star + self.beta0) / 2  # (2,)
        self.half_width = 0.75 * float(np.abs(self.beta_star - self.beta0).max())
        self._build_figure()
        controls = {
            "lr": widgets.FloatLogSlider(
                value=lr, base=10, min=-4, max=0.5, step=0.05, description="learning rate α", readout_format=".2g"
            ),
            "steps": widgets.IntSlider(value=steps, min=1, max=300, description="steps"),
            "optimizer": widgets.Dropdown(options=OPTIMIZERS, value="gd", description="optimizer"),
        }
        super().__init__(controls, title="Gradient descent on the loss surface of ŷ = Xβ")

    def _build_figure(self) -> None:
        """The static backdrop (contours, β*, start, axes) once; transparent axes on top for the moving lines."""
        self.figsize = LECTURE_FIGSIZE if is_lecture_mode() else FIGSIZE
        if is_lecture_mode():
            self.plot_height = f"{round(self.figsize[1] * PNG_DPI) + 40}px"
        backdrop = Figure(
            figsize=self.figsize, layout="constrained"
        )  # laid out once, so the layout costs nothing later
        surface, loss = backdrop.subplots(1, 2)
        draw_loss_surface(surface, self.X, self.y, self.center, self.half_width)
        surface.plot(*self.beta_star, "*", color=palette.ORACLE, markersize=14)
        surface.plot(*self.beta0, "o", color="black")
        for point, text in ((self.beta_star, "β* (analytic)"), (self.beta0, "start β₀")):
            surface.annotate(text, point, xytext=(8, 6), textcoords="offset points", fontweight="bold")
        loss.set(ylim=(LOG_FLOOR, self._log_excess(self.beta0) + 2), title="loss above the minimum")
        loss.set(xlabel="step", ylabel="log₁₀(L(β) − L(β*))")
        loss.tick_params(axis="x", bottom=False, labelcolor="none")  # the step axis changes: drawn per redraw
        loss.grid(False, axis="x")
        backdrop.draw_without_rendering()  # run the layout once ...
        backdrop.set_layout_engine("none")  # ... and freeze it, so a render at another dpi cannot move the axes
        self.backdrop_axes = (surface, loss)

        self.figure = Figure(figsize=self.figsize)
        self.figure.add_artist(FrozenBackdrop(backdrop))
        self.ax_surface, self.ax_loss = overlay_axes(self.figure, surface), overlay_axes(self.figure, loss)
        below = blended_transform_factory(self.ax_loss.transData, self.ax_loss.transAxes)
        self.step_labels = [self.ax_loss.text(0, -0.03, "", transform=below, ha="center", va="top") for _ in range(8)]
        (self.path_line,) = self.ax_surface.plot([], [], ".-", color=palette.MODEL, markersize=5)
        (self.loss_line,) = self.ax_loss.plot([], [], color=palette.MODEL)
        self.note = self.ax_surface.set_title("", color=palette.ALERT, fontweight="bold", loc="left")

    def _log_excess(self, beta) -> float:
        return float(np.log10(max(mse_loss(self.X, self.y, beta) - self.min_loss, 10.0**LOG_FLOOR)))

    def legends(self) -> list[dict[str, str]]:
        return [{"β* (analytic)": palette.ORACLE, "start β₀": palette.BLACK, "the descent's path": palette.MODEL}]

    def draw(self, lr: float, steps: int, optimizer: str) -> Figure:
        path = gradient_descent(self.X, self.y, self.beta0, lr=lr, steps=steps, method=optimizer)
        self.path_line.set_data(*clip_path(path.betas, self.center, self.half_width).T)
        log_excess = np.log10(np.clip(path.losses - self.min_loss, 10.0**LOG_FLOOR, 1e30))  # (T+1,)
        self.loss_line.set_data(np.arange(len(log_excess)), log_excess)
        self.ax_loss.set_xlim(0, steps)
        self._label_steps(steps)
        status = self._status(path, steps)
        self.note.set_text(status if path.diverged else "")
        edge = f"α = {lr:.3g} = {lr / self.lr_max:.2f} × 2/λ_max (2/λ_max = {self.lr_max:.3g})"
        self.show_readout(f"{status} · {edge}")
        return self.figure

    def _label_steps(self, steps: int) -> None:
        """Tick labels for the step axis: a few texts are much cheaper to redraw than a live matplotlib Axis."""
        ticks = [tick for tick in STEP_TICKS.tick_values(0, steps) if 0 <= tick <= steps]
        for index, label in enumerate(self.step_labels):
            label.set_visible(index < len(ticks))
            if index < len(ticks):
                label.set_x(ticks[index])
                label.set_text(f"{ticks[index]:.0f}")

    def _status(self, path, steps: int) -> str:
        """One line: diverged, converged (and when) or still on its way."""
        if path.blew_up:
            return f"⚠ diverged: the numbers overflowed to inf at step {path.steps + 1}"
        if path.diverged:
            return f"⚠ diverged: the loss grew from {path.losses[0]:.3g} to {path.losses[-1]:.3g}"
        reached = path.steps_to(self.beta_star, CONVERGED_TOL)
        if reached is not None:
            return f"converged: within {CONVERGED_TOL:g} of β* from step {reached}"
        error = float(np.abs(path.beta - self.beta_star).max())
        return f"still on its way after {steps} steps: max |β − β*| = {error:.2g}"
