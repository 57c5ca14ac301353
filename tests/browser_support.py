"""Helpers for the browser test: a throw-away JupyterLab server and a driven notebook page.

The server runs on copies of the notebooks in a temporary folder (so nothing is written into
``notebooks/``), with its own settings (no autosave, every cell attached to the page), the course's
JupyterLab override that ``course.sh setup`` installs (no news pop-up, ``scripts/lab_settings.py``) and
``COURSE_FAST=1`` so kernels run in fast mode.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
from urllib.parse import urlsplit
from pathlib import Path

import nbformat

from course_utils.cell_slices import frontend_cells

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import lecture  # noqa: E402  (scripts/lecture.py: the JupyterLab that course.sh lecture starts, and these tests)
from lecture import free_port  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
DEMO_CLASS = "course-demo"
# Text a failed widget or JavaScript output shows on the page, and a widget's repr shown instead of the widget.
SHOWN_ERRORS = ("Error displaying widget", "Javascript Error")
WIDGET_LOADING = "Loading widget..."
WIDGET_AS_TEXT = re.compile(r"^\s*(VBox|HBox|Box|Output|Tab|Accordion|GridBox)\(")

# JupyterLab user settings for the test server: plugin id -> settings.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}
ROOT = Path(__file__).resolve().parents[1]
# The notebooks the per-notebook browser tests run (COURSE_BROWSER_NOTEBOOKS=/some/folder: others).
NOTEBOOK_DIR = Path(os.environ.get("COURSE_BROWSER_NOTEBOOKS", ROOT / "notebooks")).resolve()
# What a toast asking about news says (JupyterLab's announcements plugin), and where JupyterLab shows toasts.
NEWS_QUESTION = "official Jupyter news"
TOAST_SELECTOR = ".Toastify__toast"


def in_ci() -> bool:
    """True when the ``CI`` variable is set to a true value (CI must run, not skip, the browser test)."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no", "off"}


def unavailable(reason: str) -> None:
    """Skip outside CI; in CI fail, since CI must run the browser tests."""
    import pytest

    if in_ci():
        pytest.fail(f"{reason}; CI must run the browser test, not skip it (.ci/run installs chromium)")
    pytest.skip(reason)


def launched_chromium(*, scrollbars: bool = False):
    """Yield headless Debian chromium driven by Playwright (Playwright's own browser download is not used).

    ``scrollbars``: show scroll bars as a desktop browser does (Playwright hides them in headless mode), so that a
    width measured in the page is the width a projector's window leaves beside its vertical scroll bar."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        unavailable("Debian's chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        hidden = ["--hide-scrollbars"] if scrollbars else None
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, ignore_default_args=hidden)
        yield launched
        launched.close()


def expected_demo_count(path: Path) -> int | None:
    """How many course demos the notebook's saved outputs display, or None without saved widget state."""
    notebook = nbformat.read(path, as_version=4)
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state")
    if not state:
        return None
    demo_models = {
        model_id for model_id, model in state.items() if DEMO_CLASS in model.get("state", {}).get("_dom_classes", [])
    }
    views = [
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]
    return sum(model_id in demo_models for model_id in views)


def _write_lab_settings(settings_dir: Path) -> None:
    for plugin, values in LAB_SETTINGS.items():
        target = settings_dir / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")


