"""The scaling laws of the course language: each approach fitted to the stored runs and judged against the true floor.

``scaling_runs`` trained the grid (``data/scaling/runs.json``); ``scaling_fits`` holds the fits. Here they meet:

- ``columns``: the runs as arrays (N non-embedding parameters, D tokens, test loss), by part and a least budget;
- ``parametric``: approach 3 on them; ``held_out_errors``: its prediction for the held-out larger shape;
- ``budget_of``, ``flop_groups``, ``group_flops``: the runs by FLOP budget (the grid's anti-diagonals);
- ``isoflop_profiles``: approach 2 on each FLOP budget, kept only where the parabola's minimum lies inside the sizes
  the budget trained (outside them a parabola extrapolates);
- ``envelope_floor``: approach 1 on the validation curves, judged against the validation set's own oracle;
- ``best_on_budget``: the truth this grid can give about the compute-optimal model, the best run of each budget;
- ``resample_draws``: the resamples every approach's bootstrap draws;
- ``bootstrap_parametric``: approach 3 on resamples of the runs, stored in ``data/scaling/bootstrap.json``;
- ``floor_profile``: approach 3 with E held at each of a ladder of floors, stored in ``data/scaling/profile.json``
  with the free fit (``stored_fit``, ``stored_profile``: the demos open in a moment instead of fitting for seconds).

The oracle's entropy of the test split (``results["test_entropy"]``) is the floor E every fit should find.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_runs
from course_utils.analysis.scaling_runs import Run, flop_diagonal
from course_utils.validation import CourseInputError, check_choice, check_int

TRAINING_PARTS = scaling_runs.TRAINING_PARTS  # the runs a fit may see ("held-out" is predicted)
COUNTINGS = {"kaplan": "non_embedding_parameters", "chinchilla": "parameters"}  # N: the row's field (scaling_counting)
FAST_STARTS = [(a, b, e, alpha, beta) for a in (0.0, 10.0) for b in (0.0, 10.0) for e in (-1.0, 0.5)
               for alpha in (0.2, 1.0) for beta in (0.2, 1.0)]  # fmt: skip  # 32 of approach 3's starts


def rows(results: dict, parts=TRAINING_PARTS, *, min_steps: int = 0, seed: int = 0) -> list[dict]:
    """The stored runs of ``parts`` and ``seed`` trained for at least ``min_steps`` steps."""
    min_steps = check_int("min_steps", min_steps, minimum=0)
    chosen = [row for row in results["runs"].values()
              if row["part"] in parts and row["seed"] == seed and row["steps"] >= min_steps]  # fmt: skip
    if not chosen:
        raise CourseInputError(f"no stored run of parts {parts} with seed {seed} and at least {min_steps} steps")
    return chosen


def columns(chosen: list[dict], counting: str = "kaplan") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, D, test loss) of the runs: parameters (non-embedding ones for Kaplan's ``counting``, all of them for
    Chinchilla's), tokens trained on, nats per token."""
    pick = lambda key: np.array([row[key] for row in chosen], dtype=float)  # noqa: E731
    return pick(COUNTINGS[check_choice("counting", counting, tuple(COUNTINGS))]), pick("tokens"), pick("test_loss")


def parametric(results: dict, *, min_steps: int = 0, starts=None) -> fits.ChinchillaLaw:
    """Approach 3 fitted to the training runs (all their budgets from ``min_steps`` on)."""
    return fits.fit_parametric(*columns(rows(results, min_steps=min_steps)), starts=starts or fits.PARAMETRIC_STARTS)


def held_out_errors(law, results: dict) -> dict[int, float]:
    """{steps: the law's prediction − the measured test loss} for the held-out shape, which no fit sees."""
    return {row["steps"]: float(law.loss(row["non_embedding_parameters"], row["tokens"])) - row["test_loss"]
            for row in sorted(rows(results, ("held-out",)), key=lambda row: row["steps"])}  # fmt: skip


def budget_of(row: dict) -> int:
    """The FLOP-budget index of a stored run: the grid's anti-diagonal (``scaling_runs.flop_diagonal``)."""
    return flop_diagonal(Run(row["n_layer"], row["n_embd"], row["steps"]))


