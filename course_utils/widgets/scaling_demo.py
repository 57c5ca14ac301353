"""Widgets of notebook 11 (scaling laws against a known floor): the FLOP-budget slider and the fitted surface.

``IsoFlopDemo``: pick a FLOP budget C of the grid; the runs trained on it (test loss against N), approach 3's IsoFLOP
curve L(N, C/6N) and its compute-optimal N, approach 2's parabola, the best run, Chinchilla's 20 tokens per parameter
and the true floor E.

``ScalingSurfaceDemo``: loss against tokens D for a few model sizes, the runs as points and approach 3's law as
curves, the held-out larger model with the law's prediction for it; "fix the floor E" shows the law with E held and
the other four parameters refitted: from E = 0.5 to 1.70 nats the curves fit the runs within 2 % of the best fit.

Both open in well under a second: approach 3's fits are read from ``data/scaling/profile.json``
(``scaling_laws.stored_fit``, ``stored_profile``), fitted here only for runs other than the stored ones (4 s and
30 s). A redraw takes about 12 ms: the IsoFLOP demo draws each budget's picture once, when it is built (each budget
has its own y axis); the surface demo draws its axes and key once, as a bitmap, and moves the curves over it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
from matplotlib.transforms import blended_transform_factory

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs
from course_utils.analysis.scaling_verdicts import rule_of_thumb_n
from course_utils.lecture import is_lecture_mode
from course_utils.validation import CourseInputError
from course_utils.widgets import palette
from course_utils.widgets.backdrop import FrozenBackdrop, figure_rgba, overlay_axes
from course_utils.widgets.widget_kit import PNG_DPI, Demo, smallest_figure_text_px

FIGSIZE = (9.0, 4.6)
LECTURE_FIGSIZE = (9.4, 5.6)  # 752 × 448 px: a projector's picture column, at 1:1
AXES_BOX = {"normal": (0.08, 0.12, 0.58, 0.8), "lecture": (0.12, 0.14, 0.5, 0.78)}  # the key goes on the right
N_GRID = np.geomspace(2e3, 3e6, 160)  # (160,) model sizes where the IsoFLOP curve is drawn
D_GRID = np.geomspace(1e5, 1e9, 160)  # (160,) tokens where the surface's curves are drawn
SIZE_TICKS = {"normal": (3e3, 1e4, 3e4, 1e5, 3e5, 1e6, 3e6), "lecture": (1e4, 1e5, 1e6)}
TOKEN_TICKS = (1e5, 1e6, 1e7, 1e8, 1e9)
SURFACE_YLIM = (1.6, 2.4)  # nats per token: the runs near the floor (the shortest runs of small models lie above)
ISOFLOP_KEY = {
    "normal": {"law": "approach 3: L(N, C/6N)", "n_opt": "approach 3's N_opt", "rule": "20 tokens per parameter",
               "runs": "runs on this budget", "inside": "approach 2: parabola, its minimum",
               "outside": "parabola: minimum at N = {},\noutside the sizes", "no_bend": "parabola: the runs do not bend up"},
    "lecture": {"law": "approach 3", "n_opt": "its N_opt", "rule": "20 tokens/N", "runs": "runs",
                "inside": "parabola, its min", "outside": "parabola:\nmin outside", "no_bend": "no parabola (no bend)"},
}  # fmt: skip
SHOWN_SIZES = 4  # model sizes drawn with a curve each, spread over the grid (the others as grey points)


def check_results(results) -> dict:
    """``results`` must be ``scaling_runs.load_results()``'s dict: runs by name and the oracle's test entropy."""
    if not isinstance(results, dict) or not isinstance(results.get("runs"), dict) or not results["runs"]:
        keys = sorted(results) if isinstance(results, dict) else type(results).__name__
        raise CourseInputError(f"results must be scaling_runs.load_results()'s dict with its 'runs'; got {keys}")
    if not isinstance(results.get("test_entropy"), (int, float)):
        raise CourseInputError("results need 'test_entropy', the oracle's loss per token on the test split (the floor)")
    return results


def short_number(value: float) -> str:
    """3280 -> "3.3k", 1779456 -> "1.8M": a size or a token count, short enough for a projector."""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            digits = 1 if value < 10 * scale else 0
            return f"{value / scale:.{digits}f}".removesuffix(".0") + suffix
    return f"{value:.0f}"


def flops_label(c: float) -> str:
    """3.79e11 -> "3.8e11"."""
    mantissa, exponent = f"{c:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _log_axis(axis, ticks) -> None:
    """A log axis with a few fixed ticks labelled like "30k" (no minor ticks)."""
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda value, _: short_number(value)))
    axis.set_minor_locator(NullLocator())


def beside(ax, y: float, text: str, colour: str, **style):
    """A label right of the axes at height ``y`` (data), off the curves: for a horizontal line."""
    on_line = blended_transform_factory(ax.transAxes, ax.transData)
    return ax.text(1.01, y, text, color=colour, transform=on_line, ha="left", **style)


def loss_axes(x_grid: np.ndarray, xlabel: str, ticks) -> tuple[Figure, object, bool]:
    """A figure of one axes at a fixed place (no layout engine to run at each redraw): test loss against a log x over
    ``x_grid``'s span; and whether it is made for a projector (lecture mode)."""
    lecture = is_lecture_mode()
    figure = Figure(figsize=LECTURE_FIGSIZE if lecture else FIGSIZE, dpi=PNG_DPI)
    ax = figure.add_axes(AXES_BOX["lecture" if lecture else "normal"])
    ax.set(xscale="log", xlim=(x_grid[0], x_grid[-1]), xlabel=xlabel, ylabel="test loss (nats)")
    _log_axis(ax.xaxis, ticks)
    return figure, ax, lecture


