"""Open one notebook for a lecture, as its lecture plan describes it: ``bash course.sh lecture NN``.

    bash course.sh lecture 08                  # prepare, then open it in the default browser
    bash course.sh lecture 08 --no-browser     # prepare, then print the URL only
    bash course.sh lecture 08 --port 8899      # on that port (default: a free one)
    bash course.sh lecture 08 --demos-only     # run only the cells the demos need: seconds, not the notebook's run

It copies the stored notebook into ``build/lecture/``: every cell, the full-mode outputs and the prompts [n] as
stored, which are the [n] of the teaching page's lecture plan. It starts JupyterLab on that folder, opens a session
for the copy and runs every code cell in that session's kernel, in full mode (whatever ``COURSE_FAST`` says) and in
lecture mode (``course_utils.lecture.lecture_mode()``, run right after the set-up cell; what it displays joins the
set-up cell's outputs). Before each cell the kernel's execution count is set to the cell's stored prompt, so a cell
keeps its [n]. A cell whose stored outputs JupyterLab's renderers draw (a demo, HTML) takes the outputs of this run,
with nbclient standing in for a browser meanwhile (it fills the demos' pictures in); every other cell keeps its
stored output, the numbers the plan quotes. When the page opens, JupyterLab joins the same kernel and ipywidgets'
widget manager restores every widget from it: the demos are live, and every *live* row can be run again in class.
The outputs of the cells that answer the plan's "Predict, then reveal" questions are collapsed, so no answer is on
screen before its question. Ctrl-C stops JupyterLab and its kernel.

The copy is remade each time; what is typed into it is lost the next time, and the course's notebooks are never
touched.
"""

from __future__ import annotations

import argparse
import asyncio
import copy as copying
import json
import os
import re
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

from course_utils.budget import FAST_MODE_VARIABLE  # noqa: E402
from course_utils.cell_slices import frontend_cells, shows_frontend_output  # noqa: E402

TEACHING = ROOT / "docs" / "teaching.md"
LECTURE_MODE_SOURCE = "from course_utils.lecture import lecture_mode\n\nlecture_mode()"
LECTURE_MODE_ID = "lecture-mode"
SET_PROMPT = "get_ipython().execution_count = {prompt}"  # run silently: the next cell's reply carries this prompt
ANSWERED_BY = re.compile(r"answered by\s+\[(\d+)\]")
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


def answer_prompts(stem: str, teaching: str | None = None) -> set[int]:
    """The prompts of the cells that answer the "Predict, then reveal" questions of the notebook's lecture plan."""
    teaching = TEACHING.read_text(encoding="utf-8") if teaching is None else teaching
    section = re.search(rf"^## {stem[:2]} · .*?(?=^## |\Z)", teaching, flags=re.M | re.S)
    plan = section[0].partition("### Lecture plan")[2] if section else ""
    return {int(prompt) for prompt in ANSWERED_BY.findall(plan.partition("**Predict, then reveal:**")[2])}


def lecture_copy(notebook, answers: set[int] = frozenset()) -> nbformat.NotebookNode:
    """The lecture copy of a built notebook: every cell with its stored outputs and prompt, the saved widget state
    dropped (the widgets come live from the kernel), the outputs of the ``answers`` cells collapsed."""
    copy = copying.deepcopy(notebook)
    copy.metadata.pop("widgets", None)
    for cell in copy.cells:
        if cell.cell_type == "code" and cell.execution_count in answers:
            cell.metadata["collapsed"] = True  # nbformat's key; JupyterLab reads the next one
            cell.metadata.setdefault("jupyter", {})["outputs_hidden"] = True
    return copy


def live_cells(notebook) -> set[int]:
    """Indices (among the code cells) whose outputs the lecture run replaces: those JupyterLab's renderers draw."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    return {index for index, cell in enumerate(code) if shows_frontend_output(cell)}


def write_lecture_copy(number: str, folder: Path = LECTURE_DIR) -> Path:
    """Write the lecture copy of notebook ``number`` into ``folder``; return its path."""
    source = notebook_path(number)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    nbformat.write(lecture_copy(nbformat.read(source, as_version=4), answer_prompts(source.stem)), target)
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


def cells_to_run(notebook, demos_only: bool = False) -> set[int]:
    """Indices (among the code cells) that the lecture's kernel runs: all of them, or the demos' slice
    (``course_utils.cell_slices.frontend_cells``, with the set-up)."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not demos_only:
        return set(range(len(code)))
    return frontend_cells(notebook) | set(range(set_up_count([cell.source for cell in code])))


