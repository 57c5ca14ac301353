"""Offline first: the course never downloads anything unless a student asks for it."""

from __future__ import annotations

import os

OFFLINE_VARIABLES = {
    "HF_HUB_OFFLINE": "1",  # fail at once instead of retrying ~23 s per file
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def use_offline_hub() -> None:
    """Set the Hugging Face variables for offline work, unless the user already set them.

    They are read when ``huggingface_hub`` is imported, so this runs when ``course_utils`` is
    imported. Set ``COURSE_ALLOW_DOWNLOADS=1`` before importing to allow downloads.
    """
    if os.environ.get("COURSE_ALLOW_DOWNLOADS") == "1":
        return
    for name, value in OFFLINE_VARIABLES.items():
        os.environ.setdefault(name, value)
