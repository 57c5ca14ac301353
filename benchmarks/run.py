"""Benchmarks: notebook wall time and peak kernel memory, demo callback latency, import cost.

    python benchmarks/run.py                              # everything; writes BENCHMARKS.md
    python benchmarks/run.py --notebooks 01 03 --modes fast
    python benchmarks/run.py --skip-notebooks             # demos, import time and language only

Notebooks run through nbclient (the kernel is a subprocess) in fast mode (COURSE_FAST=1) and in
full mode; their outputs are never saved. Peak RSS is the largest sum of the resident memory of
the kernel and its children, polled every 50 ms. Each Demo subclass in ``course_utils/widgets/*_demo.py``
is built with its defaults and each control is driven through up to 20 valid values; its
``latencies`` (computing, drawing and PNG encoding) give the median and maximum. The import
cost is the time ``import course_utils`` takes after ``import torch``, in fresh interpreters.
The language benchmarks (``benchmarks/lm_bench.py``) time the generator and the oracle and
compare each notebook-04 model's test perplexity with the oracle's; the recurrent benchmarks
(``benchmarks/rnn_bench.py``) do the same for notebooks 05-06 and add agreement by distance,
scratch against library speed and time per sequence against length.
Raw numbers go to ``benchmarks/results/*.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lm_bench  # noqa: E402  (benchmarks/lm_bench.py)
import notebook_times  # noqa: E402  (benchmarks/notebook_times.py)
import rnn_bench  # noqa: E402  (benchmarks/rnn_bench.py)
import transformer_bench  # noqa: E402  (benchmarks/transformer_bench.py)
import translation_bench  # noqa: E402  (benchmarks/translation_bench.py)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MODES = ("fast", "full")
# Targets on the course's 2-core CPU.
FAST_S, FULL_S, RSS_MB, MEDIAN_MS, IMPORT_S = 60.0, 180.0, 1500.0, 50.0, 0.3


# --- notebooks ------------------------------------------------------------------------------------


class PeakRSS:
    """Poll the summed resident memory of this process's children (kernel and its workers) from a thread.

    Memory is read every ``interval_s``; the list of children (a scan of every process) every ``rescan_s``.
    """

    def __init__(self, interval_s: float = 0.05, rescan_s: float = 0.5):
        self.interval_s, self.rescan_s = interval_s, rescan_s
        self.peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        me = psutil.Process()
        children, scanned = [], -self.rescan_s
        while not self._stop.is_set():
            if time.monotonic() - scanned >= self.rescan_s:
                children, scanned = me.children(recursive=True), time.monotonic()
            total = 0
            for child in children:
                with contextlib.suppress(psutil.Error):  # a child may have exited since the scan
                    total += child.memory_info().rss
            self.peak_bytes = max(self.peak_bytes, total)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@contextlib.contextmanager
def course_mode(mode: str):
    """Set ``COURSE_FAST`` for kernels started inside the block (fast) or unset it (full)."""
    saved = os.environ.get("COURSE_FAST")
    if mode == "fast":
        os.environ["COURSE_FAST"] = "1"
    else:
        os.environ.pop("COURSE_FAST", None)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COURSE_FAST", None)
        else:
            os.environ["COURSE_FAST"] = saved


class CellClock:
    """nbclient hooks that time each cell: the slowest one, and every code cell by its number among the code cells
    (1-based: the prompt, [n], that a top-to-bottom run shows)."""

    def __init__(self):
        self.started = 0.0
        self.slowest = {"seconds": 0.0, "index": None, "source": ""}
        self.code_cells: list[float] = []

    def start(self, cell, cell_index: int, **_) -> None:
        self.started = time.perf_counter()

    def done(self, cell, cell_index: int, **_) -> None:
        seconds = time.perf_counter() - self.started
        self.code_cells.append(round(seconds, 2))
        if seconds > self.slowest["seconds"]:
            self.slowest = {"seconds": round(seconds, 2), "index": cell_index, "source": cell.source[:80]}


def run_notebook(path: Path, mode: str, cell_timeout: int) -> dict:
    """Execute a copy of the notebook in memory; return wall time, peak kernel RSS, slowest cell and any error."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    notebook = nbformat.read(path, as_version=4)
    clock = CellClock()
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=cell_timeout,
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_execute=clock.start,
        on_cell_executed=clock.done,
    )
    error = None
    with course_mode(mode), PeakRSS() as memory:
        started = time.perf_counter()
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as failure:
            error = str(failure).strip().splitlines()[-1][:300]
        wall = time.perf_counter() - started
    return {
        "wall_s": round(wall, 2),
        "peak_rss_mb": round(memory.peak_bytes / 1e6, 1),
        "slowest_cell": clock.slowest,
        "code_cell_s": clock.code_cells,
        "error": error,
    }


