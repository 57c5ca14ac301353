"""Write the students' repository: the course without its solutions, ready to push where students clone it.

    python3 scripts/release.py DIR --url https://github.com/ORG/REPO          # the release, in DIR
    python3 scripts/release.py DIR --url https://github.com/ORG/REPO --site   # and the students' website
    bash course.sh release DIR --url https://github.com/ORG/REPO               # the same, after set-up

What DIR gets: the student edition of every notebook in ``notebooks/`` (``build_notebooks.student_edition``: no
solution cells, no outputs), ``course_utils``, ``data``, what set-up and JupyterLab need (``requirements/``,
``pyproject.toml``, ``environment.yml``, ``scripts/lab_settings.py``), the root ``conftest.py`` with the nbval
support it reads (``bash course.sh check`` runs the notebooks as the suite does), LICENSE, a ``.gitignore``, a
student README (from ``docs/release/README.md``) and a ``course.sh`` that offers only ``lab``, ``setup`` and
``check``. Only files git tracks or would track are copied (not ``__pycache__``). What it never gets: the full
notebooks, ``notebooks/src``, ``scripts/grade.py``, ``grading/``, the tests, the docs. The release's Colab set-up
cells, badges and ``course_utils/colab.py`` (``REPO_URL``) name ``--url``; the badges open ``notebooks/<name>``
there. Before it finishes, the script checks that no solution is in any file it wrote (``leaks``: no three
consecutive lines of one anywhere, no line of 20 or more characters outside ``course_utils``).

``--site`` builds the students' website (default ``build/student_site``, outside the release) with
``scripts/build_site.py``'s tools: the release's notebooks with the outputs stored for them, the release README's
course map as the home page, no teaching page.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import SOLUTION, student_edition  # noqa: E402
from course_utils.colab import REPO_URL, SETUP_CELL_MARKER  # noqa: E402

TEMPLATE = ROOT / "docs" / "release" / "README.md"
# Copied as git tracks them: what the notebooks, set-up, JupyterLab and the self-check need.
COPIED = ("course_utils", "data", "requirements", "pyproject.toml", "environment.yml", "LICENSE",
          "scripts/lab_settings.py", "conftest.py", "tests/nbval_support.py", "tests/nbval_sanitize.cfg")  # fmt: skip
# The instructor's, never in a release (checked after writing it).
WITHHELD = ("notebooks/src", "notebooks/student", "scripts/grade.py", "scripts/build_notebooks.py", "grading", "docs",
            "tests/exercises", "tests/notebooks", "CONTRIBUTING.md", "BENCHMARKS.md", "benchmarks")  # fmt: skip
# course.sh's commands a release keeps; "check" is the release's own (CHECK_COMMAND).
KEPT_COMMANDS = ("lab", "setup")
CHECK_HEADER = """\
#   bash course.sh check [NOTEBOOK ...]
#                          set everything up, then run every notebook (or those named) top to bottom, in fast mode"""
CHECK_COMMAND = """\
    check)
        setup
        [ $# -gt 0 ] || set -- notebooks
        log "running the notebooks top to bottom (COURSE_FAST=1: shorter runs): $*"
        export COURSE_FAST=${COURSE_FAST:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
        exec "$PY" -m pytest -p no:cacheprovider "$@"
        ;;"""
RELEASE_COMMANDS = (*KEPT_COMMANDS, "check")
GITIGNORE = ".venv/\n__pycache__/\n*.egg-info/\n.pytest_cache/\n.ipynb_checkpoints/\nbuild/\n"
PATH_IN_TEXT = re.compile(r"\b(?:scripts|requirements|tests|notebooks|docs)/[\w./-]*\w")
GITHUB = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+")
MIN_LEAK = 20  # a solution's line this long or longer must appear nowhere in a release outside course_utils
RUN = 3  # nor this many consecutive lines of a solution anywhere


# ---------------------------------------------------------------- the files


