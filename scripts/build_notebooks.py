"""Build the notebooks from their sources in ``notebooks/src/*.py`` and run them.

A source is a Python file in the "percent" format: ``# %%`` starts a code cell and
``# %% [markdown]`` a Markdown cell whose lines start with ``# ``. The first code cell of each
notebook is the Colab set-up cell from ``course_utils.colab``. A marker may end with cell tags, as jupytext
writes them: ``# %% tags=["exercise"]`` marks an exercise cell (shipped unfinished, it prints "not finished yet",
and nbval checks that it does: the build adds nbval's ``nbval-check-output`` tag), and
``# %% [markdown] tags=["solution"]`` a solution, which the student edition leaves out.

    python scripts/build_notebooks.py            # build and execute every notebook (full mode)
    python scripts/build_notebooks.py 02         # only notebooks whose name starts with 02
    python scripts/build_notebooks.py --no-run   # build without executing (outputs empty)
    python scripts/build_notebooks.py 04 --prose # the Markdown and the tags into the stored notebook (code unchanged)
    python scripts/build_notebooks.py 04 --layout  # as --prose, and code only laid out anew (ruff format) keeps outputs
    python scripts/build_notebooks.py --student  # only the student edition, from the stored notebooks

Every build also writes the student edition, ``notebooks/student/``: the notebook without its solution cells
(nbconvert's ``TagRemovePreprocessor``) and without outputs, which a student makes by running it. Its Colab badges
open it. ``--student --outputs --out DIR`` writes it with the stored outputs kept, for nbval (``course.sh newest``).

The stored outputs come from one clean top-to-bottom run in full mode. They never keep third-party
JavaScript: an offline bertviz view (``course_utils.widgets.bertviz_offline``, about 350 KB of inlined d3 and
jQuery) is replaced by a one-line note; the reader re-runs the cell to see it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "notebooks" / "src"
NOTEBOOKS = ROOT / "notebooks"
STUDENT = NOTEBOOKS / "student"
sys.path.insert(0, str(ROOT))

from course_utils.colab import setup_cell_source  # noqa: E402

KERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# bertviz_offline.MARKER opens every offline view; the others are d3's, jQuery's and bertviz's own headers.
BERTVIZ_MARKER = "<!-- course bertviz offline -->"
THIRD_PARTY_JS = (BERTVIZ_MARKER, "https://d3js.org", "jQuery JavaScript Library", "jquery.org/license",
                  "Transformer Visualization D3 javascript code")  # fmt: skip
VIEW_NOTE = "(bertviz view: not stored in the file; run this cell to see it.)"


# A marker holds the marker and, optionally, its cells' tags, nothing else: text after one would be dropped.
CELL_MARKER = re.compile(r'# %%(?P<markdown> \[markdown\])?(?: tags=(?P<tags>\[(?:"[\w-]+"(?:, )?)+\]))?')
EXERCISE, SOLUTION = "exercise", "solution"
CELL_TAGS = {EXERCISE: [EXERCISE, "nbval-check-output"], SOLUTION: [SOLUTION]}  # a source's tag -> the cell's tags


def parse_cells(text: str) -> list[nbformat.NotebookNode]:
    """Split a percent-format source into notebook cells; a marker line holds the marker (and its tags) only."""
    cells, kind, tags, lines = [], None, [], []

    def flush():
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(body))
        elif body:
            cells.append(nbformat.v4.new_code_cell(body))
        else:
            return
        if tags:
            cells[-1].metadata["tags"] = [tag for source_tag in tags for tag in CELL_TAGS[source_tag]]

    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("# %%"):
            marker = CELL_MARKER.fullmatch(line.rstrip())
            if marker is None:
                raise ValueError(f"line {number}: text after a cell marker would be lost: {line!r}")
            flush()
            kind, lines = ("markdown" if marker["markdown"] else "code"), []
            tags = json.loads(marker["tags"]) if marker["tags"] else []
            unknown = [tag for tag in tags if tag not in CELL_TAGS]
            if unknown or (EXERCISE in tags and kind != "code") or (SOLUTION in tags and kind != "markdown"):
                raise ValueError(f"line {number}: tags {tags}: an exercise is a code cell, a solution Markdown")
        else:
            lines.append(line)
    flush()
    return cells


def build(source: Path) -> nbformat.NotebookNode:
    cells = parse_cells(source.read_text(encoding="utf-8"))
    first_code = next(i for i, cell in enumerate(cells) if cell.cell_type == "code")
    cells.insert(first_code, nbformat.v4.new_code_cell(setup_cell_source()))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = KERNEL
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.metadata["course"] = {"notebook": source.stem, "edition": "full"}  # the grader reads which notebook
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:03d}"
    return notebook


# A stall, and its cause. nbclient waits for a cell's execute_reply with one asyncio poll of the shell socket, up to
# the cell timeout. While it waits, its Output-widget mimic (nbclient.output_widget) sends a comm_msg back on that
# socket for every output drawn into an Output widget, as the demos' pictures are. jupyter_client's Session.send
# sends through a blocking shadow of the asyncio socket, and that send consumes the socket's edge-triggered wake-up:
# when the reply has just arrived, the poll never hears of it and pyzmq finds it only when the poll times out.
# Notebook 08 sat out the whole cell timeout after QKVDemo's or AttentionDemo's cell in about 1 build in 3 and then
# went on with no error. The fix: after each send, re-read the socket's events through the asyncio socket, which
# wakes a waiting poll. As a safety net, every wait polls in slices of POLL_SLICE_S, so any other missed wake-up
# costs at most a slice, never a cell timeout; messages found that way are reported.
POLL_SLICE_S = 1.0


def wakeful_kernel_manager_class(missed: list):
    """nbclient's kernel manager, with a client whose channels never sleep through a message that has arrived.

    Each message that a wait found only at the end of a ``POLL_SLICE_S`` slice (a wake-up the event loop missed)
    is appended to ``missed`` as ``(channel, message type)``.
    """
    from queue import Empty

    import zmq
    from jupyter_client import AsyncKernelClient, AsyncKernelManager
    from jupyter_client.channels import AsyncZMQSocketChannel
    from traitlets import Type, default

    class WakefulChannel(AsyncZMQSocketChannel):
        name = "?"

        def send(self, msg: dict) -> None:
            super().send(msg)  # through a blocking shadow socket, which may swallow a wake-up ...
            self.socket.get(zmq.EVENTS)  # ... that the asyncio socket, re-reading its events, passes to a waiting poll

        async def get_msg(self, timeout: float | None = None) -> dict:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                step = POLL_SLICE_S if left is None else min(POLL_SLICE_S, left)
                started = time.monotonic()
                if await self.socket.poll(int(step * 1000)):
                    msg = await self._recv()
                    if step > 0 and time.monotonic() - started >= step:
                        missed.append((self.name, msg["msg_type"]))
                    return msg
                if left is not None and left <= step:
                    raise Empty

    def channel(name: str) -> type:
        return type(f"Wakeful{name.title()}Channel", (WakefulChannel,), {"name": name})

    class WakefulClient(AsyncKernelClient):
        shell_channel_class = Type(channel("shell"))
        iopub_channel_class = Type(channel("iopub"))
        stdin_channel_class = Type(channel("stdin"))
        control_channel_class = Type(channel("control"))

    class WakefulKernelManager(AsyncKernelManager):
        @default("client_factory")
        def _wakeful_client(self):
            return WakefulClient

    return WakefulKernelManager


def execute(notebook: nbformat.NotebookNode, workdir: Path, timeout: int) -> None:
    from nbclient import NotebookClient

    os.environ.pop("COURSE_FAST", None)  # stored outputs are from full mode
    missed: list = []
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(workdir)}},
        kernel_manager_class=wakeful_kernel_manager_class(missed),
    )  # fmt: skip
    client.execute()
    if missed:
        print(f"  {len(missed)} kernel message(s) found only by the {POLL_SLICE_S:g} s re-poll after a missed wake-up "
              f"(a missed shell reply would wait out the {timeout} s cell timeout): {missed}", flush=True)  # fmt: skip


def strip_inlined_js(notebook: nbformat.NotebookNode) -> int:
    """Replace each output that carries d3, jQuery or bertviz's JS with ``VIEW_NOTE``; return how many were replaced."""
    replaced = 0
    for cell in notebook.cells:
        for index, output in enumerate(cell.get("outputs", [])):
            values = [value for value in output.get("data", {}).values() if isinstance(value, (str, list))]
            text = "".join("".join(value) if isinstance(value, list) else value for value in values)
            if any(signature in text for signature in THIRD_PARTY_JS):
                cell.outputs[index] = nbformat.v4.new_output(
                    "display_data", data={"text/markdown": VIEW_NOTE, "text/plain": VIEW_NOTE}
                )
                replaced += 1
    return replaced


