"""Real browser: bertviz's views, made offline by ``bertviz_offline``, draw in JupyterLab with the network blocked.

A small notebook (written to a temporary folder) builds a random 2-layer, 2-head BERT and calls
``head_view`` and ``model_view``. JupyterLab runs it in headless Chromium where every request that does
not go to the local server is aborted (and recorded). The test then waits for bertviz's SVG attention
lines, checks their count and that their opacities carry the attention weights (each token's lines sum
to 1 per head), switches the head view's layer menu, and fails on a blocked request, an error output,
"Javascript Error" / "require is not defined" text or a console or page error. A second test runs
bertviz's own ``head_view`` in the same setting and shows that it draws nothing there, which proves the
blocking works. Screenshots go to ``tests/artifacts/browser/``.

    python -m pytest tests/notebooks/test_bertviz_browser.py -p no:xdist

Outside CI a machine without Debian's ``chromium`` (or without playwright) skips it; in CI it fails.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import nbformat
import pytest

from browser_support import (
    LabNotebook,
    LabServer,
    Offline,
    run_all_or_fail,
    served_lab,
    wait_or_fail,
)

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "browser"
RUN_TIMEOUT_S = 180
VIEWPORT = {"width": 1400, "height": 1100}
JS_ERRORS = ("Javascript Error", "require is not defined")
LAYERS, HEADS, TOKENS = 2, 2, ["[CLS]", "the", "cat", "sat", "[SEP]"]

pytestmark = pytest.mark.browser

SETUP = f"""import sys
sys.path.insert(0, {str(ROOT)!r})
import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)
config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers={LAYERS}, num_attention_heads={HEADS},
                    intermediate_size=64, max_position_embeddings=32, attn_implementation="eager")
model = BertModel(config).eval()
tokens = {TOKENS!r}
with torch.no_grad():
    attentions = model(torch.arange(1, len(tokens) + 1)[None], output_attentions=True).attentions"""

OFFLINE_CELLS = [
    SETUP,
    "from course_utils.widgets.bertviz_offline import head_view, model_view\nhead_view(attentions, tokens)",
    "model_view(attentions, tokens)",
]
PLAIN_CELLS = [SETUP, "from bertviz import head_view\nhead_view(attentions, tokens)"]

# Per bertviz view on the page (in order): how many SVG lines it draws, and the sum of their opacities.
_VIEWS_JS = """() => Array.from(document.querySelectorAll('div[id^="bertviz-"]')).map((root) => {
  const lines = Array.from(root.querySelectorAll('svg line'));
  return {id: root.id, lines: lines.length,
          opacity: lines.reduce((sum, line) => sum + (parseFloat(line.getAttribute('stroke-opacity')) || 0), 0)};
})"""

# Every output's text. Not LabNotebook.output_texts(): a failed JavaScript output is replaced by a
# jp-RenderedText that lacks the jp-OutputArea-output class, so "Javascript Error" is only seen from the child.
_OUTPUT_TEXTS_JS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-child')).map((o) => o.innerText)"""

_VIEWS_DRAWN_JS = """(count) => {
  const roots = Array.from(document.querySelectorAll('div[id^="bertviz-"]'));
  return roots.length >= count && roots.every((root) => root.querySelectorAll('svg line').length > 0);
}"""


def write_notebook(path: Path, sources: list[str]) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(notebook, path)


def two_notebooks(root: Path) -> None:
    write_notebook(root / "bertviz_offline.ipynb", OFFLINE_CELLS)
    write_notebook(root / "bertviz_plain.ipynb", PLAIN_CELLS)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a temporary folder with the two notebooks; stopped even on failure."""
    yield from served_lab(tmp_path_factory, "bertviz", two_notebooks)


@contextlib.contextmanager
def offline_notebook(browser, lab: LabServer, relative_path: str, name: str):
    """The notebook open in a fresh offline context; a screenshot is saved if the block fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for stale in ARTIFACTS.glob(f"{name}-*.png"):
        stale.unlink()
    offline = Offline(browser, VIEWPORT)
    notebook = None
    try:
        notebook = offline.open(lab, relative_path)
        yield offline, notebook
    except BaseException:
        with contextlib.suppress(Exception):  # the screenshot is a diagnostic; keep the original error
            offline.context.pages[0].screenshot(path=ARTIFACTS / f"{name}-failure.png", full_page=True)
        raise
    finally:
        if notebook is not None:
            with contextlib.suppress(Exception):
                notebook.shutdown_kernel()
        offline.context.close()