def bench_notebooks(paths: list[Path], modes: list[str], cell_timeout: int) -> dict:
    results: dict[str, dict] = {path.stem: {} for path in paths}
    for mode in modes:
        for path in paths:
            print(f"[bench] {path.name} ({mode} mode) ...", flush=True)
            result = run_notebook(path, mode, cell_timeout)
            results[path.stem][mode] = result
            print(f"[bench]   {result}", flush=True)
    return results


# --- demos ----------------------------------------------------------------------------------------


def demo_classes() -> tuple[list[type], dict[str, str]]:
    """Every Demo subclass defined in ``course_utils/widgets/*_demo.py``, and the modules that failed to import."""
    from course_utils.widgets.widget_kit import Demo

    found, broken = [], {}
    for source in sorted((ROOT / "course_utils" / "widgets").glob("*_demo.py")):
        try:
            module = importlib.import_module(f"course_utils.widgets.{source.stem}")
        except Exception as error:  # noqa: BLE001 - report the module, measure the others
            broken[source.stem] = repr(error)
            continue
        found += [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Demo) and obj is not Demo and obj.__module__ == module.__name__
        ]
    bases = {base for cls in found for base in cls.__mro__[1:]}  # e.g. PaintedDemo: a frame for demos, not a demo
    return [cls for cls in found if cls not in bases], broken


def control_settings(control, count: int) -> tuple[str, list] | None:
    """Which trait to set and the valid values to drive it through; None leaves the control alone."""
    import ipywidgets as widgets
    import numpy as np

    value = control.value
    if hasattr(control, "options") and isinstance(getattr(control, "index", None), int):  # dropdown, toggle buttons
        return "index", list(range(len(control.options)))
    if isinstance(value, bool):
        return "value", [not value, value]
    if isinstance(control, widgets.FloatLogSlider):
        return "value", [float(control.base**x) for x in np.linspace(control.min, control.max, count)]
    if isinstance(value, (int, float)) and hasattr(control, "min") and hasattr(control, "max"):
        points = np.linspace(control.min, control.max, count)
        if isinstance(value, int):
            return "value", sorted({int(round(x)) for x in points})
        return "value", [float(x) for x in points]
    if isinstance(control, widgets.Combobox) and control.options:
        return "value", list(control.options[:count])
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return "value", [f"{number + offset:g}" for offset in np.linspace(-2, 2, count)]
    return None


def bench_demo(cls: type, count: int) -> dict:
    """Drive each control of a freshly built demo through its values; latency of every callback."""
    with contextlib.redirect_stdout(io.StringIO()):  # outside a kernel the demo's display() prints a repr
        demo = cls()
        demo.latencies.clear()  # the first render is construction, not a callback
        errors = []
        driven = []
        for name, control in demo.controls.items():
            settings = control_settings(control, count)
            if settings is None:
                continue
            trait, values = settings
            initial = getattr(control, trait)
            for value in values:
                setattr(control, trait, value)
                if demo.last_error is not None:
                    errors.append(f"{name}={value!r}: {demo.last_error}")
            setattr(control, trait, initial)
            driven.append(name)
    latencies = [seconds * 1000 for seconds in demo.latencies]
    return {
        "callbacks": len(latencies),
        "controls": driven,
        "median_ms": round(statistics.median(latencies), 1) if latencies else None,
        "max_ms": round(max(latencies), 1) if latencies else None,
        "errors": errors[:5],
    }


