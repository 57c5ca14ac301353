"""The shared training loop."""

import math

import pytest
import torch
from torch import nn

from course_utils import CourseInputError, seed_everything
from course_utils.training import NonFiniteLossError, ProgressBar, TrainingHistory, train


class TinyRegressor(nn.Module):
    """Follows the course contract: forward(x, targets=None) -> (predictions, loss)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x, targets=None):
        predictions = self.linear(x).squeeze(-1)  # (B,)
        loss = None if targets is None else nn.functional.mse_loss(predictions, targets)
        return predictions, loss


def line_batches(step):
    generator = torch.Generator().manual_seed(step)
    x = torch.randn(32, 2, generator=generator)  # (B, 2)
    return x, x @ torch.tensor([2.0, -1.0]) + 0.5  # (B,)


def test_training_reduces_the_loss_and_logs_history():
    seed_everything(0)
    model = TinyRegressor()
    history = train(model, line_batches, steps=300, lr=0.05, progress=False, log_every=10)
    assert history.steps[0] == 10 and history.steps[-1] == 300
    assert history.final_loss < 1e-3 < history.losses[0]
    assert torch.allclose(model.linear.weight, torch.tensor([[2.0, -1.0]]), atol=0.05)


def test_iterable_batches_and_evaluation_curve():
    seed_everything(0)
    model = TinyRegressor()
    batches = [line_batches(s) for s in range(20)]
    x_eval, y_eval = line_batches(999)
    history = train(
        model,
        batches,
        steps=20,
        lr=0.05,
        progress=False,
        evaluate=lambda: model(x_eval, y_eval)[1].item(),
        eval_every=5,
    )
    assert history.eval_steps == [5, 10, 15, 20]
    assert history.eval_losses[-1] < history.eval_losses[0]


def test_running_out_of_batches_is_a_clear_error():
    with pytest.raises(CourseInputError, match="ran out at step 3"):
        train(TinyRegressor(), [line_batches(0), line_batches(1)], steps=5, progress=False)


def test_nan_loss_stops_before_the_bad_update_and_keeps_history():
    seed_everything(0)
    model = TinyRegressor()

    def batches(step):
        x, y = line_batches(step)
        return x, (y * math.nan if step == 4 else y)

    with pytest.raises(NonFiniteLossError, match="step 4") as caught:
        train(model, batches, steps=10, lr=0.01, progress=False)
    assert caught.value.history.steps == [1, 2, 3]
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert "the model keeps its weights" in str(caught.value)


def test_weights_that_blew_up_are_named_in_the_message():
    seed_everything(0)
    model = TinyRegressor()
    with pytest.raises(NonFiniteLossError) as caught:
        train(model, line_batches, steps=50, lr=1e30, progress=False)
    weights_finite = all(bool(torch.isfinite(p).all()) for p in model.parameters())
    assert ("re-create the model" in str(caught.value)) == (not weights_finite)
    assert caught.value.history.losses and all(math.isfinite(loss) for loss in caught.value.history.losses)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"steps": 0}, "steps"), ({"steps": 5, "lr": -1}, "lr"), ({"steps": 5, "clip_grad_norm": 0}, "clip_grad_norm")],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(CourseInputError, match=message):
        train(TinyRegressor(), line_batches, progress=False, **kwargs)


def test_bad_batches_and_empty_history():
    with pytest.raises(CourseInputError, match="batches"):
        train(TinyRegressor(), 42, steps=1, progress=False)
    with pytest.raises(CourseInputError, match="empty"):
        TrainingHistory().final_loss


def test_history_plot_draws_both_curves():
    from matplotlib.figure import Figure

    history = TrainingHistory(steps=[1, 2], losses=[2.0, 1.0], eval_steps=[2], eval_losses=[1.5])
    ax = history.plot(Figure().add_subplot())
    assert len(ax.lines) == 2 and ax.get_xlabel() == "step"


def test_cosine_schedule_decays_the_learning_rate_to_zero():
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(4, 1)

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, x, targets):
            out = self.inner(x)
            return out, ((out - targets) ** 2).mean()

    train(Wrapped(), lambda step: (x, x), steps=10, optimizer=optimizer, schedule="cosine", progress=False)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(CourseInputError, match="schedule"):
        train(Wrapped(), lambda step: (x, x), steps=2, schedule="linear", progress=False)


def test_progress_bar_refreshes_a_bounded_number_of_times_and_ends_on_the_last_step(capsys):
    bar = ProgressBar(3000, "training", updates=50)
    for step in range(1, 3001):
        bar.set_postfix(loss=1 / step)
        bar.advance(step)
    bar.close()
    drawn = [line for line in capsys.readouterr().err.split("\r") if "training" in line]
    assert 50 <= len(drawn) <= 53  # the first draw, 50 evenly spaced refreshes, the close
    assert "3000/3000" in drawn[-1] and "loss=0.0003" in drawn[-1]


def test_a_short_bar_refreshes_on_every_step(capsys):
    bar = ProgressBar(3, "training", updates=50)
    for step in range(1, 4):
        bar.advance(step)
    bar.close()
    drawn = [line for line in capsys.readouterr().err.split("\r") if "training" in line]
    assert [d.split("|")[-1].split()[0] for d in drawn if "|" in d][-3:] == ["1/3", "2/3", "3/3"]
