"""The training progress bar sends a bounded number of messages to a real Jupyter kernel's front end.

Every widget refresh is one or more ``comm_msg`` messages on the kernel's iopub channel. An unthrottled
bar over thousands of steps floods that channel (nbval then loses the kernel's final "idle" message and
fails with "Timeout ... waiting for output"), and JupyterLab has to draw every update.
"""

from __future__ import annotations

import textwrap
from collections import Counter

import pytest
from kernel_support import execute, kernel_environment, running_kernel

pytestmark = pytest.mark.slow  # a real kernel: CI runs it, the quick subset does not

pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

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


@pytest.fixture(scope="module")
def kernel():
    """A real IPython kernel in full mode (no COURSE_FAST), one torch thread."""
    with running_kernel(kernel_environment(OMP_NUM_THREADS="1")) as client:
        yield client


def comm_messages(counts: Counter) -> int:
    return counts["comm_open"] + counts["comm_msg"] + counts["comm_close"]


def test_training_bar_sends_a_bounded_number_of_messages(kernel):
    counts, streams = execute(kernel, textwrap.dedent(TINY_TRAINING.format(steps=STEPS)))
    assert streams["stdout"].strip() == str(STEPS)
    assert counts["comm_open"] > 0, f"no widget bar was drawn: {dict(counts)}"
    assert comm_messages(counts) <= MESSAGE_BOUND, dict(counts)
    assert counts["display_data"] + counts["update_display_data"] <= 5, dict(counts)
    assert counts["stream"] <= 5, dict(counts)


def test_an_unthrottled_bar_over_the_same_steps_would_break_the_bound(kernel):
    counts, _ = execute(kernel, textwrap.dedent(UNTHROTTLED_BAR.format(steps=STEPS)))
    assert comm_messages(counts) > 10 * MESSAGE_BOUND, dict(counts)
