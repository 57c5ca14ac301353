"""The students' release (``scripts/release.py``, ``bash course.sh release DIR``): no solution in any file of it, none
of the instructor's files, the Colab set-up cells and badges at the release's address, a course.sh that offers only
what the release can run; the slow tests run its notebooks under nbval from the release alone and build its website.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
URL = "https://github.com/example-org/nn-course-release"
COLAB = "https://colab.research.google.com/github/example-org/nn-course-release"  # Colab's address for URL's files
NOTEBOOK_NAMES = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOLUTION_MARK = "<summary>Solution</summary>"


sys.path.insert(0, str(ROOT / "scripts"))
import release as release_script  # noqa: E402


@pytest.fixture(scope="module")
def release():
    return release_script


@pytest.fixture(scope="module")
def release_dir(release, tmp_path_factory):
    dest = tmp_path_factory.mktemp("release") / "students"
    assert release.main([str(dest), "--url", URL]) == 0
    return dest


def release_files(dest: Path) -> list[Path]:
    return sorted(p for p in dest.rglob("*") if p.is_file())


def solution_cells() -> list[str]:
    """The source of every cell tagged "solution" in the stored notebooks."""
    cells = []
    for name in NOTEBOOK_NAMES:
        notebook = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
        cells += ["".join(c["source"]) for c in notebook["cells"] if "solution" in c["metadata"].get("tags", [])]
    assert len(cells) >= len(NOTEBOOK_NAMES) * 3, "every notebook has three or more solutions"
    return cells


# ---------------------------------------------------------------- what it holds


def test_no_solution_in_any_file_of_the_release(release, release_dir):
    assert release.leaks(release_dir) == []
    # By hand, read as bytes: no solution's mark, whole cell or whole code in any file (the notebooks' JSON parsed).
    texts = {}
    for path in release_files(release_dir):
        data = path.read_bytes()
        if b"\0" in data:  # not text: a checkpoint, a compressed corpus
            continue
        text = data.decode("utf-8", errors="ignore")
        if path.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        texts[path] = text
    for cell in solution_cells():
        code = cell.split("```python", 1)[-1].split("```", 1)[0].strip()
        assert code, f"a solution without a code block: {cell[:80]!r}"
        found = [str(p.relative_to(release_dir)) for p, text in texts.items() if cell in text or code in text]
        assert not found, f"a solution ({code[:60]!r}) is in {found}"
    assert not [p for p, text in texts.items() if SOLUTION_MARK in text]


def test_the_leak_check_finds_a_solution_wherever_it_is(release, release_dir, tmp_path):
    """``leaks`` flags a full notebook, a solution's code in the library and one line of it in the README."""
    code = solution_cells()[0].split("```python", 1)[-1].split("```", 1)[0]
    long_line = max(code.splitlines(), key=len).strip()
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK_NAMES[0], tmp_path / "notebooks")
    (tmp_path / "course_utils").mkdir()
    (tmp_path / "course_utils" / "answers.py").write_text(code, encoding="utf-8")
    (tmp_path / "README.md").write_text(f"Hint: `{long_line}`\n", encoding="utf-8")
    flagged = {line.split(":", 1)[0] for line in release.leaks(tmp_path)}
    assert flagged == {f"notebooks/{NOTEBOOK_NAMES[0]}", "course_utils/answers.py", "README.md"}


def test_the_release_holds_the_student_edition_and_none_of_the_instructors_files(release_dir):
    notebooks = sorted((release_dir / "notebooks").iterdir())
    assert [p.name for p in notebooks] == NOTEBOOK_NAMES  # notebooks/ holds the student edition, nothing else
    for path in notebooks:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        assert notebook["metadata"]["course"]["edition"] == "student"
        assert not [c for c in notebook["cells"] if "solution" in c["metadata"].get("tags", [])]
        assert not [c for c in notebook["cells"] if c.get("outputs")], f"{path.name}: a student makes the outputs"
    for withheld in ("notebooks/src", "notebooks/student", "scripts/grade.py", "scripts/build_notebooks.py", "grading",
                     "docs", "CONTRIBUTING.md", "BENCHMARKS.md", "benchmarks"):  # fmt: skip
        assert not (release_dir / withheld).exists(), withheld
    assert not list(release_dir.rglob("test_*.py")), "no test files: the instructor's tests hold the solutions"
    assert not list(release_dir.rglob("grading")), "the hidden tests' folder"
    for needed in ("course_utils/__init__.py", "data", "requirements/lock.txt", "pyproject.toml", "environment.yml",
                   "LICENSE", "scripts/lab_settings.py", "README.md", "course.sh", "conftest.py"):  # fmt: skip
        assert (release_dir / needed).exists(), needed
    assert [p.name for p in (release_dir / "scripts").iterdir()] == ["lab_settings.py"]


