#!/usr/bin/env bash
# One entry point for the course.
#   bash course.sh lab     set everything up, then open the course in JupyterLab
#   bash course.sh test    set everything up, then run the whole test suite (what CI runs)
#   bash course.sh bench   set everything up, then run the benchmarks (writes BENCHMARKS.md)
#   bash course.sh site    set everything up, then build the website into build/site/html (no network)
#   bash course.sh grade F set everything up, then grade the submitted notebooks in folder F on the hidden tests into
#                          F/grades/ (scripts/grade.py: each submission sandboxed, judged outside it; --roster R.csv,
#                          --canvas-column; the TA's CSVs and feedback files; --examples F writes students to try)
#   bash course.sh otter OUT
#                          set everything up, then write the same hidden tests as otter-grader autograders for
#                          Gradescope, one zip a notebook (grading/otter.py; --release-url URL, NN ... for some)
#   bash course.sh lecture NN
#                          set everything up, then open notebook NN in JupyterLab as its lecture plan describes: the
#                          stored notebook, its prompts as stored, every cell run in full mode and lecture mode, the
#                          demos live (scripts/lecture.py: a copy in build/lecture/; --demos-only runs only the cells
#                          the demos need; --no-browser prints the URL only, --port P; Ctrl-C stops it)
#   bash course.sh setup   set everything up only
#   bash course.sh release DIR --url https://github.com/ORG/REPO
#                          set everything up, then write the students' repository into DIR: the student edition of
#                          every notebook, course_utils, data and set-up, no solutions (scripts/release.py; --site
#                          also builds the students' website into build/student_site)
#   bash course.sh newest  on Colab's Python (3.13) with the newest torch that pip installs and the lock, in build/py313:
#                          the parity tests and every notebook under nbval, in the student edition (part of "test")
#   bash course.sh floor   the same Python 3.13 venv, then the parity tests and notebooks 09-10 on the oldest
#                          transformers that pyproject admits (requirements/floor.txt; part of "test")
#   bash course.sh lock    refresh requirements/lock.txt to today's newest releases, if they pass (scripts/lock.py)
#
# Set-up installs into the active virtual or conda environment; with none active, into ./.venv, which it makes on
# first use (python3 -m venv, or $PYTHON -m venv) and uses from then on. Never into the python3 on PATH itself:
# there the course's pins would replace those of the other tools that Python holds, and pip would print their
# conflicts as red ERRORs. .venv is made without --system-site-packages, so pip there sees none of those tools (it
# still would, and print their conflicts, in a venv that shares the system's packages); the price is a torch of its
# own. Set-up installs the exact versions that CI tested, requirements/lock.txt (COURSE_UNLOCKED=1: the newest
# releases within pyproject's ranges instead). A torch you already have is never replaced: one in the active
# environment is used as it is, and python3's own stays untouched beside .venv. Torch is installed only where none
# is importable: the CUDA build where nvidia-smi finds a GPU, the CPU build everywhere else (a wheel the machine
# holds first; no multi-GB CUDA download on a machine without a GPU). Run "source .venv/bin/activate" to use .venv
# by hand. It also installs a JupyterLab settings override, scripts/lab_settings.py:
# no "official Jupyter news?" toast over a projected notebook, no update check.
set -euo pipefail
cd "$(dirname "$0")"
command_name=${1:-lab}
shift || true

log() { printf '\033[1m[course]\033[0m %s\n' "$*"; }

choose_python() {
    # The active virtual/conda environment; else ./.venv, made now if it is not there yet (see the header).
    if [ -n "${VIRTUAL_ENV:-}" ] || [ -n "${CONDA_PREFIX:-}" ]; then
        PY=$(command -v python)
        return
    fi
    if [ ! -x .venv/bin/python ]; then
        local base=${PYTHON:-python3}
        log "no active virtual or conda environment: making ./.venv with $("$base" --version) ($(command -v "$base"))"
        "$base" -m venv .venv || {
            rm -rf .venv
            log "could not make ./.venv: install Python's venv module (Debian, Ubuntu: apt install python3-venv)"
            exit 1
        }
    fi
    PY=$PWD/.venv/bin/python
}

widgets_visible_to_jupyterlab() {
    # JupyterLab looks for extensions under its own prefix: a .venv does not see the base's.
    "$PY" - <<'PY'
import sys
from jupyter_core.paths import jupyter_path
from pathlib import Path
sys.exit(not any((Path(p) / "labextensions/@jupyter-widgets/jupyterlab-manager").is_dir() for p in jupyter_path()))
PY
}

