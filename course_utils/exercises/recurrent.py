"""Self-checks for notebook 05's exercises (the RNN language model).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: one Elman step h_t = tanh(U h_{t-1} + W x_t + b), the
teacher-forced loss (the mean of −log ŷ_t[target] over the targets that are not padding), clipping gradients by
their joint norm, and the parameter count of the slide's RNN language model.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from course_utils.exercises.answers import as_tensors, one_number, shown
from course_utils.exercises import answer_of, close, never_raises, verdict
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.models.recurrent.rnn import elman_step

Tensor = torch.Tensor

# ---------------------------------------------------------------- exercise 1: one Elman step

_ELMAN_CASES = [(4, 3, 5, torch.float32), (1, 6, 2, torch.float64), (3, 4, 4, torch.float32)]  # (B, D, H, dtype)


def _elman_inputs(batch: int, inputs: int, hidden: int, dtype, seed: int):
    """x_t (B, D), h_prev (B, H), W (H, D), U (H, H), b (H,) drawn from a seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    shapes = [(batch, inputs), (batch, hidden), (hidden, inputs), (hidden, hidden), (hidden,)]
    return tuple(torch.randn(shape, generator=generator, dtype=dtype) for shape in shapes)


def _elman_hint(answer: Tensor, x_t, h_prev, W, U, b) -> str:
    """Name the mistake the answer matches, if any."""
    z = h_prev @ U.T + x_t @ W.T + b  # (B, H)
    mistakes = [
        (z, "apply tanh to the sum: h_t = tanh(U h_{t-1} + W x_t + b)"),
        (torch.sigmoid(z), "the Elman RNN of the slides uses tanh, not the sigmoid"),
        (torch.relu(z), "the Elman RNN of the slides uses tanh, not ReLU"),
        (torch.tanh(h_prev @ U.T + x_t @ W.T), "add the bias b inside the tanh"),
        (torch.tanh(x_t @ W.T + b), "add U h_{t-1}: the previous state is what makes the network recurrent"),
        (
            torch.tanh(h_prev @ U + x_t @ W.T + b),
            "rows are examples, so U acts from the right transposed: h_prev @ U.T",
        ),
        (torch.tanh(h_prev @ U.T + b), "add W x_t: the step must read the input"),
    ]
    if answer.shape == z.shape:
        for value, hint in mistakes:
            if torch.allclose(answer, value, atol=1e-5):
                return hint
    if answer.shape != z.shape:
        return f"h_t must have shape (B, H) = {tuple(z.shape)}; yours has {tuple(answer.shape)}"
    return "not the slides' h_t = tanh(U h_{t-1} + W x_t + b) yet: write each product for rows that are examples"


@never_raises
def check_elman_step(fn) -> bool:
    """Exercise: ``fn(x_t, h_prev, W, U, b)`` is one Elman step tanh(U h_{t-1} + W x_t + b) for rows (B, ·).

    x_t (B, D), h_prev (B, H), W (H, D), U (H, H), b (H,): one row per example, so the products are x_t @ W.T and
    h_prev @ U.T. Checked on batches of different sizes, in float32 and float64.
    """
    crash_hint = "x_t is (B, D) and h_prev is (B, H), one row per example: use x_t @ W.T and h_prev @ U.T"
    for seed, (batch, inputs, hidden, dtype) in enumerate(_ELMAN_CASES):
        args = _elman_inputs(batch, inputs, hidden, dtype, seed)
        expected = elman_step(*args)  # (B, H)
        answer, why = answer_of(fn, args, crash_hint)
        if why:
            return verdict(False, why)
        parts, why = as_tensors(answer, 1, "one tensor (B, H)")
        if why:
            return verdict(False, why)
        (answer,) = parts
        if answer.shape == expected.shape and torch.allclose(answer.to(dtype), expected, atol=1e-5):
            continue
        case = f"B={batch}, D={inputs}, H={hidden}"
        return verdict(False, f"not h_t yet ({case}). Hint: {_elman_hint(answer.to(dtype), *args)}")
    return verdict(True, f"your step computes tanh(U h_{{t-1}} + W x_t + b) on all {len(_ELMAN_CASES)} cases")


