"""The oracle's comparisons that any language model can be put through."""

import math

import numpy as np
import pytest

from course_utils.evaluation.lm_probes import compare_to_oracle


def test_compare_to_oracle_on_a_hand_made_pair():
    p = np.array([0.5, 0.5, 0.0])
    q = np.array([0.25, 0.25, 0.5])
    c = compare_to_oracle(q, p)
    assert c.p_top == 0.25
    assert c.tv == pytest.approx(0.5)  # ½ (0.25 + 0.25 + 0.5)
    assert c.kl == pytest.approx(math.log(2))  # Σ p log(p/q) = log 2
    assert c.impossible == 0.5
    assert compare_to_oracle(p, p).tv == 0 and compare_to_oracle(p, p).kl == 0
    assert compare_to_oracle(np.array([1.0, 0.0, 0.0]), p).kl == math.inf  # q = 0 where p > 0
