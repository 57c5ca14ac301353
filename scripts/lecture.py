"""Open one notebook's demos for a lecture, live and in lecture mode, in seconds: ``bash course.sh lecture NN``.

    bash course.sh lecture 08                  # prepare, then open it in the default browser
    bash course.sh lecture 08 --no-browser     # prepare, then print the URL only
    bash course.sh lecture 08 --port 8899      # on that port (default: a free one)

It writes a lecture copy of the notebook into ``build/lecture/``: the code cells its widgets need
(``course_utils.cell_slices.frontend_cells``, the slice the browser test runs) with the notebook's set-up, a cell
that switches on lecture mode right after the set-up, and all the Markdown, in the notebook's order. It starts
JupyterLab on that folder, opens a session for the copy and runs the code cells in that session's kernel, storing
their outputs in the copy (with nbclient, as the build does, which also fills the demos' pictures in as a browser
would). When the page opens, JupyterLab joins the same kernel and ipywidgets' widget manager restores every widget
from it: the demos are live at once, no cell to run. The page opens on the first demo: all that comes before the demo
section is folded under the title (JupyterLab's folded headings), and the demos' code is collapsed. "Restart and run
all" still works. Ctrl-C stops JupyterLab and its kernel.

(Not a ``#cell-id=`` fragment in the URL: JupyterLab 4.6 scrolls to one only when the notebook is open already in the
workspace, not on the first load.)

The copy is remade each time; what is typed into it is lost the next time, and the course's notebooks are never
touched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import webbrowser
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LECTURE_DIR = ROOT / "build" / "lecture"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import wakeful_kernel_manager_class  # noqa: E402

from course_utils.cell_slices import frontend_cells  # noqa: E402

LECTURE_MODE_SOURCE = "from course_utils.lecture import lecture_mode\n\nlecture_mode()"
LECTURE_MODE_ID = "lecture-mode"
NOTE_ID, DEMOS_ID = "lecture-note", "lecture-demos"
COLLAPSED = "jp-MarkdownHeadingCollapsed"  # JupyterLab's mark of a folded heading
NOTE = (
    "*Lecture copy of `{name}` (`bash course.sh lecture`): its Markdown and only the code cells its demos need, run "
    "in lecture mode; all that comes before the demos is folded under the title. Remade each time: keep nothing here.*"
)
DEMOS_HEADING = "# The demos"
SET_UP_CALL = "setup_notebook("
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
DEMO_CLASS = "course-demo"
CELL_TIMEOUT_S = 600


# ---------------------------------------------------------------- the lecture copy


def notebook_path(number: str) -> Path:
    """``notebooks/NN_*.ipynb`` for ``NN`` ("08", or "8"); SystemExit with a one-line message for any other."""
    found = sorted(NOTEBOOKS.glob(f"{number.zfill(2)}_*.ipynb")) if number.isdigit() else []
    if len(found) != 1:
        names = ", ".join(path.stem for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")))
        raise SystemExit(f"course.sh lecture: no notebook {number!r}; give one of: {names}")
    return found[0]


def set_up_count(sources: list[str]) -> int:
    """How many code cells open the notebook as its set-up: the Colab cell, and the ``setup_notebook`` cell after it."""
    calls = [index for index, source in enumerate(sources[:3]) if SET_UP_CALL in source]
    return calls[0] + 1 if calls else 1


def demo_cells(notebook) -> list[int]:
    """Indices (among the code cells) of the cells whose saved outputs show a course demo, by the saved widget state."""
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    demos = {
        model_id for model_id, model in state.items() if DEMO_CLASS in model.get("state", {}).get("_dom_classes", [])
    }
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    return [
        index for index, cell in enumerate(code)
        if any(output.get("data", {}).get(WIDGET_VIEW, {}).get("model_id") in demos for output in cell.get("outputs", []))
    ]  # fmt: skip


def lecture_copy(notebook) -> nbformat.NotebookNode:
    """The lecture copy of a built notebook, in its order and without outputs: the Markdown, the set-up cells, a
    lecture-mode cell, then the slice's other code cells, each demo's code collapsed."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    set_up = set_up_count([cell.source for cell in code])
    keep, demos = frontend_cells(notebook) | set(range(set_up)), set(demo_cells(notebook))
    cells, index = [], 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            cells.append(nbformat.from_dict(cell))
            continue
        if index in keep:
            cells.append(_fresh_code_cell(cell, collapsed=index in demos))
        index += 1
        if index == set_up:
            cells.append(nbformat.v4.new_code_cell(LECTURE_MODE_SOURCE, id=LECTURE_MODE_ID))
    copy = nbformat.v4.new_notebook(cells=cells, metadata=dict(notebook.metadata))
    copy.metadata.pop("widgets", None)  # the widgets come live from the kernel, not from a saved state
    return copy


