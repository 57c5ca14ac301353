"""Build the course website: static HTML from the notebooks' stored outputs, offline, nothing re-executed.

    python scripts/build_site.py                     # → build/site/html (index.html is the course map)
    python scripts/build_site.py --out /tmp/site     # elsewhere
    bash course.sh site                              # the same, after installing the site's tools

Sphinx with myst-nb and sphinx-book-theme (configuration: ``docs/conf.py``). The script stages the pages in
``OUT/src``: the home page from the README (its introduction and course map, notebook links pointing at the pages,
the Colab badges as plain links), ``docs/teaching.md``, and every ``notebooks/*.ipynb`` with each widget replaced
by the picture it drew when the notebook was built (kept in the notebook's saved widget state) and a line on how
to run it live, and its Colab set-up cell folded (myst-nb's ``hide-input``: a closed toggle, not the install code).
Then it builds with warnings as errors, checks that every internal link and anchor resolves, lists the external
links (``OUT/external_links.txt``: listed, never fetched) and prints each page's weight.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat

from course_utils.colab import SETUP_CELL_MARKER, colab_link

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
LIVE_NOTE = ("*An interactive demo: here is the picture it drew when the notebook was built. To use it, run the "
             "notebook in JupyterLab (`bash course.sh lab`) or [open it in Colab]({colab}).*")  # fmt: skip
BAR_NOTE = "*A progress bar (training); its last state:* {text}"
PAGE_LIMIT = 5 * 1024 * 1024  # the target: a notebook page with its images ≤ 5 MB
# myst-nb's tag that folds a code cell's source into a closed <details>, and the toggle's words for the set-up cell.
HIDE_SOURCE = "hide-input"
SETUP_PROMPTS = {"code_prompt_show": "Show the set-up code (it installs the course on Colab)",
                 "code_prompt_hide": "Hide the set-up code"}  # fmt: skip


# ---------------------------------------------------------------- widgets → pictures


def _children(state: dict, model_id: str):
    """The model ``model_id`` and every model below it, depth first."""
    model = state.get(model_id)
    if model is None:
        return
    yield model
    for child in model["state"].get("children", []):
        yield from _children(state, child.removeprefix("IPY_MODEL_"))


def _text_of(value: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", value)).split())


def static_outputs(view: dict, state: dict, notebook_name: str) -> list:
    """What replaces one widget view: its picture and how to run it live, or a progress bar's last text."""
    models = list(_children(state, view["model_id"]))
    pictures = [output["data"]["image/png"] for model in models if model["model_name"] == "OutputModel"
                for output in model["state"].get("outputs", []) if "image/png" in output.get("data", {})]  # fmt: skip
    if pictures:
        title = next((_text_of(m["state"].get("value", "")) for m in models if m["model_name"] == "HTMLModel"
                      and _text_of(m["state"].get("value", ""))), "")  # fmt: skip
        note = (f"**{title}.** " if title else "") + LIVE_NOTE.format(colab=colab_link(notebook_name))
        return [nbformat.v4.new_output("display_data", data={"text/markdown": note}),
                nbformat.v4.new_output("display_data", data={"image/png": pictures[-1]})]  # fmt: skip
    texts = [_text_of(m["state"].get("value", "")) for m in models if m["model_name"] == "HTMLModel"]
    values = [m["state"] for m in models if m["model_name"] in ("FloatProgressModel", "IntProgressModel")]
    bar = " ".join(t for t in texts if t) or (f"{values[0].get('value')}/{values[0].get('max')}" if values else "")
    return [nbformat.v4.new_output("display_data", data={"text/markdown": BAR_NOTE.format(text=bar or "(empty)")})]


def fold_setup_cell(cell) -> None:
    """Fold the Colab set-up cell's source: a reader sees a one-line toggle, not the install code."""
    if cell.cell_type == "code" and cell.source.startswith(SETUP_CELL_MARKER):
        tags = cell.metadata.setdefault("tags", [])
        if HIDE_SOURCE not in tags:
            tags.append(HIDE_SOURCE)
        cell.metadata.setdefault("mystnb", {}).update(SETUP_PROMPTS)


def static_notebook(path: Path) -> tuple[nbformat.NotebookNode, int, int]:
    """The notebook with every widget view replaced by static outputs and the Colab set-up cell's source folded;
    how many views, how many as pictures."""
    notebook = nbformat.read(path, as_version=4)
    state = notebook.metadata.pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    replaced = pictures = 0
    for cell in notebook.cells:
        fold_setup_cell(cell)
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                outputs.append(output)
                continue
            static = static_outputs(view, state, path.name)
            outputs += static
            replaced += 1
            pictures += any("image/png" in output.get("data", {}) for output in static)
        if cell.cell_type == "code":
            cell.outputs = outputs
    return notebook, replaced, pictures


# ---------------------------------------------------------------- the home page


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)].rstrip() + "\n"


