"""Build every course demo with its defaults, display it, and drive each control through a few values.

The demos and the values come from the benchmarks (``benchmarks/run.py``: ``demo_classes``,
``control_settings``), so a new demo or control is driven here without a change. Run as a script
(``python tests/demo_driving.py``) it prints one JSON report, so tests/widgets/test_ipywidgets7.py can run it
in an interpreter with another ipywidgets. A report lists, per demo, every problem found: an
exception, a change that did not redraw, an inline error message, a display without a widget view.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import sys
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VALUES_PER_CONTROL = 3
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# ipywidgets 7 with a new ipykernel warns that ipykernel.comm.Comm is deprecated: ipywidgets' own doing.
KNOWN_WARNINGS = ("The `ipykernel.comm.Comm` class has been deprecated",)


def benchmarks():
    """benchmarks/run.py as a module (it is a script, not a package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("course_benchmarks", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def display_problems(demo) -> list[str]:
    """Display ``demo`` as a notebook would; the widget view must name the demo's box, with no traceback."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    with capture_output() as captured:
        display(demo)
    views = [output.data[WIDGET_VIEW] for output in captured.outputs if WIDGET_VIEW in output.data]
    problems = [] if [view.get("model_id") for view in views] == [demo.box.model_id] else [f"display gave {views}"]
    printed = re.sub(r"\x1b\[[0-9;]*m", "", captured.stdout + captured.stderr)  # without terminal colours
    if "Traceback" in printed:
        problems.append("display raised: " + printed.strip().splitlines()[-1])
    return problems


def drive(cls, settings, count: int = VALUES_PER_CONTROL) -> dict:
    """Build ``cls()`` and set each control to ``count`` valid values; what happened."""
    problems, changes = [], 0
    with contextlib.redirect_stdout(io.StringIO()):  # outside a kernel a demo's display() prints a repr
        demo = cls()
        if demo.renders != 1 or not (demo.last_png or b"").startswith(b"\x89PNG"):
            problems.append(f"construction: {demo.renders} renders, no PNG")
        for name, control in demo.controls.items():
            setting = settings(control, count)
            if setting is None:
                continue
            trait, values = setting
            for value in values:
                before, renders = getattr(control, trait), demo.renders
                setattr(control, trait, value)
                if getattr(control, trait) == before:
                    continue
                changes += 1
                if demo.renders == renders:
                    problems.append(f"{name}={value!r}: no redraw")
                if demo.last_error is not None or demo.message.value:
                    problems.append(f"{name}={value!r}: {demo.last_error!r} {demo.message.value}")
    problems += display_problems(demo)
    return {"renders": demo.renders, "changes": changes, "problems": problems}


def report() -> dict:
    """Every demo driven, with the ipywidgets version and the warnings raised on the way."""
    import ipywidgets

    bench = benchmarks()
    classes, broken = bench.demo_classes()
    demos = {
        f"{module} (import)": {"renders": 0, "changes": 0, "problems": [error]} for module, error in broken.items()
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for cls in classes:
            name = f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"
            try:
                demos[name] = drive(cls, bench.control_settings)
            except Exception:  # noqa: BLE001 - report the demo, drive the others
                demos[name] = {"renders": 0, "changes": 0, "problems": [traceback.format_exc(limit=-3)]}
    relevant = {
        f"{w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})"
        for w in caught
        if not str(w.message).startswith(KNOWN_WARNINGS)
        and any(p in w.filename for p in ("course_utils", "ipywidgets", "traitlets"))
    }
    return {"ipywidgets": ipywidgets.__version__, "demos": demos, "warnings": sorted(relevant)}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(json.dumps(report()))
