"""One small training loop for every model that follows ``forward(x, targets) -> (logits, loss)``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

import torch

from course_utils.threads import threads_for_a_busy_machine
from course_utils.validation import CourseInputError, check_choice, check_int, check_positive


class NonFiniteLossError(RuntimeError):
    """The loss became NaN or infinite. That step's update is not applied; ``history`` is kept.

    The model keeps the weights that gave the bad loss: after a learning rate far too large they may no longer be
    finite themselves, and the message says so.
    """

    def __init__(self, step: int, loss: float, history: "TrainingHistory", weights_finite: bool = True):
        weights = ("the model keeps its weights" if weights_finite else
                   "the weights themselves are no longer finite: re-create the model or reload a checkpoint")  # fmt: skip
        super().__init__(
            f"loss became {loss} at step {step}; training stopped before that step's update ({weights}). "
            "Try a smaller learning rate or clip gradients."
        )
        self.step, self.loss, self.history = step, loss, history


@dataclass
class TrainingHistory:
    """Loss per logged step, plus the optional evaluation curve."""

    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    eval_losses: list[float] = field(default_factory=list)

    @property
    def final_loss(self) -> float:
        if not self.losses:
            raise CourseInputError("the history is empty: no step was trained")
        return self.losses[-1]

    def plot(self, ax=None, *, title: str = "Training loss", log_y: bool = False):
        """Draw the loss curve (and the evaluation curve when there is one); return the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        ax.plot(self.steps, self.losses, label="train")
        if self.eval_steps:
            ax.plot(self.eval_steps, self.eval_losses, "o-", label="eval")
            ax.legend()
        ax.set(xlabel="step", ylabel="loss", title=title)
        if log_y:
            ax.set_yscale("log")
        return ax


def _batch_source(batches) -> Callable[[int], tuple]:
    """Turn an iterable of batches or a ``get_batch(step)`` function into ``get(step)``."""
    if callable(batches):
        return batches
    if isinstance(batches, Iterable):
        iterator = iter(batches)

        def next_batch(step: int):
            try:
                return next(iterator)
            except StopIteration:
                raise CourseInputError(f"the batches ran out at step {step}; give more or fewer steps") from None

        return next_batch
    raise CourseInputError("batches must be an iterable of (x, targets) pairs or a function step -> (x, targets)")


PROGRESS_UPDATES = 50  # refreshes per bar, whatever its length: about 3 widget messages each in Jupyter


class ProgressBar:
    """A ``tqdm.auto`` bar that refreshes at most ``updates`` times, evenly spaced over ``total`` steps.

    In Jupyter every refresh sends a few widget messages to the browser. A bar refreshed on every
    step of a long run floods the kernel's output channel (nbval then loses the kernel's final
    "idle" message) and the browser has to draw each one. This one sends about 150 messages per run.
    """

    def __init__(self, total: int, description: str, *, enabled: bool = True, updates: int = PROGRESS_UPDATES):
        from tqdm.auto import tqdm

        self.total = check_int("total", total, minimum=1)
        self.every = math.ceil(self.total / check_int("updates", updates, minimum=1))
        self.shown = 0
        self.postfix: dict[str, float] = {}
        # miniters=1, mininterval=0: tqdm refreshes on each update() call, and advance() makes those rare.
        self.bar = tqdm(total=self.total, desc=description, disable=not enabled, leave=False, miniters=1, mininterval=0)

    def set_postfix(self, **values: float) -> None:
        """Remember the numbers shown after the bar (``loss=2.31``); they are drawn at the next refresh."""
        self.postfix.update(values)

    def advance(self, done: int) -> None:
        """``done`` steps are finished: refresh on every ``total / updates`` steps and at the last one."""
        if done % self.every and done != self.total:
            return
        self.bar.set_postfix({name: f"{value:.4f}" for name, value in self.postfix.items()}, refresh=False)
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def learning_rate_factor(step: int, *, steps: int, schedule: str, warmup_steps: int = 0) -> float:
    """The factor of the set learning rate at ``step`` (0-based): a linear warm-up from 0 over ``warmup_steps``, then
    constant, or half a cosine from the set rate down to 0 over the remaining steps."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    if schedule == "constant":
        return 1.0
    return 0.5 * (1 + math.cos(math.pi * (step - warmup_steps) / max(steps - warmup_steps, 1)))


def _scheduler(optimizer: torch.optim.Optimizer, schedule: str, steps: int, warmup_steps: int):
    """``learning_rate_factor`` as a torch scheduler."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: learning_rate_factor(step, steps=steps, schedule=schedule, warmup_steps=warmup_steps)
    )


def train(
    model: torch.nn.Module,
    batches,
    *,
    steps: int,
    optimizer: torch.optim.Optimizer | None = None,
    lr: float = 1e-3,
    device: torch.device | str | None = None,
    log_every: int = 1,
    evaluate: Callable[[], float] | None = None,
    eval_every: int = 0,
    clip_grad_norm: float | None = None,
    schedule: str = "constant",
    warmup_steps: int = 0,
    progress: bool = True,
    description: str = "training",
) -> TrainingHistory:
    """Train ``model`` for ``steps`` steps and return the loss history.

    ``model(x, targets)`` must return ``(logits, loss)``. ``batches`` is an iterable of
    ``(x, targets)`` pairs or a function ``step -> (x, targets)``. Without an optimizer,
    AdamW with learning rate ``lr`` is used. ``schedule="cosine"`` decays the learning rate
    to 0 over the ``steps`` (half a cosine); "constant" keeps it. ``warmup_steps`` > 0 first raises it linearly from
    0 over that many steps. A NaN or infinite loss stops training with
    ``NonFiniteLossError``, before the bad update.
    """
    steps = check_int("steps", steps, minimum=1)
    log_every = check_int("log_every", log_every, minimum=1)
    eval_every = check_int("eval_every", eval_every, minimum=0)
    if optimizer is None:
        optimizer = torch.optim.AdamW(model.parameters(), lr=check_positive("lr", lr))
    if clip_grad_norm is not None:
        clip_grad_norm = check_positive("clip_grad_norm", clip_grad_norm)
    warmup_steps = check_int("warmup_steps", warmup_steps, minimum=0, maximum=steps)
    scheduler = _scheduler(optimizer, check_choice("schedule", schedule, ("constant", "cosine")), steps, warmup_steps)
    if device is not None:
        model.to(device)
    get_batch = _batch_source(batches)
    history = TrainingHistory()
    model.train()
    with ProgressBar(steps, description, enabled=progress) as bar, threads_for_a_busy_machine():
        for step in range(1, steps + 1):
            x, targets = get_batch(step)
            if device is not None:
                x, targets = x.to(device), targets.to(device)
            _, loss = model(x, targets)
            loss_value = loss.item()
            if not math.isfinite(loss_value):
                weights_finite = all(bool(torch.isfinite(p).all()) for p in model.parameters())
                raise NonFiniteLossError(step, loss_value, history, weights_finite)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
            optimizer.step()
            scheduler.step()
            if step % log_every == 0 or step == steps:
                history.steps.append(step)
                history.losses.append(loss_value)
                bar.set_postfix(loss=loss_value)
            if evaluate is not None and eval_every and (step % eval_every == 0 or step == steps):
                model.eval()
                with torch.no_grad():
                    history.eval_steps.append(step)
                    history.eval_losses.append(float(evaluate()))
                model.train()
            bar.advance(step)
    model.eval()
    return history