def home_page(readme: str, pages: list[str]) -> str:
    """The README's introduction and course map, with links that work on the site, and the table of contents."""
    title, rest = readme.split("\n", 1)
    intro = rest[: rest.index("\n## ")].strip()
    course_map = _section(readme, "## Course map")
    course_map = re.sub(r"\[!\[Open in Colab\]\([^)]*\)\]\(([^)]*)\)", r"[Open in Colab](\1)", course_map)
    course_map = re.sub(r"\]\(notebooks/([^)]+\.ipynb)\)", r"](\1)", course_map)
    course_map = re.sub(r"\[([^\]]+)\]\((?!https?://)([^)]+\.md)\)", r"\1", course_map)  # repository files: plain text
    toctree = "\n".join(["```{toctree}", ":hidden:", ":maxdepth: 1", "", "teaching", *pages, "```"])
    return (f"{title}\n\n{intro}\n\n"
            "Each notebook below is a page of this site, with its code, outputs and plots as they ran; the widgets "
            "appear as pictures. [Teaching with this course](teaching.md) says what to move in lecture.\n\n"
            f"{course_map}\n{toctree}\n")  # fmt: skip


# ---------------------------------------------------------------- staging, building, checking


def stage(src: Path) -> dict:
    """Write the pages Sphinx reads into ``src``; return the pages, the widget views and how many became pictures."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    pages, widgets, pictures = [], 0, 0
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        notebook, replaced, drawn = static_notebook(path)
        nbformat.write(notebook, src / path.name)
        pages.append(path.stem)
        widgets, pictures = widgets + replaced, pictures + drawn
    shutil.copy(DOCS / "teaching.md", src / "teaching.md")
    (src / "index.md").write_text(home_page((ROOT / "README.md").read_text(encoding="utf-8"), pages), encoding="utf-8")
    return {"pages": pages, "widgets": widgets, "pictures": pictures}


class _Links(HTMLParser):
    """The hrefs, srcs and ids of one HTML page."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "img", "link", "script", "iframe", "source"):
                self.links.append(attrs[key])


def check_links(html_dir: Path) -> tuple[list[str], list[str]]:
    """Every internal link and anchor of the built site: (problems, external links)."""
    parsed: dict[Path, _Links] = {}

    def page(path: Path) -> _Links:
        if path not in parsed:
            parser = _Links()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            parsed[path] = parser
        return parsed[path]

    problems, external = [], set()
    pages = [p for p in sorted(html_dir.rglob("*.html")) if "_static" not in p.relative_to(html_dir).parts]
    for path in pages:  # the theme's _static/*.html are template fragments, not pages
        for link in page(path).links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https") or link.startswith("//"):
                external.add(link)
                continue
            if parts.scheme in ("mailto", "javascript", "data"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{path.relative_to(html_dir)}: {link} → no such file")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in page(target).ids:
                problems.append(f"{path.relative_to(html_dir)}: {link} → no anchor #{parts.fragment}")
    return problems, sorted(external)


def page_weights(html_dir: Path, pages: list[str]) -> dict[str, int]:
    """Bytes of each notebook page with the images it shows."""
    weights = {}
    for name in pages:
        path = html_dir / f"{name}.html"
        images = set(re.findall(r'<img[^>]+src="([^"]+)"', path.read_text(encoding="utf-8")))
        weights[name] = path.stat().st_size + sum((path.parent / unquote(src)).stat().st_size for src in images
                                                  if (path.parent / unquote(src)).exists())  # fmt: skip
    return weights


def build(out: Path, *, quiet: bool = True) -> Path:
    """Stage, build with warnings as errors, check links; return the html directory (raises on any problem)."""
    from sphinx.cmd.build import build_main

    out = Path(out)
    staged = stage(out / "src")
    html_dir = out / "html"
    args = ["-W", "--keep-going", "-b", "html", "-c", str(DOCS), "-d", str(out / "doctrees"), "-j", "1",
            str(out / "src"), str(html_dir)]  # fmt: skip
    if build_main((["-q"] if quiet else []) + args) != 0:
        raise SystemExit("sphinx-build failed (warnings are errors): see the messages above")
    problems, external = check_links(html_dir)
    (out / "external_links.txt").write_text("\n".join(external) + "\n", encoding="utf-8")
    if problems:
        raise SystemExit("broken internal links:\n  " + "\n  ".join(problems))
    weights = page_weights(html_dir, staged["pages"])
    (out / "report.json").write_text(json.dumps({**staged, "external_links": len(external), "page_bytes": weights},
                                                indent=2) + "\n", encoding="utf-8")  # fmt: skip
    heavy = {name: size for name, size in weights.items() if size > PAGE_LIMIT}
    if heavy:
        raise SystemExit(f"pages over {PAGE_LIMIT // 2**20} MB: {heavy}")
    return html_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="where to build (default build/site)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    html_dir = build(args.out, quiet=True)
    report = json.loads((args.out / "report.json").read_text(encoding="utf-8"))
    print(f"[site] built {html_dir} in {time.perf_counter() - started:.0f} s: {len(report['pages'])} notebook pages, "
          f"{report['widgets']} widget views ({report['pictures']} demos as pictures, the rest progress bars as text), "
          f"{report['external_links']} external links listed in "
          f"{args.out / 'external_links.txt'} (not fetched)")  # fmt: skip
    for name, size in report["page_bytes"].items():
        print(f"[site]   {name}.html with its images: {size / 2**20:.2f} MB")
    print(f"[site] open {html_dir / 'index.html'}, or serve it: python -m http.server -d {html_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
