"""A linear probe: multinomial logistic regression on frozen vectors, scored by stratified k-fold cross-validation.

What a representation "knows" is measured by how well a linear classifier reads it off, on items it never trained
on. Every fold is predicted by a probe trained on the other folds, on features standardised with the training
rows' mean and spread; classes weigh the same, so a probe that learns nothing scores chance, not the majority.
Items that share a key (copies of one sentence) always share a fold. Deterministic: L-BFGS, full batch, float64.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import torch
import torch.nn.functional as F

from course_utils.validation import CourseInputError, check_int, check_positive

Tensor = torch.Tensor

TOLERANCE_GRAD, TOLERANCE_CHANGE = 1e-7, 1e-9  # L-BFGS stops early below these (torch's defaults)


def _label_ids(labels) -> tuple[Tensor, list]:
    """Labels (any hashables, or an int tensor) as class ids (N,), and the classes in order of first appearance."""
    values = labels.tolist() if isinstance(labels, Tensor) else list(labels)
    if not all(isinstance(value, Hashable) for value in values):
        raise CourseInputError("labels must be hashable (strings or integers)")
    classes = list(dict.fromkeys(values))
    index = {value: i for i, value in enumerate(classes)}
    return torch.tensor([index[value] for value in values], dtype=torch.long), classes


def stratified_folds(labels, folds: int = 5, *, seed: int = 0, keys=None) -> Tensor:
    """A fold number (0..folds-1) per item, every class spread evenly over the folds.

    Items with the same key (``keys``: one per item, e.g. the sentence and position, whose vectors are
    identical) always share a fold, so a probe never trains on a copy of an item it is tested on. The keys
    are shuffled (seeded); then, largest first, each goes to the fold with the fewest items of its class so far
    (ties: the fold with the fewest items, then the first).
    """
    ids, classes = _label_ids(labels)
    folds = check_int("folds", folds, minimum=2)
    keys = list(range(len(ids))) if keys is None else list(keys)
    if len(keys) != len(ids):
        raise CourseInputError(f"{len(ids)} labels but {len(keys)} keys; they must match")
    members: dict = {}
    for row, key in enumerate(keys):
        members.setdefault(key, []).append(row)
    blocks = list(members.values())  # rows that must stay together
    if len(blocks) < 2:
        raise CourseInputError("all items share one key: nothing could be held out")
    generator = torch.Generator().manual_seed(check_int("seed", seed))
    order = sorted(torch.randperm(len(blocks), generator=generator).tolist(), key=lambda b: -len(blocks[b]))
    of_class = [[0] * len(classes) for _ in range(folds)]  # items of each class in each fold so far
    sizes = [0] * folds
    fold_of = torch.empty(len(ids), dtype=torch.long)
    for b in order:
        rows = blocks[b]
        c = int(ids[rows].mode().values)  # a block's class (copies of one item share it)
        fold = min(range(folds), key=lambda f: (of_class[f][c], sizes[f], f))
        fold_of[rows] = fold
        of_class[fold][c] += len(rows)
        sizes[fold] += len(rows)
    return fold_of  # (N,)


def _fit_logistic(xs: list[Tensor], ys: list[Tensor], classes: list[int], *, epochs: int,
                  l2: float) -> tuple[Tensor, Tensor]:  # fmt: skip
    """P multinomial logistic regressions at once, full batch, L-BFGS: W (P, C, K), b (P, K).

    Problem p minimises  Σ_rows w·CE + (l2 / n_p)·|W_p|²  over its n_p rows, with only its first
    ``classes[p]`` classes allowed. The weights w make each class present weigh the same and sum to 1: a
    probe that learns nothing then predicts no class over another (an exact tie, which goes to the first),
    instead of the training folds' majority, which cross-validation would turn into a below-chance score.
    With balanced classes this is the usual  mean CE + (l2 / n)·|W|²  (scikit-learn's C = 1 / (2·l2)).
    The problems' losses are summed: separable, so the minimum is every problem's own minimum, and one
    optimiser for all of them is one Python loop instead of P (the folds of every word's probe at once).
    """
    problems, width, most = len(xs), xs[0].shape[1], max(classes)
    rows = max(len(x) for x in xs)
    x = torch.zeros(problems, rows, width, dtype=xs[0].dtype)  # (P, n, C), zero rows pad the short problems
    y = torch.zeros(problems, rows, dtype=torch.long)  # (P, n)
    row_weight = torch.zeros(problems, rows, dtype=xs[0].dtype)  # (P, n), 0 on padding
    penalty = torch.zeros(problems, 1, 1, dtype=xs[0].dtype)  # (P, 1, 1): l2 / n_p
    class_penalty = torch.zeros(problems, 1, most, dtype=xs[0].dtype)  # (P, 1, K): -1e9 on classes not allowed
    for p, (xp, yp, kp) in enumerate(zip(xs, ys, classes)):
        counts = torch.bincount(yp, minlength=kp).to(xp.dtype)  # (K_p,)
        x[p, : len(xp)], y[p, : len(yp)] = xp, yp
        row_weight[p, : len(yp)] = 1.0 / (counts[yp] * (counts > 0).sum())
        penalty[p] = l2 / len(xp)
        class_penalty[p, 0, kp:] = -1e9
    weight = torch.zeros(problems, width, most, dtype=x.dtype, requires_grad=True)
    bias = torch.zeros(problems, 1, most, dtype=x.dtype, requires_grad=True)
    optimizer = torch.optim.LBFGS(
        [weight, bias],
        max_iter=epochs,
        line_search_fn="strong_wolfe",
        tolerance_grad=TOLERANCE_GRAD,
        tolerance_change=TOLERANCE_CHANGE,
    )

    def closure():
        optimizer.zero_grad()
        logits = x @ weight + bias + class_penalty  # (P, n, K)
        losses = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none")  # (P·n,)
        loss = (losses * row_weight.flatten()).sum() + (penalty * weight.pow(2)).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    return weight.detach(), (bias + class_penalty).detach().squeeze(1)  # (P, C, K), (P, K)


def _check_features(features, count: int | None = None) -> Tensor:
    if not isinstance(features, Tensor) or features.ndim != 2 or not len(features):
        shape = list(features.shape) if isinstance(features, Tensor) else type(features).__name__
        raise CourseInputError(f"features must be a non-empty (N, C) tensor, got {shape}")
    if count is not None and len(features) != count:
        raise CourseInputError(f"{len(features)} feature rows but {count} labels; they must match")
    if not torch.isfinite(features).all():
        raise CourseInputError("features contain NaN or infinity")
    return features.detach().to(torch.float64)  # float64: CPUs' rounding differences stay far below a tie


def cross_validated_predictions(feature_sets: Sequence[Tensor], labels, groups, *, keys=None, folds: int, seed: int,
                     epochs: int, l2: float) -> list[dict]:  # fmt: skip
    """For each feature set, per group: (predicted class ids, true class ids); every item is predicted by a probe
    trained without its fold, on features standardised with the *training* rows' mean and spread.

    A feature set's probes (groups × folds) are fitted by one L-BFGS run, so the same features give the same
    answer whatever else is probed beside them.
    """
    labels = labels.tolist() if isinstance(labels, Tensor) else list(labels)
    groups = [None] * len(labels) if groups is None else list(groups)
    if len(groups) != len(labels):
        raise CourseInputError(f"{len(labels)} labels but {len(groups)} groups; they must match")
    keys = list(range(len(labels))) if keys is None else list(keys)
    if len(keys) != len(labels):
        raise CourseInputError(f"{len(labels)} labels but {len(keys)} keys; they must match")
    xs_all = [_check_features(features, len(labels)) for features in feature_sets]
    folds = check_int("folds", folds, minimum=2)
    epochs, l2 = check_int("epochs", epochs, minimum=1), check_positive("l2", l2, allow_zero=True)
    splits = []  # per group: (group, its rows, their class ids, the fold of each, the number of classes)
    for group in dict.fromkeys(groups):
        rows = torch.tensor([i for i, g in enumerate(groups) if g == group])
        y, names = _label_ids([labels[i] for i in rows.tolist()])
        where = "" if group is None else f"group {group!r}: "
        if len(names) < 2:
            raise CourseInputError(f"{where}a probe needs at least 2 classes; the labels are all {names[0]!r}")
        if len(rows) < folds:
            raise CourseInputError(f"{where}{len(rows)} items cannot fill {folds} folds")
        fold_of = stratified_folds(y, folds, seed=seed, keys=[keys[i] for i in rows.tolist()])
        splits.append((group, rows, y, fold_of, len(names)))
    results = []
    for x in xs_all:
        plan, xs, ys, classes = [], [], [], []
        for group, rows, y, fold_of, count in splits:
            for fold in fold_of.unique().tolist():  # a fold can be empty when there are few distinct keys
                train, test = rows[fold_of != fold], rows[fold_of == fold]
                mean, spread = x[train].mean(0), x[train].std(0, unbiased=False).clamp_min(1e-8)  # (C,), (C,)
                xs.append((x[train] - mean) / spread)
                ys.append(y[fold_of != fold])
                classes.append(count)
                plan.append((group, fold_of == fold, (x[test] - mean) / spread))
        weight, bias = _fit_logistic(xs, ys, classes, epochs=epochs, l2=l2)  # (P, C, K), (P, K)
        result = {group: (torch.empty_like(y), y) for group, _, y, _, _ in splits}
        for p, (group, in_fold, x_test) in enumerate(plan):
            logits = x_test @ weight[p] + bias[p]  # (n_test, K)
            # logits within ~1e-4 count as tied (copies of a training row in both classes); a tie goes to the first
            result[group][0][in_fold] = (logits * 1e4).round().argmax(-1)
        results.append(result)
    return results


def group_accuracies(result: dict) -> tuple[float, dict]:
    """(mean over groups, {group: accuracy}) from one feature set's cross-validated predictions."""
    per_group = {group: (predicted == truth).double().mean().item() for group, (predicted, truth) in result.items()}
    return sum(per_group.values()) / len(per_group), per_group


def probe_accuracy(features: Tensor, labels, *, keys=None, folds: int = 5, seed: int = 0, epochs: int = 100,
                   l2: float = 0.5) -> float:  # fmt: skip
    """Held-out accuracy of a linear probe (multinomial logistic regression), stratified ``folds``-fold CV.

    ``features`` (N, C), ``labels`` N hashables. Each fold's items are predicted by a probe trained on the
    other folds (full batch, L-BFGS, ``epochs`` iterations at most, classes weighted equally, L2 penalty
    (``l2`` / n)·|W|² beside the mean loss: 0.5 is scikit-learn's default C = 1); deterministic.
    ``keys`` (one per item): items with the same key are kept in one fold (see ``stratified_folds``).
    """
    (result,) = cross_validated_predictions(
        [features], labels, None, keys=keys, folds=folds, seed=seed, epochs=epochs, l2=l2
    )
    return group_accuracies(result)[0]


def grouped_probe_accuracy(features: Tensor, labels, groups, *, keys=None, folds: int = 5, seed: int = 0,
                           epochs: int = 100, l2: float = 0.5) -> tuple[float, dict]:  # fmt: skip
    """One probe per group (e.g. per ambiguous word): (mean of the groups' accuracies, {group: accuracy})."""
    if groups is None:
        raise CourseInputError("groups must be given, one per row (use probe_accuracy for a single probe)")
    (result,) = cross_validated_predictions(
        [features], labels, groups, keys=keys, folds=folds, seed=seed, epochs=epochs, l2=l2
    )
    return group_accuracies(result)


def majority_accuracy(labels, groups=None) -> float:
    """Chance for a probe: the share of the most common label (within each group, averaged over groups)."""
    labels = list(labels)
    groups = [None] * len(labels) if groups is None else list(groups)
    if not labels or len(groups) != len(labels):
        raise CourseInputError("give a non-empty list of labels (and one group per label)")
    shares = []
    for group in dict.fromkeys(groups):
        members = [label for label, g in zip(labels, groups) if g == group]
        shares.append(max(members.count(label) for label in set(members)) / len(members))
    return sum(shares) / len(shares)
