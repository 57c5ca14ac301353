"""bertviz offline: the HTML loads nothing from the network, the static picture, bad input, and stored notebooks.

A tiny random ``BertModel`` gives real attention tensors (2 layers × 2 heads). The browser half of the
check (the views really draw with the network blocked) is ``tests/notebooks/test_bertviz_browser.py``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from course_utils.validation import CourseInputError
from course_utils.widgets import bertviz_offline
from course_utils.widgets.bertviz_offline import attention_array, attention_figure, head_view, make_offline, model_view

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import build_notebooks  # noqa: E402

pytestmark = pytest.mark.parity  # a library release can change what this checks (course.sh floor, lock)

TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]
D3_HEADER = "https://d3js.org v5"
JQUERY_HEADER = "jQuery v"
# What must never be stored in a notebook: d3's, jQuery's and bertviz's headers, and the view's own marker.
SIGNATURES = ("d3js.org", "d3.v5", "jQuery JavaScript Library", "jquery.org/license",
              "Transformer Visualization D3 javascript code", bertviz_offline.MARKER)  # fmt: skip


def tiny_bert_attentions(n_layers: int = 2, n_heads: int = 2, length: int = len(TOKENS)) -> tuple[torch.Tensor, ...]:
    """Attention from a random 2-layer BERT: a tuple of n_layers tensors (1, n_heads, length, length)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=n_layers, num_attention_heads=n_heads,
                        intermediate_size=64, max_position_embeddings=32, attn_implementation="eager")  # fmt: skip
    model = BertModel(config).eval()
    with torch.no_grad():
        return model(torch.arange(1, length + 1)[None], output_attentions=True).attentions


@pytest.fixture(scope="module")
def attentions():
    return tiny_bert_attentions()


@pytest.fixture(scope="module")
def views(attentions):
    return {
        "head": head_view(attentions, TOKENS, display=False),
        "model": model_view(attentions, TOKENS, display=False),
    }


# --- the offline HTML ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["head", "model"])
def test_the_view_loads_no_script_from_anywhere(views, kind):
    html = views[kind]
    assert html.startswith(bertviz_offline.MARKER)
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, flags=re.I), "a <script src=...> is left"
    assert not re.search(r"<(link|img|iframe)[^>]*\b(href|src)\s*=\s*[\"']?(https?:)?//", html, flags=re.I)
    assert "require.min.js" not in html
    # The only URLs left are inside bertviz's require.config (which the stand-in ignores) and license comments.
    config = re.search(r"require\.config\(\{.*?\}\);", html, flags=re.S).group()
    assert "cdnjs" not in html.replace(config, "")


@pytest.mark.parametrize("kind", ["head", "model"])
def test_the_view_inlines_d3_and_jquery_and_the_requirejs_stand_in(views, kind):
    html = views[kind]
    assert html.count(D3_HEADER) == 1 and html.count(JQUERY_HEADER) == 1
    assert "function requirejs(deps, f)" in html and "requirejs(['jquery', 'd3']" in html
    assert html.count("<script") - html.count("</script>") <= 2, "inlined libraries mention <script> only in strings"
    assert html.rstrip().endswith("</script>") and html.lower().count("</script") == 1, (
        "nothing closes the script early"
    )
    assert 300_000 < len(html) < 450_000
    assert all(token in html for token in TOKENS)


def test_the_head_view_keeps_its_layer_menu_and_model_view_its_mode(attentions):
    head = head_view(attentions, TOKENS, layer=1, heads=[0], display=False)
    assert '"layer": 1' in head and '"heads": [0]' in head
    dark = model_view(attentions, TOKENS, display_mode="dark", include_layers=[1], display=False)
    assert '"display_mode": "dark"' in dark and '"include_layers": [1]' in dark


def test_a_sentence_pair_gets_bertviz_s_filter_menu(attentions):
    html = head_view(attentions, TOKENS, sentence_b_start=3, display=False)
    assert "Sentence A -> Sentence B" in html


def test_make_offline_refuses_html_it_does_not_recognise():
    with pytest.raises(RuntimeError, match="bertviz"):
        make_offline("<div>no script here</div>")


