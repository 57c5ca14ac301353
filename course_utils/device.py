"""Pick the compute device and seed every random number generator."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from course_utils.validation import CourseInputError, check_int

DEVICE_VARIABLE = "COURSE_DEVICE"  # force a device, e.g. COURSE_DEVICE=cpu


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def get_device(prefer: str | None = None) -> torch.device:
    """CUDA if present, then Apple's MPS, then the CPU.

    ``prefer`` (or the ``COURSE_DEVICE`` variable) forces one; asking for a device that
    is not there raises a clear error rather than failing later inside a model.
    """
    choice = prefer or os.environ.get(DEVICE_VARIABLE) or None
    if choice is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(choice)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CourseInputError(f"device {choice!r} was asked for, but CUDA is not available here")
    if device.type == "mps" and not _mps_available():
        raise CourseInputError(f"device {choice!r} was asked for, but MPS is not available here")
    return device


def seed_everything(seed: int = 0, *, deterministic: bool = True) -> torch.Generator:
    """Seed Python, NumPy and torch (CPU and GPU); return a torch Generator seeded the same way.

    ``deterministic`` also asks torch for deterministic kernels where it has them, so the
    same notebook gives the same numbers on every run.
    """
    seed = check_int("seed", seed, minimum=0, maximum=2**32 - 1)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        if hasattr(torch.backends, "cudnn"):
            torch.backends.cudnn.benchmark = False
    return torch.Generator().manual_seed(seed)
