"""The argument checks every public function uses."""

import math

import numpy as np
import pytest

from course_utils.validation import CourseInputError, check_choice, check_int, check_positive, check_same_length


@pytest.mark.parametrize(
    "bad, message",
    [(0, "> 0"), (-0.1, "> 0"), (math.nan, "finite"), (math.inf, "finite"), ("0.1", "number"), (True, "number")],
)
def test_check_positive_rejects(bad, message):
    with pytest.raises(CourseInputError, match=message):
        check_positive("learning rate", bad)


def test_check_positive_accepts_and_allows_zero_when_asked():
    assert check_positive("lr", 0.5) == 0.5
    assert check_positive("momentum", 0, allow_zero=True) == 0.0


@pytest.mark.parametrize("bad", [1.0, "3", None, True])
def test_check_int_rejects_non_integers(bad):
    with pytest.raises(CourseInputError, match="integer"):
        check_int("steps", bad)


def test_check_int_bounds_and_numpy_integers():
    assert check_int("steps", np.int64(5), minimum=1) == 5
    with pytest.raises(CourseInputError, match=">= 1"):
        check_int("steps", 0, minimum=1)
    with pytest.raises(CourseInputError, match="<= 10"):
        check_int("depth", 11, maximum=10)


def test_check_choice_lists_the_options():
    assert check_choice("optimizer", "adam", ["gd", "adam"]) == "adam"
    with pytest.raises(CourseInputError, match="'gd', 'adam'"):
        check_choice("optimizer", "sgd", ["gd", "adam"])


def test_check_same_length():
    check_same_length("X", 3, "y", 3)
    with pytest.raises(CourseInputError, match="X has 3 rows but y has 4"):
        check_same_length("X", 3, "y", 4)


@pytest.mark.parametrize(
    "bad, message",
    [("1", "real number"), (None, "real number"), (False, "real number"), (math.nan, "finite"), (-math.inf, "finite")],
)
def test_check_number_rejects(bad, message):
    from course_utils.validation import check_number

    with pytest.raises(CourseInputError, match=message):
        check_number("a", bad)