def lab_settings_script():
    """``scripts/lab_settings.py``, the course's JupyterLab override, as a module."""
    spec = importlib.util.spec_from_file_location("lab_settings", ROOT / "scripts" / "lab_settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _install_app_settings(app_settings_dir: Path) -> None:
    """A private copy of JupyterLab's application settings (page_config.json, …, if any) with the course's override
    installed by its script, as ``course.sh setup`` installs it for a student."""
    script = lab_settings_script()
    real = script.app_settings_dir()
    if real.is_dir():
        shutil.copytree(real, app_settings_dir)
    if script.main(["--settings-dir", str(app_settings_dir)]) != 0:
        raise RuntimeError(f"scripts/lab_settings.py could not write into {app_settings_dir}")


def stage_notebooks(source_dir: Path, root: Path, *, frontend_only: bool = False) -> Path:
    """Copy ``source_dir`` to ``root/notebooks`` (and link a sibling ``data/``) so ``../data`` paths work.

    ``frontend_only``: each copy keeps only the code cells that ``frontend_cells`` picks (and every markdown cell).
    """
    target = root / "notebooks"
    shutil.copytree(source_dir, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    if frontend_only:
        for path in target.glob("*.ipynb"):
            notebook = nbformat.read(path, as_version=4)
            keep = frontend_cells(notebook)
            code = iter(range(len(notebook.cells)))
            notebook.cells = [cell for cell in notebook.cells if cell.cell_type != "code" or next(code) in keep]
            nbformat.write(notebook, path)
    data = source_dir.parent / "data"
    if data.is_dir():
        (root / "data").symlink_to(data, target_is_directory=True)
    return target


class LabServer:
    """JupyterLab on a free localhost port, token-less, serving ``root``, with the course's settings and kernels in
    fast mode; ``stop()`` ends it. Started by ``scripts/lecture.py``'s ``start_lab``, as ``course.sh lecture`` starts it."""

    def __init__(self, root: Path, *, startup_timeout: float = 120):
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        private = root.parent / f"lab-{self.port}"
        _write_lab_settings(private / "settings")
        _install_app_settings(private / "app-settings")
        env = dict(
            os.environ,
            COURSE_FAST="1",
            PYTHONUNBUFFERED="1",
            JUPYTER_CONFIG_DIR=str(private / "config"),
            JUPYTERLAB_SETTINGS_DIR=str(private / "settings"),
            JUPYTER_RUNTIME_DIR=str(private / "runtime"),
        )
        extra = ["--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
                 f"--LabApp.app_settings_dir={private / 'app-settings'}"]  # fmt: skip
        self.lab = lecture.start_lab(root, self.port, "", extra_args=extra, env=env, timeout_s=startup_timeout)
        self.process, self.log_path = self.lab.process, self.lab.log_path

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log (for failure messages)."""
        return self.lab.log_tail(lines)

    def stop(self) -> None:
        """Shut the server (and its kernels) down; kill it if it does not stop in time."""
        self.lab.stop()


def notebook_params() -> list:
    """One pytest parameter per notebook of ``NOTEBOOK_DIR``, or one skipped parameter when it holds none."""
    import pytest

    notebooks = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    if notebooks:
        return [pytest.param(path, id=path.stem) for path in notebooks]
    return [pytest.param(None, id="none", marks=pytest.mark.skip(reason=f"no notebooks in {NOTEBOOK_DIR}"))]


def one_class_per_notebook(namespace: dict, prefix: str, test_name: str, check, describe: str) -> None:
    """Put into ``namespace`` (a test module's globals()) one class per notebook whose test ``test_name`` runs
    ``check(browser, lab, path)``. pytest-xdist's --dist loadscope then spreads the notebooks over the workers (a
    module's functions all go to one worker, which ran ten notebooks in a row: the suite's longest path); each worker
    starts the module's browser and JupyterLab once. ``describe`` is the class's docstring, "{}" the notebook."""
    import pytest

    for param in notebook_params():

        @pytest.mark.parametrize("path", [param])
        def test(self, browser, lab, path):
            check(browser, lab, path)

        name = f"{prefix}_{param.id[:2]}"
        namespace[name] = type(name, (), {test_name: test, "__doc__": describe.format(param.id)})


def served_lab(tmp_path_factory, name: str, fill):
    """A module fixture's body: JupyterLab serving a fresh temporary folder that ``fill(root)`` fills; stopped even on
    failure."""
    root = tmp_path_factory.mktemp(name) / "root"
    root.mkdir()
    fill(root)
    server = LabServer(root)
    try:
        yield server
    finally:
        server.stop()


# --- the page ---------------------------------------------------------------------------------

_OPEN_JS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  window.jupyterapp.shell.collapseLeft();
}"""

_RUN_ALL_JS = """async () => {
  const app = window.jupyterapp;
  await app.commands.execute('notebook:clear-all-cell-outputs');
  window.__courseRun = null;
  app.commands.execute('notebook:run-all-cells').then(
    () => { window.__courseRun = 'done'; },
    (error) => { window.__courseRun = 'failed: ' + error; });
}"""

# How the run ended ('done', 'failed: ...', 'kernel died'), or false while it goes on.
_FINISHED_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (kernel && kernel.status === 'dead') return 'kernel died';
  return window.__courseRun !== null && kernel && kernel.status === 'idle' && window.__courseRun;
}"""

_CELLS_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter((cell) => cell.model.type === 'code')
  .map((cell) => ({
    source: cell.model.sharedModel.getSource().slice(0, 60),
    count: cell.model.executionCount,
    errors: cell.model.outputs.toJSON().filter((o) => o.output_type === 'error')
      .map((o) => o.ename + ': ' + o.evalue),
  }))"""

# Each output's text, without its "[n]:" prompt. Not '.jp-OutputArea-output': when a renderer throws (a failed
# Javascript output), JupyterLab's OutputArea resets that node's classes to 'lm-Widget jp-RenderedText' and appends
# "<pre>Javascript Error: ...</pre>", so the error is only found as the non-prompt child of '.jp-OutputArea-child'.
_OUTPUT_TEXT_JS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-child > :not(.jp-OutputArea-prompt)'))
  .map((o) => o.innerText)"""

# A widget view shows "Loading widget..." until the widget manager finds its model (or gives up and says
# "Error displaying widget"); true once no output says so.
_WIDGETS_SETTLED_JS = f"""() => !({_OUTPUT_TEXT_JS})().some((text) => text.startsWith('{WIDGET_LOADING}'))"""

# A demo's state: its picture (the <img> src in its Output), whether that has loaded, and its HTML lines
# (title, labels, readout, message).
_DEMO_STATE_FUNCTION = """function demoState(index) {
  const demo = document.querySelectorAll('.course-demo')[index];
  const img = demo.querySelector('.widget-output img');
  const html = Array.from(demo.querySelectorAll('.widget-html-content')).map((e) => e.innerText);
  return {img: img ? img.src : null, loaded: !!(img && img.complete && img.naturalWidth > 0), html: html.join(' | ')};
}"""

_DEMO_STATE_JS = f"(index) => {{ {_DEMO_STATE_FUNCTION}; return demoState(index); }}"

_DEMO_CHANGED_JS = f"""([index, before]) => {{
  {_DEMO_STATE_FUNCTION};
  const now = demoState(index);
  return (now.loaded && now.img !== before.img) || now.html !== before.html;
}}"""

_DEMOS_READY_JS = f"""(minimum) => {{
  {_DEMO_STATE_FUNCTION};
  const count = document.querySelectorAll('.course-demo').length;
  return count >= minimum && Array.from({{length: count}}, (_, i) => demoState(i).loaded).every(Boolean);
}}"""

# Font sizes (px) of each demo's title and slider readout, its picture's width, and the widgets' base font.
_SIZES_JS = """() => {
  const px = (element) => parseFloat(getComputedStyle(element).fontSize);
  const base = parseFloat(getComputedStyle(document.body).getPropertyValue('--jp-widgets-font-size')) || 13;
  return {base, demos: Array.from(document.querySelectorAll('.course-demo')).map((demo) => ({
    title: px(demo.querySelector('.widget-html-content b')),
    slider: px(demo.querySelector('.widget-readout')),
    width: demo.querySelector('.widget-output img').naturalWidth,
  }))};
}"""

# The notebook's kernel has started, its websocket is connected, and it waits for work.
_KERNEL_READY_JS = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""

# The text of every toast (JupyterLab's pop-up notifications, bottom right).
_TOASTS_JS = f"() => Array.from(document.querySelectorAll('{TOAST_SELECTOR}')).map((toast) => toast.innerText)"

_SHUTDOWN_JS = """async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }"""


class LabNotebook:
    """One notebook open in JupyterLab in a Playwright page."""

    def __init__(self, page, server: LabServer, relative_path: str, *, connect_timeout_s: float = 90):
        self.page = page
        self.page_errors: list[str] = []
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.goto(f"{server.url}/lab/tree/{relative_path}?reset", wait_until="domcontentloaded")
        self._open()
        if not self._kernel_connects(connect_timeout_s):  # once, on a busy machine, a kernel sat at "Connecting"
            page.reload(wait_until="domcontentloaded")
            self._open()
            if not self._kernel_connects(connect_timeout_s):
                raise RuntimeError(f"{relative_path}: the kernel did not connect within {connect_timeout_s:.0f} s, "
                                   f"twice (the page was reloaded once)\n{server.log_tail()}")  # fmt: skip

    def _open(self) -> None:
        self.page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.sessionContext",
            timeout=90_000,
        )
        self.page.evaluate(_OPEN_JS)

    def _kernel_connects(self, timeout_s: float) -> bool:
        """Wait until the notebook's kernel is connected and idle; False if it is not within ``timeout_s``."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(_KERNEL_READY_JS, timeout=timeout_s * 1000, polling=250)
        except PlaywrightTimeout:
            return False
        return True

    def run_all(self, timeout_s: float) -> str:
        """Clear the outputs, run every cell, wait until the run is over and the kernel idle; say how it ended."""
        self.page.evaluate(_RUN_ALL_JS)
        return self.page.wait_for_function(_FINISHED_JS, timeout=timeout_s * 1000, polling=500).json_value()

    def cells(self) -> list[dict]:
        """Each code cell's first characters, execution count and error outputs."""
        return self.page.evaluate(_CELLS_JS)

    def output_texts(self) -> list[str]:
        """The visible text of every output area (to find widget errors shown as text)."""
        return self.page.evaluate(_OUTPUT_TEXT_JS)

    def wait_for_widgets(self, timeout_s: float) -> bool:
        """Wait until no widget view says "Loading widget..."; False if one still does after ``timeout_s``."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(_WIDGETS_SETTLED_JS, timeout=timeout_s * 1000, polling=100)
        except PlaywrightTimeout:
            return False
        return True

    def output_problems(self, settle_s: float = 15) -> list[str]:
        """What is wrong with the run's outputs: error outputs, cells not run, widget or JavaScript errors
        shown on the page, widgets shown as text or never rendered (after up to ``settle_s`` for them to
        render), uncaught page errors; empty when nothing is."""
        cells = self.cells()
        problems = [
            f"error output in cell {i} {cell['source']!r}: {error}" for i, cell in enumerate(cells)
            for error in cell["errors"]
        ]  # fmt: skip
        problems += [f"cell did not run: {cell['source']!r}" for cell in cells if cell["count"] is None]
        self.wait_for_widgets(settle_s)
        texts = self.output_texts()
        problems += [f"widget never rendered: {text[:200]!r}" for text in texts if text.startswith(WIDGET_LOADING)]
        problems += [
            f"widget or JavaScript error on the page: {text[:200]!r}" for text in texts
            if any(marker in text for marker in SHOWN_ERRORS)
        ]  # fmt: skip
        problems += [
            f"widget shown as text (the widget manager did not render it): {text[:200]!r}" for text in texts
            if WIDGET_AS_TEXT.match(text)
        ]  # fmt: skip
        problems += [f"uncaught JavaScript error in the page: {error}" for error in self.page_errors]
        return problems

    def toasts(self) -> list[str]:
        """The text of every toast notification on screen (JupyterLab's pop-ups in the bottom right corner)."""
        return self.page.evaluate(_TOASTS_JS)

    @property
    def demos(self):
        return self.page.locator(f".{DEMO_CLASS}")

    def wait_for_demos(self, count: int | None, timeout_s: float = 60) -> None:
        """Wait until ``count`` demos (at least one when None) are on the page, each with its picture."""
        minimum = 1 if count is None else max(count, 1)
        self.page.wait_for_function(_DEMOS_READY_JS, arg=minimum, timeout=timeout_s * 1000)

    def demo_state(self, index: int) -> dict:
        return self.page.evaluate(_DEMO_STATE_JS, index)

    def move_one_control(self, index: int) -> str:
        """Move the demo's first slider (keyboard), else dropdown, toggle button or number box; say what moved."""
        demo = self.demos.nth(index)
        handles = demo.locator(".noUi-handle")
        if handles.count():
            return self._nudge_slider(handles.first)
        selects = demo.locator(".widget-dropdown select")
        if selects.count():
            select = selects.first
            options = select.locator("option").count()
            current = select.evaluate("(element) => element.selectedIndex")
            select.select_option(index=(current + 1) % options)
            return f"dropdown: option {current} -> {(current + 1) % options}"
        toggles = demo.locator(".widget-toggle-buttons button:not(.mod-active)")
        if toggles.count():
            toggles.first.click()
            return "toggle buttons: clicked another option"
        for box in demo.locator(".widget-text input").all():
            before = box.input_value()
            if _is_number(before):
                box.fill(f"{float(before) + 1:g}")
                box.press("Enter")
                return f"text box: {before} -> {box.input_value()}"
        raise AssertionError("the demo has no slider, dropdown, toggle buttons or number box to move")

    @staticmethod
    def _nudge_slider(handle) -> str:
        before = handle.get_attribute("aria-valuenow")
        handle.focus()
        handle.press("ArrowRight")
        if handle.get_attribute("aria-valuenow") == before:  # at its maximum
            handle.press("ArrowLeft")
        return f"slider: {before} -> {handle.get_attribute('aria-valuenow')}"

    def wait_for_change(self, index: int, before: dict, timeout_s: float = 30) -> None:
        """Wait until the demo's picture or its HTML lines differ from ``before``."""
        self.page.wait_for_function(_DEMO_CHANGED_JS, arg=[index, before], timeout=timeout_s * 1000, polling=100)

    def demo_sizes(self) -> dict:
        """The widgets' base font size and, per demo, its title and slider font sizes and picture width."""
        return self.page.evaluate(_SIZES_JS)

    def shutdown_kernel(self) -> None:
        self.page.evaluate(_SHUTDOWN_JS)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def lecture_mode_notebook(path: Path) -> None:
    """Write a small notebook that shows a one-slider demo, switches on lecture mode, and shows it again."""
    setup = "from course_utils import setup_notebook\ndevice = setup_notebook(seed=0)"
    demo = '''import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from course_utils.widgets.widget_kit import Demo


class SlopeDemo(Demo):
    """A line whose slope follows a slider."""

    def __init__(self):
        self.figure = Figure()
        axes = self.figure.add_subplot()
        self.x = np.linspace(-1, 1, 21)
        (self.line,) = axes.plot(self.x, self.x)
        axes.set_ylim(-3, 3)
        slope = widgets.FloatSlider(value=1.0, min=-3, max=3, step=0.5, description="slope")
        super().__init__({"slope": slope}, title="Slope")

    def draw(self, slope):
        self.line.set_ydata(slope * self.x)
        self.show_readout(f"slope = {slope:.1f}")
        return self.figure


SlopeDemo().box'''
    lecture = "from course_utils.lecture import lecture_mode\nlecture_mode(True)\nSlopeDemo().box"
    cells = [nbformat.v4.new_code_cell(source) for source in (setup, demo, lecture)]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(notebook, path)


def wait_or_fail(action, message):
    """Run a Playwright wait and return its result; a timeout fails with ``message`` (text, or a function)."""
    import pytest
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return action()
    except PlaywrightTimeout:
        pytest.fail(message() if callable(message) else message)


def run_all_or_fail(notebook: "LabNotebook", timeout_s: float) -> None:
    """Run every cell of ``notebook`` in JupyterLab; fail if that does not finish in time or the command fails."""
    ended = wait_or_fail(lambda: notebook.run_all(timeout_s), f"run all did not finish within {timeout_s} s")
    assert ended == "done", f"the run-all command failed: {ended}"


LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}


class Offline:
    """A browser context in which every request outside localhost is aborted and recorded."""

    def __init__(self, browser, viewport: dict | None = None):
        self.blocked: list[str] = []
        self.console_errors: list[str] = []
        self.context = browser.new_context(viewport=viewport or {"width": 1400, "height": 1100})
        self.context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if urlsplit(url).scheme in ("http", "https", "ws", "wss") and urlsplit(url).hostname not in LOCAL_HOSTS:
            self.blocked.append(url)
            route.abort("internetdisconnected")
        else:
            route.continue_()

    def open(self, server: LabServer, relative_path: str) -> LabNotebook:
        page = self.context.new_page()
        page.on("console", lambda message: message.type == "error" and self.console_errors.append(message.text))
        return LabNotebook(page, server, relative_path)