def run_code_cells(notebook, connection: Path, only: set[int] | None = None) -> int:
    """Run the copy's code cells (those in ``only``, default all) in the kernel behind ``connection``, each with its
    stored prompt, and lecture mode after the set-up; keep the outputs of this run for the cells JupyterLab's
    renderers draw; the count run.

    nbclient, as the build runs it (``build_notebooks.wakeful_kernel_manager_class``), stands in for a browser
    meanwhile: it fills each demo's Output widget, so the pictures are there when the page connects. It runs in a
    thread with its own event loop (the caller may have one running, as Playwright's sync API does), a daemon thread,
    so Ctrl-C is not held up by a cell.
    """
    outcome = {}

    def run() -> None:
        try:
            outcome["count"] = asyncio.run(_run_code_cells(notebook, connection, only))
        except BaseException as error:  # noqa: BLE001 - raised again in the calling thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["count"]


def lecture_run(notebook) -> tuple[nbformat.NotebookNode, int]:
    """What the kernel runs: the copy with a lecture-mode cell right after the set-up; and that cell's position."""
    work = copying.deepcopy(notebook)
    code = [position for position, cell in enumerate(work.cells) if cell.cell_type == "code"]
    after = code[set_up_count([work.cells[position].source for position in code]) - 1] + 1
    work.cells.insert(after, nbformat.v4.new_code_cell(LECTURE_MODE_SOURCE, id=LECTURE_MODE_ID))
    return work, after


async def _run_code_cells(notebook, connection: Path, only: set[int] | None) -> int:
    from nbclient import NotebookClient

    work, lecture_at = lecture_run(notebook)
    run = cells_to_run(notebook) if only is None else only
    live = live_cells(notebook)
    manager = wakeful_kernel_manager_class([])(connection_file=str(connection), owns_kernel=False)
    manager.load_connection_file()
    client = NotebookClient(work, km=manager, timeout=CELL_TIMEOUT_S, record_timing=False)
    client.kc = manager.client()
    client.kc.start_channels()
    try:
        await client.kc.wait_for_ready(timeout=120)
        shown = [cell for cell in notebook.cells if cell.cell_type == "code"]
        index, count = 0, 0
        for position, cell in enumerate(work.cells):
            if cell.cell_type != "code":
                continue
            if position == lecture_at:
                await client.async_execute_cell(cell, position)
                shown[set_up_count([c.source for c in shown]) - 1].outputs += cell.outputs
                continue
            if index in run:
                prompt = shown[index].execution_count
                await client.async_wait_for_reply(client.kc.execute(SET_PROMPT.format(prompt=prompt), silent=True))
                await client.async_execute_cell(cell, position)
                count += 1
                if index in live:
                    shown[index].outputs, shown[index].execution_count = cell.outputs, cell.execution_count
            index += 1
        reply = await client.async_wait_for_reply(client.kc.comm_info(target_name="jupyter.widget"))
        drop_closed_widgets(notebook, set(reply["content"]["comms"]))
        return count
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
            extra_args=(), env: dict | None = None, demos_only: bool = False) -> Lab:  # fmt: skip
    """Write the lecture copy of notebook ``number``, start JupyterLab on it and run the copy in its session's
    kernel (``demos_only``: only the cells its demos need); the running ``Lab``, whose ``url`` opens the copy, and its
    ``timings`` (seconds). The kernel runs in full mode unless ``env`` (the server's environment, default this one)
    asks for fast mode."""
    started = time.monotonic()
    path = write_lecture_copy(number, folder)
    copy = nbformat.read(path, as_version=4)
    if env is None:
        env = {name: value for name, value in os.environ.items() if name != FAST_MODE_VARIABLE}
    lab = start_lab(folder, port or free_port(), secrets.token_hex(24) if token is None else token,
                    extra_args=extra_args, env=env)  # fmt: skip
    try:
        lab.timings["jupyterlab"] = time.monotonic() - started
        lab.kernel_id = start_session(lab, path.name)
        cells_started = time.monotonic()
        lab.cells_run = run_code_cells(copy, connection_file(lab.kernel_id, env), cells_to_run(copy, demos_only))
        lab.timings["cells"] = time.monotonic() - cells_started
        save_trusted(lab, path.name, copy)
    except BaseException:
        lab.stop()
        raise
    lab.timings["total"] = time.monotonic() - started
    # /doc opens JupyterLab's Simple Interface: the notebook alone, no side panel taking the projector's width.
    lab.url = f"{lab.base_url}/doc/tree/{path.name}" + (f"?token={lab.token}" if lab.token else "")
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
    parser.add_argument("--demos-only", action="store_true",
                        help="run only the cells the demos need: ready in seconds, but a live cell may then miss a name")  # fmt: skip
    args = parser.parse_args(argv)
    notebook_path(args.number)  # an unknown number stops here, before anything starts
    exit_on_hangup_or_term()
    if os.environ.get(FAST_MODE_VARIABLE):
        print(f"{FAST_MODE_VARIABLE} is set: the lecture's kernel runs in full mode all the same", flush=True)
    which = "the cells its demos need" if args.demos_only else "every cell"
    print(f"preparing notebook {args.number}: {which}, in full mode and lecture mode, each with its stored prompt...",
          flush=True)  # fmt: skip
    try:
        lab = prepare(args.number, port=args.port, demos_only=args.demos_only)
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
