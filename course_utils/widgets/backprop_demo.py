"""Widget: step through the forward pass, then the backward pass, of L = c(a + 2b) on its graph.

Step 0 shows the inputs. Each forward step computes one node's value and its local
derivatives; each backward step completes one node's gradient with the chain rule,
∂L/∂node = Σ over the nodes that use it of (their gradient × the local derivative).
"""

from __future__ import annotations

import math

import ipywidgets as widgets
from matplotlib.figure import Figure

from course_utils.lecture import lecture_scale
from course_utils.models.basics.autograd import Value, lecture_graph
from course_utils.widgets.graph_drawing import COLOURS, GraphPicture
from course_utils.validation import CourseInputError, check_int
from course_utils.widgets.widget_kit import PNG_DPI, Demo


def parse_number(name: str, text: str) -> float:
    """The number typed in a text field, or a ``CourseInputError`` that says what is wrong."""
    try:
        x = float(str(text).strip())
    except ValueError:
        raise CourseInputError(f"{name} must be a number, got {text!r}") from None
    if not math.isfinite(x):
        raise CourseInputError(f"{name} must be a finite number, got {text!r}")
    return x


class Walkthrough:
    """The forward-then-backward schedule of one graph: what is known after each step."""

    def __init__(self, root: Value):
        self.root = root
        self.nodes = root.topological_order()
        self.forward = [i for i, node in enumerate(self.nodes) if node.parents]
        self.backward = list(reversed(range(len(self.nodes))))
        self.steps = 1 + len(self.forward) + len(self.backward)  # step 0 shows the inputs
        root.backward()

    def state(self, step: int) -> tuple[list, list, int | None, str]:
        """(values, grads, current node, phase) after ``step``; ``None`` marks what is not known yet."""
        step = check_int("step", step, minimum=0, maximum=self.steps - 1)
        done = set(self.forward[:step]) | {i for i, node in enumerate(self.nodes) if not node.parents}
        values = [node.data if i in done else None for i, node in enumerate(self.nodes)]
        if step <= len(self.forward):
            current = self.forward[step - 1] if step else None
            return values, [None] * len(self.nodes), current, "forward"
        finished = self.backward[: step - len(self.forward)]
        grads = [node.grad if i in finished else None for i, node in enumerate(self.nodes)]
        return values, grads, finished[-1], "backward"

    def explain(self, step: int) -> str:
        """One line for the readout: the value and local derivatives, or the chain-rule product."""
        _, _, current, phase = self.state(step)
        if current is None:
            inputs = ", ".join(sorted(f"{n.label} = {n.data:g}" for n in self.nodes if not n.parents))
            return f"Inputs: {inputs}. Move the step slider to run the forward pass."
        node = self.nodes[current]
        if phase == "forward":
            locals_ = ", ".join(f"∂{node.label}/∂{p.label} = {g:g}" for p, g in zip(node.parents, node.local_grads))
            return f"Forward: {node.label} = {node.formula()} = {node.data:g} | local derivatives: {locals_}"
        if node is self.root:
            return f"Backward: ∂{node.label}/∂{node.label} = 1, the start of the backward pass"
        uses = [(user, g) for user in self.nodes for p, g in zip(user.parents, user.local_grads) if p is node]
        L = self.root.label
        names = " + ".join(f"∂{L}/∂{u.label}·∂{u.label}/∂{node.label}" for u, _ in uses)
        numbers = " + ".join(f"({u.grad:g})·({g:g})" for u, g in uses)
        return f"Backward: ∂{L}/∂{node.label} = {names} = {numbers} = {node.grad:g}"


class BackpropDemo(Demo):
    """Type a, b, c; move the step slider through the forward and the backward pass."""

    def __init__(self, a: float = 3.0, b: float = 1.0, c: float = -2.0):
        self.current, self.phase = None, "forward"  # the node shown now and its pass (legends)
        scale = lecture_scale()  # larger in lecture mode
        self.figure = Figure(figsize=(7.2 * scale, 3.2 * scale))
        self.plot_height = f"{round(3.2 * scale * PNG_DPI) + 12}px"
        axes = self.figure.add_axes((0.01, 0.01, 0.98, 0.98))
        larger = 1.25 if scale > 1 else 1.0  # on a projector the boxes' text is shown at 80 % of its size
        self.picture = GraphPicture(lecture_graph(a, b, c), axes, fontsize=12 * scale * larger)
        steps = Walkthrough(lecture_graph(a, b, c)).steps
        text = {"continuous_update": False, "layout": widgets.Layout(width="90px")}
        controls = {
            "a": widgets.Text(value=f"{a:g}", description="a", **text),
            "b": widgets.Text(value=f"{b:g}", description="b", **text),
            "c": widgets.Text(value=f"{c:g}", description="c", **text),
            "step": widgets.IntSlider(value=0, min=0, max=steps - 1, description="step"),
        }
        super().__init__(controls, title="L = c(a + 2b): forward, then backward. Each box: value, then ∇ = ∂L/∂node")

    def legends(self) -> list[dict[str, str]]:
        """The phase of the node shown now: orange in the forward pass, blue in the backward pass."""
        if self.current is None:
            return []
        meaning = {"forward": "forward pass: the node being computed",
                   "backward": "backward pass: the node whose gradient is completed"}[self.phase]  # fmt: skip
        return [{meaning: COLOURS[f"{self.phase}_edge"]}]

    def draw(self, a: str, b: str, c: str, step: int) -> Figure:
        walk = Walkthrough(lecture_graph(*(parse_number(n, t) for n, t in (("a", a), ("b", b), ("c", c)))))
        values, grads, current, phase = walk.state(step)
        self.current, self.phase = current, phase
        self.picture.update(values, grads, highlight=current, phase=phase)
        self.show_readout(walk.explain(step))
        return self.figure
