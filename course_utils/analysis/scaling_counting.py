"""Two ways to count a model's size and cost, and the compute-optimal model under each (notebook 11, issue 44).

- **Kaplan et al. (2020)**: N is the non-embedding parameters (the transformer blocks) and C = 6·N·D.
- **Hoffmann et al. (2022, "Chinchilla")**: N is every parameter, the embeddings and the output layer too, and
  C = 6·N·D on that N (close to the real compute: ``scaling_flops`` counts every matmul of a training step).

For a tiny model the tied 610-word output layer is most of the compute, so the counting decides the answer. Pearce &
Song (2024) and Porian et al. (2024) trace Kaplan's N_opt ∝ C^0.73, against Chinchilla's 0.5, to exactly this.

- ``columns``, ``fit``: approach 3 under a counting, with the analysis choices of ``scaling_sensitivity``;
- ``exponent``, ``tokens_per_parameter``: the compute-optimal split a law implies, N_opt ∝ C^a, D_opt/N_opt;
- ``isoflop_profiles``: approach 2 read from the grid under a counting: each shape's end-of-schedule test losses,
  interpolated in log D to D = C/6N at log-spaced budgets C, a parabola through the best size and its neighbours;
- ``envelope_optimum``: approach 1's N_opt(C), the size whose validation curve is lowest at C;
- ``grid_exponents``: a = d log N_opt / d log C read from the grid by three ways; ``bootstrap_exponents`` on the resamples of
  ``scaling_laws.resample_draws``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from course_utils.analysis import scaling_fits as fits
from course_utils.analysis import scaling_laws as laws
from course_utils.validation import CourseInputError, check_int

COUNTINGS = laws.COUNTINGS  # {counting: the row's field that is N}
COUNTING_NAMES = {"kaplan": "Kaplan (non-embedding N)", "chinchilla": "Chinchilla (all parameters)"}
CHINCHILLA_A = 0.5  # Hoffmann et al.: N_opt ∝ C^0.50 (approaches 1 and 2: 0.50 and 0.49; approach 3: 0.46)
KAPLAN_A = 0.73  # Kaplan et al.: N_opt ∝ C^0.73


def sizes(chosen: list[dict], counting: str = "kaplan") -> np.ndarray:
    """N of each run under ``counting``."""
    return laws.columns(chosen, counting)[0]


columns = laws.columns  # (N, D, test loss), N counted the ``counting`` way


def flops(chosen: list[dict], counting: str = "kaplan") -> np.ndarray:
    """C = 6·N·D of each run, N counted the ``counting`` way."""
    n, d, _ = columns(chosen, counting)
    return fits.flops(n, d)


def exponent(law: fits.ChinchillaLaw) -> float:
    """The compute-optimal exponent a of N_opt ∝ C^a under ``law``: β / (α + β) (and D_opt ∝ C^(1 − a))."""
    return law.beta / (law.alpha + law.beta)


def tokens_per_parameter(law: fits.ChinchillaLaw, c) -> np.ndarray:
    """D_opt / N_opt at budget(s) C under ``law``: (C/6) / N_opt²."""
    n_opt = law.optimal_n(c)
    return np.asarray(c, dtype=float) / 6 / n_opt**2


def reference_flops(results: dict, counting: str = "kaplan") -> float:
    """The budget at which tokens per parameter are compared: the geometric middle of the training runs' C."""
    c = flops(laws.rows(results), counting)
    return float(math.sqrt(c.min() * c.max()))


# ---------------------------------------------------------------- approach 3 under a counting


def fit(chosen: list[dict], counting: str = "kaplan", *, delta: float = fits.HUBER_DELTA,
        starts=None) -> fits.ChinchillaLaw:  # fmt: skip
    """Approach 3 on the runs ``chosen``, N counted the ``counting`` way, Huber ``delta`` (``FAST_STARTS``)."""
    return fits.fit_parametric(*columns(chosen, counting), starts=starts or laws.FAST_STARTS, delta=delta)


# ---------------------------------------------------------------- approach 2 from the grid, under a counting