def flop_groups(results: dict, least_runs: int = 3) -> dict[int, list[dict]]:
    """{FLOP-budget index: its training runs, smallest model first} for each budget with ``least_runs`` runs or
    more."""
    groups: dict[int, list[dict]] = {}
    for row in rows(results):
        groups.setdefault(budget_of(row), []).append(row)
    return {k: sorted(group, key=lambda row: row["non_embedding_parameters"])
            for k, group in sorted(groups.items()) if len(group) >= least_runs}  # fmt: skip


def group_flops(group: list[dict]) -> float:
    """One budget's C: the geometric mean of its runs' 6 N D (they spread up to x1.17)."""
    return math.exp(float(np.mean(np.log([row["flops"] for row in group]))))


def isoflop_profiles(results: dict) -> list[fits.IsoFlopProfile]:
    """Approach 2 on each FLOP budget with three runs or more: only the parabolas that bend upwards with their
    minimum inside the sizes trained on that budget. (Within 8,000 steps none did: the smallest model of every budget
    was its best; the 16,000-step runs were added for this.)"""
    profiles = []
    for group in flop_groups(results).values():
        n, _, loss = columns(group)
        try:
            profile = fits.isoflop_profile(group_flops(group), n, loss)
        except CourseInputError:
            continue  # no upward bend: no minimum to read
        if n.min() < profile.n_opt < n.max():
            profiles.append(profile)
    return sorted(profiles, key=lambda profile: profile.flops)


def best_on_budget(results: dict) -> dict[int, dict]:
    """{FLOP-budget index: its best run} among the training runs: the compute-optimal model as far as this grid can
    tell (its sizes are about 2x apart)."""
    best: dict[int, dict] = {}
    for row in rows(results):
        k = budget_of(row)
        if k not in best or row["test_loss"] < best[k]["test_loss"]:
            best[k] = row
    return dict(sorted(best.items()))


def validation_curves(results: dict) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """[(N, tokens seen at each curve point, validation loss)] of the training runs, for the envelope."""
    curves = []
    for row in rows(results):
        tokens_per_step = row["tokens"] / row["steps"]
        curves.append((float(row["non_embedding_parameters"]), np.array(row["curve"]["steps"]) * tokens_per_step,
                       np.array(row["curve"]["loss"], dtype=float)))  # fmt: skip
    return curves


def envelope_floor(results: dict, budgets: int = 30, *, least_flops: float = 1e10) -> tuple[fits.FloorLaw, float]:
    """Approach 1: the lowest validation loss reached at each of ``budgets`` log-spaced budgets over all curves,
    L*(C) = E + k C^(−γ) fitted from ``least_flops`` on; returns (the law, the validation set's own oracle entropy,
    the floor it should find)."""
    curves = validation_curves(results)
    low = min(6 * n * tokens[0] for n, tokens, _ in curves)
    high = max(6 * n * tokens[-1] for n, tokens, _ in curves)
    c, _, loss = fits.envelope(curves, np.geomspace(low, high, check_int("budgets", budgets, minimum=3)))
    keep = c >= least_flops
    return fits.fit_floor_law(c[keep], loss[keep]), results["validation"]["oracle_entropy"]


def envelope_readings(results: dict, budgets: int = 30) -> list[tuple[float, dict, float, float]]:
    """Approach 1 read point by point: [(C, the run whose validation curve is lowest there, the share of its schedule
    done at that point, the loss)] at ``budgets`` log-spaced C (as ``envelope_floor``): where the envelope comes from."""
    chosen, curves = rows(results), validation_curves(results)
    low = min(6 * n * tokens[0] for n, tokens, _ in curves)
    high = max(6 * n * tokens[-1] for n, tokens, _ in curves)
    readings = []
    for c in np.geomspace(low, high, check_int("budgets", budgets, minimum=3)):
        reached = []  # (loss, row, D) of every curve that reaches C
        for row, (n, tokens, curve) in zip(chosen, curves):
            d = c / (6 * n)
            if tokens[0] <= d <= tokens[-1]:
                reached.append((float(np.interp(math.log(d), np.log(tokens), curve)), row, d))
        loss, row, d = min(reached, key=lambda item: item[0])
        readings.append((float(c), row, d / row["tokens"], loss))
    return readings