def _failed(error: str) -> dict:
    return {"callbacks": 0, "controls": [], "median_ms": None, "max_ms": None, "errors": [error]}


def bench_demos(count: int) -> dict:
    classes, broken = demo_classes()
    results = {f"{module} (import)": _failed(error) for module, error in broken.items()}
    for cls in classes:
        name = f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"
        print(f"[bench] {name} ...", flush=True)
        try:
            results[name] = bench_demo(cls, count)
        except Exception as error:  # noqa: BLE001 - report the demo that cannot be built, go on
            results[name] = _failed(repr(error))
        print(f"[bench]   {results[name]}", flush=True)
    return results


# --- import time ----------------------------------------------------------------------------------

_TORCH_ONLY = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"
_TORCH_THEN_COURSE = (
    "import time; t = time.perf_counter(); import torch; t1 = time.perf_counter(); import course_utils; "
    "print(t1 - t, time.perf_counter() - t1)"
)


def _timed(code: str) -> list[float]:
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    return [float(x) for x in output.stdout.split()]


def bench_import(repeats: int) -> dict:
    """Median over fresh interpreters: ``import torch`` alone, and ``import course_utils`` after it."""
    _timed(_TORCH_THEN_COURSE)  # warm the file cache
    torch_alone, torch_first, course = [], [], []
    for _ in range(repeats):
        torch_alone += _timed(_TORCH_ONLY)
        first, extra = _timed(_TORCH_THEN_COURSE)
        torch_first.append(first)
        course.append(extra)
    return {
        "repeats": repeats,
        "torch_s": round(statistics.median(torch_alone), 3),
        "torch_then_course_utils_s": round(statistics.median(a + b for a, b in zip(torch_first, course)), 3),
        "course_utils_over_torch_s": round(statistics.median(course), 3),
    }


# --- machine and report ---------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return cpu


def machine() -> dict:
    import matplotlib
    import torch

    from course_utils import get_device

    cpu = cpu_model()
    system = f"{platform.system()} {platform.release()}"
    with contextlib.suppress(OSError):
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                system = f"{line.split('=', 1)[1].strip(chr(34))} (kernel {platform.release()})"
    device = get_device()
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gb": round(psutil.virtual_memory().total / 1e9, 1),
        "os": system,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "matplotlib": matplotlib.__version__,
        "device": device_name,
        "load_1min": round(os.getloadavg()[0], 2),  # other work on the machine slows every number
    }


def _status(ok: bool | None) -> str:
    return "not measured" if ok is None else ("PASS" if ok else "FAIL")


def _cell(value, unit: str = "") -> str:
    return "—" if value is None else f"{value}{unit}"


def target_rows(results: dict) -> list[tuple[str, str, str]]:
    """(target, measured, PASS/FAIL) for each notebook, mode, demo and the import."""
    rows = []
    for name, modes in results.get("notebooks", {}).items():
        for mode, limit in (("fast", FAST_S), ("full", FULL_S)):
            run = modes.get(mode)
            ok = None if run is None else run["error"] is None and run["wall_s"] <= limit
            measured = "—" if run is None else f"{run['wall_s']} s" + (" (error)" if run["error"] else "")
            rows.append((f"{name}: ≤ {limit:g} s in {mode} mode", measured, _status(ok)))
        peaks = [run["peak_rss_mb"] for run in modes.values()]
        rss_ok = max(peaks) <= RSS_MB if peaks else None
        rows.append(
            (f"{name}: peak RSS ≤ {RSS_MB / 1000:g} GB", _cell(max(peaks, default=None), " MB"), _status(rss_ok))
        )
    for name, demo in results.get("demos", {}).items():
        median = demo["median_ms"]
        if median is not None:
            ok = median <= MEDIAN_MS
        else:
            ok = False if demo["errors"] else None  # a demo that could not be built fails
        rows.append((f"{name}: median callback ≤ {MEDIAN_MS:g} ms", _cell(median, " ms"), _status(ok)))
    for target, measured, ok in lm_bench.target_rows(results.get("language", {})):
        rows.append((target, measured, _status(ok)))
    for target, measured, ok in translation_bench.target_rows(results.get("translation", {})):
        rows.append((target, measured, _status(ok)))
    for target, measured, ok in rnn_bench.target_rows(results.get("recurrent", {})):
        rows.append((target, measured, _status(ok)))
    for target, measured, ok in transformer_bench.target_rows(results.get("transformer", {})):
        rows.append((target, measured, _status(ok)))
    imports = results.get("import")
    if imports:
        extra = imports["course_utils_over_torch_s"]
        rows.append((f"import course_utils over torch ≤ {IMPORT_S:g} s", f"{extra} s", _status(extra <= IMPORT_S)))
    return rows


