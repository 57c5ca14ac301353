"""Threads for a busy machine: while other programs keep cores busy, torch runs on the cores left.

torch's OpenMP threads spin while they wait for each other. When another program holds one of the
cores, a thread's partner is paused by the system and every step waits for it: on the course's 2-core
machine training ran 3-40x slower with one core busy. Fewer threads, one per free core, avoid that; on
an idle machine nothing changes. ``setup_notebook()`` chooses once for the session (``use_free_cores``)
and ``train()`` again for each loop. ``COURSE_THREADS_BY_LOAD=0`` turns the choice off.
"""

from __future__ import annotations

import contextlib
import math
import os
import time

import torch

SWITCH = "COURSE_THREADS_BY_LOAD"


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all cores since boot, from /proc/stat (Linux); None elsewhere."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(x) for x in stat.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def busy_cores(window: float = 0.1) -> float | None:
    """How many cores other programs kept busy over the next ``window`` seconds (this one sleeps); None if unknown."""
    first = _cpu_times()
    if first is None:
        return None
    time.sleep(window)
    second = _cpu_times()
    busy, total = second[0] - first[0], second[1] - first[1]
    return (os.cpu_count() or 1) * busy / total if total > 0 else None


def threads_for_load(threads: int, busy: float | None) -> int:
    """Threads to use out of ``threads`` when ``busy`` cores are taken by others: one per free core, at least one."""
    if busy is None:
        return threads
    free = (os.cpu_count() or 1) - busy
    return max(1, min(threads, math.floor(free + 0.5)))


@contextlib.contextmanager
def threads_for_a_busy_machine(measure=busy_cores):
    """Inside, torch uses one thread per core that other programs leave free; the old count comes back after."""
    before = torch.get_num_threads()
    if before == 1 or os.environ.get(SWITCH, "1") == "0":
        yield before
        return
    chosen = threads_for_load(before, measure())
    torch.set_num_threads(chosen)
    try:
        yield chosen
    finally:
        torch.set_num_threads(before)


def use_free_cores() -> tuple[int, float | None]:
    """Set torch to one thread per core that other programs leave free now; return (threads, busy cores)."""
    threads, busy = torch.get_num_threads(), None
    if threads > 1 and os.environ.get(SWITCH, "1") != "0":
        busy = busy_cores()
        threads = threads_for_load(threads, busy)
        torch.set_num_threads(threads)
    return threads, busy
