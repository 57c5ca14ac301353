"""A busy machine: training time idle and with one core kept busy, for torch's OpenMP settings.

    python benchmarks/busy_bench.py                        # the 60-step LSTM loop, 3 repeats; prints a table
    python benchmarks/busy_bench.py --repeats 5
    python benchmarks/busy_bench.py --notebook notebooks/04_ngram_and_feedforward_lms.ipynb \\
                                    --notebook notebooks/05_rnn_language_models.ipynb
                                                           # those notebooks in full mode under nbclient

Busy means one extra process spinning on the CPU (``while True: pass``) for the whole run; on the
course's 2-core machine that is one core of two. Every loop run is a fresh interpreter, because
OpenMP reads ``OMP_WAIT_POLICY`` and ``OMP_NUM_THREADS`` once, when torch loads it. The loop trains
notebook 05's LSTM (``RecurrentLM``, embedding 64, hidden 128) on course batches of 64 sentences:

- ``torch's defaults (before)``: two threads whatever the load, libgomp's default wait (each waiting
  thread spins for about 300,000 iterations before it sleeps): the course before this fix;
- ``train() picks threads by load (after)``: ``course_utils.threads`` gives the loop one thread per core
  that other programs leave free (it measures for 0.1 s, which the time includes);
- ``PASSIVE``, ``OMP_NUM_THREADS=1``, ``GOMP_SPINCOUNT``: the other settings tried (with the choice off).

Notebooks run in full mode (no ``COURSE_FAST``) with no thread variable in the kernel's environment,
``after`` as they are and ``before`` with ``COURSE_THREADS_BY_LOAD=0``. The tables are
Markdown, ready for BENCHMARKS.md; raw numbers go to ``benchmarks/results/busy_loop.json`` or ``busy_notebooks.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
THREAD_VARIABLES = (
    "OMP_WAIT_POLICY",
    "OMP_NUM_THREADS",
    "GOMP_SPINCOUNT",
    "MKL_NUM_THREADS",
    "COURSE_FAST",
    "COURSE_THREADS_BY_LOAD",
)
LOOP_STEPS = 60
OFF = {"COURSE_THREADS_BY_LOAD": "0"}  # train() as it was: torch's own thread count, whatever the load
CONFIGS = {  # name -> variables to set
    "torch's defaults (before)": OFF,
    "train() picks threads by load (after)": {},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE", **OFF},
    "OMP_NUM_THREADS=1": {"OMP_NUM_THREADS": "1", **OFF},
    "GOMP_SPINCOUNT=30000": {"GOMP_SPINCOUNT": "30000", **OFF},
    "GOMP_SPINCOUNT=10000": {"GOMP_SPINCOUNT": "10000", **OFF},
}


def clean_environment(**variables: str) -> dict[str, str]:
    """This process's environment without any thread setting or fast mode, plus ``variables``."""
    env = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return {**env, **variables}


@contextlib.contextmanager
def one_core_busy(busy: bool):
    """While inside, one extra process spins on the CPU (when ``busy``)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        time.sleep(0.5 if busy else 0)  # let it get going
        yield
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


# --- the LSTM loop ----------------------------------------------------------------------------------


def loop_worker() -> None:
    """Train the LSTM for ``LOOP_STEPS`` steps in this interpreter; print the seconds and torch's threads as JSON."""
    import torch

    from course_utils.models import lm
    from course_utils.zoo import lm_checkpoints as zoo
    from course_utils.language.vocab import course_vocab, train_ids
    from course_utils.models.recurrent.recurrent_lm import RecurrentLM
    from course_utils.training import train

    vocab = course_vocab()
    batches = lm.batch_stream(train_ids(), vocab, batch_size=64, seed=1)
    model = RecurrentLM(len(vocab), cell="lstm", **zoo.RNN, seed=0)
    train(model, batches, steps=2, lr=3e-3, progress=False)  # warm-up: first-call allocations
    started = time.perf_counter()
    train(model, batches, steps=LOOP_STEPS, lr=3e-3, progress=False)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "threads": torch.get_num_threads()}))


def run_loop(config: str, busy: bool) -> dict:
    command = [sys.executable, __file__, "--loop-worker"]
    env = clean_environment(OMP_DISPLAY_ENV="VERBOSE", **CONFIGS[config])  # libgomp reports what it read, on stderr
    with one_core_busy(busy):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    spin = re.search(r"GOMP_SPINCOUNT\s*=\s*'(\d+)'", done.stderr)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "spin_count": spin.group(1) if spin else "?"}