def markdown(results: dict) -> str:
    info = results["machine"]
    lines = [
        "# Benchmarks",
        "",
        f"Measured by `python benchmarks/run.py` on {results['date']}. Raw numbers: `{results['json']}` (not committed).",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {info['cpu']}, {info['cores']} logical cores |",
        f"| RAM | {info['ram_gb']} GB |",
        f"| OS | {info['os']} |",
        f"| Python | {info['python']} |",
        f"| torch | {info['torch']} (matplotlib {info['matplotlib']}) |",
        f"| device | {info['device']} |",
        f"| load average (1 min) at start | {info['load_1min']} |",
        "",
    ]
    if info["load_1min"] > 0.5 * info["cores"]:
        lines += [
            "**The machine was busy when this started: the times below are inflated. Measure again on an idle machine.**",
            "",
        ]
    if results.get("notebooks"):
        lines += [
            "## Notebooks",
            "",
            "Wall time of a clean run through nbclient (kernel start included); peak RSS of the kernel and its children;"
            " the slowest cell (index among all cells, 0-based); the cells over "
            f"{notebook_times.LONG_CELL_S:g} s in full mode, by their prompt [n] (the code cell's number). The notebook"
            f" marks ⏱ each one over {notebook_times.SLOW_CELL_S:g} s (and may mark the others), and its lecture plan"
            " shows it stored. The course map and the teaching page take their run times from this table"
            " (`benchmarks/notebook_times.py`).",
            "",
            "| notebook | fast (s) | full (s) | peak RSS fast (MB) | peak RSS full (MB) | slowest cell | errors |"
            f" {notebook_times.SLOW_HEADER} |",
            "|---|---:|---:|---:|---:|---|---|---|",
        ]
        for name, modes in results["notebooks"].items():
            fast, full = modes.get("fast", {}), modes.get("full", {})
            errors = "; ".join(f"{mode}: {run['error']}" for mode, run in modes.items() if run["error"]) or "none"
            slowest = "; ".join(
                f"{mode}: cell {run['slowest_cell']['index']}, {run['slowest_cell']['seconds']} s"
                for mode, run in modes.items()
            )
            lines.append(
                f"| {name} | {_cell(fast.get('wall_s'))} | {_cell(full.get('wall_s'))} | "
                f"{_cell(fast.get('peak_rss_mb'))} | {_cell(full.get('peak_rss_mb'))} | {slowest} | {errors} | "
                f"{notebook_times.slow_cells_text(full.get('code_cell_s', []))} |"
            )
        lines.append("")
    if results.get("demos"):
        lines += [
            "## Widget callbacks",
            "",
            "Each control driven through up to 20 valid values; a callback is computing, drawing and PNG encoding.",
            "",
            "| demo | callbacks | controls driven | median (ms) | max (ms) | errors |",
            "|---|---:|---|---:|---:|---|",
        ]
        for name, demo in results["demos"].items():
            lines.append(
                f"| {name} | {demo['callbacks']} | {', '.join(demo.get('controls', [])) or '—'} | "
                f"{_cell(demo['median_ms'])} | {_cell(demo['max_ms'])} | {'; '.join(demo['errors']) or 'none'} |"
            )
        lines.append("")
    imports = results.get("import")
    if imports:
        lines += [
            "## Import time",
            "",
            f"Median of {imports['repeats']} fresh interpreters: `import torch` {imports['torch_s']} s; "
            f"`import torch; import course_utils` {imports['torch_then_course_utils_s']} s; "
            f"`import course_utils` after torch: **{imports['course_utils_over_torch_s']} s**.",
            "",
        ]
    if results.get("language"):
        lines += lm_bench.markdown(results["language"])
    if results.get("recurrent"):
        lines += rnn_bench.markdown(results["recurrent"])
    if results.get("translation"):
        lines += translation_bench.markdown(results["translation"])
    if results.get("transformer"):
        lines += transformer_bench.markdown(results["transformer"])
    rows = target_rows(results)
    failed = sum(status == "FAIL" for _, _, status in rows)
    lines += [
        "## Targets",
        "",
        f"{len(rows) - failed} of {len(rows)} rows pass.",
        "",
        "| target | measured | status |",
        "|---|---:|---|",
    ]
    lines += [f"| {target} | {measured} | {status} |" for target, measured, status in rows]
    return "\n".join(lines) + "\n"


