"""Fixtures shared by the widget tests: the full course language and the course vocabulary."""
from __future__ import annotations

import pytest

import course_utils  # noqa: F401  (first: it sets HF_HUB_OFFLINE before anything loads huggingface_hub)
from course_utils.language.grammar import CourseLanguage
from course_utils.models.lm_checkpoints import course_vocab


@pytest.fixture(scope="session")
def lang():
    """The full course language (its oracle)."""
    return CourseLanguage()


@pytest.fixture(scope="session")
def vocab():
    """The vocabulary every course-language model uses."""
    return course_vocab()