def test_display_true_shows_html_and_returns_none(attentions, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    assert head_view(attentions, TOKENS) is None
    assert len(shown) == 1 and shown[0].data.startswith(bertviz_offline.MARKER)


def test_missing_packages_fall_back_to_the_picture_or_raise(attentions, monkeypatch, capsys):
    real = bertviz_offline._package_file

    def without_mpld3(package, *parts):
        return None if package == "mpld3" else real(package, *parts)

    monkeypatch.setattr(bertviz_offline, "_package_file", without_mpld3)
    with pytest.raises(ModuleNotFoundError, match="pip install mpld3"):
        model_view(attentions, TOKENS, display=False)
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    assert model_view(attentions, TOKENS) is None
    assert "pip install mpld3" in capsys.readouterr().out
    assert len(shown) == 2 and all(len(figure.axes) == 2 for figure in shown), "one picture per layer"


# --- the static picture -------------------------------------------------------------------------------------


def test_the_figure_has_one_heatmap_per_head_with_token_labels(attentions):
    figure = attention_figure(attentions, TOKENS, layer=1)
    assert len(figure.axes) == 2
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    np.testing.assert_allclose(ax.images[0].get_array(), attentions[1][0, 0].numpy(), rtol=1e-6)


def test_the_figure_of_one_head_and_of_many_heads():
    assert len(attention_figure(tiny_bert_attentions(n_heads=1), TOKENS, layer=0, head=0).axes) == 1
    many = tiny_bert_attentions(n_layers=1, n_heads=8)
    figure = attention_figure(many, TOKENS, layer=0)
    assert len(figure.axes) == 8, "a 2 × 4 grid, no empty axes"
    figure = attention_figure(many, TOKENS, layer=0, head=5)
    assert len(figure.axes) == 1 and figure.axes[0].get_title() == "head 6"  # head index 5, counted from 1
    assert figure.get_suptitle().startswith("Layer 1:")


def test_the_figure_takes_arrays_too(attentions):
    stacked = torch.stack(attentions)[:, 0].numpy()  # (L, H, T, T)
    assert attention_array(stacked, TOKENS).shape == (2, 2, 5, 5)
    assert attention_array(stacked[0], TOKENS).shape == (1, 2, 5, 5)
    assert len(attention_figure(stacked, TOKENS, layer=0).axes) == 2


# --- bad input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: attention_figure(a, TOKENS, layer=2), "layer must be <= 1"),
        (lambda a: attention_figure(a, TOKENS, layer=-1), "layer must be >= 0"),
        (lambda a: attention_figure(a, TOKENS, layer=0, head=2), "head must be <= 1"),
        (lambda a: attention_figure(a, TOKENS[:4], layer=0), "5 positions but there are 4 tokens"),
        (lambda a: attention_figure((), TOKENS, layer=0), "attn_implementation='eager'"),
        (lambda a: attention_figure(a, [], layer=0), "5 positions but there are 0 tokens"),
        (lambda a: attention_figure(a, "the cat", layer=0), "list of strings"),
        (lambda a: head_view(a, None, display=False), "list of strings"),
        (lambda a: attention_figure(("x", "y"), TOKENS, layer=0), "not an array of numbers"),
        (lambda a: attention_figure((torch.cat([a[0], a[0]]),), TOKENS, layer=0), "batch size 2"),
        (lambda a: attention_figure(42, TOKENS, layer=0), "tuple of per-layer tensors"),
        (lambda a: head_view(a, TOKENS + ["x"], display=False), "5 positions but there are 6 tokens"),
        (lambda a: head_view(a, TOKENS, layer=5, display=False), "layer must be <= 1"),
        (lambda a: head_view(a, TOKENS, heads=[3], display=False), "heads must be <= 1"),
        (lambda a: head_view(a, TOKENS, sentence_b_start=5, display=False), "sentence_b_start must be <= 4"),
        (lambda a: model_view(a, TOKENS, include_layers=[], display=False), "include_layers is empty"),
        (lambda a: model_view(a, TOKENS, display_mode="grey", display=False), "display_mode"),
    ],
)
def test_bad_input_is_a_clear_course_input_error(attentions, call, message):
    with pytest.raises(CourseInputError, match=re.escape(message)):
        call(attentions)


def test_sdpa_attention_gives_the_eager_hint():
    from transformers import BertConfig, BertModel

    model = BertModel(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=64, attn_implementation="sdpa")).eval()  # fmt: skip
    with torch.no_grad():
        attentions = model(torch.arange(1, 6)[None], output_attentions=True).attentions
    if len(attentions):  # a transformers that falls back to eager by itself: nothing to check
        pytest.skip("this transformers returns sdpa attention")
    with pytest.raises(CourseInputError, match="eager"):
        head_view(attentions, TOKENS, display=False)


# --- stored notebooks ---------------------------------------------------------------------------------------


def test_build_notebooks_uses_the_module_s_marker():
    assert build_notebooks.BERTVIZ_MARKER == bertviz_offline.MARKER


def test_build_notebooks_strips_inlined_js_and_keeps_everything_else(views):
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("head_view(out.attentions, tokens)")
    bertviz_js = "/** @fileoverview Transformer Visualization D3 javascript code. */"  # plain bertviz's own output
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hello\n"),
        nbformat.v4.new_output("display_data", data={"text/html": views["head"], "text/plain": "<HTML object>"}),
        nbformat.v4.new_output("display_data", data={"text/html": "<b>kept</b>", "text/plain": "kept"}),
        nbformat.v4.new_output("display_data", data={"application/javascript": bertviz_js}),
    ]
    notebook.cells.append(cell)
    round_trip = nbformat.reads(nbformat.writes(notebook), as_version=4)  # as stored: strings may be line lists
    assert build_notebooks.strip_inlined_js(round_trip) == 2
    outputs = round_trip.cells[0].outputs
    assert outputs[0].text == "hello\n" and outputs[2].data["text/html"] == "<b>kept</b>"
    for index in (1, 3):
        assert outputs[index].data == {
            "text/markdown": build_notebooks.VIEW_NOTE,
            "text/plain": build_notebooks.VIEW_NOTE,
        }
    stored = nbformat.writes(round_trip)
    nbformat.validate(nbformat.reads(stored, as_version=4))
    assert not [s for s in SIGNATURES if s in stored]
    assert build_notebooks.strip_inlined_js(round_trip) == 0


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_stored_notebook_output_holds_third_party_js(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = [
        (index, signature)
        for index, cell in enumerate(notebook["cells"])
        for output in cell.get("outputs", [])
        for signature in SIGNATURES
        if signature in json.dumps(output)
    ]
    assert not found, (
        f"{path.name}: outputs hold third-party JS (cell, signature) {found}; rebuild with scripts/build_notebooks.py"
    )