# ---------------------------------------------------------------- the bootstrap of approach 3, stored

BOOTSTRAP_FILE = scaling_runs.RESULTS_FILE.with_name("bootstrap.json")
BOOTSTRAP_COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.scaling_laws --write --jobs 2"
RESAMPLES, BOOTSTRAP_SEED = 100, 0


def law_row(law: fits.ChinchillaLaw) -> dict:
    """A law's five numbers, rounded for storing."""
    return {"E": round(law.E, 6), "A": float(f"{law.A:.6g}"), "alpha": round(law.alpha, 6),
            "B": float(f"{law.B:.6g}"), "beta": round(law.beta, 6)}  # fmt: skip


def resample_draws(results: dict, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[np.ndarray]:
    """The rows of ``rows(results)`` in each of ``resamples`` resamples (drawn with replacement, seeded): every
    approach's bootstrap draws these, so their intervals come from the same resamples."""
    count = len(rows(results))
    generator = np.random.default_rng(check_int("seed", seed, minimum=0))
    return [generator.integers(0, count, count) for _ in range(check_int("resamples", resamples, minimum=1))]


def bootstrap_parametric(results: dict, *, counting: str = "kaplan", resamples: int = RESAMPLES,
                         seed: int = BOOTSTRAP_SEED, first: int | None = None) -> list[dict]:  # fmt: skip
    """Approach 3 fitted again to ``resamples`` resamples of the training runs (drawn with replacement, seeded),
    each from the 32 ``FAST_STARTS``, as Besiroglu et al. (2024) bootstrap Chinchilla's fit, N counted the
    ``counting`` way; only the ``first`` resamples when given (the notebook re-runs a few)."""
    n, d, loss = columns(rows(results), counting)
    return [law_row(fits.fit_parametric(n[rows_], d[rows_], loss[rows_], starts=FAST_STARTS))
            for rows_ in resample_draws(results, resamples, seed)[:first]]  # fmt: skip


def load_bootstrap(path=BOOTSTRAP_FILE) -> dict:
    """The stored bootstrap: {"command", "resamples", "seed", "runs", "fits": {counting: [{E, A, alpha, B, beta}]}}."""
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"{path} is missing; make it with `{BOOTSTRAP_COMMAND}`")
    return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- approach 3 at fixed floors, stored

PROFILE_FILE = scaling_runs.RESULTS_FILE.with_name("profile.json")
PROFILE_COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.scaling_laws --profile"  # about 30 s
PROFILE_FLOORS = tuple(round(0.5 + 0.05 * i, 2) for i in range(26))  # 0.50, 0.55, ..., 1.75 nats


def runs_fingerprint(results: dict) -> str:
    """A short hash of the training runs a fit sees (shape, steps, N, D, test loss): a stored fit belongs to these runs."""
    chosen = sorted((row["n_layer"], row["n_embd"], row["steps"], row["non_embedding_parameters"], row["tokens"],
                     row["test_loss"]) for row in rows(results))  # fmt: skip
    return hashlib.sha256(json.dumps(chosen).encode()).hexdigest()[:16]


def _objective_row(law: fits.ChinchillaLaw, objective: float) -> dict:
    return {**law_row(law), "objective": float(f"{objective:.6g}")}


def floor_profile(results: dict, floors=PROFILE_FLOORS, *, starts=None) -> dict:
    """Approach 3 on the training runs (``FAST_STARTS``), free and with E held at each of ``floors`` (the other four
    parameters refitted): {"runs": their fingerprint, "starts", "fit": {E, A, alpha, B, beta, objective},
    "floors": [the same at each floor]}."""
    starts = starts or FAST_STARTS
    n, d, loss = columns(rows(results))
    law = fits.fit_parametric(n, d, loss, starts=starts)
    fixed = [fits.fit_parametric_at_floor(n, d, loss, floor, starts) for floor in floors]
    return {"runs": runs_fingerprint(results), "starts": len(starts),
            "fit": _objective_row(law, fits.parametric_objective(law, n, d, loss)),
            "floors": [_objective_row(*pair) for pair in fixed]}  # fmt: skip