@dataclass(frozen=True)
class Profile:
    """One budget C: the sizes whose trained range reaches D = C/6N, their interpolated losses, and the parabola
    through the best size and its neighbours (None where it does not bend up with its minimum inside them)."""

    flops: float
    n: np.ndarray  # (sizes,) N, smallest first
    loss: np.ndarray  # (sizes,) test loss at D = C / 6N, interpolated in log D between end-of-schedule runs
    parabola: fits.IsoFlopProfile | None

    @property
    def best(self) -> int:
        return int(np.argmin(self.loss))

    @property
    def bracketed(self) -> bool:
        """The best size has a smaller and a larger size beside it on this budget."""
        return 0 < self.best < len(self.n) - 1

    @property
    def best_n(self) -> float:
        return float(self.n[self.best])


def shape_curves(chosen: list[dict], counting: str = "kaplan") -> list[tuple[float, np.ndarray, np.ndarray]]:
    """[(N, D of its runs (k,), their test losses (k,))] per shape, each run at the end of its own schedule."""
    by_shape: dict[tuple[int, int], list[dict]] = {}
    for row in chosen:
        by_shape.setdefault((row["n_layer"], row["n_embd"]), []).append(row)
    curves = []
    for own in by_shape.values():
        own = sorted({row["steps"]: row for row in own}.values(), key=lambda row: row["tokens"])  # repeats once
        n, d, loss = columns(own, counting)
        curves.append((float(n[0]), d, loss))
    return sorted(curves, key=lambda curve: curve[0])


def profile_at(curves, c: float, window: int = 2) -> Profile | None:
    """The IsoFLOP profile at budget ``c`` (None with fewer than three sizes there): the parabola of approach 2 through
    the best size and up to ``window`` neighbours on each side."""
    n, loss = [], []
    for size, d, curve in curves:
        wanted = c / (6 * size)
        if len(d) >= 2 and d[0] <= wanted <= d[-1]:
            n.append(size)
            loss.append(float(np.interp(math.log(wanted), np.log(d), curve)))
    if len(n) < 3:
        return None
    n, loss = np.array(n), np.array(loss)
    best = int(np.argmin(loss))
    low, high = max(0, best - window), min(len(n), best + window + 1)
    parabola = None
    if high - low >= 3:
        try:
            parabola = fits.isoflop_profile(c, n[low:high], loss[low:high])
        except CourseInputError:
            parabola = None  # no upward bend
        if parabola is not None and not n[low] < parabola.n_opt < n[high - 1]:
            parabola = None  # a minimum outside the sizes it was fitted to is an extrapolation
    return Profile(float(c), n, loss, parabola)


def isoflop_profiles(chosen: list[dict], counting: str = "kaplan", budgets: int = 16) -> list[Profile]:
    """Approach 2 at ``budgets`` log-spaced C over the runs' range, those with three sizes or more."""
    curves = shape_curves(chosen, counting)
    low = min(6 * n * d[0] for n, d, _ in curves)
    high = max(6 * n * d[-1] for n, d, _ in curves)
    grid = np.geomspace(low, high, check_int("budgets", budgets, minimum=3) + 2)[1:-1]
    return [p for p in (profile_at(curves, c) for c in grid) if p is not None]


# ---------------------------------------------------------------- approach 1 under a counting


