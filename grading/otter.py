"""The hidden tests as otter-grader autograders, one zip per notebook, for Gradescope (or ``otter run``).

    python3 -m grading.otter OUT [NN ...] [--release-url URL]   # OUT/05_rnn_language_models-autograder.zip, ...

Each zip is what ``otter generate`` writes (otter's own generator makes it): ``otter_config.json``,
``environment.yml`` (otter's conda environment, the course's requirements added to its pip list), Gradescope's
``setup.sh``, ``run_autograder`` (``COURSE_FAST=1`` added: the course's grader runs submissions in fast mode too)
and ``run_otter.py``; ``tests/`` with one exception-based test file per exercise (one hidden ``test_case`` per
hidden ``Case``, its points); and ``files/``, which otter copies next to the submission before it runs it:
``otter_cases/`` with each exercise's inputs (``torch.save``, drawn here when the zip is written) and the part of
``grading`` that judges them (this module, ``spec``, ``judging``, ``export``, what they import, and the notebook's
``hidden/nbNN.py``), so that each case is judged by the course grader's own judge, on the same trip of the
arguments in and of the answer out (``grading.judging.call_guarded``, ``roundtrip``), through the same probe.

Where otter judges differently from ``grading.submission``: otter runs every cell of the notebook (its check calls
too, errors ignored), with no time limit per cell or call and no sandbox, and it judges *inside the student's
process*: a submission can read the inputs in ``otter_cases/`` and the judges in ``grading/``, replace a course
function a judge calls, or forge otter's results. The course's grader runs only the cells the answers need, each
answer in a sandbox, and judges in its own process. On the submissions the course's tests grade both ways
(complete, empty, partly wrong) the points agree (``tests/grading/test_otter.py``); a submission that kills the
kernel or never finishes loses every exercise under otter, and only the exercises it stops under the course's
grader. otter's runner sets no time limit on a cell: here it hung 4 times in about 40 runs, its kernel idle, on
the cells that show a widget (05, 08, 10). ``otter run`` takes ``COURSE_FAST`` from the environment it runs in: set
``COURSE_FAST=1`` to match.

Gradescope builds its image from ``environment.yml``: the course's core packages at the lock's versions and, with
``--release-url``, the students' repository installed editable (``course_utils`` and ``data/``, which the notebooks
read). Without it the image lacks ``course_utils`` and every case fails. ``otter run`` without Docker uses the
environment it runs in (the course's, after ``bash course.sh setup``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import shutil
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
CASES = "otter_cases"  # the folder of inputs, next to the submission when otter runs it
CONFIG = {"lang": "python", "show_stdout": False, "show_hidden": False, "print_summary": True}


# ---------------------------------------------------------------- inside the student's kernel, under otter


def _hidden_exercise(stem: str, number: int):
    from grading.hidden import hidden_tests

    return next(exercise for exercise in hidden_tests()[stem] if exercise.number == number)


def _answer(env: dict, exercise, args: tuple):
    """The answer as ``grading.runner`` reads it from the student's process: exported and read back."""
    from grading.export import UNBOUND, UNREADABLE, _TooBig
    from grading.judging import call_guarded, roundtrip

    names = exercise.answer
    if exercise.cases is None:
        unbound = [name for name in names if name not in env]
        value = {UNBOUND: ", ".join(unbound)} if unbound else tuple(env[name] for name in names)
    else:
        fn = env.get(names[0])
        if fn is None or not callable(fn):
            value = None if names[0] in env else {UNBOUND: names[0]}
        else:
            value = call_guarded(fn, args, exercise.probe)  # the arguments' trip, the probe, the guard
    try:
        return roundtrip(value)
    except _TooBig as error:
        return {UNREADABLE: str(error)}


def case_verdict(env: dict, stem: str, number: int, index: int) -> None:
    """Judge case ``index`` of exercise ``number`` of notebook ``stem`` on the kernel's globals ``env``, as the
    course's grader would; an ``AssertionError`` with the judge's message when it earns nothing (otter's fail)."""
    from grading.judging import judge_exported
    from grading.spec import Case

    from grading.export import unpack_arguments

    exercise = _hidden_exercise(stem, number)
    stored = torch.load(Path.cwd() / CASES / f"{stem}-e{number}.pt", weights_only=True)[index]
    case = Case(tuple(unpack_arguments(stored["args"])), stored["points"], stored["label"])
    result = judge_exported(exercise, case, _answer(env, exercise, case.args))
    assert result.status == "passed", f"{result.status}: {result.message}"


# ---------------------------------------------------------------- writing the zips


def _cases(exercise) -> list[dict]:
    """Each case as plain data that ``torch.load(weights_only=True)`` reads (NumPy arguments packed)."""
    from grading.export import pack_arguments
    from grading.spec import Case

    cases = exercise.cases() if exercise.cases else [Case(points=exercise.points)]
    return [{"args": pack_arguments(tuple(case.args)), "points": float(case.points), "label": case.label}
            for case in cases]  # fmt: skip


