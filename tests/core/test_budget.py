"""Fast mode picks the small budget; everything else gets the full one."""

import pytest

from course_utils import budget, is_fast_mode


@pytest.mark.parametrize(
    "value, fast", [("1", True), ("true", True), ("YES", True), ("0", False), ("", False), ("no", False)]
)
def test_fast_mode_variable(monkeypatch, value, fast):
    monkeypatch.setenv("COURSE_FAST", value)
    assert is_fast_mode() is fast
    assert budget(full=1000, fast=10) == (10 if fast else 1000)


def test_unset_means_full_mode(monkeypatch):
    monkeypatch.delenv("COURSE_FAST", raising=False)
    assert budget(full="big", fast="small") == "big"
