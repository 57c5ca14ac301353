"""Which cells the browser test runs (``course_utils.cell_slices.frontend_cells``): what JupyterLab draws, and what it
needs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from browser_support import WIDGET_VIEW, stage_notebooks

from course_utils.cell_slices import frontend_cells, needed_cells

WIDGET = {"output_type": "display_data", "data": {WIDGET_VIEW: {"model_id": "m"}, "text/plain": "VBox()"},
          "metadata": {}}  # fmt: skip
TEXT = {"output_type": "stream", "name": "stdout", "text": "a number\n"}


def notebook(*cells) -> nbformat.NotebookNode:
    """Code cells from (source, outputs) pairs, with a markdown cell in front."""
    code = [
        nbformat.v4.new_code_cell(source, outputs=[nbformat.from_dict(output) for output in outputs])
        for source, outputs in cells
    ]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# title"), *code])


def test_a_demo_keeps_what_it_reads_and_drops_the_measurements():
    nb = notebook(
        ("from course_utils import setup_notebook\ndevice = setup_notebook(seed=0)", [TEXT]),  # 0: always run
        ("from course_utils.widgets import Demo\nimport statistics", []),  # 1: binds Demo
        ("model = load('lm')", []),  # 2: binds model
        ("rows = measure(model)\nprint(rows)", [TEXT]),  # 3: a measurement nothing later reads
        ("for row in rows:\n    print(row)", [TEXT]),  # 4: a loop variable binds nothing
        ("statistics.fmean([1, 2])", [TEXT]),  # 5: a module's function changes no name
        ("Demo(model).box", [WIDGET]),  # 6: drawn by JupyterLab
        ("print('the end')", [TEXT]),  # 7: after the last demo
    )
    assert frontend_cells(nb) == {0, 1, 2, 6}


def test_a_method_call_or_an_attribute_set_may_change_the_object_a_demo_reads():
    nb = notebook(
        ("import torch", []),
        ("data = torch.ones(3)\nmodel = load('lm')", []),
        ("model.fit(data)", [TEXT]),  # may train the model the demo shows
        ("model.title = 'trained'", []),
        ("other = 1\nother.fit(2)", []),  # changes a name nothing later reads
        ("Demo(model).box", [WIDGET]),
    )
    assert frontend_cells(nb) == {0, 1, 2, 3, 5}


def test_what_a_cell_binds_before_it_reads_is_its_own():
    nb = notebook(
        ("import x", []),
        ("pairs = 1", []),  # shadowed by the next cell's own binding
        ("pairs = load()\nbest = pick(pairs)", []),
        ("[p for p in pairs]\nf = lambda q: q", []),  # comprehension variable and parameter: not reads
        ("Demo(best).box", [WIDGET]),
    )
    assert frontend_cells(nb) == {0, 2, 4}


@pytest.mark.parametrize("source", ["%%bash\necho hi", "print('unclosed"])
def test_a_cell_that_is_not_python_keeps_itself_and_everything_before_it(source):
    nb = notebook(("import x", []), ("a = 1", []), (source, [TEXT]), ("b = 2", [TEXT]), ("Demo(a).box", [WIDGET]))
    assert frontend_cells(nb) == {0, 1, 2, 4}


def test_magics_are_read_past_and_html_counts_as_drawn():
    html = {"output_type": "display_data", "data": {"text/html": "<b>x</b>", "text/plain": "x"}, "metadata": {}}
    nb = notebook(("%matplotlib inline\nimport x", []), ("table = x.t()", []), ("show(table)", [html]))
    assert frontend_cells(nb) == {0, 1, 2}


def test_a_notebook_without_saved_outputs_runs_whole():
    nb = notebook(("import x", []), ("y = 1", []), ("z = 2", []))
    assert frontend_cells(nb) == {0, 1, 2}


def test_staging_writes_the_slice_and_keeps_every_markdown_cell(tmp_path: Path):
    source = tmp_path / "source" / "notebooks"
    source.mkdir(parents=True)
    nb = notebook(("import x", []), ("rows = measure()", [TEXT]), ("Demo().box", [WIDGET]))
    nbformat.write(nb, source / "n.ipynb")
    staged = nbformat.read(stage_notebooks(source, tmp_path / "root", frontend_only=True) / "n.ipynb", as_version=4)
    assert [cell.source for cell in staged.cells] == ["# title", "import x", "Demo().box"]


def test_every_course_notebook_runs_each_cell_that_shows_a_widget():
    for path in sorted(Path(__file__).resolve().parents[2].glob("notebooks/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        widgets = {i for i, cell in enumerate(code) for output in cell.get("outputs", [])
                   if WIDGET_VIEW in output.get("data", {})}  # fmt: skip
        assert widgets and widgets <= frontend_cells(nb), path.name


def test_needed_cells_are_the_targets_the_set_up_and_what_the_targets_read():
    """The grader's slice: the exercise cells and what they read, never a measurement between them."""
    sources = ["setup()", "import np", "data = np.ones(3)", "slow = train()", "answer = data.sum()", "print(slow)"]
    assert needed_cells(sources, {4}) == {0, 1, 2, 4}
    assert needed_cells(sources, {5}) == {0, 3, 5}
    assert needed_cells(sources, set()) == {0}


def test_a_function_s_own_variables_are_neither_read_nor_bound():
    sources = ["setup()", "pairs = measure()", "def f(tokens):\n    pairs = zip(tokens, tokens[1:])\n    return list(pairs)",
               "def g():\n    global total\n    total = 1", "check(f)", "print(total)"]  # fmt: skip
    assert needed_cells(sources, {4}) == {0, 2, 4}, "f's pairs is its own, not cell 1's"
    assert needed_cells(sources, {5}) == {0, 3, 5}, "a global statement binds the notebook's name"
