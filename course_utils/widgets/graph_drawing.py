"""Draw a computation graph of ``Value`` nodes with matplotlib alone (no Graphviz ``dot`` needed).

Inputs sit on the left and the output on the right: each node goes one layer to the right of
its deepest parent, and an input is placed just before the first node that uses it. Every box
shows the node's name and how it was computed, its value, and after ∇ its gradient; every
arrow carries the operation's label.

    draw_graph(L); plt.show()                       # the whole graph with data and grads
    picture = GraphPicture(L, ax)                   # for widgets: build once, then
    picture.update(values, grads, highlight=3, phase="backward")
"""

from __future__ import annotations

from statistics import mean

import numpy as np

from course_utils.models.basics.autograd import Value
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.widgets import palette

COLOURS = {
    "forward": "#F7DFA6",
    "backward": "#C4DDEE",  # the current node's fill: the phase's colour, lightened
    "edge": palette.MUTED,
    "forward_edge": palette.ORANGE,
    "backward_edge": palette.BLUE,  # the current node's frame and arrows: what the legend names
    "grad": palette.BLUE,
    "op": "#7a1f00",  # texts
}
PHASES = ("forward", "backward")


def _check_root(root) -> list[Value]:
    if not isinstance(root, Value):
        raise CourseInputError(f"expected the Value at the end of a graph, got {type(root).__name__}")
    return root.topological_order()


def layered_layout(nodes: list[Value]) -> list[tuple[float, float]]:
    """(x, y) for each node of a topological order: x is the layer, y the row within it."""
    index = {id(node): i for i, node in enumerate(nodes)}
    parents = [[index[id(p)] for p in node.parents] for node in nodes]
    children = [[] for _ in nodes]
    for i, ps in enumerate(parents):
        for p in ps:
            children[p].append(i)
    layer = [0] * len(nodes)
    for i in range(len(nodes)):  # topological order: parents first
        layer[i] = 1 + max((layer[p] for p in parents[i]), default=-1)
    for i in range(len(nodes)):  # pull each input right, next to its first user
        if not parents[i] and children[i]:
            layer[i] = min(layer[c] for c in children[i]) - 1
    layers = [[i for i in range(len(nodes)) if layer[i] == k] for k in range(max(layer) + 1)]
    y = {}
    _centre_rows(layers, y)
    for neighbours, sweep in ((children, layers[::-1]), (parents, layers)):  # fewer crossings
        for members in sweep:
            members.sort(key=lambda i: mean(y[j] for j in neighbours[i]) if neighbours[i] else y[i])
            _centre_rows([members], y)
    return [(float(layer[i]), y[i]) for i in range(len(nodes))]


def _centre_rows(layers: list[list[int]], y: dict) -> None:
    """Put each layer's members on rows 1 apart, centred on 0, first member on top."""
    for members in layers:
        for row, i in enumerate(members):
            y[i] = (len(members) - 1) / 2 - row


def node_title(node: Value) -> str:
    """A box's first line: ``"e = a + d"`` for a named result, the formula or name otherwise."""
    return f"{node.label} = {node.formula()}" if node.parents and node.label else node.formula()


def _number(x: float | None) -> str:
    """A value for a box, short (glyphs cost time): 4 significant digits, ``?`` if unknown."""
    return "?" if x is None else f"{x:.4g}"


def _snapshot_class():
    """``Snapshot``, defined on first use so that importing this module does not import matplotlib."""
    from matplotlib.artist import Artist
    from matplotlib.backends.backend_agg import RendererAgg

    class Snapshot(Artist):
        """Artists that never change, drawn once into a bitmap that later draws just paste.

        Text is the slow part of a matplotlib redraw (every label is laid out again each
        time), so a widget that changes only a few numbers saves most of its time this way.
        The bitmap is redrawn when the output size changes; vector output draws the artists.
        """

        def __init__(self, artists, zorder: float):
            super().__init__()
            self.artists = sorted(artists, key=lambda artist: artist.get_zorder())
            self.set_zorder(zorder)
            self.set_in_layout(False)
            self._size, self._pixels = None, None

        def draw(self, renderer) -> None:
            if not isinstance(renderer, RendererAgg):
                for artist in self.artists:
                    artist.draw(renderer)
                return
            size = (renderer.width, renderer.height, renderer.dpi)
            if size != self._size:
                offscreen = RendererAgg(renderer.width, renderer.height, renderer.dpi)
                for artist in self.artists:
                    artist.draw(offscreen)
                self._size, self._pixels = size, np.asarray(offscreen.buffer_rgba()).copy()  # (H, W, 4)
            gc = renderer.new_gc()
            renderer.draw_image(gc, 0, 0, self._pixels[::-1])  # draw_image counts rows from the bottom
            gc.restore()

    return Snapshot


