"""Notebook 01's self-checks pass the right answers, fail wrong or unfinished ones, and never raise."""

import numpy as np
import pytest
import torch

from course_utils.exercises.regression import (
    check_fit,
    check_gradient,
    check_max_stable_lr,
    fit_exercise_data,
    stable_lr_exercise_data,
)


def right_gradient(X, y, beta):
    return -2.0 / len(y) * X.T @ (y - X @ beta)


def test_gradient_check_passes_the_right_answer(capsys):
    assert check_gradient(right_gradient) is True
    assert capsys.readouterr().out.startswith("✓")


def test_gradient_check_accepts_a_torch_answer():
    def with_autograd(X, y, beta):
        beta_t = torch.tensor(beta, requires_grad=True)
        ((torch.tensor(y) - torch.tensor(X) @ beta_t) ** 2).mean().backward()
        return beta_t.grad

    assert check_gradient(with_autograd) is True


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda X, y, beta: -right_gradient(X, y, beta), "sign"),
        (lambda X, y, beta: right_gradient(X, y, beta) / 2, "factor 2"),
        (lambda X, y, beta: right_gradient(X, y, beta) * len(y), "divide by N"),
        (lambda X, y, beta: X.T @ y, "finite difference"),
        (lambda X, y, beta: None, "not finished"),
        (lambda X, y, beta: np.zeros(2), "expected 3"),
        (lambda X, y, beta: 1 / 0, "ZeroDivisionError"),
        (lambda X, y, beta: "gradient", "numbers"),
    ],
)
def test_gradient_check_fails_wrong_answers_with_a_hint(capsys, wrong, hint):
    assert check_gradient(wrong) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and hint in out


def test_stable_lr_check_passes_the_right_answer(capsys):
    X = stable_lr_exercise_data().X
    hessian = 2 * X.T @ X / len(X)
    assert check_max_stable_lr(2 / np.linalg.eigvalsh(hessian).max()) is True
    assert capsys.readouterr().out.startswith("✓")


@pytest.mark.parametrize("kind", ["gram", "half", "other", "none", "text", "nan", "vector"])
def test_stable_lr_check_fails_wrong_answers(capsys, kind):
    X = stable_lr_exercise_data().X
    lam = np.linalg.eigvalsh(X.T @ X / len(X)).max()
    answer = {
        "gram": 2 / lam,
        "half": 1 / (2 * lam),
        "other": 0.1,
        "none": None,
        "text": "0.1",
        "nan": float("nan"),
        "vector": [0.1, 0.2],
    }[kind]
    assert check_max_stable_lr(answer) is False
    assert capsys.readouterr().out.startswith("✗")


def test_stable_lr_is_really_the_divergence_threshold():
    """The answer the check expects is the lr at which GD starts to diverge on this very problem."""
    from course_utils.models.basics.regression import gradient_descent

    data = stable_lr_exercise_data()
    X = data.X
    limit = 2 / np.linalg.eigvalsh(2 * X.T @ X / len(X)).max()
    start = np.zeros(X.shape[1])
    assert not gradient_descent(X, data.y, start, lr=0.97 * limit, steps=4000).diverged
    assert gradient_descent(X, data.y, start, lr=1.03 * limit, steps=4000).diverged


def worked_solution() -> np.ndarray:
    """The notebook's worked solution to exercise 3: nn.Linear, nn.MSELoss and torch.optim.Adam."""
    data = fit_exercise_data()
    features = torch.tensor(data.X[:, 1:])  # (N, 3)
    targets = torch.tensor(data.y).unsqueeze(1)  # (N, 1)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1, dtype=torch.float64)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = torch.nn.MSELoss()
    for _ in range(1500):
        optimizer.zero_grad()
        loss_fn(model(features), targets).backward()
        optimizer.step()
    return torch.cat([model.bias, model.weight.flatten()]).detach().numpy()


def test_fit_check_passes_the_worked_solution(capsys):
    assert check_fit(worked_solution()) is True
    assert capsys.readouterr().out.startswith("✓")


def test_fit_check_accepts_a_tensor():
    data = fit_exercise_data()
    beta = np.linalg.lstsq(data.X, data.y, rcond=None)[0]
    assert check_fit(torch.tensor(beta)) is True


def test_fit_check_accepts_the_trained_parameters_themselves():
    """``(model.bias, model.weight)``: two tensors that still require grad, of shapes (1,) and (1, 3)."""
    data = fit_exercise_data()
    beta = np.linalg.lstsq(data.X, data.y, rcond=None)[0]
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        model.bias.copy_(torch.tensor(beta[:1]))
        model.weight.copy_(torch.tensor(beta[1:]).reshape(1, 3))
    assert check_fit((model.bias, model.weight)) is True
    assert check_fit([float(beta[0]), *beta[1:].tolist()]) is True


@pytest.mark.parametrize("bad, words", [([np.nan, 1.0, 2.0, 3.0], "NaN"), ([np.inf, 1.0, 2.0, 3.0], "inf")])
def test_fit_check_names_nan_and_inf(capsys, bad, words):
    assert check_fit(bad) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and words in out


@pytest.mark.parametrize(
    "kind, hint",
    [
        ("bias last", "wrong order"),
        ("near", "close"),
        ("zeros", "away"),
        ("none", "not finished"),
        ("short", "expected 4"),
    ],
)
def test_fit_check_fails_wrong_answers(capsys, kind, hint):
    data = fit_exercise_data()
    beta = np.linalg.lstsq(data.X, data.y, rcond=None)[0]
    answer = {
        "bias last": np.roll(beta, -1),
        "near": beta + 1e-3,
        "zeros": np.zeros(4),
        "none": None,
        "short": beta[1:],
    }[kind]
    assert check_fit(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and hint in out
