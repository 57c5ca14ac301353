"""The grader's side of one submission's process (``grading.runner``): start it in the sandbox, send it cells and
calls with a time limit each, and start it again when it dies or will not stop.

A request that runs over its limit is interrupted (SIGINT); one that ignores that too is killed with its whole
process group, and the next request finds a fresh process (``restart`` replays the cells it was given).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grading import sandbox

START_TIMEOUT = 120  # seconds for a fresh process to import IPython
GRACE = 5  # seconds an interrupted request gets to stop before it is killed
CLOSED = {"closed": True}  # what _read gives when the process closed its end: it died (unshare may outlive it briefly)
# Offline, one torch thread, and nothing from the grader's own shell: a throwaway home, working and temporary folder.
ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1", "PIP_NO_INDEX": "1", "MPLBACKEND": "Agg",
               "PYTHONDONTWRITEBYTECODE": "1", "COURSE_FAST": "1", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}  # fmt: skip


@dataclass(frozen=True)
class Reply:
    """How a request ended: "ok", "raised" (``error`` says what), "timed out" or "crashed" (the process died)."""

    status: str
    error: str = ""
    bound: bool = True


class Session:
    def __init__(self, scratch: Path, timeout: float, memory_bytes: int = sandbox.MEMORY_BYTES):
        self.scratch, self.timeout, self.memory_bytes = scratch, timeout, memory_bytes
        self.process: subprocess.Popen | None = None
        self._requests = self._replies = -1
        self.replayed: list[str] = []  # the cells a fresh process runs again after a restart
        self.starts = 0

    # ---------------------------------------------------------------- the process

    def _environment(self) -> dict[str, str]:
        home = self.scratch / "home"
        for folder in (home, self.scratch / "tmp", self.scratch / "io"):
            folder.mkdir(parents=True, exist_ok=True)
        keep = {key: os.environ[key] for key in ("PATH", "COURSE_FAST") if key in os.environ}
        return {**ENVIRONMENT, **keep, "HOME": str(home), "TMPDIR": str(self.scratch / "tmp"),
                "PYTHONPATH": str(sandbox.ROOT), "MPLCONFIGDIR": str(home / ".matplotlib")}  # fmt: skip

    def start(self) -> Reply:
        requests_read, self._requests = os.pipe()
        self._replies, replies_write = os.pipe()
        command = sandbox.runner_command(requests_read, replies_write, self.memory_bytes)
        log = (self.scratch / "printed.log").open("ab")
        self.process = subprocess.Popen(
            command, cwd=self.scratch, env=self._environment(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            pass_fds=(requests_read, replies_write), start_new_session=True,
        )  # fmt: skip
        os.close(requests_read)
        os.close(replies_write)
        self._buffer = b""
        self.starts += 1
        hello = self._read(START_TIMEOUT)
        if hello is None or hello is CLOSED:
            self.stop()
            return Reply("crashed", "the grading process did not start")
        self.pid = hello.get("pid")
        return Reply("ok")

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        for fd in (self._requests, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        self.process = None

    def restart(self) -> None:
        """A fresh process that has run the cells run so far (each with its limit; their failures are not news)."""
        self.stop()
        if self.start().status != "ok":
            return
        for code in self.replayed:
            if self._request({"op": "cell", "code": code}).status in ("timed out", "crashed"):
                return

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    # ---------------------------------------------------------------- requests

    def _read(self, timeout: float) -> dict | None:
        """One reply; None when none came within ``timeout``; ``CLOSED`` when the process ended or closed its end."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if self.process.poll() is not None:
                return CLOSED
            if left <= 0:
                return None
            if not select.select([self._replies], [], [], min(left, 0.25))[0]:
                continue
            chunk = os.read(self._replies, 65536)
            if not chunk:
                return CLOSED
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            return {"ok": False, "ename": "ProtocolError", "evalue": "the grading process wrote something else"}

    def _request(self, request: dict) -> Reply:
        if self.process is None or self.process.poll() is not None:
            self.restart()
        try:
            os.write(self._requests, (json.dumps(request) + "\n").encode())
        except OSError:
            return self._died()
        reply = self._read(self.timeout)
        if reply is None:  # still running: interrupt, then kill
            try:
                os.kill(self.pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError, TypeError):
                pass
            if self._read(GRACE) in (None, CLOSED):
                self.stop()
            return Reply("timed out", f"ran over {self.timeout:g} s and was stopped")
        if reply is CLOSED:
            return self._died()
        if reply.get("ok"):
            return Reply("ok", bound=reply.get("bound", True))
        return Reply("raised", f"{reply.get('ename')}: {reply.get('evalue')}")

    def _died(self) -> Reply:
        try:
            code = self.process.wait(timeout=GRACE) if self.process else None
        except subprocess.TimeoutExpired:
            code = None
        self.stop()
        return Reply("crashed", f"the process died (exit status {code})")

    def cell(self, code: str, *, replay: bool = True) -> Reply:
        reply = self._request({"op": "cell", "code": code})
        if replay and reply.status not in ("timed out", "crashed"):
            self.replayed.append(code)  # a cell that killed the process is not run again
        return reply

    def call(self, name: str, args: tuple, tag: str, probe: str | None = None) -> tuple[Reply, Path]:
        """``name(*args)`` in the student's process (``probe(name, *args)`` when a probe is named: a course function
        that calls the answer and returns plain data); the answer is written to the returned path."""
        import torch

        from grading.export import pack_arguments

        inputs, output = self.scratch / "io" / f"{tag}.in.pt", self.scratch / "io" / f"{tag}.out.pt"
        torch.save(pack_arguments(args), inputs)
        output.unlink(missing_ok=True)
        request = {"op": "call", "name": name, "inputs": str(inputs), "output": str(output), "probe": probe}
        return self._request(request), output

    def values(self, names: tuple[str, ...], tag: str) -> tuple[Reply, Path]:
        output = self.scratch / "io" / f"{tag}.out.pt"
        output.unlink(missing_ok=True)
        return self._request({"op": "values", "names": list(names), "output": str(output)}), output


def scratch_folder() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="grade-")
