"""What the grader (``scripts/grade.py``) runs inside a submission's kernel: no network, and each check's verdict as
one line it can read back.

A check prints ``✓ …`` or ``✗ …`` and returns a bool (``course_utils.exercises``). ``report`` runs one check with
what it prints captured, a student's own prints included, and prints one line: a token only the grader knows,
then the verdict as JSON.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import socket

NO_NETWORK = "grading runs with no network"
LOCAL_NAMES = {None, "", "localhost", "localhost.localdomain"}


def _is_local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def block_network() -> None:
    """Refuse every connection to, and every name lookup of, another machine from this process (the kernel's own
    channels, opened by ZeroMQ before any submission runs, are not Python sockets and stay open)."""
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def guarded(method):
        def call(self, address, *args):
            if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
                raise OSError(f"{NO_NETWORK}: no connection to {address[0]}")
            return method(self, address, *args)

        return call

    def lookup(host, *args, **kwargs):
        if not _is_local(host):
            raise socket.gaierror(f"{NO_NETWORK}: {host} is not looked up")
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = guarded(connect), guarded(connect_ex), lookup


def report(token: str, exercise: int, check) -> bool:
    """Run ``check()`` (a check called on the student's answer) and print ``token`` and its verdict as JSON:
    ``{"exercise", "passed", "message"}``. A name the check reads that the submission never bound is said so."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            passed = bool(check())
        lines = [line[2:] for line in printed.getvalue().splitlines() if line.startswith(("✓ ", "✗ "))]
        message = lines[-1] if lines else "the check printed no verdict"
    except NameError as error:  # the answer's name was never bound: its cell raised, was not run, or was renamed
        passed, message = False, f"{error}: its cell raised, was not run, or the name was changed"
    except Exception as error:  # noqa: BLE001 - the grader reports, it never raises
        passed, message = False, f"the check could not run: {type(error).__name__}: {error}"
    print(token, json.dumps({"exercise": exercise, "passed": passed, "message": message}, ensure_ascii=False))
    return passed
