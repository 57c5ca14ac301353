"""The browser test's own checks, tested: planted failures in a real JupyterLab page must be reported.

A throw-away notebook (in a temporary folder) plants one of each failure that ``LabNotebook.output_problems()``
(the check ``test_browser.py`` runs on every notebook) is there to catch: a ``Javascript`` output that throws
(JupyterLab shows "Javascript Error: ..."), an HTML output whose script throws (an uncaught page error), a widget
view whose model does not exist ("Error displaying widget"), a widget's repr shown as text, and an exception.
Clean outputs beside them (printed text, a real slider) must not be reported. If a JupyterLab upgrade changed
the page so that a check no longer saw its failure, this test fails. The page, ready and run, must also show no
toast asking about Jupyter news: the course's override (``scripts/lab_settings.py``, which ``course.sh setup``
installs and ``LabServer`` installs the same way) keeps it off a projected notebook; without it the toast is there.

    python -m pytest tests/notebooks/test_browser_harness.py -p no:xdist

Outside CI a machine without Debian's ``chromium`` (or without playwright) skips it; in CI it fails.
"""

from __future__ import annotations

import nbformat
import pytest

from browser_support import NEWS_QUESTION, LabNotebook, LabServer, run_all_or_fail

RUN_TIMEOUT_S = 60

pytestmark = pytest.mark.browser

PLANTED = [
    "from IPython.display import HTML, Javascript, display\n"
    "display(Javascript(\"throw new Error('planted-js-error')\"))",
    "display(HTML(\"<b>html</b><script>throw new Error('planted-html-error')</script>\"))",
    "view = {'model_id': 'no-such-model', 'version_major': 2, 'version_minor': 0}\n"
    "display({'application/vnd.jupyter.widget-view+json': view, 'text/plain': 'a widget'}, raw=True)",
    "class NotRendered:\n    def __repr__(self):\n        return 'VBox(children=(planted-widget-as-text,))'\n\n"
    "NotRendered()",
    "print('clean output')",
    "import ipywidgets\nipywidgets.IntSlider(description='clean slider')",
    "raise ValueError('planted-exception')",
]

# What output_problems() must report, one problem each, and nothing else.
EXPECTED = {
    "Javascript Error: planted-js-error": "widget or JavaScript error on the page",
    "Error displaying widget": "widget or JavaScript error on the page",
    "planted-widget-as-text": "widget shown as text",
    "planted-html-error": "uncaught JavaScript error in the page",
    "ValueError: planted-exception": "error output in cell",
}


def test_planted_failures_are_reported(browser, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in PLANTED])
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(notebook, root / "planted.ipynb")
    server = LabServer(root)
    context = browser.new_context()
    try:
        lab = LabNotebook(context.new_page(), server, "planted.ipynb")
        run_all_or_fail(lab, RUN_TIMEOUT_S)
        problems = lab.output_problems()
        texts = lab.output_texts()
        toasts = lab.toasts()
        lab.shutdown_kernel()
    finally:
        context.close()
        server.stop()
    report = "\n".join(problems)
    for marker, kind in EXPECTED.items():
        found = [problem for problem in problems if marker in problem]
        assert len(found) == 1, (
            f"{marker!r} reported {len(found)} times, not once; output_problems():\n{report}\nthe outputs read: {texts}"
        )
        assert found[0].startswith(kind), f"{marker!r} reported as {found[0]!r}, not as {kind!r}"
    assert len(problems) == len(EXPECTED), f"clean outputs reported as problems:\n{report}"
    assert any("clean output" in text for text in texts), texts  # the clean outputs were read, and passed
    news = [toast for toast in toasts if NEWS_QUESTION in toast]
    assert not news, f"JupyterLab asks about news on screen (is the course's override installed?): {news}"