def same_program(source: str, stored_source: str) -> bool:
    """Whether two code cells are one program laid out twice: the same syntax tree and the same nbval markers."""
    markers = [[line.strip() for line in text.splitlines() if line.strip().startswith("# NBVAL_")]
               for text in (source, stored_source)]  # fmt: skip
    return markers[0] == markers[1] and ast.dump(ast.parse(source)) == ast.dump(ast.parse(stored_source))


def unchanged_code(notebook: nbformat.NotebookNode, stored: nbformat.NotebookNode, *, layout: bool) -> list[int]:
    """The prompts of the code cells whose code changed from ``stored`` (all of them when a cell was added or removed).

    The first code cell, the set-up cell from ``course_utils.colab`` that prints nothing outside Colab, may differ.
    With ``layout``, a cell whose code changed only in its layout (ruff format: the same syntax tree, the same nbval
    markers) counts as unchanged: it runs the same program, so it prints the same outputs.
    """
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    stored_code = [cell.source for cell in stored.cells if cell.cell_type == "code"]
    if len(code) != len(stored_code):
        return list(range(1, len(code) + 1))
    return [prompt for prompt, (new, old) in enumerate(zip(code, stored_code), 1)
            if prompt > 1 and new != old and not (layout and same_program(new, old))]  # fmt: skip