def bench_loop(repeats: int) -> dict:
    results = {config: {"idle": [], "busy": []} for config in CONFIGS}
    for repeat in range(repeats):
        for config in CONFIGS:
            for state in ("idle", "busy"):
                run = run_loop(config, state == "busy")
                results[config][state].append(round(run["seconds"], 2))
                print(f"[busy] {repeat + 1}/{repeats} {config:36s} {state}: {run['seconds']:.2f} s "
                      f"({run['threads']} threads, libgomp's spin count {run['spin_count']})", flush=True)  # fmt: skip
    return results


def span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}–{high:.1f}"


def loop_table(results: dict, repeats: int) -> str:
    lines = [f"{LOOP_STEPS}-step LSTM training loop (notebook 05's LSTM, batches of 64), seconds, "
             f"min–max of {repeats} fresh interpreters:", "",
             "| torch's OpenMP setting | idle | one core busy | busy ÷ idle |", "|---|---:|---:|---:|"]  # fmt: skip
    for config, times in results.items():
        ratio = min(times["busy"]) / min(times["idle"])
        lines.append(f"| {config} | {span(times['idle'])} | {span(times['busy'])} | {ratio:.1f}× |")
    return "\n".join(lines)


# --- notebooks --------------------------------------------------------------------------------------


def run_notebook(path: Path, variant: str, busy: bool, cell_timeout: int) -> dict:
    """Run a copy of the notebook in full mode under nbclient; ``before`` turns the thread choice off."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name="python3", timeout=cell_timeout,
                            resources={"metadata": {"path": str(path.parent)}})  # fmt: skip
    error = None
    with one_core_busy(busy):
        started = time.perf_counter()
        try:
            client.execute(env=clean_environment(**(OFF if variant == "before" else {})))
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as failure:
            error = str(failure).strip().splitlines()[-1][:300]
        wall = time.perf_counter() - started
    return {"wall_s": round(wall, 1), "error": error}


def bench_notebooks(paths: list[Path], variants: list[str], states: list[str], cell_timeout: int) -> dict:
    results: dict = {path.stem: {} for path in paths}
    for path in paths:
        for variant in variants:
            for state in states:
                print(f"[busy] {path.name} full mode, {variant}, {state} ...", flush=True)
                result = run_notebook(path, variant, state == "busy", cell_timeout)
                results[path.stem][f"{variant}, {state}"] = result
                print(f"[busy]   {result}", flush=True)
    return results


def notebook_table(results: dict, variants: list[str]) -> str:
    lines = ["Notebooks in full mode under nbclient, wall seconds (kernel start included); before = torch's "
             "own thread count whatever the load (COURSE_THREADS_BY_LOAD=0):", "",
             "| notebook (full mode) | threads | idle | one core busy | busy ÷ idle |",
             "|---|---|---:|---:|---:|"]  # fmt: skip
    for name, runs in results.items():
        for variant in variants:
            idle, busy = runs.get(f"{variant}, idle"), runs.get(f"{variant}, busy")
            failed = " ".join(run["error"] for run in (idle, busy) if run and run["error"])
            ratio = (
                f"failed: {failed}" if failed else f"{busy['wall_s'] / idle['wall_s']:.1f}×" if idle and busy else "–"
            )
            wall = [f"{run['wall_s']:.0f}" if run else "–" for run in (idle, busy)]
            label = "torch's defaults (before)" if variant == "before" else "threads by load (after)"
            lines.append(f"| {name} | {label} | {wall[0]} | {wall[1]} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh interpreters per loop configuration")
    parser.add_argument("--notebook", type=Path, action="append", default=[], help="run this notebook, not the loop")
    parser.add_argument("--variants", nargs="+", choices=("before", "after"), default=["before", "after"])
    parser.add_argument("--states", nargs="+", choices=("idle", "busy"), default=["idle", "busy"])
    parser.add_argument("--cell-timeout", type=int, default=1800)
    parser.add_argument("--loop-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop_worker:
        return loop_worker()
    load = round(os.getloadavg()[0], 2)
    print(f"[busy] {os.cpu_count()} CPUs, load average before the runs: {load} (idle means below ~0.3)", flush=True)
    if args.notebook:
        results = bench_notebooks(args.notebook, args.variants, args.states, args.cell_timeout)
        table = notebook_table(results, args.variants)
    else:
        results = bench_loop(args.repeats)
        table = loop_table(results, args.repeats)
    RESULTS.mkdir(parents=True, exist_ok=True)
    raw = {"cpus": os.cpu_count(), "load_average_before": load, "results": results}
    (RESULTS / f"busy_{'notebooks' if args.notebook else 'loop'}.json").write_text(json.dumps(raw, indent=2) + "\n")
    print("\n" + table)


if __name__ == "__main__":
    main()
