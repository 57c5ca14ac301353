"""Graph drawing with matplotlib alone: the layout, the boxes' texts and colours, DOT text, bad input."""

import os
import random
import subprocess
import sys

import matplotlib
import pytest
from matplotlib.figure import Figure

from course_utils.models.basics import autograd
from course_utils.models.basics.autograd import Value
from course_utils.widgets.graph_drawing import COLOURS, GraphPicture, draw_graph, layered_layout, node_title, to_dot
from course_utils.validation import CourseInputError
from course_utils.widgets.widget_kit import figure_png

matplotlib.use("Agg")


def lecture_graph():
    L = autograd.lecture_graph()
    L.backward()
    return L


def random_graph(seed):
    rng = random.Random(seed)
    nodes = [Value(rng.uniform(-1, 1), f"x{i}") for i in range(rng.randint(1, 4))]
    for _ in range(rng.randint(1, 12)):
        u, v = rng.choice(nodes), rng.choice(nodes)
        nodes.append(rng.choice([u + v, u * v, u.tanh(), u - 1.0]))
    return sum(nodes[-3:], Value(0.0, "zero"))


def positions_by_label(root):
    nodes = root.topological_order()
    return {node.label: xy for node, xy in zip(nodes, layered_layout(nodes))}


def test_lecture_graph_layout_flows_left_to_right_and_inputs_sit_next_to_their_user():
    xy = positions_by_label(lecture_graph())
    assert [xy[k][0] for k in "bdeL"] == [0, 1, 2, 3]  # the chain b → d → e → L
    assert xy["a"][0] == 1 and xy["c"][0] == 2  # each input one layer before its first user
    assert len(set(xy.values())) == 6


@pytest.mark.parametrize("seed", range(20))
def test_every_edge_points_right_and_no_two_nodes_overlap(seed):
    nodes = random_graph(seed).topological_order()
    positions = layered_layout(nodes)
    where = {id(n): p for n, p in zip(nodes, positions)}
    assert len(set(positions)) == len(nodes)
    for node in nodes:
        assert all(where[id(p)][0] < where[id(node)][0] for p in node.parents)


def draw_on_new_axes(root):
    figure = Figure(figsize=(8, 3))
    return figure, GraphPicture(root, figure.add_axes((0, 0, 1, 1)))


def box_texts(picture):
    return {
        n.label: f"{node_title(n)}|{v.get_text()}|{g.get_text()}"
        for n, v, g in zip(picture.nodes, picture.values, picture.grads)
    }


def rgb(colour):
    return matplotlib.colors.to_rgb(colour)


def test_boxes_show_formula_value_and_gradient():
    _, picture = draw_on_new_axes(lecture_graph())
    texts = box_texts(picture)
    assert texts["e"] == "e = a + d|5|∇ -2"
    assert texts["b"] == "b|1|∇ -4"
    assert texts["L"] == "L = c * e|-10|∇ 1"
    assert len(picture.edges) == 5


def test_update_shows_unknowns_and_colours_the_current_node_and_its_arrows():
    L = lecture_graph()
    figure, picture = draw_on_new_axes(L)
    plain = figure_png(figure)
    assert not picture.highlight.get_visible() and not any(a.get_visible() for _, _, a in picture.edges)
    n = len(picture.nodes)
    picture.update([None] * n, [None] * n, highlight=L, phase="forward")
    assert all(text.endswith("|?|∇ ?") for text in box_texts(picture).values())
    assert picture.highlight.get_visible() and rgb(picture.highlight.get_facecolor()) == rgb(COLOURS["forward"])
    assert picture.highlight.get_x() + picture.box_width / 2 == picture.positions[-1][0]
    for parent, child, arrow in picture.edges:  # forward: the arrows into L
        assert arrow.get_visible() == (child == n - 1)
    assert figure_png(figure) != plain

    e = picture.nodes.index(L.parents[1])
    picture.update(highlight=e, phase="backward")
    assert rgb(picture.highlight.get_facecolor()) == rgb(COLOURS["backward"])
    for parent, child, arrow in picture.edges:  # backward: the arrow from e to its user L
        assert arrow.get_visible() == (parent == e)
        assert not arrow.get_visible() or rgb(arrow.get_edgecolor()) == rgb(COLOURS["backward_edge"])


def test_the_unchanging_part_is_drawn_once_per_output_size():
    figure, picture = draw_on_new_axes(lecture_graph())
    snapshot = picture.snapshot
    first = figure_png(figure, dpi=80)
    pixels = snapshot._pixels
    picture.update(highlight=2)
    assert figure_png(figure, dpi=80) != first and snapshot._pixels is pixels  # reused
    figure_png(figure, dpi=50)
    assert snapshot._pixels is not pixels and snapshot._pixels.shape[:2] == (150, 400)  # redrawn at the new size


def test_vector_output_draws_the_titles_as_text():
    import io

    figure, _ = draw_on_new_axes(lecture_graph())
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        figure.savefig(buffer, format="svg")
    assert "e = a + d" in buffer.getvalue() and "∇ -2" in buffer.getvalue()


def test_drawing_needs_no_graphviz_binary():
    """Draw in a fresh interpreter whose PATH has no `dot`, and check graphviz was never imported."""
    script = (
        "import shutil, sys, matplotlib; matplotlib.use('Agg');"
        "assert shutil.which('dot') is None;"
        "from course_utils.models.basics.autograd import Value; from course_utils.widgets.graph_drawing import draw_graph;"
        "x = Value(2.0, 'x'); L = (x * x).named('L'); L.backward();"
        "draw_graph(L).ax.figure.savefig(sys.argv[1]);"
        "assert 'graphviz' not in sys.modules"
    )
    env = {**os.environ, "PATH": os.path.dirname(sys.executable)}
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"graph_{os.getpid()}.png")
    subprocess.run([sys.executable, "-c", script, out], check=True, env=env)
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    os.remove(out)


def test_draw_graph_makes_its_own_figure_and_highlights():
    import matplotlib.pyplot as plt

    picture = draw_graph(lecture_graph(), highlight=3, phase="forward")
    assert picture.highlight.get_visible() and rgb(picture.highlight.get_facecolor()) == rgb(COLOURS["forward"])
    plt.close(picture.ax.figure)


def test_to_dot_lists_every_node_and_edge():
    dot = to_dot(lecture_graph())
    assert dot.startswith("digraph computation {") and dot.endswith("}")
    assert dot.count("->") == 5 and dot.count("[label=") == 11
    assert 'label="e = a + d\\ndata 5\\ngrad -2"' in dot
    assert '-> n3 [label="2*"]' in dot
    assert '\\"' in to_dot(Value(1.0, 'say "hi"'))  # quotes are escaped


BAD = {
    "root is not a Value": lambda p, L: GraphPicture(3.0, p.ax),
    "draw a number": lambda p, L: draw_graph("L"),
    "dot of a number": lambda p, L: to_dot(None),
    "too few values": lambda p, L: p.update([1.0], [1.0]),
    "unknown phase": lambda p, L: p.update(phase="sideways"),
    "highlight out of range": lambda p, L: p.update(highlight=99),
    "highlight not an int": lambda p, L: p.update(highlight="e"),
    "highlight from another graph": lambda p, L: p.update(highlight=Value(1.0)),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_raises_a_clear_error(case):
    L = lecture_graph()
    _, picture = draw_on_new_axes(L)
    with pytest.raises(CourseInputError):
        BAD[case](picture, L)
