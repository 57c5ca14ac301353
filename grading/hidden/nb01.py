"""Hidden tests of notebook 01 (linear regression): the gradient on new problems; the two values by their checks.

The gradient's inputs arrive as NumPy float64 arrays, as in the notebook (``grading.export.pack_arguments``).
"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.exercises.regression import check_fit, check_max_stable_lr
from course_utils.models.basics.regression import mse_gradient
from grading.spec import Case, HiddenExercise, check_judge, numbers_judge

NOTEBOOK = "01_linear_regression"


def _gradient_cases() -> list[Case]:
    cases = []
    for seed, (N, D, intercept) in enumerate([(40, 3, True), (1, 1, False), (7, 5, True),
                                              (120, 2, False)], start=9011):  # fmt: skip
        generator = torch.Generator().manual_seed(seed)
        X = torch.randn(N, D, generator=generator, dtype=torch.float64)  # (N, D)
        if intercept:
            X[:, 0] = 1.0
        y = 2 * torch.randn(N, generator=generator, dtype=torch.float64)  # (N,)
        beta = torch.randn(D, generator=generator, dtype=torch.float64)  # (D,)
        label = f"N={N}, D={D}" + (", first column the intercept's 1s" if intercept else "")
        cases.append(Case((X.numpy(), y.numpy(), beta.numpy()), label=label))
    X, y, _ = cases[0].args
    cases.append(Case((X, y, np.zeros(X.shape[1])), label="N=40, D=3, β = 0"))
    return cases


EXERCISES = (
    HiddenExercise(1, ("my_gradient",), numbers_judge(mse_gradient), _gradient_cases, references=(mse_gradient,)),
    HiddenExercise(2, ("my_lr",), check_judge(check_max_stable_lr), points=1),
    HiddenExercise(3, ("my_beta",), check_judge(check_fit), points=2),
)