def demos_in_view(copy) -> nbformat.NotebookNode:
    """The copy as the page shows it, still in the notebook's order (so "Restart and run all" works): the title line,
    folded, then a heading above the demo section (``demo_section``), so that the page opens on the first demo.

    JupyterLab folds a heading whose cell says so (``jp-MarkdownHeadingCollapsed``) down to the next heading of its
    level. The title is each notebook's only level-1 heading; under the fold go a note on the copy and the rest of the
    title's cell (what the notebook accompanies, its objectives), in a cell of its own.
    """
    cells = [nbformat.from_dict(cell) for cell in copy.cells]
    note = _markdown(NOTE_ID, NOTE.format(name=copy.metadata.get("course", {}).get("notebook", "the notebook")))
    first, last = demo_section(cells)
    if last < first or cells[0].cell_type != "markdown" or not cells[0].source.startswith("# "):
        return nbformat.v4.new_notebook(cells=[note, *cells], metadata=copy.metadata)
    title, _, rest = cells[0].source.partition("\n")
    cells[0].source, cells[0].metadata[COLLAPSED] = title, True
    cells.insert(first, _markdown(DEMOS_ID, DEMOS_HEADING))
    folded = [note, _markdown(f"{cells[0].get('id', 'title')}-rest", rest.strip())] if rest.strip() else [note]
    return nbformat.v4.new_notebook(cells=[cells[0], *folded, *cells[1:]], metadata=copy.metadata)


def demo_section(cells) -> tuple[int, int]:
    """(first, last) positions of the demo section: from the Markdown heading above the first demo cell to the last
    demo cell; (0, -1) without demo cells."""
    demos = [position for position, cell in enumerate(cells) if _is_collapsed(cell)]
    if not demos:
        return 0, -1
    headings = [p for p, cell in enumerate(cells[: demos[0]]) if cell.cell_type == "markdown" and _is_heading(cell)]
    return (headings[-1] if headings else demos[0]), demos[-1]


def _is_heading(cell) -> bool:
    return cell.source.lstrip().startswith("#")


def _is_collapsed(cell) -> bool:
    return cell.get("metadata", {}).get("jupyter", {}).get("source_hidden", False)


def _markdown(cell_id: str, text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text, id=cell_id)


def _fresh_code_cell(cell, *, collapsed: bool) -> nbformat.NotebookNode:
    fresh = nbformat.v4.new_code_cell(cell.source, id=cell.get("id"), metadata=dict(cell.metadata))
    fresh.metadata.pop("execution", None)
    if collapsed:
        fresh.metadata["jupyter"] = {"source_hidden": True}
    return fresh


def write_lecture_copy(number: str, folder: Path = LECTURE_DIR) -> Path:
    """Write the lecture copy of notebook ``number`` into ``folder``; return its path."""
    source = notebook_path(number)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    nbformat.write(lecture_copy(nbformat.read(source, as_version=4)), target)
    return target


# ---------------------------------------------------------------- JupyterLab