ensure_widget_extension() {
    if ! widgets_visible_to_jupyterlab; then
        local version
        version=$("$PY" -m pip show jupyterlab_widgets | sed -n 's/^Version: //p')
        log "installing the widget extension where JupyterLab can see it (jupyterlab_widgets $version)"
        "$PY" -m pip install -q --ignore-installed --no-deps "jupyterlab_widgets==$version"
    fi
}

install_torch_if_missing() {
    if "$PY" -c "import torch" 2>/dev/null; then
        log "torch $("$PY" -c 'import torch; print(torch.__version__)') is installed; keeping it"
        return
    fi
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        log "no torch; a GPU is present, installing the default (CUDA) build"
        "$PY" -m pip install "torch>=2.3"
        return
    fi
    log "no torch and no GPU: installing a CPU build"
    install_local_cpu_torch \
        || "$PY" -m pip --isolated install "torch>=2.3" --index-url https://download.pytorch.org/whl/cpu \
        || { [ "$(uname -s)" != Linux ] && "$PY" -m pip install "torch>=2.3"; } \
        || { log "could not install a CPU build of torch; install one by hand (see README, Troubleshooting)"; exit 1; }
}

install_local_cpu_torch() {
    # A torch wheel the machine already holds (pip's find-links), then its dependencies from the index.
    "$PY" -m pip install -q --no-index --no-deps torch 2>/dev/null || return 1
    local version
    version=$("$PY" -m pip show torch | sed -n 's/^Version: \([^+]*\).*/\1/p')
    "$PY" -m pip install -q "torch==$version"
}

install_browser_if_missing() {
    # The browser tests drive Debian's chromium with Playwright (its own browser download cannot work offline).
    if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
        return
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing Debian's chromium for the browser tests"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        log "chromium is not installed: the browser tests will be skipped (CI installs it)"
    fi
}

install_course() {
    local prefix
    prefix=$("$PY" -c 'import sys; print(sys.prefix)')
    if [ -n "${COURSE_UNLOCKED:-}" ]; then
        log "installing the course with the newest releases within pyproject's ranges (COURSE_UNLOCKED) into $prefix"
        "$PY" -m pip install -q -e ".[lab,test]"
        return
    fi
    # COURSE_REQUIREMENTS: another file in the lock's place, and no torch (tests/project/test_install.py, a small one).
    local lock=${COURSE_REQUIREMENTS:-requirements/lock.txt}
    log "installing the course with JupyterLab and the test tools, the versions CI tested ($lock), into $prefix"
    "$PY" -m pip install -q -r "$lock"
    "$PY" -m pip install -q --no-deps -e .
}

install_lab_settings() {
    # Nothing on screen in lecture: JupyterLab would ask in a toast whether to fetch "official Jupyter news". An
    # override in its own file (overrides.d/nn-lm-course.json) answers "never" and turns the update check off.
    local written
    if ! written=$("$PY" scripts/lab_settings.py); then
        log "could not install the JupyterLab settings override (the message above); going on without it"
        return 0
    fi
    log "JupyterLab set not to ask about news nor check for updates ($written)"
}

setup() {
    choose_python
    "$PY" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    [ -n "${COURSE_REQUIREMENTS:-}" ] || install_torch_if_missing
    install_course
    ensure_widget_extension
    install_lab_settings
}

PY313_VENV=build/py313

find_python313() {
    # Colab's Python, 3.13, into PY313_BASE: build/py313's own when it was made before (and has pip), else $PYTHON313,
    # python3.13 on PATH or pyenv's. Each is run, not only found: pyenv's python3.13 shim is on PATH even where pyenv
    # has not selected 3.13, and fails when called.
    local candidate
    if "$PY313_VENV/bin/python" -c 'import sys, pip; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then
        PY313_BASE=$PY313_VENV/bin/python
        return 0
    fi
    for candidate in "${PYTHON313:-python3.13}" "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.13*/bin/python3.13; do
        if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then
            PY313_BASE=$candidate
            return 0
        fi
    done
    return 1
}

