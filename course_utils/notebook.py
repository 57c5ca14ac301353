"""The set-up every notebook runs first: device, seeds, plot defaults."""

from __future__ import annotations

import torch

from course_utils.budget import is_fast_mode
from course_utils.device import get_device, seed_everything
from course_utils.lecture import _apply_notebook_defaults, lecture_mode
from course_utils.threads import use_free_cores


def setup_notebook(seed: int = 0, *, lecture: bool = False, quiet: bool = False) -> torch.device:
    """Seed everything, pick the device, set plot defaults; return the device.

    ``lecture=True`` switches on lecture mode (large fonts for projecting). On a busy machine torch
    gets one thread per core other programs leave free (``course_utils.threads``).
    """
    seed_everything(seed)
    _apply_notebook_defaults()
    if lecture:
        lecture_mode(True)
    device = get_device()
    threads, busy = use_free_cores()  # a busy machine: one torch thread per free core (course_utils.threads)
    if not quiet:
        mode = "fast (CI)" if is_fast_mode() else "full"
        print(f"device: {device.type} | torch {torch.__version__} | seed {seed} | {mode} mode")
        if busy is not None and busy >= 0.5:
            print(f"busy machine: other programs keep {busy:.1f} cores busy, so torch uses {threads} thread(s)")
    return device
