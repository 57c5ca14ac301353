"""The claims of notebooks 01-03 that rest on training or on seeds, asserted with the course's noise rule.

Each is cheap (seconds on a CPU): the models are tiny and full-batch, so the measurements are deterministic.
"""

from __future__ import annotations

import pytest

from course_utils.analysis.seed_spread import WITHIN_NOISE, spread, verdict
from course_utils.models.basics import feedforward

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def xor_data():
    return feedforward.continuous_xor(400, seed=0), feedforward.continuous_xor(2000, seed=1)


def test_a_deep_sigmoid_net_does_not_learn_where_tanh_and_relu_do(xor_data):
    """03: with plain gradient descent the sigmoid net's first layer stays put and its accuracy stays at chance."""
    train, test = xor_data
    accuracy = {}
    for name in ("sigmoid", "tanh", "relu"):
        runs = [feedforward.train_deep(name, train, test, seed=seed) for seed in SEEDS]
        accuracy[name] = spread(run.accuracy for run in runs)
        if name == "sigmoid":
            assert all(run.moved[0] < 1e-6 and run.first_gradients[0] < 1e-7 for run in runs)
        else:
            assert all(run.moved[0] > 0.1 for run in runs)
    assert accuracy["sigmoid"].high < 0.55
    assert verdict(accuracy["tanh"], accuracy["sigmoid"], ("tanh", "sigmoid"), higher_is_better=True) == "tanh better"
    assert verdict(accuracy["relu"], accuracy["sigmoid"], ("relu", "sigmoid"), higher_is_better=True) == "relu better"


def test_gradients_vanish_through_sigmoid_layers_but_stay_within_a_factor_of_4_with_relu_and_tanh():
    """03: layer 1 / layer 20 over three seeds: about 1e-12 for the sigmoid, between 1/4 and 4 for ReLU and tanh."""
    ratios = {}
    for name in ("sigmoid", "tanh", "relu"):
        norms = [feedforward.layer_gradient_norms(name, 20, seed=seed) for seed in SEEDS]
        ratios[name] = [(n[0] / n[-1]).item() for n in norms]
    assert max(ratios["sigmoid"]) < 1e-10
    assert all(0.25 < r < 4 for name in ("tanh", "relu") for r in ratios[name])
    assert min(ratios["tanh"]) > 1  # tanh's first layer gets more than its last: its input x is larger
    per_layer = {name: spread(r ** (1 / 19) for r in rs) for name, rs in ratios.items()}
    assert verdict(per_layer["relu"], per_layer["tanh"]) == WITHIN_NOISE


def test_the_two_layer_net_beats_the_linear_model_on_xor_with_every_seed(xor_data):
    """03: the 2-layer ReLU net against logistic regression, three seeds each."""
    (x, y), (x_test, y_test) = xor_data
    accuracies = {}
    for sizes in ([2, 1], [2, 8, 1]):
        models = [feedforward.FeedForwardNet(sizes, "relu", seed=seed) for seed in SEEDS]
        for model in models:
            feedforward.fit(model, x, y, steps=600, lr=0.05)
        accuracies[len(sizes)] = spread(model.accuracy(x_test, y_test) for model in models)
    best_line = feedforward.best_linear_accuracy(x_test, y_test)
    assert accuracies[2].high <= best_line + 0.01 < accuracies[3].low
    assert verdict(accuracies[3], accuracies[2], ("net", "line"), higher_is_better=True) == "net better"
