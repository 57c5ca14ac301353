"""Helpers for the tests that talk to a real IPython kernel (ipykernel) through jupyter_client."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def kernel_environment(drop: tuple[str, ...] = ("COURSE_FAST",), **variables: str) -> dict[str, str]:
    """The test's environment without the ``drop`` variables, plus ``variables``, with the repository importable."""
    env = {name: value for name, value in os.environ.items() if name not in drop}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return {**env, **variables}


@contextlib.contextmanager
def running_kernel(env: dict[str, str]):
    """A fresh python3 kernel started in the repository with ``env``; yields a blocking client."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(REPO), env=env, startup_timeout=60)
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def execute(client, code: str, timeout: float = 60) -> tuple[Counter, dict[str, str]]:
    """Run ``code``; return the count of each iopub message type it caused and its stream text by name.

    The kernel forwards what C libraries write to its file descriptors 1 and 2 as stream messages too.
    """
    msg_id = client.execute(code)
    counts, streams, errors = Counter(), {"stdout": "", "stderr": ""}, []
    while True:
        message = client.get_iopub_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "status" and content["execution_state"] == "idle":
            break
        counts[kind] += 1
        if kind == "stream":
            streams[content["name"]] += content["text"]
        if kind == "error":
            errors.append("\n".join(content["traceback"]))
    assert not errors, errors[0]
    return counts, streams
