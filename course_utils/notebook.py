"""The set-up every notebook runs first: device, seeds, plot defaults."""
from __future__ import annotations

import torch

from course_utils.budget import is_fast_mode
from course_utils.device import get_device, seed_everything
from course_utils.lecture import _apply_notebook_defaults, lecture_mode


def setup_notebook(seed: int = 0, *, lecture: bool = False, quiet: bool = False) -> torch.device:
    """Seed everything, pick the device, set plot defaults; return the device.

    ``lecture=True`` switches on lecture mode (large fonts for projecting).
    """
    seed_everything(seed)
    _apply_notebook_defaults()
    if lecture:
        lecture_mode(True)
    device = get_device()
    if not quiet:
        mode = "fast (CI)" if is_fast_mode() else "full"
        print(f"device: {device.type} | torch {torch.__version__} | seed {seed} | {mode} mode")
    return device