def otter_test_file(stem: str, number: int, cases: list[dict]) -> str:
    """Otter's exception-based test file for one exercise: one hidden ``test_case`` per case, its points."""
    lines = ["from otter.test_files import test_case", "", "OK_FORMAT = False", "", f'name = "Exercise {number}"',
             "points = None", ""]  # fmt: skip
    for index, case in enumerate(cases):
        title = f"Exercise {number}, case {index + 1}" + (f" ({case['label']})" if case["label"] else "")
        lines += [
            "",
            f"@test_case(name={title!r}, points={case['points']!r}, hidden=True)",
            f"def case_{index}(env):",
            "    import os, sys",
            "",
            "    sys.path.insert(0, os.getcwd())  # the zip's files, next to the submission",
            "    from grading.otter import case_verdict",
            "",
            f"    case_verdict(env, {stem!r}, {number}, {index})",
            "",
        ]
    return "\n".join(lines)


def grading_modules(stem_module: str) -> list[str]:
    """The modules of ``grading`` that judging ``stem_module`` (``grading.hidden.nbNN``) imports, with this one."""
    wanted, found = ["grading.otter", "grading.judging", stem_module], set()
    while wanted:
        name = wanted.pop()
        if name in found:
            continue
        found.add(name)
        tree = ast.parse(_module_path(name).read_text())
        wanted += [node.module for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("grading.")]  # fmt: skip
    return sorted(found | {"grading", "grading.hidden"})


def _module_path(name: str) -> Path:
    path = ROOT.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def requirements(release_url: str | None) -> str:
    """The pip requirements of Gradescope's image: the course's core at the lock's versions (torch: pyproject's
    floor, as the lock leaves it to the machine), and the students' repository when its address is given."""
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    locked = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if line[:1].isalnum() and "==" in line and ";" not in line:
            name, version = line.split("==")
            locked[name.strip().lower()] = version.strip()
    lines = ["# the course's core (the lock's versions); the notebooks import course_utils and read data/"]
    for requirement in core:
        name = requirement.split(">")[0].split("<")[0].split("=")[0].strip().lower()
        lines.append(f"{name}=={locked[name]}" if name in locked else requirement)
    lines.append(f"-e git+{release_url}#egg=course-utils" if release_url else "# course_utils: pass --release-url")
    return "\n".join(lines) + "\n"


def write_zip(stem: str, exercises, target: Path, release_url: str | None = None) -> Path:
    """One notebook's autograder zip, written by otter's own generator from a staging folder."""
    from otter.generate import main as otter_generate

    module = f"grading.hidden.{_hidden_module_name(stem)}"
    with tempfile.TemporaryDirectory() as staging:
        stage = Path(staging)
        (stage / "tests").mkdir()
        (stage / CASES).mkdir()
        for exercise in exercises:
            cases = _cases(exercise)
            torch.save(cases, stage / CASES / f"{stem}-e{exercise.number}.pt")
            (stage / "tests" / f"e{exercise.number:02d}.py").write_text(otter_test_file(stem, exercise.number, cases))
        for name in grading_modules(module):
            copy = stage / _module_path(name).relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(_module_path(name), copy)
        (stage / "otter_config.json").write_text(json.dumps(CONFIG, indent=2))
        (stage / "requirements.txt").write_text(requirements(release_url))
        target.parent.mkdir(parents=True, exist_ok=True)
        with _cwd(stage):
            otter_generate(tests_dir="tests", output_path=str(target.resolve()), config="otter_config.json",
                           requirements="requirements.txt", no_environment=True, files=[CASES, "grading"])  # fmt: skip
    _fast_mode(target)
    return target


def _fast_mode(target: Path) -> None:
    """Gradescope's ``run_autograder`` with ``COURSE_FAST=1``, as the course's grader runs a submission (short
    training runs; the answers do not depend on it). ``otter run`` takes it from the environment it runs in."""
    with zipfile.ZipFile(target) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    script = members["run_autograder"].decode()
    members["run_autograder"] = script.replace("\n", "\nexport COURSE_FAST=1\n", 1).encode()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _hidden_module_name(stem: str) -> str:
    import importlib
    import pkgutil

    import grading.hidden

    for info in pkgutil.iter_modules(grading.hidden.__path__):
        if importlib.import_module(f"grading.hidden.{info.name}").NOTEBOOK == stem:
            return info.name
    raise KeyError(stem)


@contextlib.contextmanager
def _cwd(path: Path):
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def zip_name(stem: str) -> str:
    return f"{stem}-autograder.zip"


def write_assignment(out: Path, stems: list[str] | None = None, release_url: str | None = None) -> Path:
    """``out``, holding an otter autograder zip (``zip_name``) for each notebook in ``stems`` (every one that has
    hidden tests when None; a stem may be its number, "05")."""
    from grading.hidden import hidden_tests

    tests = hidden_tests()
    chosen = sorted(tests) if stems is None else [_stem(stem, tests) for stem in stems]
    for stem in chosen:
        print(write_zip(stem, tests[stem], Path(out) / zip_name(stem), release_url), flush=True)
    return Path(out)


def _stem(given: str, tests: dict) -> str:
    matches = [stem for stem in tests if stem == given or stem.split("_")[0] == given.zfill(2)]
    if len(matches) != 1:
        raise SystemExit(f"no hidden tests for notebook {given!r} (have: {', '.join(sorted(tests))})")
    return matches[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder the zips go into")
    parser.add_argument("notebooks", nargs="*", help="numbers or stems (default: every notebook with hidden tests)")
    parser.add_argument("--release-url", help="the students' repository, installed in Gradescope's image")
    args = parser.parse_args(argv)
    write_assignment(args.out, args.notebooks or None, args.release_url)


if __name__ == "__main__":
    sys.exit(main())