def free_port() -> int:
    """A TCP port on localhost that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Lab:
    """A JupyterLab server started for the lecture: its process, address, token and log."""

    process: subprocess.Popen
    base_url: str
    token: str
    log_path: Path
    timings: dict[str, float] = field(default_factory=dict)  # seconds: "jupyterlab", "cells", "total"
    url: str = ""  # the lecture copy's page, once prepared
    kernel_id: str = ""  # the kernel of the copy's session, once prepared
    cells_run: int = 0

    def api(self, method: str, path: str, body: dict | None = None) -> dict:
        """Call JupyterLab's REST API; the answer's JSON."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.base_url}/api/{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"token {self.token}")
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read() or b"null")

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log."""
        return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Shut JupyterLab and its kernels down (SIGTERM); kill it if it does not stop in time."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_lab(folder: Path, port: int, token: str, *, extra_args=(), env: dict | None = None,
              timeout_s: float = 120) -> Lab:  # fmt: skip
    """JupyterLab serving ``folder`` on localhost, its own process group (Ctrl-C reaches this script only), its
    workspace and log under ``folder/.lab``; returns once it answers (the browser tests' server is this one too)."""
    private = folder / ".lab"
    shutil.rmtree(private / "workspaces", ignore_errors=True)  # no tab of an earlier lecture reopens (with a kernel)
    private.mkdir(parents=True, exist_ok=True)
    log_path = private / f"jupyterlab-{port}.log"
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={folder}", *extra_args,
    ]  # fmt: skip
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    server_env = dict(os.environ if env is None else env, JUPYTERLAB_WORKSPACES_DIR=str(private / "workspaces"))
    if token:
        server_env["JUPYTER_TOKEN"] = token  # not on the command line, where every user of the machine can read it
    else:
        command.append("--IdentityProvider.token=")
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=folder, env=server_env, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    lab = Lab(process, f"http://127.0.0.1:{port}", token, log_path)
    try:
        _wait_until_up(lab, timeout_s)
    except BaseException:
        lab.stop()
        raise
    return lab


def _wait_until_up(lab: Lab, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {lab.process.returncode}:\n{lab.log_tail()}")
        try:
            lab.api("GET", "status")
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"JupyterLab did not answer on {lab.base_url} within {timeout_s:.0f} s:\n{lab.log_tail()}")


def start_session(lab: Lab, name: str) -> str:
    """Open JupyterLab's session for the notebook ``name`` (the one its page will join); the kernel's id."""
    body = {"path": name, "name": name, "type": "notebook", "kernel": {"name": "python3"}}
    return lab.api("POST", "sessions", body)["kernel"]["id"]


def connection_file(kernel_id: str, env: dict | None = None) -> Path:
    """Where the server wrote the kernel's connection file (its runtime directory)."""
    from jupyter_core.paths import jupyter_runtime_dir

    runtime = (env or os.environ).get("JUPYTER_RUNTIME_DIR") or jupyter_runtime_dir()
    path = Path(runtime) / f"kernel-{kernel_id}.json"
    if not path.is_file():
        raise RuntimeError(f"JupyterLab started kernel {kernel_id}, but its connection file is not at {path}")
    return path


def save_trusted(lab: Lab, name: str, notebook) -> None:
    """Save the notebook with its outputs through JupyterLab, which signs it: its widget outputs then render."""
    content = nbformat.from_dict(json.loads(nbformat.writes(notebook)))
    for cell in content.cells:
        if cell.cell_type == "code":
            cell.metadata["trusted"] = True
    lab.api("PUT", f"contents/{name}", {"type": "notebook", "format": "json", "content": content})


# ---------------------------------------------------------------- running the cells in the session's kernel


def run_code_cells(notebook, connection: Path) -> int:
    """Run the notebook's code cells in the kernel behind ``connection``, storing their outputs; the count run.

    nbclient, as the build runs it (``build_notebooks.wakeful_kernel_manager_class``), stands in for a browser
    meanwhile: it fills each demo's Output widget, so the pictures are there when the page connects. It runs in a
    thread with its own event loop (the caller may have one running, as Playwright's sync API does), a daemon thread,
    so Ctrl-C is not held up by a cell.
    """
    outcome = {}

    def run() -> None:
        try:
            outcome["count"] = asyncio.run(_run_code_cells(notebook, connection))
        except BaseException as error:  # noqa: BLE001 - raised again in the calling thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["count"]


