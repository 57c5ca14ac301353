"""course_utils.models.basics.regression: analytic β, gradients, GD/momentum/Adam from scratch, the PyTorch pair, bad input."""

import numpy as np
import pytest
import torch

from course_utils.models.basics.regression import (
    Adam,
    DescentPath,
    analytic_solution,
    edge_crossings,
    fastest_learning_rate,
    fit_native_torch,
    fit_torch_nn,
    gradient_descent,
    hessian,
    learning_rate_grid,
    loss_grid,
    make_optimizer,
    make_regression_data,
    max_stable_lr,
    mean_contraction,
    mse_gradient,
    mse_loss,
    predict,
    random_start,
    rescaled_curvature,
)
from course_utils.validation import CourseInputError


@pytest.fixture
def data():
    return make_regression_data(n_samples=100, beta=(2.0, -1.0), feature_mean=1.0, seed=0)


@pytest.fixture
def beta0():
    return np.array([-1.0, 2.0])


# ----------------------------------------------------------------------------- data, loss, analytic


def test_data_has_an_intercept_column_and_is_seeded():
    a = make_regression_data(n_samples=20, beta=(1.0, 2.0, 3.0), seed=5)
    b = make_regression_data(n_samples=20, beta=(1.0, 2.0, 3.0), seed=5)
    c = make_regression_data(n_samples=20, beta=(1.0, 2.0, 3.0), seed=6)
    assert a.X.shape == (20, 3) and a.y.shape == (20,)
    assert np.all(a.X[:, 0] == 1.0)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.allclose(a.y, c.y)


def test_noise_free_data_is_fitted_exactly():
    data = make_regression_data(n_samples=30, beta=(0.5, -2.0, 3.0), noise=0.0, seed=1)
    np.testing.assert_allclose(analytic_solution(data.X, data.y), data.beta_true, atol=1e-12)
    np.testing.assert_allclose(predict(data.X, data.beta_true), data.y, atol=1e-12)


def test_analytic_solution_matches_lstsq_and_the_explicit_formula(data):
    beta = analytic_solution(data.X, data.y)
    explicit = np.linalg.inv(data.X.T @ data.X) @ data.X.T @ data.y  # the slide's formula, literally
    lstsq = np.linalg.lstsq(data.X, data.y, rcond=None)[0]
    np.testing.assert_allclose(beta, explicit, atol=1e-10)
    np.testing.assert_allclose(beta, lstsq, atol=1e-10)
    np.testing.assert_allclose(mse_gradient(data.X, data.y, beta), 0.0, atol=1e-12)  # the minimum: gradient 0


def test_gradient_matches_finite_differences_and_autograd(data):
    beta, h = np.array([0.3, -0.7]), 1e-6
    numerical = [
        (mse_loss(data.X, data.y, beta + h * e) - mse_loss(data.X, data.y, beta - h * e)) / (2 * h) for e in np.eye(2)
    ]
    np.testing.assert_allclose(mse_gradient(data.X, data.y, beta), numerical, rtol=1e-6)
    beta_t = torch.tensor(beta, requires_grad=True)
    torch.nn.functional.mse_loss(torch.tensor(data.X) @ beta_t, torch.tensor(data.y)).backward()
    np.testing.assert_allclose(mse_gradient(data.X, data.y, beta), beta_t.grad.numpy(), rtol=1e-12)


def test_hessian_and_stable_lr(data):
    np.testing.assert_allclose(hessian(data.X), 2 * data.X.T @ data.X / len(data.y))
    gram_max = np.linalg.eigvalsh(data.X.T @ data.X / len(data.y)).max()
    assert max_stable_lr(data.X) == pytest.approx(1 / gram_max)  # 2/λ_max(2XᵀX/N) = 1/λ_max(XᵀX/N)


def test_loss_grid_agrees_with_mse_loss(data):
    b0, b1 = np.array([-1.0, 0.0, 2.5]), np.array([1.0, -1.0])
    grid = loss_grid(data.X, data.y, b0, b1)
    assert grid.shape == (2, 3)
    for i, v in enumerate(b1):
        for j, u in enumerate(b0):
            assert grid[i, j] == pytest.approx(mse_loss(data.X, data.y, [u, v]), rel=1e-12)


# ----------------------------------------------------------------------------- descent from scratch


