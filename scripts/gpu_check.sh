#!/usr/bin/env bash
# The course on a GPU machine with no network (README, "On a GPU"). Run from the project's root, with .whl/ beside it
# (bash scripts/gpu_wheels.sh, on a machine with the package index, puts there the Jupyter wheels a GPU image lacks).
# 1. scripts/gpu_probe.py: every shipped model moved to CUDA, compared with the CPU;
# 2. every notebook under nbval (fast mode, stored outputs checked), one worker per notebook;
# 3. the quick test subset (-m "not slow": no browser, site, venv or notebook reruns), less the install checks,
#    which compare with this machine's own versions.
# Writes env.txt, probe.txt, nbval.log and tests.log under $OUT; about 3 minutes on an H100 machine.
# python3 here is the GPU image's own Python, with its CUDA torch: not course.sh's ./.venv, which holds a CPU build.
T=$(mktemp -d)  # scratch: the wheels' site-packages and the unpacked project
T0=$(date +%s); OUT=${OUT:-$T/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $T/site .whl/*.whl || exit 1
export PYTHONPATH=$T/site:$PWD HF_HUB_OFFLINE=1 COURSE_FAST=1 PYTHONUNBUFFERED=1 CI=true OMP_NUM_THREADS=1
{ nvidia-smi -L; python3 -V
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())"
} 2>&1 | tee "$OUT/env.txt"
[ -f scripts/gpu_probe.py ] && { MPLBACKEND=Agg timeout 90 python3 scripts/gpu_probe.py >"$OUT/probe.txt" 2>&1; tail -16 "$OUT/probe.txt"; }
timeout 180 python3 -m pytest -p no:cacheprovider -q -n 10 --dist loadfile notebooks/ >"$OUT/nbval.log" 2>&1
echo "nbval rc=$? at $(( $(date +%s) - T0 )) s"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/nbval.log" | tail -15
timeout 200 python3 -m pytest -p no:cacheprovider -q -n 14 --dist loadscope tests -m "not slow" \
  --ignore=tests/project/test_install.py >"$OUT/tests.log" 2>&1
echo "tests rc=$? at $(( $(date +%s) - T0 )) s"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -25