def tracked_files(paths: tuple[str, ...]) -> list[str]:
    """The files under ``paths`` that git tracks or would (not ignored: no __pycache__), as on disk."""
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *paths]
    listed = subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return [name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file()]


def copy_tracked(dest: Path) -> int:
    """Copy ``COPIED`` into ``dest``; how many files."""
    names = tracked_files(COPIED)
    for name in names:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)
    return len(names)


def point_colab_at(dest: Path, url: str):
    """Set the release's ``course_utils/colab.py`` to ``url`` and its notebooks' folder; return that module."""
    path = dest / "course_utils" / "colab.py"
    text = path.read_text(encoding="utf-8")
    for name, value in (("REPO_URL", url), ("STUDENT_EDITION", "notebooks")):
        text, count = re.subn(rf'^{name} = "[^"]*"$', f'{name} = "{value}"', text, flags=re.M)
        if count != 1:
            raise SystemExit(f"course_utils/colab.py: no single line '{name} = \"...\"' to point at the release")
    path.write_text(text, encoding="utf-8")
    return release_colab(dest)


def release_colab(dest: Path):
    """The release's own ``course_utils/colab.py``, loaded by itself (it needs only the standard library)."""
    spec = importlib.util.spec_from_file_location("release_colab", dest / "course_utils" / "colab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stored_notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def release_notebook(path: Path, colab, *, outputs: bool = False) -> nbformat.NotebookNode:
    """The student edition of the stored notebook ``path``, its set-up cell pointing at the release."""
    edition = student_edition(nbformat.read(path, as_version=4), outputs=outputs)
    for cell in edition.cells:
        if cell.cell_type == "code" and cell.source.startswith(SETUP_CELL_MARKER):
            cell.source = colab.setup_cell_source()
    return edition


def notebook_title(notebook: nbformat.NotebookNode) -> str:
    """'Linear regression and gradient descent' from the first heading, '# 01 · Linear regression ...'."""
    heading = notebook.cells[0].source.splitlines()[0]
    return re.sub(r"^#\s*\d+\s*·\s*", "", heading).strip()


def readme(notebooks: dict[str, nbformat.NotebookNode], colab) -> str:
    """The student README: the template with the title and the course map, a badge a notebook."""
    rows = [f"| {name[:2]} | [{notebook_title(nb)}](notebooks/{name}) | {colab.colab_badge(name)} |"
            for name, nb in notebooks.items()]  # fmt: skip
    title = (ROOT / "README.md").read_text(encoding="utf-8").split("\n", 1)[0].removeprefix("# ")
    return TEMPLATE.read_text(encoding="utf-8").replace("{{TITLE}}", title).replace("{{COURSE_MAP}}", "\n".join(rows))


# ---------------------------------------------------------------- course.sh


def _entries(lines: list[str], start: re.Pattern, more: re.Pattern) -> list[tuple[str | None, list[str]]]:
    """``lines`` cut into (name, lines) entries: an entry opens at a ``start`` match (its group 1 the name) and takes
    the following ``more`` lines; any other line is an entry of its own, named None."""
    entries: list[tuple[str | None, list[str]]] = []
    for line in lines:
        opened = start.match(line)
        if opened:
            entries.append((opened.group(1), [line]))
        elif entries and entries[-1][0] is not None and more.match(line):
            entries[-1][1].append(line)
        else:
            entries.append((None, [line]))
    return entries


def release_course_sh(text: str) -> str:
    """course.sh for the release: the header and the case of ``KEPT_COMMANDS`` and ``check``, the shell functions
    they call, and a usage line that names only them."""
    head, case_open, rest = text.partition('case "$command_name" in\n')
    branches, esac, tail = rest.partition("\nesac\n")
    if not case_open or not esac:
        raise SystemExit("course.sh: no 'case \"$command_name\" in' ... 'esac' block to cut the release's from")
    header, body = head.split("set -euo pipefail\n", 1)
    kept = []
    for name, lines in _entries(
        header.splitlines(), re.compile(r"#   bash course\.sh (\w+)"), re.compile(r"# {20,}\S")
    ):
        if name is None or name in KEPT_COMMANDS:
            kept += lines
        if name == KEPT_COMMANDS[-1]:
            kept.append(CHECK_HEADER)
    cases = []
    for name, lines in _entries(branches.splitlines(), re.compile(r"    ([\w*]+)\)"), re.compile(r" {8}|$")):
        if name in KEPT_COMMANDS:
            cases += lines
        elif name == "*":
            cases += [CHECK_COMMAND, *lines]
    case_text = re.sub(r"usage: bash course\.sh \[[^\]]*\]", f"usage: bash course.sh [{'|'.join(RELEASE_COMMANDS)}]",
                       "\n".join(cases))  # fmt: skip
    return "\n".join(kept) + "\nset -euo pipefail\n" + used_only(body, case_text) + case_open + case_text + esac + tail


def used_only(body: str, calls: str) -> str:
    """``body`` (course.sh's functions and variables) less the functions and variables nothing in ``calls`` reaches."""
    blocks: list[tuple[str | None, list[str]]] = []
    for line in body.split("\n"):
        if blocks and blocks[-1][0] and blocks[-1][1][-1] != "}":  # inside a function: up to its closing brace
            blocks[-1][1].append(line)
        else:
            opened = re.match(r"(\w+)\(\) \{$", line)
            blocks.append((opened.group(1) if opened else None, [line]))
    used, reached = set(), calls
    while new := {name for name, _ in blocks if name and name not in used and re.search(rf"\b{name}\b", reached)}:
        used |= new
        reached += "\n".join("\n".join(lines) for name, lines in blocks if name in new)
    kept = []
    for name, lines in blocks:
        variable = re.match(r"([A-Z_0-9]+)=", lines[0]) if name is None else None
        if (name is None and not variable) or name in used or (variable and f"${variable.group(1)}" in reached):
            kept += lines
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept))