def test_colab_cells_and_badges_open_the_release(release, release_dir):
    colab = release.release_colab(release_dir)  # the release's own course_utils/colab.py
    assert colab.REPO_URL == URL
    readme = (release_dir / "README.md").read_text(encoding="utf-8")
    for name in NOTEBOOK_NAMES:
        notebook = json.loads((release_dir / "notebooks" / name).read_text(encoding="utf-8"))
        setup = "".join(notebook["cells"][1]["source"])
        assert setup == colab.setup_cell_source() and f'url, home = "{URL}", "/content/course"' in setup
        link = f"{COLAB}/blob/main/notebooks/{name}"
        assert f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({link})" in readme
        assert f"](notebooks/{name})" in readme
    assert colab.sync(release_dir) == [], "python -m course_utils.colab in the release would change nothing"
    for path in [release_dir / "README.md", *(release_dir / "notebooks").iterdir()]:
        others = set(re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", path.read_text(encoding="utf-8"))) - {URL}
        assert not others, f"{path.name} names {others}"
    assert "{{" not in readme, "a template placeholder left in the README"


def test_release_course_sh_offers_only_what_the_release_can_run(release_dir):
    course_sh = (release_dir / "course.sh").read_text(encoding="utf-8")
    assert subprocess.run(["bash", "-n", "course.sh"], cwd=release_dir).returncode == 0
    usage = subprocess.run(["bash", "course.sh", "no-such-command"], cwd=release_dir, capture_output=True, text=True)
    assert usage.returncode == 2
    assert usage.stderr.strip() == "usage: bash course.sh [lab|setup|check]"
    header = re.findall(r"^#   bash course\.sh (\w+)", course_sh, flags=re.M)
    branches = re.findall(r"^    ([\w*]+)\)", course_sh, flags=re.M)
    assert header == ["lab", "setup", "check"] and branches == ["setup", "lab", "check", "*"]
    named = set(re.findall(r"\b(?:scripts|requirements|tests|notebooks)/[\w./-]*\w", course_sh))
    assert named and all((release_dir / path).exists() for path in named), named
    for gone in ("test", "grade", "lecture", "newest", "floor", "lock", "bench", "site", "release"):
        assert f"\n    {gone})" not in course_sh
    main_sh = (ROOT / "course.sh").read_text(encoding="utf-8")
    assert "#   bash course.sh release DIR" in main_sh and 'exec "$PY" scripts/release.py "$@"' in main_sh


def test_the_command_refuses_what_it_cannot_do(release, release_dir, tmp_path, capsys):
    with pytest.raises(SystemExit) as refused:  # --otter and the like: argparse's clear error until one is added
        release.main([str(tmp_path / "a"), "--url", URL, "--otter"])
    assert refused.value.code == 2 and "unrecognized arguments: --otter" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        release.main([str(tmp_path / "b"), "--url", "https://gitlab.com/org/repo"])
    assert "is not https://github.com/OWNER/REPO" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="not empty: pass --force"):
        release.main([str(release_dir), "--url", URL])
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit, match="does not hold a release"):
        release.main([str(tmp_path / "other"), "--url", URL, "--force"])
    assert (tmp_path / "other" / "notes.txt").exists()
    with pytest.raises(SystemExit, match="outside the course"):
        release.main([str(ROOT / "notebooks" / "x"), "--url", URL])
    (release_dir / ".git").mkdir()  # a release pushed before: --force writes it anew and keeps its history
    (release_dir / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (release_dir / "stale.txt").write_text("from an earlier release", encoding="utf-8")
    assert release.main([str(release_dir), "--url", URL, "--force"]) == 0
    assert (release_dir / ".git" / "HEAD").exists() and not (release_dir / "stale.txt").exists()
    shutil.rmtree(release_dir / ".git")


# ---------------------------------------------------------------- run from the release alone


def release_env(dest: Path) -> dict:
    """The environment of a student's checkout: the release first on the path, /work/main's checkout nowhere."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "PYTHONPATH": str(dest), "COURSE_FAST": "1", "OMP_NUM_THREADS": "1"}


# Three representative notebooks: the first, one that loads trained checkpoints from data/ (05) and BERT (09, its
# tokenizer and models from data/, offline). All eleven passed too (446 cells), in 16 min on a busy 2-core machine.
NBVAL_NOTEBOOKS = ["01_linear_regression.ipynb", "05_rnn_language_models.ipynb", "09_bert.ipynb"]


@pytest.mark.slow
def test_release_notebooks_pass_nbval_from_the_release_alone(release_dir):
    env = release_env(release_dir)
    where = subprocess.run([sys.executable, "-c", "import course_utils; print(course_utils.__file__)"],
                           cwd=release_dir / "notebooks", env=env, capture_output=True, text=True)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(release_dir), f"another course_utils: {where.stdout}{where.stderr}"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                          *(f"notebooks/{name}" for name in NBVAL_NOTEBOOKS)],
                         cwd=release_dir, env=env, capture_output=True, text=True, timeout=1500)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout) and "failed" not in run.stdout.splitlines()[-1]


class _Text(HTMLParser):
    """An HTML page's text, as a reader sees it (tags dropped, entities read)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def page_text(path: Path) -> str:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return html.unescape("".join(parser.parts))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning", "ignore::DeprecationWarning")
def test_students_website_has_no_solution(release, release_dir, tmp_path):
    html_dir = release.build_student_site(release_dir, tmp_path / "site")
    pages = {p.stem: page_text(p) for p in html_dir.glob("[0-9][0-9]_*.html")}
    assert sorted(pages) == [Path(n).stem for n in NOTEBOOK_NAMES]
    assert not (html_dir / "teaching.html").exists(), "the lecture plans are the instructor's"
    for name in NOTEBOOK_NAMES:  # the code as a reader sees it is there: an exercise's first line
        notebook = json.loads((release_dir / "notebooks" / name).read_text(encoding="utf-8"))
        exercises = ["".join(c["source"]) for c in notebook["cells"] if "exercise" in c["metadata"].get("tags", [])]
        assert exercises and all(e.splitlines()[0].strip() in pages[Path(name).stem] for e in exercises)
    # Lines another cell holds are not a solution's; nor are lines of course_utils, which the students have and some
    # outputs print (show_source): 01 shows fit_torch_nn's "optimizer.zero_grad()". Whole solutions are never there.
    library = [p.read_text(encoding="utf-8") for p in (release_dir / "course_utils").rglob("*.py")]
    known = "\n".join(other_cells() + library)
    for cell in solution_cells():
        code = cell.split("```python", 1)[-1].split("```", 1)[0]
        assert not [name for name, text in pages.items() if code.strip() in text]
        lines = [line.strip() for line in code.splitlines() if len(line.strip()) >= 20 and line.strip() not in known]
        found = [(name, line) for name, text in pages.items() for line in lines if line in text]
        assert not found, found
    every_page = "\n".join(page_text(p) for p in html_dir.rglob("*.html"))
    assert SOLUTION_MARK not in every_page and not re.search(r"^Solution$", every_page, flags=re.M)
    links = (tmp_path / "site" / "external_links.txt").read_text(encoding="utf-8").split()
    assert links and all(link.startswith(f"{COLAB}/") for link in links)


def other_cells() -> list[str]:
    """Every cell of the stored notebooks that is not a solution."""
    sources = []
    for name in NOTEBOOK_NAMES:
        notebook = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
        sources += ["".join(c["source"]) for c in notebook["cells"] if "solution" not in c["metadata"].get("tags", [])]
    return sources