# ---------------------------------------------------------------- exercise 2: the teacher-forced loss


def _loss_cases() -> list[tuple[Tensor, Tensor, str]]:
    """(logits (B, T, V), targets (B, T), what): without padding, then with right padding of IGNORE_INDEX."""
    generator = torch.Generator().manual_seed(5)
    cases = []
    for batch, steps, vocab_size, lengths, what in ((1, 4, 6, [4], "one sentence, no padding"),
                                                    (3, 5, 7, [5, 2, 3], "a padded batch of 3 sentences"),
                                                    (2, 6, 5, [1, 6], "a padded batch of 2 sentences")):  # fmt: skip
        logits = 2 * torch.randn(batch, steps, vocab_size, generator=generator, dtype=torch.float64)
        targets = torch.randint(vocab_size, (batch, steps), generator=generator)
        for row, length in enumerate(lengths):
            targets[row, length:] = IGNORE_INDEX
        cases.append((logits, targets, what))
    return cases


def _reference_loss(logits: Tensor, targets: Tensor) -> float:
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE_INDEX).item()


def _loss_hint(answer: float, logits: Tensor, targets: Tensor) -> str:
    """Name the mistaken formula the answer matches, if any."""
    keep = targets != IGNORE_INDEX  # (B, T)
    safe = targets.clamp(min=0).unsqueeze(-1)  # (B, T, 1)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, safe)[..., 0] * keep  # (B, T)
    chosen_logit = logits.gather(-1, safe)[..., 0] * keep  # (B, T)
    prob = torch.softmax(logits, dim=-1).gather(-1, safe)[..., 0] * keep  # (B, T)
    n = keep.sum()
    mistakes = [
        (-logp.sum(), "average over the targets: divide the sum by how many real targets there are"),
        (logp.sum() / n, "the loss is the *negative* log-probability: −log ŷ_t[target]"),
        (-logp.sum() / logp.numel(), "divide by the number of real targets, not by B·T: padding is not a prediction"),
        (
            (-logp.sum(1) / keep.sum(1)).mean(),
            "average over all real targets of the batch at once, not per sentence first (long sentences count more)",
        ),
        (-chosen_logit.sum() / n, "take log_softmax of the logits first: a logit is not a log-probability"),
        (-prob.sum() / n, "take the log of the probability: −log ŷ_t[target]"),
    ]
    for value, hint in mistakes:
        if close(answer, value.item()):
            return hint
    return "mean over the real targets of −log_softmax(logits)[target]"


@never_raises
def check_sequence_loss(fn) -> bool:
    """Exercise: ``fn(logits, targets)`` is the mean of −log ŷ_t[target] over targets that are not IGNORE_INDEX.

    ``logits`` (B, T, V), ``targets`` (B, T); ŷ_t = softmax(logits[b, t]). Padding targets (IGNORE_INDEX) are left
    out of the sum and of the count. Checked on a batch without padding and on padded batches.
    """
    cases = _loss_cases()
    padding_hint = (
        f". Hint: targets of {IGNORE_INDEX} are padding: leave them out (e.g. clamp them to 0, then mask them)"
    )
    for logits, targets, what in cases:
        answer, why = answer_of(fn, (logits, targets))
        if why and ("IndexError" in why or "out of bounds" in why or str(IGNORE_INDEX) in why):
            why += padding_hint  # only a crash on a padded target's index is about padding
        elif why and "Expected target size" in why:
            why += (
                ". Hint: F.cross_entropy wants the classes on axis 1: reshape logits to (B·T, V) and targets to (B·T,)"
            )
        value, why = (None, why) if why else one_number(answer)
        if why:
            return verdict(False, why)
        expected = _reference_loss(logits, targets)
        if not close(value, expected):
            hint = _loss_hint(value, logits, targets)
            want, got = shown(expected, value)
            return verdict(False, f"on {what} the loss is {want}; yours gives {got}. Hint: {hint}")
    return verdict(
        True, f"your loss is the mean −log ŷ_t[target] over the real targets on {len(cases)} batches, padding left out"
    )


