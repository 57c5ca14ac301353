"""The website (``scripts/build_site.py``): built from the stored outputs with warnings as errors, links checked.

The build itself fails on a Sphinx warning, a broken internal link or anchor, or a page over 5 MB; these tests
build it once and check what a reader gets: a page per notebook, the course map as the home page, the teaching
page, widgets as pictures (never as raw text), the Colab set-up code folded into a closed toggle, and nothing
fetched from outside. tests/notebooks/test_site_browser.py opens the pages in a real browser.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning", "ignore::DeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def build_site_module():
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    html_dir = build_site_module().build(out)
    return html_dir, json.loads((out / "report.json").read_text(encoding="utf-8")), out


def page_text(html_dir: Path, name: str) -> str:
    return (html_dir / name).read_text(encoding="utf-8")


def test_every_notebook_has_a_page_and_the_home_page_is_the_course_map(site):
    html_dir, report, _ = site
    assert report["pages"] == [path.stem for path in NOTEBOOKS]
    home = page_text(html_dir, "index.html")
    assert "Course map" in home and "Teaching with this course" in home
    for path in NOTEBOOKS:
        assert (html_dir / f"{path.stem}.html").exists()
        assert f'href="{path.stem}.html"' in home, path.stem  # the map's link goes to the page
        assert f"notebooks/student/{path.name}" in home  # … and its Colab link to the student edition
    assert home.count(">Open in Colab<") == len(NOTEBOOKS)
    assert "colab-badge.svg" not in home  # the badge is an external image: a plain link instead


def test_the_teaching_page_covers_every_notebook(site):
    html_dir, _, _ = site
    teaching = page_text(html_dir, "teaching.html")
    for path in NOTEBOOKS:
        assert f'href="{path.stem}.html"' in teaching, path.stem


def test_widgets_appear_as_pictures_never_as_raw_text(site):
    html_dir, report, _ = site
    views = sum(1 for path in NOTEBOOKS for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
                for output in cell.get("outputs", [])
                if "application/vnd.jupyter.widget-view+json" in output.get("data", {}))  # fmt: skip
    assert report["widgets"] == views > 0
    pictures = 0
    for path in NOTEBOOKS:
        text = page_text(html_dir, f"{path.stem}.html")
        for raw in ("VBox(children", "HBox(children", "Error displaying widget", "widget-view+json", "IPY_MODEL_",
                    "embed-amd.js"):  # fmt: skip
            assert raw not in text, (path.stem, raw)
        pictures += text.count("An interactive demo: here is the picture it drew")
    demos = sum(1 for path in NOTEBOOKS for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
                if cell["cell_type"] == "code" and "".join(cell["source"]).rstrip().endswith("demo.box"))  # fmt: skip
    assert pictures == demos == report["pictures"] == 17  # the other widget views are training progress bars


class _FoldedText(HTMLParser):
    """A page's text in two parts: what lies inside a closed ``<details>`` (collapsed until clicked), the rest."""

    def __init__(self):
        super().__init__()
        self.closed: list[bool] = []  # for each <details> we are in: closed (no "open" attribute)?
        self.folded: list[str] = []
        self.shown: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.closed.append("open" not in dict(attrs))

    def handle_endtag(self, tag):
        if tag == "details" and self.closed:
            self.closed.pop()

    def handle_data(self, data):
        (self.folded if any(self.closed) else self.shown).append(data)


def setup_code_lines(notebook: dict) -> list[str]:
    """The lines of the Colab set-up cell (the first code cell) that no other cell of the notebook has."""
    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    setup = next(source for source, cell in zip(sources, notebook["cells"]) if cell["cell_type"] == "code")
    assert setup.startswith(build_site_module().SETUP_CELL_MARKER)
    elsewhere = {line.strip() for source in sources if source != setup for line in source.splitlines()}
    return [line.strip() for line in setup.splitlines() if line.strip() and line.strip() not in elsewhere]


def test_the_colab_set_up_code_is_folded_away(site):
    html_dir, _, _ = site
    prompt = build_site_module().SETUP_PROMPTS["code_prompt_show"]
    for path in NOTEBOOKS:
        lines = setup_code_lines(json.loads(path.read_text(encoding="utf-8")))
        assert len(lines) >= 5, (path.stem, lines)  # the install code, not a line or two
        page = page_text(html_dir, f"{path.stem}.html")
        text = _FoldedText()
        text.feed(page)
        folded, shown = ({line.strip() for line in "".join(part).splitlines()} for part in (text.folded, text.shown))
        assert all(line in folded for line in lines), (path.stem, [line for line in lines if line not in folded])
        visible = [line for line in lines if line in shown]
        assert not visible, f"{path.stem}: set-up code shown outside a closed <details>: {visible}"
        assert page.count(html.escape(prompt)) == 1, path.stem  # one toggle, with the set-up cell's own words


def test_nothing_is_fetched_from_outside(site):
    html_dir, _, out = site
    for path in html_dir.rglob("*.html"):
        if "_static" in path.relative_to(html_dir).parts:
            continue
        text = path.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="((?:https?:)?//[^"]+)"', text)
        assert not remote, (path.name, remote)
    assert (html_dir / "_static" / "MathJax.js").exists()  # equations: MathJax from the installed package
    external = (out / "external_links.txt").read_text(encoding="utf-8").split()
    assert external and all(link.startswith("https://colab.research.google.com/") for link in external)


def test_pages_are_light(site):
    _, report, _ = site
    assert all(size <= 5 * 2**20 for size in report["page_bytes"].values()), report["page_bytes"]


def test_the_link_checker_finds_broken_links(tmp_path):
    checker = build_site_module()
    (tmp_path / "a.html").write_text('<a href="b.html#here">b</a><a href="missing.html">m</a>'
                                     '<a href="https://example.org/">x</a><img src="c.png">', encoding="utf-8")  # fmt: skip
    (tmp_path / "b.html").write_text('<h1 id="elsewhere">b</h1>', encoding="utf-8")
    problems, external = checker.check_links(tmp_path)
    assert sorted(problems) == ["a.html: b.html#here → no anchor #here", "a.html: c.png → no such file",
                                "a.html: missing.html → no such file"]  # fmt: skip
    assert external == ["https://example.org/"]
