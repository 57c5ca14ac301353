"""Static backdrops for fast widgets: what never changes is drawn once, as a bitmap.

Text and contours are the slow part of a matplotlib redraw. A demo draws its static parts
(axes, labels, contours) once into a bitmap and, on each redraw, pastes it and draws only the
moving lines on transparent axes laid exactly over it.
"""

from __future__ import annotations

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def figure_rgba(figure: Figure) -> np.ndarray:
    """Render a figure at its own dpi; return its pixels (H, W, 4), top row first."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


class FrozenBackdrop(Artist):
    """Draws a static figure as a bitmap, rendered once per resolution, behind a figure's moving parts."""

    def __init__(self, source: Figure):
        super().__init__()
        self.source = source
        self._bitmaps: dict[float, np.ndarray] = {}

    def _bitmap(self, dpi: float) -> np.ndarray:
        if dpi not in self._bitmaps:
            self.source.set_dpi(dpi)
            self._bitmaps[dpi] = np.ascontiguousarray(figure_rgba(self.source)[::-1])  # (H, W, 4), bottom row first
        return self._bitmaps[dpi]

    def draw(self, renderer) -> None:
        gc = renderer.new_gc()
        renderer.draw_image(gc, 0, 0, self._bitmap(renderer.dpi))
        gc.restore()


def overlay_axes(figure: Figure, under: Axes) -> Axes:
    """Bare axes (no frame, ticks or background) in ``figure`` exactly over the backdrop's axes ``under``."""
    ax = figure.add_axes(under.get_position(), xlim=under.get_xlim(), ylim=under.get_ylim())  # the box as drawn
    ax.set_axis_off()
    return ax