no_python313() {
    log "NOT RUN: no Python 3.13 (Colab's) for the stages on it, the newest torch and the floor: put python3.13 on PATH,"
    log "or set PYTHON313=/path/to/python3.13, or pyenv install 3.13 (looked for: ${PYTHON313:-python3.13}, pyenv's)"
}

setup_py313() {
    # build/py313: a venv of Colab's Python, made once and kept while it runs 3.13, with the newest torch that pip
    # installs (a student's "pip install torch": the CUDA build from PyPI on Linux; PIP_CONSTRAINT=/dev/null lifts a
    # machine's cap) and then the lock's pins for 3.13, as Colab's set-up cell installs them over Colab's torch.
    local start=$SECONDS
    if [ "$PY313_BASE" != "$PY313_VENV/bin/python" ]; then
        log "making $PY313_VENV with $("$PY313_BASE" --version) ($PY313_BASE)"
        rm -rf "$PY313_VENV"
        "$PY313_BASE" -m venv "$PY313_VENV"
    fi
    PY313=$PWD/$PY313_VENV/bin/python
    "$PY313" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    log "the newest torch that pip installs (no cap), then the lock's pins for Python 3.13, into $PY313_VENV"
    PIP_CONSTRAINT=/dev/null "$PY313" -m pip install -q --upgrade torch
    local torch_version
    torch_version=$(py313_version torch)
    # Without the cap here too: bertviz requires torch, and pip would take a capped torch back down to fit the cap.
    PIP_CONSTRAINT=/dev/null "$PY313" -m pip install -q -r requirements/lock.txt
    "$PY313" -m pip install -q --no-deps -e .
    if [ "$(py313_version torch)" != "$torch_version" ]; then
        log "the lock's install moved torch from $torch_version: the stage would not test the newest torch"
        exit 1
    fi
    log "$PY313_VENV ready in $((SECONDS - start)) s: Python $(py313_version python), torch $torch_version," \
        "transformers $(py313_version transformers)"
}

py313_version() {
    # The installed version of a package (or of Python itself) in build/py313, without importing it.
    "$PY313" -c 'import platform, sys; from importlib.metadata import version
print(platform.python_version() if sys.argv[1] == "python" else version(sys.argv[1]))' "$1"
}

STUDENT_EDITION=build/student_edition

run_newest() {
    # Colab's Python and the newest torch: the parity tests and every notebook under nbval (fast mode), under torch's
    # plain "default" kernels and MKL's most basic code path, so the checked cells meet a newer torch and another
    # rounding than the suite's (AVX2 or default kernels, on the machine's MKL path) and the stored outputs' own.
    # The notebooks run in their student edition, what a student is handed: the same code cells as notebooks/
    # (tests/notebooks/test_student_edition.py), without the solutions, each exercise printing "not finished yet".
    log "running the parity tests and every notebook (the student edition) on Python 3.13 and the newest torch" \
        "(ATEN_CPU_CAPABILITY, MKL_CBWR)"
    rm -rf "$STUDENT_EDITION"
    "$PY313" scripts/build_notebooks.py --student --outputs --out "$STUDENT_EDITION" >/dev/null
    ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-default} MKL_CBWR=${MKL_CBWR:-COMPATIBLE} COURSE_FAST=${COURSE_FAST:-1} \
        OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$PY313" -m pytest -n 2 --dist loadscope -m "parity or nbval" \
        "$STUDENT_EDITION" tests "$@"
}

run_floor() {
    # The oldest transformers (with its tokenizers and huggingface_hub) in a side folder put first on the path, in
    # build/py313: Python 3.13 with the floor is what Colab's set-up cell installs. Pure-Python and abi3 wheels, seconds
    # to install; the rest of the environment is the lock's.
    local floor=build/floor
    log "the floor: $(grep -v '^#' requirements/floor.txt | tr '\n' ' ')into $floor, for $PY313_VENV"
    rm -rf "$floor"
    "$PY313" -m pip install -q --no-deps --target "$floor" -r requirements/floor.txt
    # The side folder, first on the path the notebooks' kernels inherit, must give the floor's versions, not the lock's.
    PYTHONPATH="$PWD/$floor" "$PY313" -c 'import sys; from importlib.metadata import version
pins = [line.strip().split("==") for line in open("requirements/floor.txt") if line[:1].isalnum()]
sys.exit("; ".join(f"{n} {version(n)} is not the floor, {v}" for n, v in pins if version(n) != v) or None)'
    # Under torch's plain "default" kernels: the suite runs under AVX2, the stored outputs come from this machine's
    # own (AVX-512 on the course's), so this stage covers the third kind of rounding.
    log "running the parity tests and notebooks 09-10 on the floor, with torch's default (unvectorised) kernels and MKL's COMPATIBLE path"
    ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-default} MKL_CBWR=${MKL_CBWR:-COMPATIBLE} COURSE_FAST=${COURSE_FAST:-1} \
        OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONPATH="$PWD/$floor${PYTHONPATH:+:$PYTHONPATH}" \
        "$PY313" -m pytest -n 2 --dist loadscope -m "parity or nbval" tests notebooks/09_bert.ipynb \
        notebooks/10_generation_strategies.ipynb "$@"
}