KEPT_MARKER = "<!-- Below: sections measured by other scripts (busy_bench.py, by hand); run.py keeps them. -->"


def kept_sections(path: Path) -> str:
    """The part of an existing report from ``KEPT_MARKER`` on, which this script does not measure."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return "\n" + text[text.index(KEPT_MARKER) :] if KEPT_MARKER in text else ""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--notebooks", nargs="*", default=[], metavar="PREFIX", help="only notebooks whose names start with these"
    )
    parser.add_argument("--notebook-dir", type=Path, default=ROOT / "notebooks", help="folder of the notebooks")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="fast and/or full")
    parser.add_argument("--skip-notebooks", action="store_true", help="do not run the notebooks")
    parser.add_argument("--skip-demos", action="store_true", help="do not measure widget callbacks")
    parser.add_argument("--skip-import", action="store_true", help="do not measure the import time")
    parser.add_argument("--skip-language", action="store_true", help="do not run the language benchmarks")
    parser.add_argument(
        "--retrain",
        action="store_true",
        help="time FFNN, RNN, GRU and LSTM training here instead of reading the checkpoints",
    )
    parser.add_argument("--values", type=int, default=20, help="values per slider")
    parser.add_argument("--repeats", type=int, default=5, help="fresh interpreters per import timing")
    parser.add_argument("--cell-timeout", type=int, default=600, help="seconds per notebook cell")
    parser.add_argument("--output", type=Path, default=ROOT / "BENCHMARKS.md", help="the Markdown report")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    now = dt.datetime.now(dt.timezone.utc)
    RESULTS.mkdir(parents=True, exist_ok=True)
    json_path = RESULTS / f"benchmarks-{now:%Y%m%d-%H%M%S}.json"
    results: dict = {
        "date": f"{now:%Y-%m-%d %H:%M} UTC",
        "json": str(json_path.relative_to(ROOT)),
        "machine": machine(),
    }
    if not args.skip_notebooks:
        paths = sorted(args.notebook_dir.resolve().glob("*.ipynb"))
        paths = [p for p in paths if not args.notebooks or any(p.stem.startswith(x) for x in args.notebooks)]
        results["notebooks"] = bench_notebooks(paths, args.modes, args.cell_timeout)
    if not args.skip_demos:
        results["demos"] = bench_demos(args.values)
    if not args.skip_import:
        results["import"] = bench_import(args.repeats)
    if not args.skip_language:
        results["language"] = lm_bench.run(args.retrain)
        results["recurrent"] = rnn_bench.run(args.retrain)
        results["translation"] = translation_bench.run(args.retrain)
        results["transformer"] = transformer_bench.run()
    json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    args.output.write_text(markdown(results) + kept_sections(args.output), encoding="utf-8")
    if args.output == ROOT / "BENCHMARKS.md" and results.get("notebooks"):
        for path in notebook_times.update_docs(notebook_times.read_table(args.output.read_text(encoding="utf-8"))):
            print(f"[bench] run times written into {path.relative_to(ROOT)}")
    failed = [target for target, _, status in target_rows(results) if status == "FAIL"]
    print(f"[bench] wrote {args.output} and {json_path}; targets missed: {failed or 'none'}")
    return 0  # measurements, not a test: missed targets are reported, not raised


if __name__ == "__main__":
    sys.exit(main())
