#!/usr/bin/env bash
# For scripts/gpu_check.sh. Download, into .whl/ at the project's root, the Python 3.12 wheels that a GPU machine without a Jupyter stack lacks for nbval and the
# notebooks (a GPU image often has torch, transformers, tokenizers, sacrebleu, matplotlib, pytest and pytest-xdist).
# Versions: pass NAME==VERSION arguments to override; by default the ones installed here.
# debugpy, jedi and widgetsnbextension are left out on purpose (optional; 12 MB): the project plus the wheels must
# stay small when the checkout must travel under a size limit (64 MiB).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
names="nbval nbformat nbclient jupyter_client jupyter_core ipykernel ipython traitlets pyzmq tornado comm
matplotlib-inline nest-asyncio ipywidgets jupyterlab_widgets fastjsonschema jsonschema jsonschema-specifications
referencing rpds-py parso prompt_toolkit wcwidth pexpect ptyprocess decorator stack-data executing asttokens pure_eval
platformdirs backcall pickleshare bertviz mpld3 XStatic-jQuery hypothesis sortedcontainers colorspacious
nbconvert beautifulsoup4 soupsieve bleach webencodings tinycss2 defusedxml jupyterlab_pygments mistune pandocfilters"
# The versions of the course's own environment: the active one, else course.sh's ./.venv, else python3.
py=python3
[ -n "${VIRTUAL_ENV:-}${CONDA_PREFIX:-}" ] && py=python || { [ -x .venv/bin/python ] && py=.venv/bin/python; } || true
specs=()
for n in $names; do
  v=$("$py" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$n" 2>/dev/null || true)
  specs+=("$n${v:+==$v}")
done
specs+=("$@")
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_26_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${specs[@]}"
du -sh .whl; git ls-files -z | xargs -0 du -cb | tail -1 | awk '{printf "tracked files: %.1f MB (tree + .whl must stay under 67.1 MB)\n", $1/1e6}'
