"""Helpers shared by the model tests: a causality check for any causal LM, a decoder run one step at a time."""

from __future__ import annotations

import torch


def assert_causal(model, idx, vocab_size: int, t: int) -> None:
    """Changing the tokens after position t leaves the logits up to t exactly as they were, and changes the rest."""
    changed = idx.clone()
    changed[:, t + 1 :] = (changed[:, t + 1 :] + 1) % vocab_size
    before, after = model(idx)[0], model(changed)[0]
    assert torch.equal(before[:, : t + 1], after[:, : t + 1])
    assert not torch.allclose(before[:, t + 1 :], after[:, t + 1 :])


def step_loop(model, batch):
    """The per-step decoder under teacher forcing: log-probabilities (B, T, V), weights (B, T, S) or None, last state."""
    state = model.start(batch.source)
    log_probs, weights = [], []
    for t in range(batch.target_in.shape[1]):
        step_log_probs, state, step_weights = model.step(state, batch.target_in[:, t])
        log_probs.append(step_log_probs)
        weights.append(step_weights)
    return torch.stack(log_probs, dim=1), (None if weights[0] is None else torch.stack(weights, dim=1)), state