def envelope_optimum(chosen: list[dict], counting: str = "kaplan", budgets: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Approach 1 as Hoffmann et al. read it: (C, N_opt(C)), the size whose validation curve (read mid-schedule too)
    is lowest at each of ``budgets`` log-spaced C."""
    counted = dict(zip(map(id, chosen), sizes(chosen, counting)))
    curves = []
    for row in chosen:
        tokens_per_step = row["tokens"] / row["steps"]
        curves.append((counted[id(row)], np.array(row["curve"]["steps"]) * tokens_per_step,
                       np.array(row["curve"]["loss"], dtype=float)))  # fmt: skip
    low = min(6 * n * tokens[0] for n, tokens, _ in curves)
    high = max(6 * n * tokens[-1] for n, tokens, _ in curves)
    c, n_opt, _ = fits.envelope(curves, np.geomspace(low, high, check_int("budgets", budgets, minimum=3)))
    return c, n_opt


# ---------------------------------------------------------------- the exponent a by each approach


def grid_exponents(chosen: list[dict], counting: str = "kaplan") -> dict[str, float]:
    """a of N_opt ∝ C^a read from the grid under ``counting`` (least squares in log–log): the best size on each
    IsoFLOP profile (no law at all), approach 1's envelope and approach 2's parabolas. NaN where fewer than three
    budgets give an N_opt."""
    profiles = isoflop_profiles(chosen, counting)
    c, n_opt = envelope_optimum(chosen, counting)
    parabolas = [p for p in profiles if p.parabola is not None]
    return {"best size": _slope([p.flops for p in profiles], [p.best_n for p in profiles]),
            "envelope": _slope(c, n_opt),
            "parabolas": _slope([p.flops for p in parabolas], [p.parabola.n_opt for p in parabolas])}  # fmt: skip


def _slope(c, n) -> float:
    if len(c) < 3:
        return math.nan
    return fits.fit_power_law(c, n)[1]


def bootstrap_exponents(results: dict, counting: str = "kaplan", *, first: int | None = None) -> dict[str, list]:
    """{approach: a on each resample of ``scaling_laws.resample_draws``} for the best size, the envelope and the
    parabolas (approach 3's a comes from its stored bootstrap), the ``first`` resamples only when given."""
    chosen = laws.rows(results)
    found: dict[str, list] = {"best size": [], "envelope": [], "parabolas": []}
    for picks in laws.resample_draws(results)[:first]:
        sample = [chosen[i] for i in sorted(set(picks.tolist()))]
        exponents = grid_exponents(sample, counting)
        for key in found:
            found[key].append(exponents[key])
    return found


# ---------------------------------------------------------------- the compute-optimal frontier


def real_flops(chosen: list[dict]) -> np.ndarray:
    """Each run's training compute as counted matmul by matmul (``scaling_flops``, stored as "training_flops")."""
    if any("training_flops" not in row for row in chosen):
        raise CourseInputError(
            "a run lacks its training_flops; add them with `python -m course_utils.analysis.scaling_flops --write`"
        )
    return np.array([row["training_flops"] for row in chosen], dtype=float)


def pareto_front(c, loss) -> np.ndarray:
    """The indices of the runs no cheaper run beats (lower loss), cheapest first: the envelope of final losses."""
    order = np.argsort(np.asarray(c, dtype=float), kind="stable")
    front, lowest = [], math.inf
    for i in order:
        if loss[i] < lowest:
            front.append(int(i))
            lowest = float(loss[i])
    return np.array(front, dtype=int)


def law_frontier(chosen: list[dict], law: fits.ChinchillaLaw, c) -> np.ndarray:
    """The lowest loss ``law`` (fitted under Chinchilla's counting) gives at real compute C over the shapes trained:
    each shape's L(N, D) at D = C / its real FLOPs per token, the lowest of them. (C, L) (budgets,) each."""
    per_token: dict[float, list[float]] = {}
    for row, compute in zip(chosen, real_flops(chosen)):
        per_token.setdefault(float(row["parameters"]), []).append(compute / row["tokens"])
    c = np.asarray(c, dtype=float)  # (budgets,)
    losses = [law.loss(n, c / float(np.mean(costs))) for n, costs in per_token.items()]  # (shapes, budgets)
    return np.min(np.array(losses), axis=0)


def envelope_law(chosen: list[dict]) -> fits.FloorLaw:
    """L*(C) = E + k·C^(−γ) through the envelope of final test losses against real compute (``pareto_front``): the
    baseline that extrapolates the best loss seen so far, with no model of N and D."""
    c, loss = real_flops(chosen), laws.columns(chosen)[2]
    front = pareto_front(c, loss)
    return fits.fit_floor_law(c[front], loss[front])


# ---------------------------------------------------------------- the notebook's tables


def counting_table(chosen: list[dict]) -> str:
    """Per shape: N both ways, the real training FLOPs per computed position against each counting's 6·N, and the
    positions computed per predicted token (the padding, the same for every shape)."""
    lines = [f"{'shape':>6} {'N blocks':>9} {'N all':>9} {'real FLOPs per position ÷ 6·N':>31} {'positions':>10}",
             f"{'':>6} {'(Kaplan)':>9} {'(Chinch.)':>9} {'Kaplan':>15} {'Chinchilla':>15} {'per token':>10}"]  # fmt: skip
    by_shape: dict[tuple[int, int], list[dict]] = {}
    for row in chosen:
        by_shape.setdefault((row["n_layer"], row["n_embd"]), []).append(row)
    for (layers, width), own in sorted(by_shape.items(), key=lambda item: item[1][0]["parameters"]):
        positions = float(np.sum([row["positions"] for row in own]))
        per_position = float(np.sum(real_flops(own))) / positions
        blocks, total = own[0]["non_embedding_parameters"], own[0]["parameters"]
        padding = positions / float(np.sum([row["tokens"] for row in own]))
        lines.append(f"{layers}x{width:<4} {blocks:9,} {total:9,} {per_position / (6 * blocks):15.2f} "
                     f"{per_position / (6 * total):15.2f} {padding:10.2f}")  # fmt: skip
    return "\n".join(lines)


def optimum_table(profiles: list[Profile], law: fits.ChinchillaLaw) -> str:
    """Per IsoFLOP budget (N counted as ``law`` was fitted): the sizes there, the best one, where it lies among them,
    its tokens per parameter, and approach 3's N_opt and Chinchilla's rule (D = 20 N) over the best size."""
    lines = [f"{'C (FLOPs)':>9} {'sizes':>5} {'best N':>9} {'its place':>9} {'tokens/N':>8} "
             f"{'approach 3 ÷ best':>17} {'20 tokens/N ÷ best':>18}"]  # fmt: skip
    for p in profiles:
        place = "inside" if p.bracketed else ("smallest" if p.best == 0 else "largest")
        rule_n = math.sqrt(p.flops / (6 * 20))
        lines.append(f"{p.flops:9.2e} {len(p.n):5} {p.best_n:9,.0f} {place:>9} {p.flops / (6 * p.best_n**2):8.0f} "
                     f"{float(law.optimal_n(p.flops)) / p.best_n:17.1f} {rule_n / p.best_n:18.1f}")  # fmt: skip
    return "\n".join(lines)


def bootstrap_table(results: dict, resampled: dict[str, list[fits.ChinchillaLaw]]) -> str:
    """95 % intervals over approach 3's resampled laws ({counting: [law]}): E, α, β, a and tokens per parameter at
    ``reference_flops``, one row per quantity, one column per counting."""
    references = {name: reference_flops(results, name) for name in resampled}
    quantities = {"E": lambda law, c: law.E, "α": lambda law, c: law.alpha, "β": lambda law, c: law.beta,
                  "a = β/(α+β)": lambda law, c: exponent(law),
                  "tokens/N at C_ref": lambda law, c: float(tokens_per_parameter(law, c))}  # fmt: skip
    lines = [f"{'95 % intervals':20}" + "".join(f"{COUNTING_NAMES[name]:>30}" for name in resampled)]
    for label, value in quantities.items():
        cells = []
        for name, sample in resampled.items():
            low, high = fits.interval([value(law, references[name]) for law in sample])
            cells.append(f"[{low:,.0f}, {high:,.0f}]" if low >= 10 else f"[{low:.2f}, {high:.3f}]")
        lines.append(f"{label:20}" + "".join(f"{cell:>30}" for cell in cells))
    lines.append(f"{'C_ref (FLOPs)':20}" + "".join(f"{references[name]:>30.1e}" for name in resampled))
    return "\n".join(lines)


def exponent_table(point: dict[str, dict[str, float]], resampled: dict[str, dict[str, list]]) -> str:
    """a by each approach under each counting with its 95 % interval, and the paired difference Kaplan − Chinchilla
    on the same resamples (its interval, and the share of resamples where Kaplan's a is the higher)."""
    kaplan, chinchilla = "kaplan", "chinchilla"
    lines = [f"{'N_opt ∝ C^a':12}{'Kaplan (non-emb. N)':>22}{'Chinchilla (all N)':>22}{'Kaplan − Chinchilla':>30}",
             f"{'':12}{'a [95 %]':>22}{'a [95 %]':>22}{'[95 %], share > 0 of':>30}"]  # fmt: skip
    for approach in point[kaplan]:
        cells = []
        for name in (kaplan, chinchilla):
            low, high, _ = fits.finite_interval(resampled[name][approach])
            cells.append(f"{point[name][approach]:.2f} [{low:.2f}, {high:.2f}]")
        pairs = np.array(resampled[kaplan][approach], dtype=float) - np.array(
            resampled[chinchilla][approach], dtype=float
        )
        low, high, kept = fits.finite_interval(pairs)
        higher = float(np.mean(pairs[np.isfinite(pairs)] > 0))
        cells.append(f"[{low:+.2f}, {high:+.2f}] {higher:4.0%} of {kept}")
        lines.append(f"{approach:12}" + "".join(f"{cell:>22}" for cell in cells[:2]) + f"{cells[2]:>30}")
    return "\n".join(lines)
