"""The course's noise rule: a comparison between two trainings stands only where its gap exceeds their spread.

A model trained once is one draw: another seed (initial weights, batch order, masks) gives another score. So a
headline comparison is trained with at least three seeds, and read with one rule:

    gap = |mean(A) − mean(B)|,  spread = the larger of the two ranges (max − min over seeds)
    "A better" or "B better" only when gap > spread, else "within noise"

The range is used rather than a standard deviation because three seeds estimate a range honestly enough and a
reader can check it from the printed values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from course_utils.validation import CourseInputError

MIN_SEEDS = 3
WITHIN_NOISE = "within noise"


@dataclass(frozen=True)
class Spread:
    """One measurement over several seeds."""

    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def range(self) -> float:
        return self.high - self.low

    def format(self, digits: int = 3) -> str:
        """``mean (low–high, n seeds)``, e.g. ``5.702 (5.690–5.719, 3 seeds)``."""
        return f"{self.mean:.{digits}f} ({self.low:.{digits}f}–{self.high:.{digits}f}, {len(self.values)} seeds)"


def spread(values: Iterable[float]) -> Spread:
    """The seeds' values as a ``Spread``; fewer than ``MIN_SEEDS`` values, or a NaN, is an error."""
    values = tuple(float(value) for value in values)
    if len(values) < MIN_SEEDS:
        raise CourseInputError(f"a spread needs at least {MIN_SEEDS} seeds, got {len(values)}")
    if any(value != value for value in values):
        raise CourseInputError(f"a seed's value is NaN: {values}")
    return Spread(values)


def verdict(a: Spread, b: Spread, names: tuple[str, str] = ("A", "B"), *, higher_is_better: bool = False) -> str:
    """Which of the two is better ("A better" with ``names``' words), or ``"within noise"`` (see the module's rule)."""
    gap = a.mean - b.mean
    if abs(gap) <= max(a.range, b.range):
        return WITHIN_NOISE
    a_wins = gap > 0 if higher_is_better else gap < 0
    return f"{names[0] if a_wins else names[1]} better"