def picture_frame(size) -> tuple[Figure, object]:
    """A figure of ``size`` inches at PNG_DPI filled by one image, pixel for pixel: for pictures drawn beforehand."""
    figure = Figure(figsize=size, dpi=PNG_DPI)
    FigureCanvasAgg(figure)  # one canvas kept across redraws
    back = figure.add_axes((0, 0, 1, 1))
    back.set_axis_off()
    return figure, back.imshow(np.zeros((1, 1, 4)), interpolation="none", aspect="auto")


def picture_height(figure: Figure) -> str:
    """The plot's height for ``figure`` at PNG_DPI, with a margin."""
    return f"{round(figure.get_size_inches()[1] * PNG_DPI) + 30}px"


# ---------------------------------------------------------------- the FLOP-budget slider


@dataclass(frozen=True)
class Budget:
    """The training runs of one FLOP budget (an anti-diagonal of the grid) and what approach 2 makes of them."""

    index: int  # the grid's anti-diagonal, scaling_laws.budget_of
    flops: float  # the geometric mean of the runs' 6 N D (they spread up to x1.17), as scaling_laws.isoflop_profiles
    n: np.ndarray  # (runs,) non-embedding parameters, smallest first
    loss: np.ndarray  # (runs,) test loss
    best: dict  # the best run (scaling_laws.best_on_budget)
    parabola: fits.IsoFlopProfile | None  # None: the runs do not bend upwards

    @property
    def parabola_inside(self) -> bool:
        """Approach 2's minimum lies inside the sizes trained (scaling_laws.isoflop_profiles keeps only these)."""
        return self.parabola is not None and self.n.min() < self.parabola.n_opt < self.n.max()


def isoflop_budgets(results: dict, least_runs: int = 3) -> dict[int, Budget]:
    """{anti-diagonal: its Budget} for each FLOP budget with ``least_runs`` training runs or more."""
    best = laws.best_on_budget(results)
    budgets = {}
    for k, group in laws.flop_groups(results, least_runs).items():
        n, _, loss = laws.columns(group)
        flops = laws.group_flops(group)
        try:
            parabola = fits.isoflop_profile(flops, n, loss)
        except CourseInputError:
            parabola = None  # no upward bend: no minimum
        budgets[k] = Budget(k, flops, n, loss, best[k], parabola)
    if not budgets:
        raise CourseInputError(f"no FLOP budget of these runs has {least_runs} training runs or more")
    return budgets