def test_gd_reaches_the_analytic_solution_from_a_random_start(data):
    start = random_start(2, seed=3)
    path = gradient_descent(data.X, data.y, start, lr=0.3, steps=300)
    assert path.betas.shape == (301, 2) and path.losses.shape == (301,)
    np.testing.assert_array_equal(path.betas[0], start)
    np.testing.assert_allclose(path.beta, analytic_solution(data.X, data.y), atol=1e-10)
    assert np.all(np.diff(path.losses) <= 1e-12)  # below the limit, plain GD never increases this loss


@pytest.mark.parametrize("factor", [0.5, 0.9, 0.98])
def test_gd_converges_below_the_stability_limit(data, beta0, factor):
    path = gradient_descent(data.X, data.y, beta0, lr=factor * max_stable_lr(data.X), steps=3000)
    assert not path.diverged
    np.testing.assert_allclose(path.beta, analytic_solution(data.X, data.y), atol=1e-8)


@pytest.mark.parametrize("factor", [1.02, 1.2, 3.0])
def test_gd_diverges_above_the_stability_limit(data, beta0, factor):
    path = gradient_descent(data.X, data.y, beta0, lr=factor * max_stable_lr(data.X), steps=3000)
    assert path.diverged
    assert path.steps_to(analytic_solution(data.X, data.y), 1e-3) is None


def test_blow_up_stops_at_the_last_finite_step(data, beta0):
    path = gradient_descent(data.X, data.y, beta0, lr=10.0, steps=1000)
    assert path.blew_up and path.diverged
    assert path.steps < 1000
    assert np.isfinite(path.betas).all() and np.isfinite(path.losses).all()


def test_from_run_truncates_at_the_first_non_finite_value():
    path = DescentPath.from_run([[0.0], [1.0], [np.inf], [2.0]], [1.0, 2.0, 3.0, 4.0], method="gd", lr=1.0)
    assert path.blew_up and path.steps == 1
    np.testing.assert_array_equal(path.beta, [1.0])


def test_steps_to_counts_the_first_step_that_stays_within_tolerance():
    path = DescentPath.from_run([[3.0], [0.5], [2.0], [0.05], [0.01]], [9, 0.25, 4, 0.0025, 0.0001], method="gd", lr=1)
    assert path.steps_to([0.0], 0.1) == 3  # step 1 was close, but step 2 left again
    assert path.steps_to([0.0], 1e-6) is None
    assert path.steps_to([3.0], 1e-9) is None
    assert path.steps_to([0.0], 10.0) == 0


@pytest.mark.parametrize("method", ["gd", "momentum", "adam"])
def test_every_method_reaches_the_analytic_solution(data, beta0, method):
    lr = {"gd": 0.3, "momentum": 0.05, "adam": 0.05}[method]
    path = gradient_descent(data.X, data.y, beta0, lr=lr, steps=800, method=method)
    np.testing.assert_allclose(path.beta, analytic_solution(data.X, data.y), atol=1e-6)


def test_zero_steps_returns_the_start(data, beta0):
    path = gradient_descent(data.X, data.y, beta0, lr=0.1, steps=0)
    assert path.steps == 0
    np.testing.assert_array_equal(path.beta, beta0)


def test_fastest_learning_rate_picks_the_fewest_steps(data, beta0):
    lrs = [0.01, 0.1, 0.3]
    lr, steps = fastest_learning_rate(data.X, data.y, beta0, method="gd", lrs=lrs, steps=2000, tol=1e-6)
    target = analytic_solution(data.X, data.y)
    counts = {r: gradient_descent(data.X, data.y, beta0, lr=r, steps=2000).steps_to(target, 1e-6) for r in lrs}
    assert lr in lrs and steps == counts[lr] == min(c for c in counts.values() if c is not None)
    assert fastest_learning_rate(data.X, data.y, beta0, method="gd", lrs=[5.0], steps=50, tol=1e-6) == (None, None)


def test_ill_conditioning_slows_plain_gd(beta0):
    """An uncentred feature stretches the valley: plain GD at its best lr needs many more steps."""
    lrs_for = lambda X: max_stable_lr(X) * np.linspace(0.1, 0.99, 12)  # noqa: E731
    counts = []
    for mean in (0.0, 3.0):
        d = make_regression_data(feature_mean=mean, seed=0)
        counts.append(fastest_learning_rate(d.X, d.y, beta0, method="gd", lrs=lrs_for(d.X), steps=3000, tol=1e-6)[1])
    assert counts[0] is not None and counts[1] is not None and counts[1] > 5 * counts[0]


