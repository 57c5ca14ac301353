"""The training progress bar sends a bounded number of messages to a real Jupyter kernel's front end.

Every widget refresh is one or more ``comm_msg`` messages on the kernel's iopub channel. An unthrottled
bar over thousands of steps floods that channel (nbval then loses the kernel's final "idle" message and
fails with "Timeout ... waiting for output"), and JupyterLab has to draw every update.
"""
from __future__ import annotations

import os
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

REPO = Path(__file__).resolve().parents[1]
STEPS = 3000
MESSAGE_BOUND = 250  # comm_open + comm_msg of one training call, whatever the number of steps

TINY_TRAINING = """
import torch
from torch import nn
from course_utils.training import train

class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x, targets):
        predictions = self.linear(x).squeeze(-1)  # (B,)
        return predictions, nn.functional.mse_loss(predictions, targets)

def noisy_line(step):
    x = torch.randn(8, 2)  # (B, 2)
    return x, x @ torch.tensor([2.0, -1.0]) + torch.randn(8)  # (B,): the loss changes every step

history = train(Tiny(), noisy_line, steps={steps}, lr=0.01, progress=True)
print(len(history.losses))
"""

# What train() did before the bar was throttled: tqdm.auto over the steps, a new postfix every step.
UNTHROTTLED_BAR = """
from tqdm.auto import tqdm
bar = tqdm(range(1, {steps} + 1), desc="training", leave=False)
for step in bar:
    bar.set_postfix(loss=f"{{1000 / step:.4f}}")  # a changing number, as a training loss
"""


def kernel_environment() -> dict[str, str]:
    """The test's environment in full mode (no COURSE_FAST), with the repository importable."""
    env = {k: v for k, v in os.environ.items() if k != "COURSE_FAST"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


@pytest.fixture(scope="module")
def kernel():
    """A real IPython kernel (ipykernel) and a blocking client to it."""
    manager, client = jupyter_client.manager.start_new_kernel(
        kernel_name="python3", cwd=str(REPO), env=kernel_environment(), extra_arguments=[], startup_timeout=60
    )
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def iopub_messages(client, code: str, timeout: float = 60) -> tuple[Counter, str]:
    """Run ``code`` in the kernel; count the iopub message types it caused, and return its stdout."""
    msg_id = client.execute(code)
    counts, stdout, errors = Counter(), [], []
    while True:
        message = client.get_iopub_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "status" and content["execution_state"] == "idle":
            break
        counts[kind] += 1
        if kind == "stream" and content["name"] == "stdout":
            stdout.append(content["text"])
        if kind == "error":
            errors.append("\n".join(content["traceback"]))
    assert not errors, errors[0]
    return counts, "".join(stdout)


def comm_messages(counts: Counter) -> int:
    return counts["comm_open"] + counts["comm_msg"] + counts["comm_close"]


def test_training_bar_sends_a_bounded_number_of_messages(kernel):
    counts, stdout = iopub_messages(kernel, textwrap.dedent(TINY_TRAINING.format(steps=STEPS)))
    assert stdout.strip() == str(STEPS)
    assert counts["comm_open"] > 0, f"no widget bar was drawn: {dict(counts)}"
    assert comm_messages(counts) <= MESSAGE_BOUND, dict(counts)
    assert counts["display_data"] + counts["update_display_data"] <= 5, dict(counts)
    assert counts["stream"] <= 5, dict(counts)


def test_an_unthrottled_bar_over_the_same_steps_would_break_the_bound(kernel):
    counts, _ = iopub_messages(kernel, textwrap.dedent(UNTHROTTLED_BAR.format(steps=STEPS)))
    assert comm_messages(counts) > 10 * MESSAGE_BOUND, dict(counts)
