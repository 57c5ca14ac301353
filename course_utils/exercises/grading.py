"""What the instructor's grader runs first in a submission's process: Python's own block on the network.

The grader's sandbox also shuts the process off from the network at the level of the system where Linux allows it;
this block is what remains where it does not (and what a student sees: a clear error, not a timeout).
"""

from __future__ import annotations

import ipaddress
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