def without_dangling_paths(script: str, dest: Path) -> str:
    """``script`` with each comment's mention of a file ``dest`` lacks dropped: its parenthesis, else its line."""
    lines = []
    for line in script.split("\n"):
        if line.lstrip().startswith("# "):
            for path in [p for p in PATH_IN_TEXT.findall(line) if not (dest / p).exists()]:
                line = re.sub(rf" \([^()]*{re.escape(path)}[^()]*\)", "", line)
            if any(not (dest / path).exists() for path in PATH_IN_TEXT.findall(line)):
                continue
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------- the checks


def _stripped(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def solution_texts() -> tuple[set[str], set[str]]:
    """What of the stored notebooks' solution cells must appear nowhere in a release, less what their other cells
    hold too (an exercise's ``def`` line): (runs, lines). A run is a whole cell or ``RUN`` consecutive lines, stripped
    and joined by newlines; a line is one of ``MIN_LEAK`` characters or more, stripped."""
    runs, lines, shared = set(), set(), set()
    for path in stored_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            if SOLUTION not in cell.metadata.get("tags", []):
                shared |= set(_stripped(cell.source))
                continue
            code = _stripped(cell.source)
            runs |= {"\n".join(code)} | {"\n".join(code[i : i + RUN]) for i in range(len(code) - RUN + 1)}
            lines |= {line for line in code if len(line) >= MIN_LEAK}
    return runs - shared, lines - shared


def text_of(path: Path) -> str | None:
    """A file's text, its lines stripped (a notebook's: its cells' sources and outputs); None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data:  # a checkpoint, a compressed corpus
        return None
    text = data.decode("utf-8", errors="ignore")
    if path.suffix == ".ipynb":
        cells = nbformat.reads(text, as_version=4).cells
        text = "\n".join(c.source + "".join(str(o.get("text", "")) for o in c.get("outputs", [])) for c in cells)
    return "\n".join(_stripped(text))


def leaks(dest: Path) -> list[str]:
    """'file: text' for each solution run found in a file under ``dest``, and each solution line found outside its
    ``course_utils``: the course's own code, which the notebooks import, shares single lines with the solutions
    (``optimizer.zero_grad()``), never three in a row."""
    runs, lines = solution_texts()
    found = []
    for path in sorted(p for p in dest.rglob("*") if p.is_file() and ".git" not in p.relative_to(dest).parts):
        name = path.relative_to(dest)
        text = text_of(path)
        if text is None:
            continue
        wanted = runs if name.parts[0] == "course_utils" else runs | lines
        found += [f"{name}: {piece[:60]!r}" for piece in sorted(wanted) if piece in text]
    return found


def check_release(dest: Path, url: str) -> None:
    """Raise SystemExit if the release holds something it must not: a withheld path, a solution line, or a GitHub
    address other than ``url`` in a notebook."""
    present = [name for name in WITHHELD if (dest / name).exists()]
    problems = [f"withheld but present: {name}" for name in present] + [f"solution text in {s}" for s in leaks(dest)]
    for path in sorted((dest / "notebooks").glob("*.ipynb")):
        problems += [f"{path.name} names {u}" for u in set(GITHUB.findall(path.read_text(encoding="utf-8"))) - {url}]
    if problems:
        raise SystemExit("the release is not fit for students:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------- the release


def prepare(dest: Path, force: bool) -> None:
    """An empty ``dest``: made if missing; with ``force``, an earlier release's emptied of all but its .git."""
    if dest.exists() and any(dest.iterdir()):
        if not force:
            raise SystemExit(f"{dest} is not empty: pass --force to replace its files (its .git is kept)")
        if not all((dest / name).exists() for name in ("course.sh", "course_utils", "notebooks")):
            raise SystemExit(f"{dest} does not hold a release (course.sh, course_utils, notebooks): not emptying it")
        for child in dest.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    dest.mkdir(parents=True, exist_ok=True)


def release(dest: Path, url: str, *, force: bool = False) -> dict:
    """Write the release into ``dest``; return what it holds (files, bytes, notebooks)."""
    dest = dest.resolve()
    if dest == ROOT or ROOT in dest.parents and not dest.is_relative_to(ROOT / "build"):
        raise SystemExit(f"{dest}: write the release outside the course (or under build/)")
    prepare(dest, force)
    copied = copy_tracked(dest)
    colab = point_colab_at(dest, url)
    notebooks = {path.name: release_notebook(path, colab) for path in stored_notebooks()}
    (dest / "notebooks").mkdir()
    for name, notebook in notebooks.items():
        nbformat.write(notebook, dest / "notebooks" / name)
    (dest / "README.md").write_text(readme(notebooks, colab), encoding="utf-8")
    course_sh = dest / "course.sh"
    course_sh.write_text(
        without_dangling_paths(release_course_sh((ROOT / "course.sh").read_text(encoding="utf-8")), dest),
        encoding="utf-8",
    )
    course_sh.chmod(0o755)
    (dest / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    check_release(dest, url)
    files = [p for p in dest.rglob("*") if p.is_file() and ".git" not in p.relative_to(dest).parts]
    return {"copied": copied, "files": len(files), "bytes": sum(p.stat().st_size for p in files),
            "notebooks": len(notebooks)}  # fmt: skip


# ---------------------------------------------------------------- the students' website


def build_student_site(dest: Path, out: Path) -> Path:
    """The website of the release in ``dest`` into ``out`` (``out/html``), with ``scripts/build_site.py``'s build:
    its pages are the release's notebooks with the outputs stored for them, its home page the release README's."""
    spec = importlib.util.spec_from_file_location("student_build_site", ROOT / "scripts" / "build_site.py")
    site = importlib.util.module_from_spec(spec)  # a module of its own: its stage is replaced below, nowhere else
    spec.loader.exec_module(site)
    colab = release_colab(dest)

    def stage(src: Path) -> dict:
        if src.exists():
            shutil.rmtree(src)
        src.mkdir(parents=True)
        pages, widgets, pictures = [], 0, 0
        with tempfile.TemporaryDirectory() as scratch:
            for path in stored_notebooks():
                edition = release_notebook(path, colab, outputs=True)
                handed_out = nbformat.read(dest / "notebooks" / path.name, as_version=4)
                if [c.source for c in edition.cells] != [c.source for c in handed_out.cells]:
                    raise SystemExit(f"{dest / 'notebooks' / path.name} is not this course's: release it again")
                nbformat.write(edition, Path(scratch) / path.name)
                notebook, replaced, drawn = site.static_notebook(Path(scratch) / path.name)
                text = nbformat.writes(notebook).replace(site.colab_link(path.name), colab.colab_link(path.name))
                (src / path.name).write_text(text, encoding="utf-8")
                pages.append(path.stem)
                widgets, pictures = widgets + replaced, pictures + drawn
        index = home_page((dest / "README.md").read_text(encoding="utf-8"), pages)
        (src / "index.md").write_text(index, encoding="utf-8")
        return {"pages": pages, "widgets": widgets, "pictures": pictures}

    site.stage = stage
    return site.build(out)


def home_page(readme_text: str, pages: list[str]) -> str:
    """The release README's title, introduction and course map, with links that work on the site."""
    title, rest = readme_text.split("\n", 1)
    intro = rest[: rest.index("\n## ")].strip()
    start = readme_text.index("## Course map")
    end = readme_text.find("\n## ", start + 1)
    course_map = readme_text[start:end].rstrip()
    course_map = re.sub(r"\[!\[Open in Colab\]\([^)]*\)\]\(([^)]*)\)", r"[Open in Colab](\1)", course_map)
    course_map = re.sub(r"\]\(notebooks/([^)]+\.ipynb)\)", r"](\1)", course_map)
    toctree = "\n".join(["```{toctree}", ":hidden:", ":maxdepth: 1", "", *pages, "```"])
    return f"{title}\n\n{intro}\n\n{course_map}\n\n{toctree}\n"


# ---------------------------------------------------------------- the command


def github_url(url: str) -> str:
    url = url.rstrip("/").removesuffix(".git")
    if not re.fullmatch(GITHUB.pattern, url):
        raise argparse.ArgumentTypeError(f"{url!r} is not https://github.com/OWNER/REPO (Colab opens GitHub's)")
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="the folder to write the release into (made if missing)")
    parser.add_argument("--url", type=github_url, help="the release's repository, https://github.com/OWNER/REPO, "
                        "which its badges and set-up cells open (default: the course's, with a warning)")  # fmt: skip
    parser.add_argument("--force", action="store_true", help="replace the files of a DEST that is not empty")
    parser.add_argument("--site", nargs="?", type=Path, const=ROOT / "build" / "student_site", metavar="OUT",
                        help="also build the students' website into OUT (default build/student_site)")  # fmt: skip
    # Further options (--otter, issue 43) are added here; an unknown one stops with argparse's error.
    args = parser.parse_args(argv)
    url = args.url
    if url is None:
        url = REPO_URL
        print(f"[release] WARNING: no --url: the badges and set-up cells open {url}, the course's own repository;"
              " pass --url https://github.com/OWNER/REPO for the students' one", file=sys.stderr)  # fmt: skip
    report = release(args.dest, url, force=args.force)
    print(
        f"[release] wrote {args.dest}: {report['files']} files, {report['bytes'] / 2**20:.1f} MB, "
        f"{report['notebooks']} notebooks (student edition), Colab at {url}; no solution line found in it"
    )
    if args.site:
        print(f"[release] the students' website: {build_student_site(args.dest.resolve(), args.site)}/index.html")
    print(
        f"[release] to publish: cd {args.dest} && git init -b main && git add . && git commit -m 'Course release' "
        f"&& git remote add origin {url} && git push -u origin main"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
