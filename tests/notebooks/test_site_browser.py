"""Real browser: the static course site, served on localhost, opens in headless Chromium with the network blocked.

``scripts/build_site.py`` builds the site once for this module (into a temporary folder), and a small
``http.server`` serves its html folder on 127.0.0.1. The home page, ``teaching.html``, ``search.html`` and
every notebook page (``NN_name.html``, one per ``notebooks/*.ipynb``) open in headless Chromium, where every
request that does not go to localhost is aborted and recorded. A page fails on a console error, an uncaught
JavaScript error, a local response with an HTTP error, a request outside localhost, an image that did not
load, math that MathJax left as TeX source, or an internal link whose file is missing or whose ``#fragment``
names no element of the target page (Chromium's own /favicon.ico probe is not counted). A second test searches
for "attention" on ``search.html`` and waits for a result, so the search works offline too. Full-page screenshots go to ``tests/artifacts/site/``.

    python -m pytest tests/notebooks/test_site_browser.py -p no:xdist
    COURSE_SITE_HTML=/some/site/html python -m pytest tests/notebooks/test_site_browser.py   # a site built already

Outside CI a machine without Debian's ``chromium`` (or without playwright) skips it; in CI it fails.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from browser_support import LOCAL_HOSTS, Offline, wait_or_fail

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "scripts" / "build_site.py"
ARTIFACTS = ROOT / "tests" / "artifacts" / "site"
NOTEBOOK_PAGES = [path.stem for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]*.ipynb"))]
PAGES = ["index", "teaching", "search", *NOTEBOOK_PAGES]
SEARCH_WORD = "attention"
LOAD_TIMEOUT_MS = 30_000
# Chromium asks every origin for /favicon.ico by itself; the site (which may live in a sub-folder) does not link it.
BROWSER_PROBES = ("/favicon.ico",)

pytestmark = pytest.mark.browser

# Every <img> that has not loaded (not complete, or no pixels), after lazy ones were told to load now.
_BROKEN_IMAGES_JS = """() => Array.from(document.images)
  .filter((img) => !(img.complete && img.naturalWidth > 0))
  .map((img) => img.getAttribute('src') || img.currentSrc || '(no src)')"""
_IMAGES_SETTLED_JS = """() => Array.from(document.images).every((img) => img.complete)"""
_EAGER_IMAGES_JS = (
    """() => document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = 'eager'; })"""
)
# Each link's href as written and as the browser resolves it.
_LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]'))
  .map((a) => ({raw: a.getAttribute('href'), url: a.href}))"""
# Wait (up to a time limit, ms) until MathJax, if the page has it, has typeset the page: version 2's queue, or
# the startup promise of version 3 and later.
_MATH_TYPESET_JS = """async (limit) => {
  const mathjax = window.MathJax;
  let typeset = null;
  if (mathjax && mathjax.Hub && mathjax.Hub.Queue) typeset = new Promise((done) => mathjax.Hub.Queue(done));
  else if (mathjax && mathjax.startup && mathjax.startup.promise) typeset = mathjax.startup.promise;
  if (typeset) await Promise.race([typeset, new Promise((done) => setTimeout(done, limit))]);
}"""
# Math that is still TeX source (MathJax missing, or told to skip it), as its first characters.
_RAW_MATH_JS = r"""() => Array.from(document.querySelectorAll('.math'))
  .map((element) => element.innerText.trim())
  .filter((text) => ['\\(', '\\[', '\\begin', '$'].some((start) => text.startsWith(start)))
  .map((text) => text.slice(0, 60))"""
_SEARCH_RESULTS_JS = """() => Array.from(document.querySelectorAll('#search-results a, ul.search a'))
  .map((a) => a.getAttribute('href'))"""


