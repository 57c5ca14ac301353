"""The beam search tree: the nodes a traced search drew, where each goes, and the Pillow painter of the picture.

``tree_nodes`` turns a ``generation.traced_beam_search`` trace into nodes (running, pruned, finished, dropped);
``Layout`` places them one column per step, each node near its parent; ``TreePainter`` paints them (Pillow: matplotlib
text is slow). ``beam_demo`` is the widget around it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from course_utils.models import generation as g
from course_utils.widgets import palette
from course_utils.widgets.painting import pillow_font, text_scale

MAX_WIDTH = 8  # the widest beam the widget offers: the picture has room for 2k rows
ALL_BRANCHES_VOCAB = 8  # a model with at most this many tokens has all its branches drawn, not only the 2k
IDLE = -1e8  # totals below this are beam_search's idle copies, not hypotheses
MIN_COMPACT_WIDTH_EM = 24  # a compact tree's canvas is at least this many text heights wide
COMPACT_WIDTH_PX = 740  # a wider compact tree is shown through a window of steps (a 1280 × 720 projector: 750 px)
RUNNING, FINISHED, CUT, BEST = palette.MODEL, palette.RIGHT, palette.MUTED, palette.SECOND
# The colour key: (colour, text, line width, dashed). A pruned branch is dashed as well as muted: never grey alone.
KEY = ((RUNNING, "running beam", 3, False), (FINISHED, "finished, kept (#rank, score)", 3, False),
       (CUT, "pruned / dropped", 2, True), (BEST, "the winner's path", 5, False))  # fmt: skip


def dashed_line(pen: ImageDraw.ImageDraw, start: tuple[float, float], end: tuple[float, float], fill, width: int,
                dash: int) -> None:  # fmt: skip
    """A straight line from ``start`` to ``end`` in dashes of ``dash`` pixels with gaps as long."""
    length = math.dist(start, end)
    steps = max(1, int(length // dash))
    for k in range(0, steps, 2):
        a, b = k / steps, min(1.0, (k + 1) / steps)
        pen.line([(start[0] + a * (end[0] - start[0]), start[1] + a * (end[1] - start[1])),
                  (start[0] + b * (end[0] - start[0]), start[1] + b * (end[1] - start[1]))], fill=fill, width=width)  # fmt: skip


@dataclass(frozen=True)
class Node:
    """One drawn node: the word chosen at ``step`` (1-based) after ``ids[:-1]``, and what became of it.

    ``status``: "running" (a next beam), "finished" (a complete hypothesis the search kept: ``rank`` 1 is the
    winner, ``score`` its normalised score), "dropped" (it ended, but was not kept), "pruned" (not among the
    best k). ``parent``: the index of its parent in the search's node list (-1: the root, the prompt).
    """

    step: int
    ids: tuple[int, ...]
    word: str
    total: float  # summed log-probabilities of ids (nats)
    status: str
    parent: int
    score: float | None = None
    rank: int | None = None
    best: bool = False  # on the winner's path

    @property
    def prob(self) -> float:
        return math.exp(self.total)

    @property
    def greyed(self) -> bool:
        """Drawn muted and dashed: a pruned branch or a dropped hypothesis."""
        return self.status in ("pruned", "dropped")


@dataclass(frozen=True)
class Hypothesis:
    """A finished hypothesis the search kept, as the readout ranks it."""

    words: tuple[str, ...]  # generated, </s> included when produced
    logprob: float
    score: float
    verdict: str = ""  # the oracle's, for the course model


@dataclass
class Search:
    """One beam search, traced and turned into nodes: everything the picture and the readout need."""

    tree: bool
    prompt: tuple[str, ...]
    width: int
    normalisation: str
    nodes: list[Node]
    steps: int
    winner: tuple[str, ...]
    winner_logprob: float
    hypotheses: list[Hypothesis]
    layout: dict = field(default_factory=dict)  # painter px -> Layout, made on first paint (compact: its windows too)


def unseen_children(model, prefix: list[int], step: g.BeamStep, parent: int, seen: set[int]) -> list[tuple[int, float]]:
    """The (token, total) continuations of beam ``parent`` with probability > 0 that are not among the 2k."""
    logprobs = g.next_logprobs(model, prefix + step.beams[parent])  # (V,)
    base = step.totals[parent]
    return [(token, base + float(lp)) for token, lp in enumerate(logprobs.tolist())
            if math.isfinite(lp) and token not in seen]  # fmt: skip


def tree_nodes(model, prefix: list[int], trace: list[g.BeamStep], decode, kept: dict, winner: tuple[int, ...],
               all_branches: bool) -> list[Node]:  # fmt: skip
    """The trace as nodes, step by step; ``kept`` maps each kept hypothesis's ids to (rank, score)."""
    nodes: list[Node] = []
    beam_node = {(): -1}  # ids of a running beam -> its node
    for t, step in enumerate(trace, start=1):
        found: list[tuple[int, int, float, str]] = [(c.parent, c.token, c.total, c.status) for c in step.candidates]
        if all_branches:
            for parent in step.live:
                seen = {c.token for c in step.candidates if c.parent == parent}
                unseen = unseen_children(model, prefix, step, parent, seen)
                found += [(parent, token, total, "pruned") for token, total in unseen]
        next_beams = {}
        for parent, token, total, status in found:
            ids = (*step.beams[parent], token)
            rank, score = kept.get(ids, (None, None))
            if status in ("finished", "dropped"):
                status = "finished" if rank is not None else "dropped"
            node = Node(t, ids, decode([token])[0], total, status, beam_node[tuple(step.beams[parent])], score, rank,
                        best=winner[:len(ids)] == ids)  # fmt: skip
            if status == "running":
                next_beams[ids] = len(nodes)
            nodes.append(node)
        beam_node = next_beams
    return nodes