class GraphPicture:
    """The boxes and arrows of one graph on a matplotlib Axes; ``update`` changes only numbers and colours.

    Each box shows its node's title, its value (black) and its gradient (blue, after ∇).
    Everything that never changes (box outlines, titles, arrows, op labels) is drawn once into
    a bitmap, so a redraw only lays out the numbers: widgets stay fast.
    """

    box_width, box_height = 0.64, 0.66  # in layers and rows

    def __init__(self, root: Value, ax, *, fontsize: float | None = None):
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
        from matplotlib.text import Text

        self.nodes = _check_root(root)
        self.ax = ax
        self.positions = layered_layout(self.nodes)
        w, h = self.box_width, self.box_height
        on_axes = {"transform": ax.transData}
        text = {"ha": "center", "va": "center", "fontsize": fontsize, **on_axes}
        arrow = {"arrowstyle": "-|>,head_width=0.3,head_length=0.6", "shrinkA": 0, "shrinkB": 0, "mutation_scale": 12}

        def box(x, y, **style):
            return FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.08", **style)

        static = [box(x, y, fc="none", ec="black", zorder=1, **on_axes) for x, y in self.positions]
        static += [
            Text(x, y + h / 4, node_title(n), fontweight="bold", zorder=2, **text)
            for n, (x, y) in zip(self.nodes, self.positions)
        ]
        index = {id(node): i for i, node in enumerate(self.nodes)}
        self.edges = []  # (parent index, child index, arrow drawn when highlighted)
        for child, node in enumerate(self.nodes):
            (x1, y1) = self.positions[child]
            for parent in (index[id(p)] for p in node.parents):
                (x0, y0) = self.positions[parent]
                start, end = (x0 + w / 2, y0), (x1 - w / 2, y1)
                static.append(FancyArrowPatch(start, end, color=COLOURS["edge"], lw=1.2, zorder=0, **arrow, **on_axes))
                static.append(
                    Text(
                        (x0 + x1) / 2,
                        (y0 + y1) / 2 + 0.04,
                        node.op,
                        color=COLOURS["op"],
                        zorder=2,
                        **{**text, "va": "bottom"},
                    )
                )
                self.edges.append((parent, child, ax.add_patch(FancyArrowPatch(start, end, lw=3.0, zorder=3, **arrow))))
        for artist in static:
            artist.set_figure(ax.figure)
        self.snapshot = ax.add_artist(_snapshot_class()(static, zorder=1))
        self.highlight = ax.add_patch(box(0.0, 0.0, lw=3.0, zorder=0))  # under the see-through boxes
        self.values = [ax.text(x, y, "", zorder=5, **text) for x, y in self.positions]
        self.grads = [ax.text(x, y - h / 4, "", color=COLOURS["grad"], zorder=5, **text) for x, y in self.positions]
        xs, ys = zip(*self.positions)
        ax.set_xlim(min(xs) - w / 2 - 0.05, max(xs) + w / 2 + 0.05)
        ax.set_ylim(min(ys) - h / 2 - 0.05, max(ys) + h / 2 + 0.05)
        ax.axis("off")
        self.update()

    def update(self, values=None, grads=None, *, highlight=None, phase: str = "forward") -> None:
        """Show ``values``/``grads`` (one per node, ``None`` = not computed yet; default: the nodes' own).

        ``highlight`` (a node index or a ``Value``) is the node being computed. It is coloured by
        ``phase``, "forward" (orange) or "backward" (blue), and so are the arrows its inputs come
        along: the arrows into it going forward, the arrows out of it (to its users) going backward.
        """
        n = len(self.nodes)
        values = [node.data for node in self.nodes] if values is None else list(values)
        grads = [node.grad for node in self.nodes] if grads is None else list(grads)
        if len(values) != n or len(grads) != n:
            raise CourseInputError(f"need one value and one grad per node ({n}), got {len(values)} and {len(grads)}")
        check_choice("phase", phase, PHASES)
        current = self._node_index(highlight)
        for i in range(n):
            self.values[i].set_text(_number(values[i]))
            self.grads[i].set_text(f"∇ {_number(grads[i])}")
        self.highlight.set_visible(current is not None)
        if current is not None:
            x, y = self.positions[current]
            self.highlight.set_x(x - self.box_width / 2)
            self.highlight.set_y(y - self.box_height / 2)
            self.highlight.set_facecolor(COLOURS[phase])
            self.highlight.set_edgecolor(COLOURS[f"{phase}_edge"])
        for parent, child, arrow in self.edges:  # forward: values flow in; backward: gradients arrive from users
            arrow.set_visible((child if phase == "forward" else parent) == current)
            arrow.set_color(COLOURS[f"{phase}_edge"])

    def _node_index(self, highlight) -> int | None:
        if highlight is None:
            return None
        if isinstance(highlight, Value):
            for i, node in enumerate(self.nodes):
                if node is highlight:
                    return i
            raise CourseInputError("the node to highlight is not in this graph")
        return check_int("highlight", highlight, minimum=0, maximum=len(self.nodes) - 1)


def draw_graph(root: Value, ax=None, *, highlight=None, phase: str = "forward") -> GraphPicture:
    """Draw the graph that ends at ``root`` (on ``ax``, or on a new pyplot figure sized to fit)."""
    if ax is None:
        import matplotlib.pyplot as plt

        xs, ys = zip(*layered_layout(_check_root(root)))
        _, ax = plt.subplots(figsize=(2.1 * (max(xs) + 1), 0.3 + 0.95 * (max(ys) - min(ys) + 1)))
    picture = GraphPicture(root, ax)
    picture.update(highlight=highlight, phase=phase)
    ax.set_title("each box: the node, its value, and ∇ its gradient ∂(output)/∂(node)", fontsize="medium")
    return picture


def to_dot(root: Value) -> str:
    """The graph in Graphviz's DOT language, as text (rendering it needs Graphviz; this does not)."""
    nodes = _check_root(root)
    index = {id(node): i for i, node in enumerate(nodes)}
    lines = ["digraph computation {", "  rankdir=LR;", "  node [shape=box, style=rounded];"]
    for i, node in enumerate(nodes):
        text = f"{node_title(node)}\\ndata {node.data:.4g}\\ngrad {node.grad:.4g}".replace('"', '\\"')
        lines.append(f'  n{i} [label="{text}"];')
    for i, node in enumerate(nodes):
        lines.extend(f'  n{index[id(p)]} -> n{i} [label="{node.op}"];' for p in node.parents)
    lines.append("}")
    return "\n".join(lines)