def chinchilla_law(row: dict) -> fits.ChinchillaLaw:
    """The law of a stored row {E, A, alpha, B, beta, ...}."""
    return fits.ChinchillaLaw(E=row["E"], A=row["A"], alpha=row["alpha"], B=row["B"], beta=row["beta"])


def load_profile(path=PROFILE_FILE) -> dict:
    """The stored fixed-floor fits: {"command", "runs", "starts", "fit", "floors"} (``floor_profile``)."""
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"{path} is missing; make it with `{PROFILE_COMMAND}`")
    return json.loads(path.read_text(encoding="utf-8"))


def _stored_for(results: dict) -> dict | None:
    """The stored profile if ``PROFILE_FILE`` exists and was fitted to these runs, else None."""
    if not PROFILE_FILE.is_file():
        return None
    stored = load_profile()
    return stored if stored["runs"] == runs_fingerprint(results) else None


def stored_profile(results: dict) -> dict:
    """``floor_profile(results)``: read from ``PROFILE_FILE`` when it was fitted to these runs, else fitted here (about
    30 s)."""
    return _stored_for(results) or floor_profile(results)


def stored_fit(results: dict) -> fits.ChinchillaLaw:
    """Approach 3 on the training runs (``FAST_STARTS``): read from ``PROFILE_FILE`` when it was fitted to these runs,
    else fitted here (about 4 s)."""
    stored = _stored_for(results)
    return chinchilla_law(stored["fit"]) if stored else parametric(results, starts=FAST_STARTS)


def write_profile(results: dict, path=PROFILE_FILE) -> dict:
    """Fit ``floor_profile`` and store it with its command, one law a line."""
    profile = {"command": PROFILE_COMMAND, **floor_profile(results)}
    text = re.sub(r"\{[^{}]*\}", lambda inner: json.dumps(json.loads(inner[0])), json.dumps(profile, indent=1))
    Path(path).write_text(text + "\n", encoding="utf-8")  # each law on one line
    return profile


def _one_thread() -> None:
    torch.set_num_threads(1)


def _bootstrap_one(job: tuple[dict, str, int]) -> list[dict]:
    results, counting, resamples = job
    return bootstrap_parametric(results, counting=counting, resamples=resamples)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {BOOTSTRAP_FILE.name} beside the runs")
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    parser.add_argument("--counting", choices=tuple(COUNTINGS), help="bootstrap one counting only (no --write)")
    parser.add_argument("--jobs", type=int, default=1, help="processes of one thread each (one per counting)")
    parser.add_argument("--profile", action="store_true", help=f"write {PROFILE_FILE.name} (no bootstrap)")
    args = parser.parse_args(argv)
    results = scaling_runs.load_results()
    if args.profile:
        started = time.perf_counter()
        profile = write_profile(results)
        print(f"approach 3 at {len(profile['floors'])} fixed floors written to {PROFILE_FILE} "
              f"({time.perf_counter() - started:.0f} s)")  # fmt: skip
        return
    countings = [args.counting] if args.counting else list(COUNTINGS)
    started = time.perf_counter()
    with ProcessPoolExecutor(min(args.jobs, len(countings)), initializer=_one_thread) as pool:
        fitted = pool.map(_bootstrap_one, [(results, counting, args.resamples) for counting in countings])
        bootstrapped = dict(zip(countings, fitted))
    for counting, sample in bootstrapped.items():
        low, high = fits.interval([row["E"] for row in sample])
        print(f"{counting}: approach 3's E over {args.resamples} resamples: 95 % in [{low:.4f}, {high:.4f}]; "
              f"true {results['test_entropy']:.4f}")  # fmt: skip
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.write and not args.counting:
        stored = {"command": BOOTSTRAP_COMMAND, "resamples": args.resamples, "seed": BOOTSTRAP_SEED,
                  "starts": len(FAST_STARTS), "runs": runs_fingerprint(results), "fits": bootstrapped}  # fmt: skip
        text = re.sub(r"\{[^{}\[\]]*\}", lambda inner: json.dumps(json.loads(inner[0])), json.dumps(stored, indent=1))
        BOOTSTRAP_FILE.write_text(text + "\n", encoding="utf-8")  # each fit on one line


if __name__ == "__main__":
    main()
