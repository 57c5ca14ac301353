"""Draw a computation graph of ``Value`` nodes with matplotlib alone (no Graphviz ``dot`` needed).

Inputs sit on the left and the output on the right: each node goes one layer to the right of
its deepest parent, and an input is placed just before the first node that uses it. Every box
shows the node's name, how it was computed, its value (data) and its gradient; every arrow
carries the operation's label.

    draw_graph(L); plt.show()                       # the whole graph with data and grads
    picture = GraphPicture(L, ax)                   # for widgets: build once, then
    picture.update(values, grads, highlight=3, phase="backward")
"""
from __future__ import annotations

from statistics import mean

from course_utils.autograd import Value
from course_utils.validation import CourseInputError, check_choice, check_int

COLOURS = {"unknown": "#eeeeee", "known": "#ffffff", "forward": "#ffd27f", "backward": "#9fd0ff", "edge": "#555555"}
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
    return "?" if x is None else f"{x:.4g}"


class GraphPicture:
    """The boxes and arrows of one graph on a matplotlib Axes; ``update`` changes only texts and colours."""

    box_width, box_height = 0.64, 0.62  # in layers and rows

    def __init__(self, root: Value, ax, *, fontsize: float | None = None):
        from matplotlib.patches import FancyBboxPatch

        self.nodes = _check_root(root)
        self.ax = ax
        self.positions = layered_layout(self.nodes)
        w, h = self.box_width, self.box_height
        style = {"ha": "center", "va": "center", "fontsize": fontsize, "family": "monospace"}
        self.boxes = [ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.08",
                                                  ec="black", zorder=2)) for x, y in self.positions]
        self.texts = [ax.text(x, y, "", zorder=3, **style) for x, y in self.positions]
        index = {id(node): i for i, node in enumerate(self.nodes)}
        self.edges = []  # (parent index, child index, arrow)
        for child, node in enumerate(self.nodes):
            (x1, y1) = self.positions[child]
            for parent in (index[id(p)] for p in node.parents):
                (x0, y0) = self.positions[parent]
                start, end = (x0 + w / 2, y0), (x1 - w / 2, y1)
                arrow = ax.annotate("", xy=end, xytext=start, zorder=1, arrowprops={
                    "arrowstyle": "-|>,head_width=0.3,head_length=0.6", "color": COLOURS["edge"],
                    "lw": 1.2, "shrinkA": 0, "shrinkB": 0})
                ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, node.op, zorder=2, color="#7a1f00",
                        fontweight="bold", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"}, **style)
                self.edges.append((parent, child, arrow))
        xs, ys = zip(*self.positions)
        ax.set_xlim(min(xs) - w / 2 - 0.05, max(xs) + w / 2 + 0.05)
        ax.set_ylim(min(ys) - h / 2 - 0.05, max(ys) + h / 2 + 0.05)
        ax.axis("off")
        self.update()

    def update(self, values=None, grads=None, *, highlight=None, phase: str = "forward") -> None:
        """Show ``values``/``grads`` (one per node, ``None`` = not computed yet; default: the nodes' own).

        ``highlight`` (a node index or a ``Value``) is the node being computed; it and its incoming
        arrows are coloured by ``phase``: "forward" (orange) or "backward" (blue).
        """
        n = len(self.nodes)
        values = [node.data for node in self.nodes] if values is None else list(values)
        grads = [node.grad for node in self.nodes] if grads is None else list(grads)
        if len(values) != n or len(grads) != n:
            raise CourseInputError(f"need one value and one grad per node ({n}), got {len(values)} and {len(grads)}")
        check_choice("phase", phase, PHASES)
        current = self._node_index(highlight)
        for i, (node, box, text) in enumerate(zip(self.nodes, self.boxes, self.texts)):
            text.set_text(f"{node_title(node)}\ndata {_number(values[i])}\ngrad {_number(grads[i])}")
            colour = phase if i == current else ("unknown" if values[i] is None else "known")
            box.set_facecolor(COLOURS[colour])
            box.set_linewidth(2.5 if i == current else 1.0)
        for parent, child, arrow in self.edges:
            on = child == current
            arrow.arrow_patch.set_color(COLOURS["backward" if phase == "backward" else "forward"] if on else COLOURS["edge"])
            arrow.arrow_patch.set_linewidth(3.0 if on else 1.2)

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
