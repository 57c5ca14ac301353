"""Each scaling-law approach judged against the truth the course language knows (notebook 11).

``scaling_laws`` fits the approaches to the stored runs; here their answers meet the truth:

- ``isoflop_floor``: approach 2 carried one step further, L*(C) = E + k C^(−γ) through the parabolas' minima, so that
  it too names a floor (Hoffmann et al. read only N_opt from the parabolas);
- ``bootstrap_floors``: approaches 1 and 2's floors on the same resamples of the runs as approach 3's stored
  bootstrap, stored in ``data/scaling/floor_bootstrap.json`` (``FLOOR_BOOTSTRAP_COMMAND``);
- ``rule_of_thumb_n``: Chinchilla's "20 tokens per parameter" as an N for a budget;
- ``held_out_baselines``: the held-out shape predicted by approach 3 and by two baselines with no law;
- ``seed_ranges``, ``seed_noise``: the runs trained with three seeds, and the noise of a single run;
- ``parabola_bias``: Czech et al.'s test of approach 2 on a surface whose optimum is known, here approach 3's own law
  sampled at the sizes each budget trained;
- ``floor_table``: the notebook's verdict table, at most 88 characters wide.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from course_utils.analysis import scaling_counting as counting_
from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws as laws
from course_utils.analysis import scaling_runs
from course_utils.validation import CourseInputError

CHINCHILLA_TOKENS_PER_PARAMETER = 20  # Hoffmann et al. (2022): D_opt ≈ 20 N_opt


def isoflop_floor(results: dict) -> fits.FloorLaw:
    """Approach 2's floor: L*(C) = E + k C^(−γ) through the minima of the kept IsoFLOP parabolas."""
    profiles = laws.isoflop_profiles(results)
    if len(profiles) < 3:
        raise CourseInputError(f"a floor through the parabolas' minima needs three budgets, got {len(profiles)}")
    return fits.fit_floor_law([p.flops for p in profiles], [p.loss_opt for p in profiles])


def _resampled(results: dict, picks: np.ndarray) -> dict:
    """``results`` with its training runs replaced by the rows ``picks`` of ``laws.rows(results)`` (repeats kept)."""
    chosen = laws.rows(results)
    return {**results, "runs": {f"{i}": chosen[j] for i, j in enumerate(picks)}}


def _floor_or_nan(fit, results: dict) -> float:
    try:
        return float(fit(results).E)
    except CourseInputError:
        return math.nan  # a resample with too few sizes on too few budgets for this approach


def bootstrap_floors(results: dict, *, resamples: int = laws.RESAMPLES, seed: int = laws.BOOTSTRAP_SEED,
                     first: int | None = None) -> dict[str, list[float]]:  # fmt: skip
    """{"envelope": approach 1's E, "isoflop": approach 2's E} on each resample (NaN where it cannot be fitted), the
    ``first`` resamples only when given."""
    envelope = lambda sample: laws.envelope_floor(sample)[0]  # noqa: E731
    draws = laws.resample_draws(results, resamples, seed)[:first]
    samples = [_resampled(results, picks) for picks in draws]
    return {"envelope": [_floor_or_nan(envelope, sample) for sample in samples],
            "isoflop": [_floor_or_nan(isoflop_floor, sample) for sample in samples]}  # fmt: skip


FLOOR_BOOTSTRAP_FILE = scaling_runs.RESULTS_FILE.with_name("floor_bootstrap.json")
FLOOR_BOOTSTRAP_COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.scaling_verdicts --write"  # about 80 s


def load_floor_bootstrap(path=FLOOR_BOOTSTRAP_FILE) -> dict:
    """The stored floors: {"command", "resamples", "seed", "envelope": [E], "isoflop": [E]} (null: not fitted)."""
    path = Path(path)
    if not path.is_file():
        raise CourseInputError(f"{path} is missing; make it with `{FLOOR_BOOTSTRAP_COMMAND}`")
    stored = json.loads(path.read_text(encoding="utf-8"))
    for key in ("envelope", "isoflop"):
        stored[key] = [math.nan if value is None else value for value in stored[key]]
    return stored


finite_interval = fits.finite_interval  # (low, high, how many) of the resamples that fitted


# ---------------------------------------------------------------- the compute-optimal model


def rule_of_thumb_n(flops) -> np.ndarray:
    """Chinchilla's N_opt for D = 20 N: C = 6 N · 20 N, so N = sqrt(C / 120)."""
    return np.sqrt(np.asarray(flops, dtype=float) / (6 * CHINCHILLA_TOKENS_PER_PARAMETER))


