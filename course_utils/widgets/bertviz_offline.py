"""bertviz's head view and model view with no network: its JavaScript libraries come from installed packages.

bertviz 1.4 draws with d3 and jQuery, which its HTML asks require.js to fetch from a CDN when the cell is
displayed; offline (or in JupyterLab, which has no require.js) the cell shows nothing or
"Javascript Error: require is not defined". Here the HTML bertviz returns (``html_action="return"``) is
rewritten at display time:

- the ``<script src=...require.min.js>`` tag is removed;
- d3 5.x is inlined from the ``mpld3`` package (``mpld3/js/d3.v5.min.js``) and jQuery from
  ``XStatic-jQuery`` (``xstatic/pkg/jquery/data/jquery.min.js``); nothing is copied into this repository;
- a small ``requirejs(deps, f)`` stand-in hands those two to bertviz's own code, which is unchanged.

Each view is about 350 KB of HTML, so ``scripts/build_notebooks.py`` replaces it with a one-line note in the
stored notebooks (it finds the views by ``MARKER``); a reader re-runs the cell to see it.

    head_view(out.attentions, tokens)                     # one layer, every head: lines from token to token
    model_view(out.attentions, tokens)                    # every layer × head as thumbnails
    attention_figure(out.attentions, tokens, layer=0)     # the static picture (no JavaScript at all)

If ``mpld3`` or ``XStatic-jQuery`` (or bertviz) is missing, ``head_view``/``model_view`` print one line that
says what to ``pip install`` and show the static picture instead; with ``display=False`` they raise
``ModuleNotFoundError`` with that advice.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from course_utils.validation import CourseInputError, check_int

# An HTML comment at the start of every offline view; build_notebooks.py strips outputs that carry it.
MARKER = "<!-- course bertviz offline -->"
_SCRIPT_SRC = re.compile(r"<script\b[^>]*\bsrc\s*=[^>]*>\s*</script>", flags=re.I)
_INLINE_SCRIPT = re.compile(r"<script type=\"text/javascript\">(.*?)</script>", flags=re.S)

# bertviz's JS does `require.config({paths: ...})` and then `requirejs(['jquery', 'd3'], function ($, d3) {...})`.
# The libraries run inside a function where `define`, `module` and `exports` are hidden, so neither registers
# with a page's own loader (classic Jupyter has require.js): d3 fills `lib.d3`, and jQuery is taken back out
# of `window` with noConflict(true), which restores whatever `$`/`jQuery` the page had.
_WRAPPER = """(function () {
var define, module, exports;
var lib = {};
(function () {
%(d3)s
}).call(lib);
(function () {
%(jquery)s
}).call(lib);
var modules = {d3: lib.d3, jquery: window.jQuery.noConflict(true)};
var require = {config: function () {}};
function requirejs(deps, f) { f.apply(null, deps.map(function (name) { return modules[name]; })); }
%(bertviz)s
})();"""


# --- input ------------------------------------------------------------------------------------------------


def attention_array(attention, tokens) -> np.ndarray:
    """The attention as one float array (L, H, T, T), checked against ``tokens``; raises ``CourseInputError``.

    ``attention``: a tuple of per-layer (1, H, T, T) tensors, as a Hugging Face model returns with
    ``output_attentions=True``; or one array or tensor (L, H, T, T), or (H, T, T) for a single layer.
    """
    if isinstance(attention, np.ndarray) or hasattr(attention, "detach"):
        ndim = len(attention.shape)
        if ndim not in (3, 4, 5):
            raise CourseInputError(f"attention has shape {tuple(attention.shape)}; expected (L, H, T, T)")
        attention = [attention] if ndim == 3 else list(attention)  # L × (H, T, T) or L × (1, H, T, T)
    try:
        layers = list(attention)
    except TypeError:
        kind = type(attention).__name__
        raise CourseInputError(f"attention must be a tuple of per-layer tensors, got {kind}") from None
    if not layers:
        raise CourseInputError(
            "attention is empty: was the model run with output_attentions=True and loaded with "
            "attn_implementation='eager'? (sdpa returns an empty tuple)"
        )
    arrays = []
    for index, layer in enumerate(layers):
        try:
            array = np.asarray(layer.detach().cpu().float() if hasattr(layer, "detach") else layer, dtype=np.float64)
        except (TypeError, ValueError):
            raise CourseInputError(
                f"attention layer {index} is not an array of numbers: {type(layer).__name__}"
            ) from None
        if array.ndim == 4:
            if array.shape[0] != 1:
                raise CourseInputError(f"attention layer {index} has batch size {array.shape[0]}; pass one sentence")
            array = array[0]
        if array.ndim != 3 or array.shape[1] != array.shape[2]:
            raise CourseInputError(f"attention layer {index} has shape {array.shape}; expected (1, heads, T, T)")
        arrays.append(array)  # (H, T, T)
    if len({a.shape for a in arrays}) != 1:
        raise CourseInputError(f"the attention layers differ in shape: {sorted({a.shape for a in arrays})}")
    stacked = np.stack(arrays)  # (L, H, T, T)
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise CourseInputError(f"tokens must be a list of strings, one per position; got {tokens!r:.80}")
    if len(tokens) != stacked.shape[-1]:
        raise CourseInputError(
            f"the attention covers {stacked.shape[-1]} positions but there are {len(tokens)} tokens: {list(tokens)}"
        )
    if stacked.shape[-1] == 0:
        raise CourseInputError("there are no tokens to show")
    return stacked


def _check_indices(name: str, values, count: int) -> list[int] | None:
    if values is None:
        return None
    values = [check_int(name, v, minimum=0, maximum=count - 1) for v in values]
    if not values:
        raise CourseInputError(f"{name} is empty; leave it out (None) for all of them")
    return values


def _bertviz_arguments(attention, tokens, sentence_b_start):
    array = attention_array(attention, tokens)  # (L, H, T, T)
    if sentence_b_start is not None:
        sentence_b_start = check_int("sentence_b_start", sentence_b_start, minimum=1, maximum=len(tokens) - 1)
    import torch

    layers = tuple(torch.from_numpy(layer[None]).float() for layer in array)  # L × (1, H, T, T), bertviz's form
    return array, layers, list(tokens), sentence_b_start


# --- the offline HTML ---------------------------------------------------------------------------------------


def _package_file(package: str, *parts: str) -> Path | None:
    """A file inside an installed package, found without importing it; None when absent."""
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder).joinpath(*parts)
        if path.is_file():
            return path
    return None


def asset_paths() -> dict[str, Path]:
    """Where the installed d3 and jQuery are; raises ``ModuleNotFoundError`` saying what to install."""
    found = {
        "d3": _package_file("mpld3", "js", "d3.v5.min.js"),
        "jquery": _package_file("xstatic.pkg.jquery", "data", "jquery.min.js"),
    }
    missing = [package for package, path in zip(("mpld3", "XStatic-jQuery"), found.values()) if path is None]
    if importlib.util.find_spec("bertviz") is None:
        missing.insert(0, "bertviz")
    if missing:
        raise ModuleNotFoundError(
            f"the offline bertviz view needs {' and '.join(missing)}: pip install {' '.join(missing)} "
            "(attention_figure draws a static picture without them)"
        )
    return found


def _script_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\n//# sourceMappingURL=\S*\s*$", "\n", text)  # no map for the browser to ask for
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.I)  # cannot close the <script> it sits in


def make_offline(bertviz_html: str) -> str:
    """Rewrite the HTML of bertviz's ``html_action="return"`` so it needs no network (see the module's docstring)."""
    scripts = _INLINE_SCRIPT.findall(bertviz_html)
    if len(scripts) != 1 or "requirejs(" not in scripts[0]:
        raise RuntimeError(
            "bertviz's HTML is not as expected (one inline script calling requirejs): has bertviz changed?"
        )
    body = _INLINE_SCRIPT.sub("", _SCRIPT_SRC.sub("", bertviz_html))  # the <div>s bertviz draws into
    assets = asset_paths()
    libraries = {name: _script_text(path) for name, path in assets.items()}
    script = _WRAPPER % {**libraries, "bertviz": scripts[0]}
    return f'{MARKER}\n{body.strip()}\n<script type="text/javascript">\n{script}\n</script>\n'


def _present(make_html, fallback, display: bool) -> str | None:
    """Show the offline view (or return its HTML); without the packages, say so in one line and show ``fallback()``."""
    from IPython.display import HTML
    from IPython.display import display as ipython_display

    try:
        asset_paths()
    except ModuleNotFoundError as missing:
        if not display:
            raise
        print(f"({missing}; here is the static picture instead.)")
        for figure in fallback():
            ipython_display(figure)
        return None
    html = make_offline(make_html().data)
    if not display:
        return html
    ipython_display(HTML(html))
    return None


def head_view(attention, tokens, *, sentence_b_start=None, layer=None, heads=None, display=True) -> str | None:
    """bertviz's head view, offline: one layer (a menu picks it), each head's lines from every token to every token.

    ``attention``: per-layer tensors (1, H, T, T) (``output_attentions=True``); ``tokens``: T strings;
    ``sentence_b_start``: where sentence B begins, for a pair; ``layer``/``heads``: what is shown first.
    Returns the HTML with ``display=False``, else shows it and returns None.
    """
    array, layers, tokens, sentence_b_start = _bertviz_arguments(attention, tokens, sentence_b_start)
    if layer is not None:
        layer = check_int("layer", layer, minimum=0, maximum=array.shape[0] - 1)
    heads = _check_indices("heads", heads, array.shape[1])

    def make_html():
        from bertviz import head_view as bertviz_head_view

        return bertviz_head_view(layers, tokens, sentence_b_start=sentence_b_start, layer=layer, heads=heads,
                                 html_action="return")  # fmt: skip

    def fallback():
        return [attention_figure(array, tokens, layer=layer or 0, head=heads[0] if heads and len(heads) == 1 else None)]

    return _present(make_html, fallback, display)


def model_view(attention, tokens, *, sentence_b_start=None, include_layers=None, include_heads=None,
               display_mode="light", display=True) -> str | None:  # fmt: skip
    """bertviz's model view, offline: a thumbnail per layer (rows) and head (columns); click one to enlarge it.

    ``include_layers``/``include_heads``: which to show (default all); ``display_mode``: "light" or "dark".
    Returns the HTML with ``display=False``, else shows it and returns None.
    """
    array, layers, tokens, sentence_b_start = _bertviz_arguments(attention, tokens, sentence_b_start)
    include_layers = _check_indices("include_layers", include_layers, array.shape[0])
    include_heads = _check_indices("include_heads", include_heads, array.shape[1])
    if display_mode not in ("light", "dark"):
        raise CourseInputError(f"display_mode must be 'light' or 'dark', got {display_mode!r}")

    def make_html():
        from bertviz import model_view as bertviz_model_view

        return bertviz_model_view(layers, tokens, sentence_b_start=sentence_b_start, display_mode=display_mode,
                                  include_layers=include_layers, include_heads=include_heads, html_action="return")  # fmt: skip

    def fallback():
        return [attention_figure(array, tokens, layer=i) for i in include_layers or range(array.shape[0])]

    return _present(make_html, fallback, display)


# --- the static picture -------------------------------------------------------------------------------------


def attention_figure(attention, tokens, *, layer, head=None) -> Figure:
    """A static picture of one layer's attention: a heatmap per head (or only ``head``), rows attend to columns.

    Works where no JavaScript runs (a PDF, a stored notebook, a terminal). Row i, column j is how much
    token i (the query) attends to token j (the key); each row sums to 1. ``layer`` and ``head`` are indices from 0,
    as bertviz takes them; the titles count from 1, as the notebooks' prose does.
    """
    weights = attention_array(attention, tokens)  # (L, H, T, T)
    n_layers, n_heads, length, _ = weights.shape
    layer = check_int("layer", layer, minimum=0, maximum=n_layers - 1)
    heads = list(range(n_heads)) if head is None else [check_int("head", head, minimum=0, maximum=n_heads - 1)]
    columns = min(len(heads), 4)
    rows = math.ceil(len(heads) / columns)
    side = max(2.2, 0.28 * length + 1.2)  # inches per heatmap: room for the token labels
    figure = Figure(figsize=(columns * side + 0.6, rows * side + 0.8), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)  # (rows, columns) of Axes
    for index, ax in enumerate(grid.flat):
        if index >= len(heads):
            ax.remove()
            continue
        ax.imshow(weights[layer, heads[index]], cmap="Blues", vmin=0.0, vmax=1.0)  # (T, T)
        ax.set_title(f"head {heads[index] + 1}")
        ax.set_xticks(range(length), tokens, rotation=90)
        ax.set_yticks(range(length), tokens)
        if index % columns == 0:
            ax.set_ylabel("query (attends)")
        if index + columns >= len(heads):  # nothing below it
            ax.set_xlabel("key (attended to)")
    figure.suptitle(f"Layer {layer + 1}: attention weights (darker = more)")
    return figure