class IsoFlopDemo(Demo):
    """A FLOP budget: its runs against N, approach 3's IsoFLOP curve and N_opt, approach 2's parabola, the best run,
    the 20-tokens rule and the true floor.

    Each budget's picture is drawn once, at construction (its y axis is its own): ``source`` holds the artists, posed
    for a budget by ``_pose``; a redraw poses them again (cheap) and shows that budget's picture.
    """

    def __init__(self, results: dict | None = None):
        self.results = check_results(scaling_runs.load_results() if results is None else results)
        self.truth = float(self.results["test_entropy"])
        self.law = laws.stored_fit(self.results)
        self.budgets = isoflop_budgets(self.results)
        self._build_figure()
        self.pictures = {k: self._picture(budget) for k, budget in self.budgets.items()}
        self.figure, self.picture = picture_frame(self.source.get_size_inches())
        options = [(flops_label(budget.flops), k) for k, budget in self.budgets.items()]
        start = scaling_runs.SPREAD_DIAGONAL if scaling_runs.SPREAD_DIAGONAL in self.budgets else options[0][1]
        name = "FLOP budget C" if not self.lecture else "budget C"
        controls = {"budget": widgets.SelectionSlider(options=options, value=start, description=name)}
        super().__init__(controls, title="IsoFLOP: the best model for a compute budget")

    def _build_figure(self) -> None:
        ticks = SIZE_TICKS["lecture" if is_lecture_mode() else "normal"]
        self.source, ax, self.lecture = loss_axes(N_GRID, "non-embedding parameters N", ticks)
        self.ax, self.plot_height = ax, picture_height(self.source)
        key = ISOFLOP_KEY["lecture" if self.lecture else "normal"]
        (self.law_line,) = ax.plot([], [], color=palette.MODEL, label=key["law"])
        self.law_opt = ax.axvline(1.0, color=palette.MODEL, linestyle="--", label=key["n_opt"])
        (self.parabola_line,) = ax.plot([], [], color=palette.SECOND, linestyle="-.", label="parabola")
        (self.parabola_min,) = ax.plot([], [], "v", color=palette.SECOND, markersize=11)
        self.rule = ax.axvline(1.0, color=palette.VERMILLION, linestyle=":", linewidth=2.5, label=key["rule"])
        (self.runs,) = ax.plot([], [], "o", color=palette.BLACK, label=key["runs"])
        (self.best,) = ax.plot([], [], "*", color=palette.BLACK, markersize=18, label="best run")
        ax.axhline(self.truth, color=palette.ORACLE, linewidth=2)
        beside(ax, self.truth, "true E", palette.ORACLE, va="center", fontweight="bold")
        handles = [self.runs, self.best, self.law_line, self.law_opt, self.parabola_line, self.rule]
        self.key = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        self.parabola_label = self.key.get_texts()[handles.index(self.parabola_line)]

    def legends(self) -> list[dict[str, str]]:
        return [{"runs": f"{palette.BLACK} o", "best run": f"{palette.BLACK} *", "approach 3": palette.MODEL,
                 "approach 2's parabola": palette.SECOND, "20 tokens per parameter": palette.VERMILLION,
                 "true E": palette.ORACLE}]  # fmt: skip

    def _picture(self, chosen: Budget) -> np.ndarray:
        """The source posed for ``chosen``, rendered: (H, W, 4); its smallest text is kept for ``text_px``."""
        self._pose(chosen)
        self.static_text_px = min(self.static_text_px, smallest_figure_text_px(self.source, PNG_DPI))
        return figure_rgba(self.source)

    def draw(self, budget: int) -> Figure:
        if budget not in self.budgets:
            raise CourseInputError(f"no FLOP budget {budget!r}; the budgets are {sorted(self.budgets)}")
        chosen = self.budgets[budget]
        n_opt, n_rule = self._pose(chosen)
        self.picture.set_data(self.pictures[budget])
        self.show_readout(self._readout(chosen, n_opt, n_rule))
        return self.figure

    def _pose(self, chosen: Budget) -> tuple[float, float]:
        """Set the source's artists for ``chosen``; return approach 3's N_opt and the 20-tokens rule's N."""
        c, law = chosen.flops, self.law
        self.runs.set_data(chosen.n, chosen.loss)
        self.best.set_data([chosen.best["non_embedding_parameters"]], [chosen.best["test_loss"]])
        self.law_line.set_data(N_GRID, law.loss(N_GRID, c / (6 * N_GRID)))
        n_opt, n_rule = float(law.optimal_n(c)), float(rule_of_thumb_n(c))
        self.law_opt.set_xdata([n_opt, n_opt])
        self.rule.set_xdata([n_rule, n_rule])
        self._draw_parabola(chosen)
        low = min(self.truth, float(chosen.loss.min()), float(law.loss(n_opt, c / (6 * n_opt))))
        high = float(chosen.loss.max())
        self.ax.set_ylim(low - 0.12 * (high - low), high + 0.25 * (high - low))
        self.ax.set_title(f"C = {flops_label(c)} FLOPs: {len(chosen.n)} runs", loc="left")
        return n_opt, n_rule

    def _draw_parabola(self, chosen: Budget) -> None:
        """Approach 2 over the sizes trained, its minimum marked where it lies inside them."""
        parabola = chosen.parabola
        if parabola is None:
            self.parabola_line.set_data([], [])
            self.parabola_min.set_data([], [])
            self.parabola_label.set_text(ISOFLOP_KEY["lecture" if self.lecture else "normal"]["no_bend"])
            return
        x = np.linspace(math.log(chosen.n.min()), math.log(chosen.n.max()), 60)  # (60,) log N
        p0, p1, p2 = parabola.coefficients
        self.parabola_line.set_data(np.exp(x), p0 + p1 * x + p2 * x**2)
        inside = chosen.parabola_inside
        self.parabola_min.set_data(*(([parabola.n_opt], [parabola.loss_opt]) if inside else ([], [])))
        key = ISOFLOP_KEY["lecture" if self.lecture else "normal"]
        self.parabola_label.set_text(key["inside"] if inside else key["outside"].format(short_number(parabola.n_opt)))

    def _readout(self, chosen: Budget, n_opt: float, n_rule: float) -> str:
        c, best = chosen.flops, chosen.best
        best_n = best["non_embedding_parameters"]
        per_best, per_law = best["tokens"] / best_n, c / (6 * n_opt**2)
        if self.lecture:
            return (f"C = {flops_label(c)}: best run N = {short_number(best_n)} ({per_best:,.0f} tokens/N) · approach 3: N_opt = "
                    f"{short_number(n_opt)} ({per_law:,.0f} tokens/N) · 20 tokens/N: {short_number(n_rule)}")  # fmt: skip
        return (f"C = {flops_label(c)} FLOPs · best run: N = {best_n:,} ({best['n_layer']}x{best['n_embd']}), "
                f"{per_best:,.0f} tokens per parameter · approach 3: N_opt = {n_opt:,.0f}, {per_law:,.0f} tokens per "
                f"parameter · 20 tokens per parameter: N = {n_rule:,.0f}")  # fmt: skip