def _run_all(notebook: LabNotebook) -> None:
    run_all_or_fail(notebook, RUN_TIMEOUT_S)
    cells = notebook.cells()
    errors = [f"cell {i} {cell['source']!r}: {error}" for i, cell in enumerate(cells) for error in cell["errors"]]
    assert not errors, "error outputs:\n" + "\n".join(errors)
    assert all(cell["count"] is not None for cell in cells), f"cells that did not run: {cells}"


def test_offline_views_draw_with_the_network_blocked(browser, lab):
    with offline_notebook(browser, lab, "bertviz_offline.ipynb", "bertviz-offline") as (offline, notebook):
        _run_all(notebook)
        page = notebook.page
        wait_or_fail(
            lambda: page.wait_for_function(_VIEWS_DRAWN_JS, arg=2, timeout=30_000),
            lambda: (
                f"the two bertviz views drew no SVG lines within 30 s: {page.evaluate(_VIEWS_JS)}; "
                f"outputs: {[t[:200] for t in page.evaluate(_OUTPUT_TEXTS_JS)]}"
            ),
        )
        head, model = page.evaluate(_VIEWS_JS)
        length = len(TOKENS)
        # The head view draws one layer: a line per head and token pair, each token's lines of a head summing
        # to 1 / (heads shown); the model view draws every layer × head as a thumbnail with full opacities.
        assert head["lines"] == HEADS * length * length, head
        assert head["opacity"] == pytest.approx(length, rel=1e-3), head
        assert model["lines"] == LAYERS * HEADS * length * length, model
        assert model["opacity"] == pytest.approx(LAYERS * HEADS * length, rel=1e-3), model
        roots = page.locator('div[id^="bertviz-"]')
        roots.nth(0).screenshot(path=ARTIFACTS / "bertviz-offline-head-view.png")
        roots.nth(1).screenshot(path=ARTIFACTS / "bertviz-offline-model-view.png")

        # The head view's layer menu redraws the lines for the other layer (jQuery and d3 at work).
        before = page.evaluate("(id) => document.querySelector(`#${id} svg`).innerHTML", head["id"])
        roots.nth(0).locator("select#layer").select_option("1")
        changed = "(arg) => document.querySelector(`#${arg[0]} svg`).innerHTML !== arg[1]"
        wait_or_fail(lambda: page.wait_for_function(changed, arg=[head["id"], before], timeout=10_000),
              "choosing layer 1 in the head view did not redraw it")  # fmt: skip
        assert page.evaluate(_VIEWS_JS)[0]["lines"] == HEADS * length * length
        page.screenshot(path=ARTIFACTS / "bertviz-offline-page.png", full_page=True)

        texts = page.evaluate(_OUTPUT_TEXTS_JS)
        shown = [text[:200] for text in texts if any(marker in text for marker in JS_ERRORS)]
        assert not shown, f"JavaScript errors in the outputs: {shown}"
        assert not notebook.page_errors, f"uncaught JavaScript errors in the page: {notebook.page_errors}"
        assert not offline.console_errors, f"console errors: {offline.console_errors}"
        assert not offline.blocked, f"requests outside localhost (blocked): {offline.blocked}"


def test_plain_bertviz_draws_nothing_in_the_same_setting(browser, lab):
    """The control: bertviz's own head_view asks a CDN for require.js, which is blocked here, and fails."""
    with offline_notebook(browser, lab, "bertviz_plain.ipynb", "bertviz-plain") as (offline, notebook):
        _run_all(notebook)
        page = notebook.page
        failed = f"() => ({_OUTPUT_TEXTS_JS})().some((text) => text.includes('require is not defined'))"
        wait_or_fail(
            lambda: page.wait_for_function(failed, timeout=30_000),
            lambda: f"expected 'require is not defined'; outputs: {[t[:200] for t in page.evaluate(_OUTPUT_TEXTS_JS)]}",
        )
        page.screenshot(path=ARTIFACTS / "bertviz-plain-page.png", full_page=True)
        views = page.evaluate(_VIEWS_JS)
        assert len(views) == 1 and views[0]["lines"] == 0, views
        assert any("cdnjs.cloudflare.com" in url and "require" in url for url in offline.blocked), offline.blocked
