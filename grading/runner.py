"""The student's process: an IPython shell that runs a submission's cells and calls its functions, one request at
a time. Started by ``grading.session`` inside the sandbox (``grading.sandbox``), as

    python -m grading.runner REQUESTS_FD REPLIES_FD

Requests and replies are JSON lines on two pipes of their own (what the submission prints goes to a log file, never
into the replies). The requests:

    {"op": "cell", "code": ...}                                run a cell; reply whether it raised
    {"op": "call", "name": ..., "inputs": P, "output": Q}      the function ``name`` on the arguments in P; answer → Q
        (with "probe": "course_utils.m.f", the answer is f(the function, *arguments): for an answer that takes or
        gives a course object, such as 02's softplus on a ``Value``)
    {"op": "values", "names": [...], "output": Q}             the values bound to ``names``, as one tuple → Q

Shell commands (``!pip install …``) and the pip/conda magics are refused: a submission cannot change what later
submissions run with. The course's references refuse a graded call (``course_utils.reference``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

REFUSED_MAGICS = ("pip", "conda", "mamba", "uv", "sx", "system", "bash", "sh", "script", "writefile")
REFUSED = "grading runs no shell commands or installs"


def _refuse(*args, **kwargs):
    raise PermissionError(REFUSED)


def make_shell():
    """An IPython shell with the shell escapes and install magics refused, and plots drawn off-screen."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    shell.system = shell.system_piped = shell.system_raw = shell.getoutput = _refuse
    for name in REFUSED_MAGICS:
        shell.register_magic_function(_refuse, "line", name)
        shell.register_magic_function(_refuse, "cell", name)
    return shell


def run_cell(shell, code: str) -> dict:
    result = shell.run_cell(code, store_history=False, silent=False)
    error = result.error_before_exec or result.error_in_exec
    if error is None:
        return {"ok": True}
    return {"ok": False, "ename": type(error).__name__, "evalue": str(error)[:500]}


def course_function(dotted: str):
    """A function of ``course_utils`` named ``module.function`` (a probe): nothing outside the course."""
    import importlib

    module, _, function = dotted.rpartition(".")
    if not module.startswith("course_utils."):
        raise ValueError(f"a probe must be a course_utils function, not {dotted}")
    return getattr(importlib.import_module(module), function)


def call(shell, name: str, inputs: str, output: str, probe: str | None = None) -> dict:
    import torch

    from course_utils.reference import refusing_references
    from grading.export import UNBOUND, save_answer, save_raised, unpack_arguments

    fn = shell.user_ns.get(name)
    if fn is None or not callable(fn):
        save_answer(None if name in shell.user_ns else {UNBOUND: name}, Path(output))
        return {"ok": True, "bound": name in shell.user_ns}
    args = unpack_arguments(torch.load(inputs, weights_only=True))
    try:
        with refusing_references():
            answer = course_function(probe)(fn, *args) if probe else fn(*args)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the answer's error is its result (SystemExit too)
        save_raised(error, Path(output))
        return {"ok": True, "bound": True}
    save_answer(answer, Path(output))
    return {"ok": True, "bound": True}


def values(shell, names: list[str], output: str) -> dict:
    from grading.export import UNBOUND, save_answer

    unbound = [name for name in names if name not in shell.user_ns]
    answer = {UNBOUND: ", ".join(unbound)} if unbound else tuple(shell.user_ns[name] for name in names)
    save_answer(answer, Path(output))
    return {"ok": True, "bound": not unbound, "unbound": unbound}


def serve(requests_fd: int, replies_fd: int) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a grader started in the background ignores SIGINT
    requests = os.fdopen(requests_fd, "r", encoding="utf-8")
    replies = os.fdopen(replies_fd, "w", encoding="utf-8")
    shell = make_shell()

    def reply(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    reply({"ready": True, "pid": os.getpid()})
    for line in requests:
        request = json.loads(line)
        try:
            if request["op"] == "cell":
                answer = run_cell(shell, request["code"])
            elif request["op"] == "call":
                answer = call(shell, request["name"], request["inputs"], request["output"], request.get("probe"))
            else:
                answer = values(shell, request["names"], request["output"])
        except KeyboardInterrupt:
            answer = {"ok": False, "ename": "KeyboardInterrupt", "evalue": "interrupted"}
        reply(answer)


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