@functools.lru_cache(maxsize=1)
def _build_script():
    """``scripts/build_site.py`` as a module (scripts/ is not a package)."""
    if not BUILD_SCRIPT.is_file():
        pytest.fail(f"{BUILD_SCRIPT.relative_to(ROOT)} is missing: it builds the site this test opens")
    spec = importlib.util.spec_from_file_location("build_site", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(browser, tmp_path_factory) -> Path:
    """The site's html folder: built once for the module (after the browser, so a skip comes first)."""
    given = os.environ.get("COURSE_SITE_HTML")
    if given:
        return Path(given).resolve()
    html = Path(_build_script().build(tmp_path_factory.mktemp("site"))).resolve()
    assert (html / "index.html").is_file(), f"build() returned {html}, which has no index.html"
    return html


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.fixture(scope="module")
def server(site):
    """The html folder over http on a free 127.0.0.1 port (not file://), in a daemon thread; yields its URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


@functools.lru_cache(maxsize=None)
def _anchors(path: Path) -> frozenset[str]:
    """Every id and name in an HTML file (parsed with the build script's own link parser)."""
    parser = _build_script()._Links()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


def _broken_links(links: list[dict], origin: str, site: Path) -> list[str]:
    """The internal links (same origin) whose file is missing or whose #fragment names no element there."""
    broken, seen = [], set()
    for link in links:
        parts = urlsplit(link["url"])
        if f"{parts.scheme}://{parts.netloc}" != origin or (parts.path, parts.fragment) in seen:
            continue
        seen.add((parts.path, parts.fragment))
        relative = unquote(parts.path).lstrip("/")
        target = site / relative
        if not relative or relative.endswith("/"):
            target = target / "index.html"
        if not target.resolve().is_relative_to(site) or not target.is_file():
            broken.append(f"broken link {link['raw']!r}: no file {relative or 'index.html'}")
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _anchors(target):
            broken.append(f"broken link {link['raw']!r}: no id or name {unquote(parts.fragment)!r} in {target.name}")
    return broken


class _SitePage:
    """One page of the site in a fresh offline context, with its console errors, page errors and HTTP errors."""

    def __init__(self, browser, server: str):
        self.offline = Offline(browser)
        self.page_errors: list[str] = []
        self.http_errors: list[str] = []
        self.page = self.offline.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        self.page.on("response", self._response)
        self.origin = server
        self.probes = {server + probe for probe in BROWSER_PROBES}

    def _console(self, message):
        where = message.location.get("url", "") if message.location else ""
        if message.type == "error" and where not in self.probes:
            self.offline.console_errors.append(f"{message.text} [{where}]" if where else message.text)

    def _response(self, response):
        parts = urlsplit(response.url)
        if response.status >= 400 and parts.hostname in LOCAL_HOSTS and parts.path not in BROWSER_PROBES:
            self.http_errors.append(f"HTTP {response.status} {response.url}")

    def open(self, relative: str) -> None:
        wait_or_fail(
            lambda: self.page.goto(f"{self.origin}/{relative}", wait_until="networkidle", timeout=LOAD_TIMEOUT_MS),
            f"{relative} did not load (network idle) within {LOAD_TIMEOUT_MS / 1000:.0f} s",
        )

    def problems(self, site: Path) -> list[str]:
        """Everything wrong with the open page, one line each."""
        self.page.evaluate(_EAGER_IMAGES_JS)
        self.page.wait_for_function(_IMAGES_SETTLED_JS, timeout=LOAD_TIMEOUT_MS)
        self.page.evaluate(_MATH_TYPESET_JS, LOAD_TIMEOUT_MS)
        raw_math = self.page.evaluate(_RAW_MATH_JS)
        return [
            *(f"console error: {text}" for text in self.offline.console_errors),
            *(f"uncaught page error: {text}" for text in self.page_errors),
            *self.http_errors,
            *(f"request outside localhost (blocked): {url}" for url in self.offline.blocked),
            *(f"image did not load: {src}" for src in self.page.evaluate(_BROKEN_IMAGES_JS)),
            *_broken_links(self.page.evaluate(_LINKS_JS), self.origin, site),
            *([f"math not typeset: {len(raw_math)} formula(s), the first {raw_math[0]!r}"] if raw_math else []),
        ]

    def close(self) -> None:
        self.offline.context.close()


@pytest.fixture
def site_page(browser, server):
    opened = _SitePage(browser, server)
    yield opened
    opened.close()


def test_every_notebook_has_a_page(site):
    pages = sorted(path.stem for path in site.glob("[0-9][0-9]*.html"))
    assert pages == NOTEBOOK_PAGES, f"notebook pages in the site {pages} differ from the notebooks {NOTEBOOK_PAGES}"


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_offline_without_errors(site, site_page, name):
    if not (site / f"{name}.html").is_file():
        pytest.fail(f"the site has no {name}.html")
    site_page.open(f"{name}.html")
    problems = site_page.problems(site)  # after its images and math are in: then the screenshot
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    site_page.page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    assert not problems, f"{name}.html has {len(problems)} problem(s):\n" + "\n".join(problems)


def test_search_finds_a_word_offline(site, site_page):
    site_page.open(f"search.html?q={SEARCH_WORD}")
    wait_or_fail(
        lambda: site_page.page.wait_for_function(f"() => ({_SEARCH_RESULTS_JS})().length > 0", timeout=LOAD_TIMEOUT_MS),
        lambda: (
            f"searching {SEARCH_WORD!r} on search.html showed no result link within {LOAD_TIMEOUT_MS / 1000:.0f} s; "
            f"problems: {site_page.problems(site)}"
        ),
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    site_page.page.screenshot(path=ARTIFACTS / "search-results.png", full_page=True)
    results = site_page.page.evaluate(_SEARCH_RESULTS_JS)
    assert any(href and href.split("?")[0].split("#")[0].endswith(".html") for href in results), results
    problems = site_page.problems(site)
    assert not problems, "search.html with a query has problems:\n" + "\n".join(problems)
