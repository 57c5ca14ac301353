"""On a busy machine torch trains on the cores other programs leave free (``course_utils.threads``).

With one core of two held by another program, torch's two OpenMP threads spin-wait for a partner the system
has paused, and training ran 3-40x slower (``benchmarks/busy_bench.py`` measures it). ``train()`` measures how
many cores others keep busy, uses one thread per free core for the loop, and gives the old count back after.
The busy cores here are real: processes that spin on the CPU.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import pytest
import torch

from course_utils import threads
from course_utils.training import train


@contextlib.contextmanager
def spinners(count: int):
    """``count`` processes that keep a core busy each, while inside."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        import time

        time.sleep(0.3)  # let them get going
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def torch_threads(count: int):
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


needs_proc_stat = pytest.mark.skipif(threads.busy_cores(0.01) is None, reason="no /proc/stat on this system")


@needs_proc_stat
def test_busy_cores_sees_processes_that_spin():
    cores = os.cpu_count() or 1
    with spinners(cores):
        assert threads.busy_cores(0.2) >= 0.75 * cores


def test_one_thread_per_free_core_and_at_least_one():
    cores = os.cpu_count() or 1
    assert threads.threads_for_load(cores, 0.0) == cores
    assert threads.threads_for_load(cores, float(cores)) == 1
    assert threads.threads_for_load(2, None) == 2  # unknown load: nothing changes
    if cores == 2:
        assert threads.threads_for_load(2, 1.0) == 1 and threads.threads_for_load(2, 0.3) == 2


def test_the_old_thread_count_comes_back_after_a_busy_spell():
    with torch_threads(2):
        with threads.threads_for_a_busy_machine(measure=lambda: float(os.cpu_count() or 1)) as chosen:
            assert chosen == 1 and torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with threads.threads_for_a_busy_machine(measure=lambda: 0.0) as chosen:
            assert chosen == torch.get_num_threads() == min(2, os.cpu_count() or 1)


def test_the_switch_turns_the_choice_off(monkeypatch):
    monkeypatch.setenv(threads.SWITCH, "0")
    with torch_threads(2), threads.threads_for_a_busy_machine(measure=lambda: 99.0) as chosen:
        assert chosen == 2


class ThreadSpy(torch.nn.Module):
    """A tiny model that records how many threads torch had at each forward pass."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.seen = []

    def forward(self, x, targets):
        self.seen.append(torch.get_num_threads())
        return x, ((x * self.w - targets) ** 2).mean()


@needs_proc_stat
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: there is no thread to give up")
def test_train_uses_one_thread_per_free_core_while_other_programs_spin():
    batch = (torch.ones(4), torch.ones(4))
    spy = ThreadSpy()
    with torch_threads(2), spinners(os.cpu_count() or 1):
        train(spy, lambda step: batch, steps=3, lr=0.1, progress=False)
        after = torch.get_num_threads()
    assert spy.seen == [1, 1, 1] and after == 2


@needs_proc_stat
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: there is no thread to give up")
def test_a_notebook_started_on_a_busy_machine_runs_on_the_free_cores(capsys):
    from course_utils.notebook import setup_notebook

    with torch_threads(2):
        with spinners(os.cpu_count() or 1):
            setup_notebook(seed=0)
            during = torch.get_num_threads()
    assert during == 1
    assert "busy machine" in capsys.readouterr().out
