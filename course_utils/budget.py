"""Fast mode: CI sets ``COURSE_FAST=1`` to shrink training budgets; students get full mode."""

from __future__ import annotations

import os

FAST_MODE_VARIABLE = "COURSE_FAST"


def is_fast_mode() -> bool:
    """True when ``COURSE_FAST`` is set to 1/true/yes (CI and the fast benchmarks)."""
    return os.environ.get(FAST_MODE_VARIABLE, "").strip().lower() in {"1", "true", "yes", "on"}


def budget(full, fast):
    """Pick ``fast`` in fast mode and ``full`` otherwise: ``steps = budget(full=2000, fast=200)``."""
    return fast if is_fast_mode() else full