def held_out_baselines(results: dict, law: fits.ChinchillaLaw, counting: str = "kaplan") -> dict[int, dict[str, float]]:
    """{steps: {predictor: its prediction − the measured test loss}} for the held-out shape: ``law`` (fitted under
    ``counting``), the nearest smaller shape's loss at the same steps (the same stream: the same tokens), and the
    envelope of final losses against real compute extrapolated to the held-out run's compute."""
    held_out = sorted(laws.rows(results, ("held-out",)), key=lambda row: row["steps"])
    shapes = sorted({(row["n_layer"], row["n_embd"]) for row in laws.rows(results)},
                    key=lambda shape: scaling_runs.block_parameters(*shape))  # fmt: skip
    nearest = shapes[-1]
    envelope = counting_.envelope_law(laws.rows(results))
    n, d, measured = laws.columns(held_out, counting)
    compute = counting_.real_flops(held_out)
    table = {}
    for i, row in enumerate(held_out):
        smaller = results["runs"][scaling_runs.Run(*nearest, row["steps"]).name]["test_loss"]
        table[row["steps"]] = {"approach 3": float(law.loss(n[i], d[i])) - measured[i],
                               f"{nearest[0]}x{nearest[1]} at the same steps": smaller - measured[i],
                               "the envelope extrapolated": float(envelope.loss(compute[i])) - measured[i]}  # fmt: skip
    return table


def parabola_bias(results: dict, law: fits.ChinchillaLaw) -> list[tuple[float, float]]:
    """[(C, the parabola's N_opt / the true N_opt)] on ``law`` taken as the truth: at each kept budget, the law's loss at
    the sizes trained there (D = C / 6N), a parabola through it in log N, and its minimum against the law's own."""
    ratios = []
    for profile in laws.isoflop_profiles(results):
        exact = law.loss(profile.n, profile.flops / (6 * profile.n))  # (sizes,)
        fitted = fits.isoflop_profile(profile.flops, profile.n, exact)
        ratios.append((profile.flops, fitted.n_opt / float(law.optimal_n(profile.flops))))
    return ratios


# ---------------------------------------------------------------- the tables notebook 11 prints


def floor_table(rows: list[tuple[str, float, list[float], float]], truth: float, best_loss: float) -> str:
    """The floors side by side: ``rows`` of (approach, its E, its E on the resamples, the true E it is judged
    against), then Kaplan's form (no floor, E = 0) and the best run's loss, each with its error."""
    lines = [f"{'approach':20} {'E':>7} {'95 % interval':>17} {'true E':>7} {'error':>7}"]
    for name, e, sample, floor in rows:
        low, high, _ = finite_interval(sample)
        lines.append(f"{name:20} {e:7.4f} [{low:6.3f}, {high:6.3f}] {floor:7.4f} {e - floor:+7.4f}")
    lines.append(f"{'Kaplan':20} {0:7.4f} {'(no floor)':>17} {truth:7.4f} {-truth:+7.4f}")
    lines.append(f"{'(the best run)':20} {best_loss:7.4f} {'':>17} {truth:7.4f} {best_loss - truth:+7.4f}")
    return "\n".join(lines)


def seed_ranges(results: dict) -> dict[tuple[int, int, int], list[float]]:
    """{(n_layer, n_embd, steps): the test losses of seeds 0, 1, 2} for the runs trained again with other seeds (one
    FLOP budget, ``scaling_runs.SPREAD_DIAGONAL``)."""
    losses: dict[tuple[int, int, int], list[float]] = {}
    for seed in (0, *scaling_runs.SPREAD_SEEDS):
        for row in laws.rows(results, ("grid", "seeds"), seed=seed):
            if laws.budget_of(row) == scaling_runs.SPREAD_DIAGONAL:
                losses.setdefault((row["n_layer"], row["n_embd"], row["steps"]), []).append(row["test_loss"])
    return dict(sorted(losses.items()))


def seed_noise(results: dict, near: float = 0.05) -> float:
    """The largest seed range among the runs whose best seed ends within ``near`` nats of the floor: the run-to-run
    noise of the runs the fits lean on."""
    floor = results["test_entropy"]
    return max(max(v) - min(v) for v in seed_ranges(results).values() if min(v) - floor < near)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {FLOOR_BOOTSTRAP_FILE.name} beside the runs")
    parser.add_argument("--resamples", type=int, default=laws.RESAMPLES)
    args = parser.parse_args(argv)
    results = scaling_runs.load_results()
    started = time.perf_counter()
    floors = bootstrap_floors(results, resamples=args.resamples)
    for key, values in floors.items():
        low, high, kept = finite_interval(values)
        print(f"{key}: E in [{low:.4f}, {high:.4f}] over {kept} of {len(values)} resamples")
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.write:
        stored = {
            "command": FLOOR_BOOTSTRAP_COMMAND,
            "resamples": args.resamples,
            "seed": laws.BOOTSTRAP_SEED,
            **{key: [None if math.isnan(v) else round(v, 6) for v in values] for key, values in floors.items()},
        }
        FLOOR_BOOTSTRAP_FILE.write_text(json.dumps(stored) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