@dataclass(frozen=True)
class Layout:
    """Where a search's nodes go: font sizes, each node's label lines and position, the root's."""

    size: int  # the word's font size (px); values use a smaller one
    labels: list[tuple[str, str]]  # per node: (word line, value line)
    boxes: list[tuple[int, int, int, int]]  # per node: the label's box (left, top, right, bottom)
    root: tuple[str, tuple[int, int, int, int]]  # the prompt's label and box
    canvas: tuple[int, int] | None = None  # a compact painter's picture size for this tree (None: the fixed canvas)
    key_lines: tuple[tuple[int, ...], ...] = ()  # a compact painter's key: the KEY entries of each line


class TreePainter:
    """Paints a search as a left-to-right tree on a fixed canvas; lecture mode makes everything larger.

    ``compact`` (lecture mode, a projector): no fixed canvas but one sized to each tree, every text at the text size
    (values too), no title (the readout says it), the key wrapped to the tree's width: the slide's tree is about
    560 × 440 px at 22 px text, where the fixed canvas is 1672 × 918."""

    def __init__(self, *, compact: bool = False):
        scale = text_scale()  # larger in lecture mode
        self.px = round(14 * scale)
        self.compact = compact
        self.value_ratio = 1.0 if compact else 0.8  # a node's value line, against its word
        self.font, self.bold = pillow_font(self.px), pillow_font(self.px, "bold")
        self.width = round(76 * self.px)
        self.top = round(2.4 * self.px)  # below the title
        self.grid_h = round(2 * MAX_WIDTH * 2.3 * self.px)
        self.key_top = self.top + self.grid_h + self.px // 2
        self.height = self.key_top + round(2 * self.px)
        if compact:  # the canvas is each tree's (Layout.canvas)
            self.top, self.key_top = self.px // 2, None
            return
        self.static = Image.new("RGBA", (self.width, self.height), "white")
        self._key(ImageDraw.Draw(self.static))

    def _key_entry_px(self, text: str) -> int:
        return round(2.4 * self.px + self.font.getlength(text) + 1.5 * self.px)

    def _key(self, pen: ImageDraw.ImageDraw, lines: tuple[tuple[int, ...], ...] = (tuple(range(len(KEY))),),
             top: int | None = None) -> None:  # fmt: skip
        """What the colours mean, along the bottom (on ``lines``, each the KEY entries it holds)."""
        top = self.key_top if top is None else top
        for row, entries in enumerate(lines):
            x, y = self.px // 2, top + self.px + round(1.5 * self.px) * row
            for colour, text, thick, dashed in (KEY[i] for i in entries):
                if dashed:
                    dashed_line(pen, (x, y), (x + 2 * self.px, y), colour, thick, max(4, self.px // 3))
                else:
                    pen.line((x, y, x + 2 * self.px, y), fill=colour, width=thick)
                x += round(2.4 * self.px)
                pen.text((x, y), text, fill="black", font=self.font, anchor="lm")
                x += round(self.font.getlength(text) + 1.5 * self.px)

    def _key_lines(self, width: int) -> tuple[tuple[int, ...], ...]:
        """The KEY entries wrapped onto lines of at most ``width`` pixels."""
        lines: list[list[int]] = [[]]
        used = self.px // 2
        for i, (_, text, _, _) in enumerate(KEY):
            size = self._key_entry_px(text)
            if lines[-1] and used + size > width:
                lines.append([])
                used = self.px // 2
            lines[-1].append(i)
            used += size
        return tuple(tuple(line) for line in lines)

    # -- layout, once per search
    def layout(self, search: Search, root: str) -> Layout:
        """The positions of ``search``'s nodes, at the largest font (up to 1.6 px: a small tree is drawn large)
        at which all columns and rows fit."""
        if self.px not in search.layout and self.compact:
            search.layout[self.px] = self._compact_layout(search, root)
        if self.px not in search.layout:
            rows = max(sum(node.step == step for node in search.nodes) for step in range(1, search.steps + 1))
            size = min(round(1.6 * self.px), math.floor(self.grid_h / rows / 2.3))
            while True:
                columns = self._columns(search, root, size)
                need = sum(w for w, _ in columns.values()) + round(2.6 * size) * (len(columns) - 1) + self.px
                if need <= self.width or size <= 0.55 * self.px:
                    break
                size = max(round(0.55 * self.px), math.floor(size * self.width / need))
            search.layout[self.px] = self._place(search, root, size, columns)
        return search.layout[self.px]

    def _compact_layout(self, search: Search, root: str) -> Layout:
        """Every text at the text size, rows ``2.4`` text heights apart; the canvas as large as the tree and its key."""
        size = self.px
        columns = self._columns(search, root, size)
        rows = max(len(lines) for _, lines in columns.values())
        pitch = round(2.4 * size)
        placed = self._place(search, root, size, columns, top=self.top, pitch=pitch)
        right = max(box[2] for box in [placed.root[1], *placed.boxes]) + self.px // 2
        width = max(right, round(MIN_COMPACT_WIDTH_EM * self.px))
        key_lines = self._key_lines(width)
        height = self.top + rows * pitch + round((0.7 + 1.5 * len(key_lines)) * self.px)
        return Layout(placed.size, placed.labels, placed.boxes, placed.root, (width, height), key_lines)

    def _columns(self, search: Search, root: str, size: int) -> dict[int, tuple[int, list[tuple[str, str]]]]:
        """Column -> (its width in pixels, the label lines of its nodes); column 0 is the root."""
        word, value = pillow_font(size), pillow_font(round(self.value_ratio * size))
        labels = {0: [(root, "")]}
        for node in search.nodes:
            labels.setdefault(node.step, []).append(node_label(node, search.tree))
        return {col: (round(max(max(word.getlength(a), value.getlength(b)) for a, b in lines)) + 6, lines)
                for col, lines in sorted(labels.items())}  # fmt: skip

    def _place(self, search: Search, root: str, size: int, columns, *, top: float | None = None,
               pitch: float | None = None) -> Layout:  # fmt: skip
        """The nodes' boxes: each column after the last, each node near its parent's row; ``top`` and ``pitch`` (the
        rows' spacing) default to the fixed canvas's, the rows centred in its grid."""
        gap = round(2.6 * size)
        lefts, x = {}, self.px // 2
        for col, (width, _) in columns.items():
            lefts[col], x = x, x + width + gap
        rows = max(len(lines) for _, lines in columns.values())
        if pitch is None:
            pitch = min(3.2 * size, self.grid_h / rows)
        centre = {-1: (rows - 1) / 2}  # node -> its row (fractional)
        by_step: dict[int, list[int]] = {}
        for i, node in enumerate(search.nodes):
            by_step.setdefault(node.step, []).append(i)
        for indices in by_step.values():
            indices.sort(key=lambda i: (centre[search.nodes[i].parent], -search.nodes[i].total))
            wanted = _around_parents([centre[search.nodes[i].parent] for i in indices])
            centre.update(zip(indices, spread(wanted, rows)))
        half = round(1.05 * size)
        if top is None:
            top = self.top + (self.grid_h - rows * pitch) / 2

        def box(col: int, row: float, width: int) -> tuple[int, int, int, int]:
            middle = round(top + (row + 0.5) * pitch)
            return lefts[col], middle - half, lefts[col] + width, middle + half

        boxes, labels = [], []
        for i, node in enumerate(search.nodes):
            labels.append(node_label(node, search.tree))
            boxes.append(box(node.step, centre[i], columns[node.step][0]))
        return Layout(size, labels, boxes, (root, box(0, centre[-1], columns[0][0])))

    # -- a compact window, once per search and first step
    def window(self, search: Search, root: str, shown: int) -> tuple[int, int, Layout]:
        """The first and last steps a compact painter draws when the tree is shown up to step ``shown``, and the layout.

        A tree wider than ``COMPACT_WIDTH_PX`` (a course model's: up to 12 steps, about 1900 px at 22 px text) is shown
        through a window on a canvas ``COMPACT_WIDTH_PX`` wide: the most steps that fit, after a column of their
        parents ("… word"), up to ``shown`` (the step slider moves the window), or once every step is shown, up to the
        winner's last, so that its path shows. Otherwise: steps 1 to ``shown`` of the whole tree."""
        full = self.layout(search, root)
        if not self.compact or full.canvas[0] <= COMPACT_WIDTH_PX:
            return 1, shown, full
        if (self.px, "window", shown) not in search.layout:
            last = shown
            if shown >= search.steps:
                last = max((node.step for node in search.nodes if node.best), default=shown)
            lefts = {node.step: box[0] for node, box in zip(search.nodes, full.boxes)}  # column -> its left edge
            right = max(box[2] for node, box in zip(search.nodes, full.boxes) if node.step == last)
            gap = round(2.6 * full.size)

            def width(start: int) -> int:  # the picture showing steps start..last
                return self.px + self._parents_width(search, root, start) + gap + right - lefts[start]

            first = next((start for start in range(1, last + 1) if width(start) <= COMPACT_WIDTH_PX), last)
            if (self.px, first) not in search.layout:
                search.layout[(self.px, first)] = self._windowed(search, root, full, first, lefts[first], gap)
            search.layout[(self.px, "window", shown)] = first, last
        first, last = search.layout[(self.px, "window", shown)]
        return first, last, search.layout[(self.px, first)]

    def _parents_width(self, search: Search, root: str, first: int) -> int:
        """The width of the column before step ``first``: the root's, or its running beams' "… word" labels."""
        word, value = pillow_font(self.px), pillow_font(round(self.value_ratio * self.px))
        if first == 1:
            return round(word.getlength(root)) + 6
        labels = [_parent_label(node, search.tree) for node in search.nodes if node.step == first - 1
                  and node.status == "running"]  # fmt: skip
        return round(max(max(word.getlength(a), value.getlength(b)) for a, b in labels)) + 6

    def _windowed(self, search: Search, root: str, full: Layout, first: int, left: int, gap: int) -> Layout:
        """``full`` moved left so that step ``first`` follows the column of its parents (step 1: the root, not moved),
        on the fixed compact width."""
        parents_w = self._parents_width(search, root, first)
        shift = 0 if first == 1 else self.px // 2 + parents_w + gap - left
        labels, boxes = list(full.labels), list(full.boxes)
        for i, node in enumerate(search.nodes if first > 1 else ()):
            (x0, top, x1, bottom) = full.boxes[i]
            if node.step >= first:
                boxes[i] = (x0 + shift, top, x1 + shift, bottom)
            elif node.step == first - 1 and node.status == "running":
                labels[i] = _parent_label(node, search.tree)
                boxes[i] = (self.px // 2, top, self.px // 2 + parents_w, bottom)
        key_lines = self._key_lines(COMPACT_WIDTH_PX)
        height = full.canvas[1] + round(1.5 * self.px) * (len(key_lines) - len(full.key_lines))
        return Layout(full.size, labels, boxes, full.root, (COMPACT_WIDTH_PX, height), key_lines)

    # -- painting, once per redraw
    def paint(self, search: Search, root: str, shown: int, title: str) -> Image.Image:
        """The tree up to step ``shown``; the winner's path once every step is shown (a compact painter's window:
        ``window``)."""
        first, last, layout = self.window(search, root, shown)
        if self.compact:  # no title: the readout says what the tree is
            picture = Image.new("RGBA", layout.canvas, "white")
            pen = ImageDraw.Draw(picture)
            key_h = round((0.7 + 1.5 * len(layout.key_lines)) * self.px)
            self._key(pen, layout.key_lines, top=layout.canvas[1] - key_h)
        else:
            picture = self.static.copy()
            pen = ImageDraw.Draw(picture)
            pen.text((self.px // 2, self.px // 2), title, fill="black", font=self.bold, anchor="lt")
        visible = [i for i, node in enumerate(search.nodes) if first <= node.step <= last]
        parents = sorted({search.nodes[i].parent for i in visible if search.nodes[i].step == first and first > 1})
        highlight = shown >= search.steps
        for i in sorted(visible, key=lambda i: (search.nodes[i].best and highlight, not search.nodes[i].greyed)):
            self._edge(pen, layout, search.nodes[i], layout.boxes[i], highlight)
        word_font, bold, value_font = (
            pillow_font(layout.size),
            pillow_font(layout.size, "bold"),
            pillow_font(round(self.value_ratio * layout.size)),
        )
        if first == 1:
            root_text, root_box = layout.root
            pen.text((root_box[0], (root_box[1] + root_box[3]) // 2), root_text, fill="black", font=bold, anchor="lm")
        for i in parents + visible:
            node, (first_line, second), edges = search.nodes[i], layout.labels[i], layout.boxes[i]
            colour = {"running": RUNNING, "finished": FINISHED}.get(node.status, CUT)
            if node.status in ("finished", "dropped"):
                pen.rectangle((edges[0] - 3, edges[1] - 1, edges[2] + 1, edges[3] + 1), fill="white", outline=colour,
                              width=2 if node.status == "finished" else 1)  # fmt: skip
            middle = (edges[1] + edges[3]) // 2
            pen.text((edges[0], middle), first_line, fill=colour, font=bold if node.best and highlight else word_font,
                     anchor="ls")  # fmt: skip
            pen.text((edges[0], middle + 2), second, fill=colour, font=value_font, anchor="lt")
        return picture

    def _edge(self, pen: ImageDraw.ImageDraw, layout: Layout, node: Node, box, highlight: bool) -> None:
        """The line from ``node``'s parent (or the root) to ``node``."""
        start = layout.root[1] if node.parent < 0 else layout.boxes[node.parent]
        ends = ((start[2] + 4, (start[1] + start[3]) // 2), (box[0] - 5, (box[1] + box[3]) // 2))
        if node.best and highlight:
            pen.line(ends, fill=BEST, width=5)
        elif node.greyed:
            dashed_line(pen, *ends, CUT, 2, max(4, self.px // 3))
        else:
            pen.line(ends, fill=FINISHED if node.status == "finished" else RUNNING, width=2)


def node_label(node: Node, tree: bool) -> tuple[str, str]:
    """A node's two lines: its word (with the rank of a kept hypothesis), then its p or log P (and score)."""
    value = probability_text(node.prob) if tree else f"{node.total:.2f}"
    if node.rank is None:
        return node.word, value
    return f"#{node.rank} {node.word}", f"{value} s={node.score:.2f}"


def _parent_label(node: Node, tree: bool) -> tuple[str, str]:
    """A running beam in the column before a compact window's first step: "… word" and its value."""
    word, value = node_label(node, tree)
    return f"… {word}", value


def probability_text(p: float) -> str:
    """.28, .05, .003: the slide's style."""
    text = f"{p:.2f}" if p >= 0.01 else f"{p:.1g}"
    return text[1:] if text.startswith("0.") else text


def _around_parents(parents: list[float]) -> list[float]:
    """Wanted rows: the children of each parent centred on its row (the list is grouped by parent)."""
    wanted, i = [], 0
    while i < len(parents):
        j = i
        while j < len(parents) and parents[j] == parents[i]:
            j += 1
        wanted += [parents[i] + k - (j - i - 1) / 2 for k in range(j - i)]
        i = j
    return wanted


def spread(wanted: list[float], rows: int) -> list[float]:
    """Rows as close to ``wanted`` (ascending) as possible, one apart, within 0..rows-1."""
    placed: list[float] = []
    for row in wanted:  # top to bottom: at least one below the previous
        placed.append(max(row, placed[-1] + 1) if placed else max(row, 0.0))
    limit = rows - 1.0
    for i in range(len(placed) - 1, -1, -1):  # bottom to top: back inside the grid
        placed[i] = min(placed[i], limit)
        limit = placed[i] - 1
    return placed
