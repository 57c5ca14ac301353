"""Shared code for the course *Neural networks and language models, in notebooks*.

The package is organised in wings; imports run one way, from the top of this list down:

- ``widgets/`` and ``exercises/``: the projected demos and the exercises' self-checks;
- ``models/``: every model, from scratch and with torch, and the tools that train and ship them;
- ``language/``: the course language, its exact oracle, corpus and evaluation sets;
- the core, here at the top level: ``budget``, ``cell_slices``, ``checkpoints``, ``colab``, ``colab_install``,
  ``device``, ``lecture``, ``notebook``, ``offline``, ``threads``, ``training``, ``validation``. The core imports no wing.

Importing the package is cheap: it loads only the small core (device, seeds, fast mode,
offline set-up). Everything else is imported on first use: ``course_utils.models.basics.autograd``.
"""

from __future__ import annotations

import importlib

from course_utils.offline import use_offline_hub

use_offline_hub()  # before anything can import huggingface_hub

from course_utils.budget import budget, is_fast_mode  # noqa: E402
from course_utils.device import get_device, seed_everything  # noqa: E402
from course_utils.validation import CourseInputError  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CourseInputError",
    "budget",
    "get_device",
    "is_fast_mode",
    "seed_everything",
    "setup_notebook",
]

_LAZY_NAMES = {"setup_notebook": "course_utils.notebook"}


def __getattr__(name: str):
    """Import submodules (``course_utils.models.basics.autograd``) and a few names on first use."""
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    try:
        return importlib.import_module(f"course_utils.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"course_utils.{name}":
            raise
        raise AttributeError(f"module 'course_utils' has no attribute {name!r}") from None