async def _run_code_cells(notebook, connection: Path) -> int:
    from nbclient import NotebookClient

    manager = wakeful_kernel_manager_class([])(connection_file=str(connection), owns_kernel=False)
    manager.load_connection_file()
    client = NotebookClient(notebook, km=manager, timeout=CELL_TIMEOUT_S, record_timing=False)
    client.kc = manager.client()
    client.kc.start_channels()
    try:
        await client.kc.wait_for_ready(timeout=120)
        cells = [(index, cell) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
        for index, cell in cells:
            await client.async_execute_cell(cell, index)
        reply = await client.async_wait_for_reply(client.kc.comm_info(target_name="jupyter.widget"))
        drop_closed_widgets(notebook, set(reply["content"]["comms"]))
        return len(cells)
    finally:
        client.kc.stop_channels()


def drop_closed_widgets(notebook, live: set[str]) -> None:
    """Remove the outputs that show a widget the kernel has closed since (a finished progress bar): the page would
    show "Error displaying widget: model not found" where a browser that ran the cell shows nothing."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [output for output in cell.outputs if not _shows_closed_widget(output, live)]


def _shows_closed_widget(output, live: set[str]) -> bool:
    model_id = output.get("data", {}).get(WIDGET_VIEW, {}).get("model_id")
    return model_id is not None and model_id not in live


# ---------------------------------------------------------------- the whole preparation


def prepare(number: str, *, port: int | None = None, token: str | None = None, folder: Path = LECTURE_DIR,
            extra_args=(), env: dict | None = None) -> Lab:  # fmt: skip
    """Write the lecture copy of notebook ``number``, start JupyterLab on it and run the copy in its session's
    kernel; the running ``Lab``, whose ``url`` opens the copy at its first demo, and its ``timings`` (seconds)."""
    started = time.monotonic()
    path = write_lecture_copy(number, folder)
    copy = nbformat.read(path, as_version=4)
    lab = start_lab(folder, port or free_port(), secrets.token_hex(24) if token is None else token,
                    extra_args=extra_args, env=env)  # fmt: skip
    try:
        lab.timings["jupyterlab"] = time.monotonic() - started
        lab.kernel_id = start_session(lab, path.name)
        cells_started = time.monotonic()
        lab.cells_run = run_code_cells(copy, connection_file(lab.kernel_id, env))
        lab.timings["cells"] = time.monotonic() - cells_started
        save_trusted(lab, path.name, demos_in_view(copy))
    except BaseException:
        lab.stop()
        raise
    lab.timings["total"] = time.monotonic() - started
    lab.url = f"{lab.base_url}/lab/tree/{path.name}" + (f"?token={lab.token}" if lab.token else "")
    return lab


def open_in_browser(url: str) -> None:
    """Open ``url`` in the default browser, in the background (a text browser must not hold the terminal)."""
    threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()


def serve_until_stopped(lab: Lab) -> int:
    """Wait until Ctrl-C (or JupyterLab's own end), then stop JupyterLab; its exit code."""
    try:
        return lab.process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        lab.stop()
        print("JupyterLab stopped")


def exit_on_hangup_or_term() -> None:
    """SIGTERM and SIGHUP (the terminal closed) end this script through its ``finally`` blocks, which stop JupyterLab:
    in a process group of its own, it would not hear them."""
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, lambda *_: sys.exit(0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("number", help="the notebook's number, e.g. 08")
    parser.add_argument("--no-browser", action="store_true", help="print the URL only; open no browser")
    parser.add_argument("--port", type=int, default=None, help="JupyterLab's port (default: a free one)")
    args = parser.parse_args(argv)
    notebook_path(args.number)  # an unknown number stops here, before anything starts
    exit_on_hangup_or_term()
    print(f"preparing the demos of notebook {args.number} (the cells they need, in lecture mode)...", flush=True)
    try:
        lab = prepare(args.number, port=args.port)
    except KeyboardInterrupt:
        print("stopped")
        return 130
    except CellExecutionError as error:
        print(f"a cell failed, so JupyterLab was stopped:\n{error}", file=sys.stderr)
        return 1
    timings = lab.timings
    print(f"ready in {timings['total']:.1f} s: JupyterLab {timings['jupyterlab']:.1f} s, "
          f"{lab.cells_run} cells {timings['cells']:.1f} s", flush=True)  # fmt: skip
    print(f"open: {lab.url}")
    print(f"JupyterLab's log: {lab.log_path.relative_to(ROOT) if lab.log_path.is_relative_to(ROOT) else lab.log_path}")
    print("stop it with Ctrl-C here (that also ends the notebook's kernel)", flush=True)
    if not args.no_browser:
        open_in_browser(lab.url)
    return serve_until_stopped(lab)


if __name__ == "__main__":
    sys.exit(main())