# ---------------------------------------------------------------- the fitted surface, with the floor held


@dataclass(frozen=True)
class FloorFit:
    """Approach 3's law with E held fixed (or fitted, ``free``) and how well it fits and predicts."""

    law: fits.ChinchillaLaw
    objective_ratio: float  # its Huber objective over the best fit's
    held_out_error: float  # the law's prediction − the measured loss of the held-out shape at its longest run
    free: bool = False


def floor_fits(results: dict, profile: dict) -> list[FloorFit]:
    """Every law of ``profile`` (``scaling_laws.floor_profile``), the free fit among them in order of E, each with its
    objective (recomputed on the runs) and its held-out error."""
    n, d, loss = laws.columns(laws.rows(results))
    best = laws.chinchilla_law(profile["fit"])
    best_objective = fits.parametric_objective(best, n, d, loss)
    found = []
    for row, free in [(profile["fit"], True)] + [(row, False) for row in profile["floors"]]:
        law = laws.chinchilla_law(row)
        errors = laws.held_out_errors(law, results)
        ratio = fits.parametric_objective(law, n, d, loss) / best_objective
        found.append(FloorFit(law, ratio, errors[max(errors)], free))
    return sorted(found, key=lambda fit: fit.law.E)


def spread_sizes(sizes, count: int = SHOWN_SIZES) -> list:
    """``count`` of the sorted ``sizes``, spread evenly from the smallest to the largest."""
    picks = np.unique(np.round(np.linspace(0, len(sizes) - 1, min(count, len(sizes)))).astype(int))
    return [sizes[i] for i in picks]