# ---------------------------------------------------------------- exercise 3: clipping by the joint norm


def _clip_cases() -> list[tuple[list[Tensor], float, str]]:
    """(gradients, max_norm, what): clipped, left alone, and a single tensor."""
    generator = torch.Generator().manual_seed(3)
    big = [3 * torch.randn(4, 3, generator=generator), torch.randn(5, generator=generator)]
    small = [0.01 * torch.randn(2, 2, generator=generator), 0.01 * torch.randn(3, generator=generator)]
    lopsided = [torch.full((2,), 10.0), torch.full((3,), 0.1)]
    return [(big, 1.0, "gradients of norm > max_norm"), (small, 1.0, "gradients already below max_norm"),
            (lopsided, 2.0, "one large and one small tensor"),
            ([torch.tensor([3.0, 4.0])], 2.5, "the single gradient (3, 4), norm 5")]  # fmt: skip


def _torch_clipped(grads: list[Tensor], max_norm: float) -> list[Tensor]:
    """The reference: torch's clip_grad_norm_ on copies held as .grad of fresh parameters."""
    params = [torch.nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    return [p.grad for p in params]


def _clip_hint(answer: list[Tensor], grads: list[Tensor], max_norm: float) -> str:
    """Name the mistake the answer matches, if any."""
    norm = torch.sqrt(sum((g**2).sum() for g in grads))
    each = [g * min(1.0, max_norm / g.norm().item()) for g in grads]
    mistakes = [
        (
            each,
            "clip by the joint norm of all tensors together, not each tensor by its own norm: "
            "a separate scale per tensor changes the gradient's direction",
        ),
        (
            [g.clamp(-max_norm, max_norm) for g in grads],
            "clipping by norm rescales the whole gradient; clamping each number changes its direction",
        ),
        (
            [g * max_norm / norm for g in grads],
            "rescale only when the norm is larger than max_norm; leave smaller gradients unchanged",
        ),
        (
            [g * min(1.0, max_norm / (norm**2).item()) for g in grads],
            "the norm is the square root of the sum of squares",
        ),
    ]
    for value, hint in mistakes:
        if all(torch.allclose(a, v.double(), rtol=1e-4, atol=1e-7) for a, v in zip(answer, value)):
            return hint
    return "scale = min(1, max_norm / ‖all gradients as one vector‖); multiply every tensor by it"


@never_raises
def check_clip_by_norm(fn) -> bool:
    """Exercise: ``fn(grads, max_norm)`` returns new tensors scaled by min(1, max_norm / joint norm).

    The joint norm is that of all the gradients as one vector, √(Σ g²); the inputs must not be changed.
    """
    cases = _clip_cases()
    for grads, max_norm, what in cases:
        originals = [g.clone() for g in grads]
        expected = _torch_clipped(grads, max_norm)
        answer, why = answer_of(fn, (grads, max_norm), copy_args=False)  # the originals: are they left alone?
        if why:
            return verdict(False, why)
        if not all(torch.equal(g, o) for g, o in zip(grads, originals)):
            return verdict(False, "your function changed the gradients it was given: return new tensors "
                                  "(g * scale, not g.mul_(scale))")  # fmt: skip
        parts, why = as_tensors(
            answer, len(grads), f"a list of tensors, one tensor per gradient ({len(grads)} here)", sequence=True
        )
        if why:
            return verdict(False, why)
        answer = list(parts)
        if any(a.shape != g.shape for a, g in zip(answer, grads)):
            return verdict(False, f"return one tensor per gradient, each of its shape ({len(grads)} here)")
        if not all(torch.allclose(a, e.double(), rtol=1e-4, atol=1e-7) for a, e in zip(answer, expected)):
            return verdict(False, f"on {what} (max_norm={max_norm}) yours is not the clipped gradient. "
                                  f"Hint: {_clip_hint(answer, grads, max_norm)}")  # fmt: skip
    return verdict(True, f"your clipping scales by min(1, max_norm / joint norm) on all {len(cases)} cases")


# ---------------------------------------------------------------- exercise 4: parameters, for any length

_COUNT_CASES = [(610, 64, 128), (20, 4, 8), (1000, 3, 50)]  # (V, d, H)
_LENGTHS = (5, 40, 1)


def rnn_lm_parameters(vocab_size: int, embed_dim: int, hidden_dim: int) -> int:
    """E, W_e, W_h, b_1, U, b_2 of the CMU slide's RNN LM: how many numbers the model learns."""
    model = RecurrentLM(vocab_size, impl="scratch", embed_dim=embed_dim, hidden_dim=hidden_dim)
    return sum(p.numel() for p in model.parameters())


def _count_hint(answer: float, V: int, d: int, H: int, varies: bool) -> str:
    if varies:
        return "the same weights serve every step, so the count must not depend on the length T"
    mistakes = [
        (
            V * d + H * d + H * H + 2 * H + V * H + V,
            "that is nn.RNN's count, with two bias vectors (bias_ih, bias_hh); the slide's model has one b_1",
        ),
        (H * d + H * H + H + V * H + V, "count the embedding matrix E (V × d) too: it is learned"),
        (V * d + H * d + H * H + V * H, "count the biases b_1 (H) and b_2 (V)"),
        (V * d + H * d + H * H + H + V * H, "count the output bias b_2 (V)"),
        (V * d + H * d + H * H + V * H + V, "count the hidden bias b_1 (H)"),
        (V * d + H * d + H + V * H + V, "count the recurrent matrix W_h (H × H)"),
        (V * d + H * d + H * H + H, "count the output layer U (V × H) and b_2 (V)"),
    ]
    matches = [hint for value, hint in mistakes if answer == value]
    if len(matches) == 1:
        return matches[0]
    short = rnn_lm_parameters(V, d, H) - answer
    if matches:  # two mistakes give the same count here (d = H makes E and U the same size): name neither
        return f"your count is {short:,.0f} short: which of the model's matrices or vectors has that many numbers?"
    return ("list every weight matrix and bias vector of the slide's model (embedding, input, recurrent and output "
            "layers) with its shape, and add up their sizes")  # fmt: skip


@never_raises
def check_parameter_count(fn) -> bool:
    """Exercise: ``fn(V, d, H, T)`` is the number of parameters of the CMU slide's RNN LM; T must not matter.

    The slide's model: an embedding E (V × d), the input and recurrent weights, one hidden bias b_1, the output
    layer U (V × H) and its bias b_2.
    """
    for V, d, H in _COUNT_CASES:
        expected = rnn_lm_parameters(V, d, H)
        answers = []
        for T in _LENGTHS:
            answer, why = answer_of(fn, (V, d, H, T))
            value, why = (None, why) if why else one_number(answer)
            if why:
                return verdict(False, why)
            answers.append(value)
        varies = len(set(answers)) > 1
        if varies or answers[0] != expected:
            wrong = next(a for a in answers if a != expected) if not varies else answers[1]
            hint = _count_hint(answers[0], V, d, H, varies)
            want, got = shown(expected, wrong, 0, group=True)
            return verdict(False, f"with V={V}, d={d}, H={H} the model has {want} parameters for every T; "
                                  f"yours gives {got}. Hint: {hint}")  # fmt: skip
    return verdict(True, f"right on all {len(_COUNT_CASES)} sizes, and the same for every length T")