case "$command_name" in
    setup) setup ;;
    lab)
        setup
        log "opening JupyterLab in notebooks/"
        exec "$PY" -m jupyterlab notebooks "$@"
        ;;
    test)
        # The whole suite looks for Colab's Python first: CI fails at once without it; elsewhere the stages on it are
        # left out, and that is said before the suite and after it.
        python313_stages=
        if [ $# -eq 0 ]; then
            if find_python313; then
                python313_stages=yes
            else
                no_python313
                [ -z "${CI:-}" ] || { log "CI must run them: failing"; exit 1; }
            fi
        fi
        setup
        install_browser_if_missing
        log "running the test suite"
        export COURSE_FAST=${COURSE_FAST:-1}
        # Two test workers share two cores: one torch thread each is faster than contending for both.
        export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
        if [ $# -gt 0 ]; then  # a subset, e.g. bash course.sh test -m "not slow": that alone
            exec "$PY" -m pytest -n 2 --dist loadscope "$@"
        fi
        # torch's kernels round differently by vector unit. The stored outputs were built with the ones this kind of
        # machine picks by itself; the suite runs with others (AVX2, most laptops'; "default" where AVX2 is this
        # CPU's own), so nbval compares every checked cell across kernels (tests/notebooks/test_cpu_capability.py).
        log "lint: ruff check and ruff format --check (pyproject's [tool.ruff])"
        "$PY" -m ruff check --no-cache .
        "$PY" -m ruff format --check --no-cache .
        other=$("$PY" -c "import torch; c = torch.backends.cpu.get_cpu_capability().lower(); print('default' if c == 'avx2' else 'avx2')")
        # MKL, which torch's x86 wheels call for matrix products, picks its own code path by CPU vendor and vector unit;
        # ATEN_CPU_CAPABILITY does not reach it. MKL_CBWR=COMPATIBLE forces its most basic path, so the checked cells
        # also meet another BLAS rounding than the one they were built with (tests/notebooks/test_cpu_capability.py).
        log "torch's $other kernels and MKL's COMPATIBLE code path for the suite (ATEN_CPU_CAPABILITY, MKL_CBWR)"
        ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-$other} MKL_CBWR=${MKL_CBWR:-COMPATIBLE} \
            "$PY" -m pytest -n 2 --dist loadscope --durations=25
        if [ -z "$python313_stages" ]; then
            no_python313
            exit 0
        fi
        setup_py313
        run_newest
        run_floor
        ;;
    newest)
        find_python313 || { no_python313; exit 1; }
        setup_py313
        run_newest "$@"
        ;;
    floor)
        find_python313 || { no_python313; exit 1; }
        setup_py313
        run_floor "$@"
        ;;
    lock)
        setup
        "$PY" -c "import uv" 2>/dev/null || { log "installing uv, which resolves the lock"; "$PY" -m pip install -q uv; }
        exec "$PY" scripts/lock.py "$@"
        ;;
    bench)
        setup
        exec "$PY" benchmarks/run.py "$@"
        ;;
    site)
        setup
        exec "$PY" scripts/build_site.py "$@"
        ;;
    grade)
        setup
        exec "$PY" scripts/grade.py "$@"
        ;;
    lecture)
        setup
        exec "$PY" scripts/lecture.py "$@"
        ;;
    release)
        setup
        exec "$PY" scripts/release.py "$@"
        ;;
    otter)
        setup
        exec "$PY" -m grading.otter "$@"
        ;;
    *)
        echo "usage: bash course.sh [lab|test|bench|site|grade|lecture NN|setup|release DIR|otter OUT|newest|floor|lock]" >&2
        exit 2
        ;;
esac