def test_learning_rate_grid_keeps_gd_below_its_edge_and_spans_a_log_range(data):
    edge = max_stable_lr(data.X)
    gd, momentum, adam = (learning_rate_grid(method, data.X, 5) for method in ("gd", "momentum", "adam"))
    assert len(gd) == len(momentum) == len(adam) == 5 and gd.max() < edge
    assert np.allclose([momentum[0], momentum[-1]], [0.01 * edge, 2 * edge]) and adam[-1] / adam[0] == pytest.approx(
        3000
    )
    with pytest.raises(CourseInputError):
        learning_rate_grid("sgd", data.X, 5)


def test_rescaled_curvature_is_the_largest_eigenvalue_of_p_h(data):
    H, lrs = hessian(data.X), np.array([0.1, 0.02])
    assert rescaled_curvature(lrs, H) == pytest.approx(np.linalg.eigvals(np.diag(lrs) @ H).real.max())
    assert rescaled_curvature(np.full(2, 1.0), H) == pytest.approx(np.linalg.eigvalsh(H).max())  # P = I


def test_edge_crossings_reads_each_jump_after_a_crossing():
    errors = np.array([1e-9, 1e-9, 1e-9, 1e-3, 1e-9, 1e-9, 1e-9, 5e-2, 1e-9])
    curvature = np.array([30.0, 40, 39, 20, 20, 20, 39, 25, 20])
    table = edge_crossings(errors, curvature, [1, 6], tol=1e-6).splitlines()
    assert len(table) == 3 and "S > 38" in table[0]
    assert table[1].split() == ["1", "3", "1.0e-03", "20.0"] and table[2].split() == ["6", "7", "5.0e-02", "20.0"]


def test_adam_long_after_convergence_meets_a_curvature_past_its_edge(data, beta0):
    """Notebook 01's optional section in small: the effective learning rate grows until S passes 2(1+β₁)/(1−β₁)."""
    adam, H, curvature = Adam(lr=0.3), hessian(data.X), []
    beta = beta0.copy()
    for _ in range(8000):
        beta = beta - adam.step(mse_gradient(data.X, data.y, beta))
        effective = adam.lr / (np.sqrt(adam.square / (1 - adam.beta2**adam.t)) + adam.eps)
        curvature.append(rescaled_curvature(effective, H))
    assert max(curvature) > 2 * (1 + adam.beta1) / (1 - adam.beta1) > curvature[10]


# ----------------------------------------------------------------------------- the PyTorch pair


def test_native_torch_and_torch_nn_follow_the_numpy_gd_path(data, beta0):
    numpy_path = gradient_descent(data.X, data.y, beta0, lr=0.3, steps=150)
    native = fit_native_torch(data.X, data.y, beta0, lr=0.3, steps=150)
    library = fit_torch_nn(data.X, data.y, beta0, lr=0.3, steps=150)
    for path in (native, library):
        np.testing.assert_allclose(path.betas, numpy_path.betas, atol=1e-12)
        np.testing.assert_allclose(path.losses, numpy_path.losses, rtol=1e-12)
        np.testing.assert_allclose(path.beta, analytic_solution(data.X, data.y), atol=1e-8)


@pytest.mark.parametrize("method", ["momentum", "adam"])
def test_scratch_momentum_and_adam_match_torch_optim(data, beta0, method):
    scratch = gradient_descent(data.X, data.y, beta0, lr=0.05, steps=300, method=method)
    library = fit_torch_nn(data.X, data.y, beta0, lr=0.05, steps=300, method=method)
    np.testing.assert_allclose(library.betas, scratch.betas, atol=1e-11)


def test_torch_fits_work_with_several_features():
    d = make_regression_data(n_samples=80, beta=(1.0, 2.0, -3.0), seed=2)
    start = random_start(3, seed=1)
    native = fit_native_torch(d.X, d.y, start, lr=0.2, steps=400)
    library = fit_torch_nn(d.X, d.y, start, lr=0.2, steps=400)
    np.testing.assert_allclose(native.beta, analytic_solution(d.X, d.y), atol=1e-8)
    np.testing.assert_allclose(library.beta, native.beta, atol=1e-12)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("lr", [0, -0.1, float("nan"), float("inf"), "0.1", True])
def test_bad_learning_rate(data, beta0, lr):
    for fit in (gradient_descent, fit_native_torch, fit_torch_nn):
        with pytest.raises(CourseInputError, match="lr"):
            fit(data.X, data.y, beta0, lr=lr, steps=10)