class ScalingSurfaceDemo(Demo):
    """Loss against tokens for a few sizes: the runs, approach 3's curves and the held-out model; the floor E can be
    held fixed (the other four parameters refitted, stored) to see how little the fit cares."""

    def __init__(self, results: dict | None = None):
        self.results = check_results(scaling_runs.load_results() if results is None else results)
        self.truth = float(self.results["test_entropy"])
        self.held_out = sorted(laws.rows(self.results, ("held-out",)), key=lambda row: row["steps"])
        self.fits = floor_fits(self.results, laws.stored_profile(self.results))
        self.by_e = {fit.law.E: fit for fit in self.fits}
        self.training = laws.rows(self.results)
        sizes = sorted({row["non_embedding_parameters"] for row in self.training})
        self.shown = spread_sizes(sizes)
        self.colours = dict(zip(self.shown, (palette.BLUE, palette.ORANGE, palette.VERMILLION, palette.SKY_BLUE)))
        self._build_figure()
        options = [(f"{fit.law.E:.3f} fit" if fit.free else f"{fit.law.E:.2f}", fit.law.E) for fit in self.fits]
        free = next(fit.law.E for fit in self.fits if fit.free)
        name = "floor E" if self.lecture else "fix the floor E"
        controls = {"floor": widgets.SelectionSlider(options=options, value=free, description=name)}
        super().__init__(controls, title="Approach 3's law against the runs: how sharply do they pin E?")

    def _build_figure(self) -> None:
        """The axes, the shading, the true E and the key drawn once, as a bitmap (``backdrop``); the runs, the curves,
        the law's E and the labels on bare axes over it (``ax``)."""
        self.backdrop, under, self.lecture = loss_axes(D_GRID, "tokens trained on D", TOKEN_TICKS)
        self.plot_height = picture_height(self.backdrop)
        under.set_ylim(*SURFACE_YLIM)
        trained = max(row["tokens"] for row in self.training)
        under.axvspan(trained, D_GRID[-1], color=palette.PENDING, zorder=0)
        under.text(math.sqrt(trained * D_GRID[-1]), SURFACE_YLIM[1] - 0.03, "extrapolated", color=palette.MUTED,
                   ha="center", va="top")  # fmt: skip
        under.axhline(self.truth, color=palette.ORACLE, linewidth=2)
        self.figure = Figure(figsize=self.backdrop.get_size_inches(), dpi=PNG_DPI)
        self.figure.add_artist(FrozenBackdrop(self.backdrop))
        self.ax = ax = overlay_axes(self.figure, under)
        ax.set_xscale("log")
        ax.set(xlim=under.get_xlim(), ylim=under.get_ylim())
        handles = self._draw_runs(ax)
        self.floor_line = ax.axhline(self.truth, color=palette.MUTED, linestyle="--", linewidth=2)
        self.truth_label = beside(ax, self.truth, "true E", palette.ORACLE, fontweight="bold")
        self.floor_label = beside(ax, self.truth, "", palette.MUTED)
        self.key = under.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)

    def _draw_runs(self, ax) -> list:
        """The runs (points, those above the chart as ▲ at its top), a curve per shown size; the key's handles."""
        top = SURFACE_YLIM[1] - 0.01
        self.curves, handles = {}, []
        others = [row for row in self.training if row["non_embedding_parameters"] not in self.colours]
        _, d, loss = laws.columns(others)
        ax.plot(d, np.minimum(loss, top), ".", color=palette.MUTED, markersize=7)
        groups = [(n, self.colours[n], "o", [r for r in self.training if r["non_embedding_parameters"] == n])
                  for n in self.shown]  # fmt: skip
        groups.append((self.held_out[0]["non_embedding_parameters"], palette.BLACK, "D", self.held_out))
        for n, colour, marker, runs in groups:
            _, d, loss = laws.columns(runs)
            fill = "none" if marker == "D" else colour
            ax.plot(d[loss <= top], loss[loss <= top], marker, color=colour, markerfacecolor=fill, markersize=8,
                    markeredgewidth=2, zorder=3)  # fmt: skip
            ax.plot(d[loss > top], np.full((loss > top).sum(), top), "^", color=colour, markersize=8, zorder=3)
            (self.curves[n],) = ax.plot(D_GRID, np.zeros_like(D_GRID), color=colour)
            held = marker == "D"
            name = short_number(n) + (" held out" if held else "")
            if not self.lecture:
                name = f"N = {name}" if not held else f"N = {short_number(n)}: held out, predicted"
            handles.append(Line2D([], [], color=colour, marker=marker, markerfacecolor=fill, markeredgewidth=2,
                                  label=name))  # fmt: skip
        handles.append(Line2D([], [], color=palette.MUTED, marker=".", linestyle="none",
                              label="other sizes" if self.lecture else "other sizes (fitted too)"))  # fmt: skip
        handles.append(Line2D([], [], color=palette.MUTED, marker="^", linestyle="none",
                              label="above" if self.lecture else "above the chart"))  # fmt: skip
        handles.append(Line2D([], [], color=palette.MUTED, linestyle="--", label="the law's E"))
        return handles

    def legends(self) -> list[dict[str, str]]:
        sizes = {f"N = {short_number(n)}": colour for n, colour in self.colours.items()}
        return [{**sizes, "held out": f"{palette.BLACK} D", "true E": palette.ORACLE}]

    def draw(self, floor: float) -> Figure:
        if floor not in self.by_e:
            raise CourseInputError(f"no stored fit at E = {floor!r}; the floors are {sorted(self.by_e)}")
        fit = self.by_e[floor]
        law = fit.law
        for n, curve in self.curves.items():
            curve.set_ydata(law.loss(n, D_GRID))
        self.floor_line.set_ydata([law.E, law.E])
        self._label_floors(law.E, f"{law.E:.3f}" if fit.free else f"{law.E:.2f}")
        held = f"{self.held_out[-1]['n_layer']}x{self.held_out[-1]['n_embd']}"
        steps = self.held_out[-1]["steps"]
        if self.lecture:
            state = f"E = {law.E:.3f} fitted" if fit.free else f"E = {law.E:.2f} held"
            text = (f"{state} · objective ×{fit.objective_ratio:.3f} · α = {law.alpha:.3f} · β = {law.beta:.2f} · "
                    f"{held} at {steps:,}: {fit.held_out_error:+.3f} nats")  # fmt: skip
        else:
            state = f"E fitted: {law.E:.3f} nats" if fit.free else f"E held at {law.E:.2f} nats, A, α, B, β refitted"
            text = (f"{state} · objective {fit.objective_ratio:.3f} × the best fit's · α = {law.alpha:.3f}, "
                    f"β = {law.beta:.3f} · held-out {held} at {steps:,} steps: law − measured = "
                    f"{fit.held_out_error:+.3f} nats")  # fmt: skip
        self.show_readout(text)
        return self.figure

    def _label_floors(self, e: float, shown: str) -> None:
        """The labels "true E" and "the law's E" beside their lines, the higher line's label above it, the lower's below; a law's
        E under the chart is named at its bottom."""
        above = e > self.truth
        self.truth_label.set(y=self.truth, va="top" if above else "bottom")
        visible = e >= SURFACE_YLIM[0]
        below = " ↓" if self.lecture else "\n(below the chart)"
        name = ("law's E = " if self.lecture else "the law's E = ") + shown + ("" if visible else below)
        self.floor_label.set(text=name, y=e if visible else SURFACE_YLIM[0] + 0.01,
                             va="bottom" if above or not visible else "top")  # fmt: skip
