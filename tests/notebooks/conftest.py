"""The browser tests' shared fixture."""

from __future__ import annotations

import pytest

from browser_support import launched_chromium


@pytest.fixture(scope="module")
def browser():
    """Headless Debian chromium driven by Playwright (Playwright's own browser download is not used)."""
    yield from launched_chromium()