@pytest.mark.parametrize("steps", [-1, 2.5, "10", None])
def test_bad_steps(data, beta0, steps):
    for fit in (gradient_descent, fit_native_torch, fit_torch_nn):
        with pytest.raises(CourseInputError, match="steps"):
            fit(data.X, data.y, beta0, lr=0.1, steps=steps)


def test_shape_mismatches(data, beta0):
    with pytest.raises(CourseInputError, match="rows"):
        analytic_solution(data.X, data.y[:-1])
    with pytest.raises(CourseInputError, match="rows"):
        gradient_descent(data.X[:50], data.y, beta0, lr=0.1, steps=1)
    with pytest.raises(CourseInputError, match="2-D"):
        analytic_solution(data.y, data.y)
    with pytest.raises(CourseInputError, match="1-D"):
        mse_loss(data.X, data.y[:, None], beta0)
    with pytest.raises(CourseInputError, match="columns"):
        gradient_descent(data.X, data.y, [1.0, 2.0, 3.0], lr=0.1, steps=1)
    with pytest.raises(CourseInputError, match="columns"):
        predict(data.X, [1.0])
    with pytest.raises(CourseInputError, match="numbers"):
        mse_gradient(data.X, data.y, ["a", "b"])
    with pytest.raises(CourseInputError, match="NaN"):
        analytic_solution(np.where(data.X == 1.0, np.nan, data.X), data.y)


def test_singular_normal_equations(data):
    duplicated = np.column_stack([data.X, data.X[:, 1]])  # a column repeats: rank 2 of 3
    with pytest.raises(CourseInputError, match="singular"):
        analytic_solution(duplicated, data.y)
    with pytest.raises(CourseInputError, match="singular"):
        analytic_solution(data.X[:1], data.y[:1])  # fewer rows than columns
    with pytest.raises(CourseInputError, match="singular"):
        fastest_learning_rate(duplicated, data.y, [0.0, 0.0, 0.0], method="gd", lrs=[0.1], steps=5, tol=1e-3)


def test_bad_method_and_optimizer_settings(data, beta0):
    with pytest.raises(CourseInputError, match="method"):
        gradient_descent(data.X, data.y, beta0, lr=0.1, steps=1, method="sgd")
    with pytest.raises(CourseInputError, match="method"):
        fit_torch_nn(data.X, data.y, beta0, lr=0.1, steps=1, method="lbfgs")
    with pytest.raises(CourseInputError, match="momentum"):
        gradient_descent(data.X, data.y, beta0, lr=0.1, steps=1, method="momentum", momentum=1.0)
    with pytest.raises(CourseInputError, match="betas"):
        make_optimizer("adam", 0.1, betas=(0.9, 1.5))


def test_torch_nn_needs_the_intercept_column(data, beta0):
    with pytest.raises(CourseInputError, match="intercept"):
        fit_torch_nn(data.X * 2.0, data.y, beta0, lr=0.1, steps=1)


def test_bad_data_settings_and_grid():
    with pytest.raises(CourseInputError, match="n_samples"):
        make_regression_data(n_samples=0)
    with pytest.raises(CourseInputError, match="feature_std"):
        make_regression_data(feature_std=0.0)
    with pytest.raises(CourseInputError, match="noise"):
        make_regression_data(noise=-1.0)
    with pytest.raises(CourseInputError, match="seed"):
        make_regression_data(seed=-1)
    with pytest.raises(CourseInputError, match="feature_mean"):
        make_regression_data(feature_mean=float("nan"))
    with pytest.raises(CourseInputError, match="n_params"):
        random_start(0)
    d = make_regression_data(beta=(1.0, 2.0, 3.0))
    with pytest.raises(CourseInputError, match="2 parameters"):
        loss_grid(d.X, d.y, [0.0], [0.0])
    with pytest.raises(CourseInputError, match="tol"):
        gradient_descent(d.X, d.y, [0.0, 0.0, 0.0], lr=0.1, steps=1).steps_to([0.0, 0.0, 0.0], 0.0)


def test_the_mean_contraction_is_one_minus_lr_times_the_curvature_in_one_dimension():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 1))  # one feature: the error shrinks by |1 − αλ| every step, exactly
    y = 3 * X[:, 0] + 0.1 * rng.normal(size=50)
    edge = max_stable_lr(X)  # 2/λ
    assert mean_contraction(X, y, np.zeros(1), lr=0.25 * edge, steps=10) == pytest.approx(0.5)
    assert mean_contraction(X, y, np.zeros(1), lr=0.9 * edge, steps=10) == pytest.approx(0.8)
