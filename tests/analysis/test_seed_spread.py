"""The noise rule: a gap counts only when it exceeds the larger range over seeds."""

import math

import pytest

from course_utils.analysis.seed_spread import WITHIN_NOISE, spread, verdict
from course_utils.validation import CourseInputError


def test_a_gap_larger_than_both_ranges_is_a_finding():
    rnn, lstm = spread([5.70, 5.72, 5.71]), spread([5.60, 5.61, 5.62])
    assert verdict(rnn, lstm, ("RNN", "LSTM")) == "LSTM better"  # lower perplexity is better by default
    assert verdict(rnn, lstm, ("RNN", "LSTM"), higher_is_better=True) == "RNN better"


def test_a_gap_inside_a_range_is_within_noise():
    a, b = spread([0.68, 0.69, 0.67]), spread([0.70, 0.68, 0.71])
    assert b.mean - a.mean == pytest.approx(0.0167, abs=1e-4) and max(a.range, b.range) == pytest.approx(0.03)
    assert verdict(a, b, higher_is_better=True) == WITHIN_NOISE


def test_the_spread_prints_mean_and_range():
    assert spread([1.0, 2.0, 3.0]).format(2) == "2.00 (1.00–3.00, 3 seeds)"


@pytest.mark.parametrize("values", [[1.0], [1.0, 2.0], [1.0, math.nan, 2.0]])
def test_too_few_seeds_or_a_nan_is_a_clear_error(values):
    with pytest.raises(CourseInputError):
        spread(values)