def copy_prose(notebook: nbformat.NotebookNode, stored: nbformat.NotebookNode, *, layout: bool = False) -> int:
    """Give ``notebook``'s code cells the outputs of ``stored``'s, whose code is the same; return how many Markdown
    cells are new or changed. Markdown cells may be changed, added, split or removed, and tags changed; with
    ``layout``, code may be laid out anew (``unchanged_code``).

    Refused (``SystemExit``) when a code cell was changed, added or removed: then the notebook must run again.
    """
    changed = unchanged_code(notebook, stored, layout=layout)
    if changed:
        raise SystemExit(f"the code of cells {changed} changed, not only the prose or the layout: run the notebook")
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    stored_code = [cell for cell in stored.cells if cell.cell_type == "code"]
    for new, old in zip(code, stored_code):
        new.outputs, new.execution_count = old.outputs, old.execution_count
        new.metadata = {**old.metadata, "tags": new.metadata.get("tags", [])}  # its run's timestamps, the new tags
        if not new.metadata["tags"]:
            del new.metadata["tags"]
    notebook.metadata = {**stored.metadata, "course": notebook.metadata["course"]}
    old_markdown = {cell.source for cell in stored.cells if cell.cell_type == "markdown"}
    return sum(cell.cell_type == "markdown" and cell.source not in old_markdown for cell in notebook.cells)


def student_edition(notebook: nbformat.NotebookNode, *, outputs: bool = False) -> nbformat.NotebookNode:
    """``notebook`` without its solution cells and, unless ``outputs``, without outputs (nbconvert's preprocessors)."""
    from nbconvert.preprocessors import ClearOutputPreprocessor, TagRemovePreprocessor

    edition = nbformat.reads(nbformat.writes(notebook), as_version=4)  # a copy
    edition, _ = TagRemovePreprocessor(remove_cell_tags={SOLUTION}, enabled=True).preprocess(edition, {})
    if not outputs:
        clear = ClearOutputPreprocessor(remove_metadata_fields={"collapsed", "scrolled", "execution"})
        edition, _ = clear.preprocess(edition, {})
        edition.metadata.pop("widgets", None)  # the saved widgets' state, for outputs no longer there
    edition.metadata["course"] = {**edition.metadata.get("course", {}), "edition": "student"}
    return edition


def write_student_edition(target: Path, folder: Path = STUDENT, *, outputs: bool = False) -> Path:
    """The student edition of the stored notebook ``target``, written into ``folder`` under the same name."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / target.name
    nbformat.write(student_edition(nbformat.read(target, as_version=4), outputs=outputs), path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefixes", nargs="*", help="only notebooks whose names start with these")
    parser.add_argument("--no-run", action="store_true", help="do not execute; write empty outputs")
    parser.add_argument("--prose", action="store_true", help="only copy the Markdown and tags into the stored notebook")
    parser.add_argument(
        "--layout",
        action="store_true",
        help="like --prose, and code laid out anew (the same syntax tree) keeps its outputs too",
    )
    parser.add_argument("--student", action="store_true", help="only write the student edition of the stored notebooks")
    parser.add_argument("--outputs", action="store_true", help="with --student: keep the stored outputs")
    parser.add_argument("--out", type=Path, default=STUDENT, help="with --student: the folder to write into")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args()
    for source in sorted(SOURCES.glob("*.py")):
        if args.prefixes and not any(source.stem.startswith(p) for p in args.prefixes):
            continue
        target = NOTEBOOKS / f"{source.stem}.ipynb"
        if args.student:
            print(f"wrote {write_student_edition(target, args.out, outputs=args.outputs)}")
            continue
        notebook = build(source)
        if args.prose or args.layout:
            stored = nbformat.read(target, as_version=4)
            changed = copy_prose(notebook, stored, layout=args.layout)
            print(f"{target.relative_to(ROOT)}: {changed} Markdown cell(s) new or changed")
        elif not args.no_run:
            execute(notebook, NOTEBOOKS, args.timeout)
            strip_inlined_js(notebook)
        nbformat.write(notebook, target)
        print(f"wrote {target.relative_to(ROOT)} and {write_student_edition(target).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
