"""Scaling laws against a known floor: a grid of GPT runs on fresh sentences, each scored against the oracle.

Notebook 11 (issue 35) fits L(N, D) = E + A/N^α + B/D^β to these runs and compares the fitted E with the true entropy
rate, which no real corpus can offer. The grid:

    9 shapes (n_layer x n_embd), non-embedding parameters N from 3.3k to 793k, about 2x apart   (GRID_SHAPES)
    6 budgets of steps of 64 fresh sentences: 250, 500, ..., 8,000 (x2 apart; about 0.14M-4.4M tokens)   (BUDGETS)
    the ladder further for the small shapes: 16,000 steps (six), 32,000 (four) and 64,000 (two)   (LONGER_*, LONGEST)
    one held-out larger shape, 4 x 192 (N = 1.78M, 2.2x the largest), at every budget: fit small, predict large
    seeds 1 and 2 again on the runs of one FLOP budget (SPREAD_DIAGONAL), for the run-to-run spread
    the learning-rate rule x1/3 and x3 at three shapes on two budgets   (LR_FACTORS, LR_SHAPES, LR_BUDGETS)

Since N and D both step about x2, the runs on one anti-diagonal of the grid (shape index + budget index = k) share a
FLOP budget C = 6 N D within a factor of 1.17, N counted Kaplan's way: ``isoflop_groups`` gives those IsoFLOP
profiles (``scaling_counting`` reads profiles under both countings instead). Every run has its own cosine schedule to its last step, a warm-up of min(100, steps // 10) steps,
clipping at 1.0, and a learning rate by one fixed rule, not tuned per run (``learning_rate``). A run stores its
validation loss curve (a fixed set of fresh sentences, ~15 log-spaced steps), its final loss per token on the test
split, the first training losses (a fingerprint for ``short_run``) and its cost. The oracle's entropy of the test
split is stored once, beside the runs. The command that writes the file (one H100, about 8 minutes: the 12 processes
share the GPU by time slices, so a step takes about 30 ms instead of 4-12 ms alone):

    python -m course_utils.analysis.scaling_runs --device cuda --workers 12

and one run at a time on a CPU: ``OMP_NUM_THREADS=1 python -m course_utils.analysis.scaling_runs --only "1x16 *"``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import re
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path

import torch

from course_utils.analysis.stored_runs import load_runs
from course_utils.language import corpus, stream
from course_utils.language.vocab import course_vocab
from course_utils.models import lm
from course_utils.models.transformer.transformer_lm import CourseGPT
from course_utils.training import train
from course_utils.validation import CourseInputError, check_choice, check_int, check_positive

RESULTS_FILE = Path(__file__).resolve().parents[2] / "data" / "scaling" / "runs.json"
COMMAND = "python -m course_utils.analysis.scaling_runs --device cuda --workers 12"

GRID_SHAPES = ((1, 16), (2, 16), (2, 24), (2, 32), (2, 48), (2, 64), (4, 64), (4, 96), (4, 128))  # (n_layer, n_embd)
HELD_OUT_SHAPE = (4, 192)
BUDGETS = (250, 500, 1000, 2000, 4000, 8000)  # steps of BATCH_SIZE fresh sentences
# The ladder one rung further for the six smallest shapes: within 8,000 steps every IsoFLOP profile had its lowest
# loss at its smallest model (the most tokens per parameter), so the profiles need more data to bend upwards.
LONGER_BUDGET, LONGER_SHAPES = 16_000, GRID_SHAPES[:6]
# Two rungs more (issue 44), so that the IsoFLOP profiles bend up on their small side as well: 32,000 steps for the
# four smallest shapes, 64,000 for the two smallest.
LONGEST = {32_000: GRID_SHAPES[:4], 64_000: GRID_SHAPES[:2]}
LADDER = (*BUDGETS, LONGER_BUDGET, *LONGEST)
# The learning-rate sweep (issue 44): the rule x1/3 and x3 at a small, a middle and the largest grid shape, on two
# budgets (the rule itself is the grid's own run).
LR_FACTORS = {"1/3": 1 / 3, "3": 3.0}
LR_SHAPES, LR_BUDGETS = ((2, 16), (2, 64), (4, 128)), (500, 2000)
BATCH_SIZE = 64
HEAD_WIDTH = 16  # channels per attention head (two heads at least)
SPREAD_SEEDS = (1, 2)
SPREAD_DIAGONAL = 7  # the FLOP budget (shape index + budget index) trained again with SPREAD_SEEDS
VALIDATION_SEED, VALIDATION_BATCHES = 1_000, 16  # the fixed validation sentences: 16 stream batches, ~8,700 tokens
CURVE_POINTS = 15  # validation losses per run, log-spaced
FIRST_STEPS = 20  # the first training losses each run stores, for short_run
DIGITS = 5  # significant digits of the stored floats
PARTS = ("grid", "held-out", "seeds", "longer", "longest", "lr")
TRAINING_PARTS = ("grid", "longer", "longest")  # the runs the laws are fitted to


# ---------------------------------------------------------------- the grid


@dataclass(frozen=True)
class Run:
    """One training run: a shape, a budget of steps and a seed (the model's and the stream's)."""

    n_layer: int
    n_embd: int
    steps: int
    seed: int = 0
    part: str = "grid"
    lr_factor: str = "1"  # the learning-rate rule times this (a key of LR_FACTORS, or "1")

    @property
    def name(self) -> str:
        name = f"{self.n_layer}x{self.n_embd} {self.steps} steps seed {self.seed}"  # "2x64 8000 steps seed 0"
        return name if self.lr_factor == "1" else f"{name} lr x{self.lr_factor}"  # "2x64 500 steps seed 0 lr x3"

    @property
    def lr(self) -> float:
        """The run's peak learning rate: the rule's, times its factor."""
        return learning_rate(self.n_embd) * LR_FACTORS.get(self.lr_factor, 1.0)


def heads(n_embd: int) -> int:
    """Attention heads of a model ``n_embd`` wide: one per HEAD_WIDTH channels, two at least."""
    return max(2, check_int("n_embd", n_embd, minimum=2) // HEAD_WIDTH)


def learning_rate(n_embd: int) -> float:
    """The one learning-rate rule of the grid: 3e-3 up to width 64 (notebook 08's GPT), 3e-3 * 64 / width above it
    (2e-3 at 96, 1.5e-3 at 128, 1e-3 at 192), fixed before any run, never tuned per run."""
    return 3e-3 * min(1.0, 64 / check_int("n_embd", n_embd, minimum=1))


def warmup_steps(steps: int) -> int:
    """The linear warm-up before each run's cosine: a tenth of the run, 100 steps at most."""
    return min(100, check_int("steps", steps, minimum=1) // 10)


def curve_steps(steps: int, points: int = CURVE_POINTS) -> list[int]:
    """About ``points`` log-spaced steps from min(10, steps) to ``steps`` (the last always included)."""
    steps, points = check_int("steps", steps, minimum=1), check_int("points", points, minimum=2)
    first = min(10, steps)
    ratio = (steps / first) ** (1 / (points - 1))
    return sorted({round(first * ratio**i) for i in range(points - 1)} | {steps})


def block_parameters(n_layer: int, n_embd: int) -> int:
    """Non-embedding parameters in closed form: per block 12 C^2 + 13 C (W^Q,K,V,O: 4 C^2 + 4 C; the MLP's two
    layers: 8 C^2 + 5 C; two LayerNorms: 4 C). ``non_embedding_parameters`` counts the same on a built model."""
    n_layer, n_embd = check_int("n_layer", n_layer, minimum=1), check_int("n_embd", n_embd, minimum=1)
    return n_layer * (12 * n_embd**2 + 13 * n_embd)


def non_embedding_parameters(model: CourseGPT) -> int:
    """N of the scaling laws: the parameters of the transformer blocks only (attention, MLP, their LayerNorms and
    biases). Left out: the token and position embeddings, the final LayerNorm (2 C) and the output layer (tied to the
    token embedding here; it would be left out untied too). Kaplan et al. (2020) count N the same way, less biases."""
    return sum(p.numel() for p in model.hf.transformer.h.parameters())


def build(n_layer: int, n_embd: int, seed: int = 0) -> CourseGPT:
    """The untrained GPT of a shape, seeded (its weights are drawn on the CPU, the same on every machine)."""
    return CourseGPT.for_vocab(course_vocab(), seed=seed, n_layer=n_layer, n_embd=n_embd, n_head=heads(n_embd),
                               max_len=128, dropout=0.0)  # fmt: skip


def flop_diagonal(run: Run) -> int:
    """The FLOP budget's index of a run: its shape's index plus its budget's (the held-out shape counts as index 9).
    Runs with the same index have 6 N D within a factor of 1.17 of each other."""
    shapes = (*GRID_SHAPES, HELD_OUT_SHAPE)
    return shapes.index((run.n_layer, run.n_embd)) + LADDER.index(run.steps)


def all_runs() -> list[Run]:
    """Every run: the grid at seed 0, the held-out shape at every budget, SPREAD_SEEDS on one FLOP budget, then the
    six smallest shapes at LONGER_BUDGET."""
    grid = [Run(n_layer, n_embd, steps) for n_layer, n_embd in GRID_SHAPES for steps in BUDGETS]
    held_out = [Run(*HELD_OUT_SHAPE, steps, part="held-out") for steps in BUDGETS]
    seeds = [Run(run.n_layer, run.n_embd, run.steps, seed, "seeds") for seed in SPREAD_SEEDS for run in grid
             if flop_diagonal(run) == SPREAD_DIAGONAL]  # fmt: skip
    longer = [Run(n_layer, n_embd, LONGER_BUDGET, part="longer") for n_layer, n_embd in LONGER_SHAPES]
    longest = [Run(*shape, steps, part="longest") for steps, shapes in LONGEST.items() for shape in shapes]
    swept = [Run(*shape, steps, part="lr", lr_factor=factor) for shape in LR_SHAPES for steps in LR_BUDGETS
             for factor in LR_FACTORS]  # fmt: skip
    return grid + held_out + seeds + longer + longest + swept


RUNS = {run.name: run for run in all_runs()}


def isoflop_groups(runs=None) -> dict[int, list[Run]]:
    """{FLOP-budget index: the seed-0 runs on it, smallest model first} (an IsoFLOP profile each), of ``runs`` or of
    the grid."""
    groups: dict[int, list[Run]] = {}
    for run in [run for run in RUNS.values() if run.part in TRAINING_PARTS] if runs is None else runs:
        if run.seed == 0 and run.lr_factor == "1":
            groups.setdefault(flop_diagonal(run), []).append(run)
    return {k: sorted(group, key=lambda run: block_parameters(run.n_layer, run.n_embd)) for k, group in sorted(groups.items())}  # fmt: skip


def chosen_runs(patterns=None) -> list[Run]:
    """The runs whose names match any of the shell-style ``patterns`` (all runs for None), in the stored order."""
    if patterns is None:
        return list(RUNS.values())
    chosen = [run for run in RUNS.values() if any(fnmatch.fnmatchcase(run.name, p) for p in patterns)]
    if not chosen:
        raise CourseInputError(f"no run matches {patterns}; runs are named like {next(iter(RUNS))!r}")
    return chosen


def launch_order(runs: list[Run]) -> list[Run]:
    """Longest first (steps x (layers + 1): a small model's step on a GPU costs its kernel launches), the seed runs
    last, so that the grid and the held-out runs finish first when time runs short."""
    return sorted(runs, key=lambda run: (run.part == "seeds", -run.steps * (run.n_layer + 1)))


# ---------------------------------------------------------------- data and scores


@lru_cache(maxsize=None)
def stream_batch(seed: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch ``step`` of stream ``seed``: (idx, targets), both (BATCH_SIZE, T); kept, as every shape trains on it."""
    return lm.make_batch(stream.encoded_batches(batch_size=BATCH_SIZE, seed=seed)(step), course_vocab())


@lru_cache(maxsize=1)
def validation_sentences() -> tuple[tuple[str, ...], ...]:
    """The fixed validation set: VALIDATION_BATCHES batches of stream VALIDATION_SEED (no training seed's)."""
    return tuple(tuple(words) for step in range(VALIDATION_BATCHES)
                 for words in stream.fresh_sentences(step, batch_size=BATCH_SIZE, seed=VALIDATION_SEED))  # fmt: skip


@lru_cache(maxsize=1)
def validation_ids() -> list[list[int]]:
    return lm.encode_sentences(course_vocab(), validation_sentences())


@lru_cache(maxsize=1)
def test_ids() -> list[list[int]]:
    return lm.encode_sentences(course_vocab(), corpus.load_split("test"))


def oracle_entropies() -> dict:
    """The floor: the oracle's loss per token (nats, </s> counted) on the test split and on the validation set."""
    language = stream.stream_language()
    test, test_tokens = corpus.oracle_entropy(language, corpus.load_split("test"))
    validation, validation_tokens = corpus.oracle_entropy(language, [list(s) for s in validation_sentences()])
    return {"test_entropy": test, "test_tokens": test_tokens,
            "validation": {"seed": VALIDATION_SEED, "batches": VALIDATION_BATCHES, "batch_size": BATCH_SIZE,
                           "tokens": validation_tokens, "oracle_entropy": validation}}  # fmt: skip


def loss_per_token(model: torch.nn.Module, id_lists) -> float:
    """The model's mean loss per token (nats, </s> counted) on encoded sentences."""
    return lm.evaluate(model, course_vocab(), id_lists).mean_nll


# ---------------------------------------------------------------- one run


def _device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def train_run(run: Run, *, device="cpu", steps: int | None = None) -> tuple[CourseGPT, dict]:
    """Train ``run`` (its first ``steps`` steps only, on its own schedule, when given); return the model and what
    happened: the validation curve, tokens seen, training seconds (evaluations left out) and the training losses."""
    steps = run.steps if steps is None else check_int("steps", steps, minimum=1, maximum=run.steps)
    device = torch.device(device)
    model = build(run.n_layer, run.n_embd, run.seed).to(device)
    points, curve, seen, evaluating = set(curve_steps(run.steps)), {}, [0], [0.0]

    def batch(step: int):  # train() asks for batch `step` once steps 1 .. step - 1 are done
        if step - 1 in points:
            start = time.perf_counter()
            curve[step - 1] = loss_per_token(model, validation_ids())
            evaluating[0] += time.perf_counter() - start
        idx, targets = stream_batch(run.seed, step)  # (B, T), (B, T)
        seen[0] += int((targets != lm.IGNORE_INDEX).sum())
        return idx, targets

    start = time.perf_counter()
    history = train(model, batch, steps=steps, lr=run.lr, schedule="cosine",
                    warmup_steps=warmup_steps(run.steps), clip_grad_norm=1.0, device=device, progress=False)  # fmt: skip
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start - evaluating[0]
    if steps in points:
        curve[steps] = loss_per_token(model, validation_ids())
    return model, {"curve": curve, "tokens": seen[0], "train_seconds": seconds, "losses": history.losses}


def _rounded(value):
    """Floats to DIGITS significant digits, inside lists and dicts too."""
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def measure(run: Run, device="cpu") -> dict:
    """Train ``run`` and return its stored row: shape, parameters, data, cost, the curve and the test loss."""
    model, trained = train_run(run, device=device)
    n = non_embedding_parameters(model)
    row = {"part": run.part, "n_layer": run.n_layer, "n_embd": run.n_embd, "n_head": heads(run.n_embd),
           "non_embedding_parameters": n, "parameters": sum(p.numel() for p in model.parameters()),
           "steps": run.steps, "batch_size": BATCH_SIZE, "warmup_steps": warmup_steps(run.steps),
           "lr": run.lr, "lr_factor": run.lr_factor, "seed": run.seed, "tokens": trained["tokens"],
           "flops": 6.0 * n * trained["tokens"], "device": _device_name(torch.device(device)),
           "torch": torch.__version__, "train_seconds": trained["train_seconds"],
           "curve": {"steps": list(trained["curve"]), "loss": list(trained["curve"].values())},
           "test_loss": loss_per_token(model, test_ids()), "first_losses": trained["losses"][:FIRST_STEPS]}  # fmt: skip
    return _rounded(row)


def time_steps(n_layer: int, n_embd: int, device="cpu", steps: int = 20, warmup: int = 3) -> float:
    """Seconds per training step of a shape on ``device``: the batches drawn beforehand, ``warmup`` steps first,
    synchronised on a GPU."""
    steps, warmup = check_int("steps", steps, minimum=1), check_int("warmup", warmup, minimum=1)
    device = torch.device(device)
    model = build(n_layer, n_embd)
    batches = [stream_batch(0, step) for step in range(1, warmup + steps + 1)]
    settings = {"lr": learning_rate(n_embd), "clip_grad_norm": 1.0, "device": device, "progress": False}
    train(model, lambda step: batches[step - 1], steps=warmup, **settings)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    train(model, lambda step: batches[warmup + step - 1], steps=steps, **settings)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return (time.perf_counter() - start) / steps


# ---------------------------------------------------------------- the stored file


def load_results(path: Path | str = RESULTS_FILE) -> dict:
    """The stored grid: {"command", "test_entropy", "test_tokens", "validation", "runs": {name: row}}."""
    return load_runs(Path(path), COMMAND)


def save_row(path: Path, name: str, row: dict, floor: dict) -> None:
    """Store ``row`` as run ``name`` beside the runs already in ``path`` (read again just before writing), in the
    order of RUNS, with the command and the oracle's floor at the top."""
    runs = load_runs(path, COMMAND)["runs"] if path.is_file() else {}
    runs[name] = row
    results = {"command": COMMAND, **_rounded(floor), "runs": {run: runs[run] for run in RUNS if run in runs}}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(_one_line_lists(json.dumps(results, indent=1)) + "\n", encoding="utf-8")
    partial.replace(path)  # at once: a run killed while writing leaves the last file whole


def _one_line_lists(text: str) -> str:
    """Indented JSON with each list of numbers on one line."""
    return re.sub(r"\[[^\[\]{}]*\]", lambda match: f"[{' '.join(match[0][1:-1].split())}]", text)


# ---------------------------------------------------------------- a short run, for the notebook

SHORT_RUN = Run(*GRID_SHAPES[0], BUDGETS[1]).name  # stored from the GPU; about 5 s again on one CPU thread
# A CPU run again of 12 GPU-stored runs (up to 8,000 steps, torch 2.13 on the CPU against 2.11 on an H100) matched
# every stored number to 2e-4 nats or better (5 significant digits); three seeds of SHORT_RUN differ by 0.03 nats.
TOLERANCE = 1e-3  # nats: the largest gap allowed between a stored loss and the same run trained again


def short_run(name: str = SHORT_RUN, path: Path | str = RESULTS_FILE, device="cpu") -> dict:
    """Train a stored run again, here, and put its numbers beside the stored ones: the first training losses, the
    validation curve and the test loss, the largest gaps between them, and whether all lie within TOLERANCE."""
    if name not in RUNS:
        raise CourseInputError(f"unknown run {name!r}; the runs are named like {SHORT_RUN!r}")
    stored = load_results(path)["runs"][name]
    again = measure(RUNS[name], device=device)
    gap = lambda a, b: max(abs(x - y) for x, y in zip(a, b))  # noqa: E731
    gaps = {"first_loss_gap": gap(stored["first_losses"], again["first_losses"]),
            "curve_gap": gap(stored["curve"]["loss"], again["curve"]["loss"]),
            "test_loss_gap": abs(stored["test_loss"] - again["test_loss"])}  # fmt: skip
    return {"run": name, "stored": stored, "again": again, **gaps, "agrees": max(gaps.values()) <= TOLERANCE}


# ---------------------------------------------------------------- the command line


def _one_thread() -> None:
    torch.set_num_threads(1)


def _measure_one(run: Run, device: str) -> tuple[str, dict]:
    try:
        return run.name, measure(run, device)
    except Exception as error:  # a run that fails is reported; the others go on
        return run.name, {"error": f"{type(error).__name__}: {error}"}


def _report(name: str, row: dict, floor: float, started: float) -> None:
    if "error" in row:
        print(f"{name:28} FAILED {row['error']}", flush=True)
        return
    print(f"{name:28} N {row['non_embedding_parameters']:>9,}  test - oracle {row['test_loss'] - floor:.4f} nats  "
          f"{row['train_seconds']:6.1f} s  (at {time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip


def excess_table(results: dict, seed: int = 0) -> str:
    """Test loss - the oracle's test entropy (nats per token), one row per shape, one column per budget ("-": not trained)."""
    floor, runs = results["test_entropy"], results["runs"]
    lines = [f"{'shape':>7} {'N':>9} " + "".join(f"{steps:>7}" for steps in LADDER)]
    for n_layer, n_embd in (*GRID_SHAPES, HELD_OUT_SHAPE):
        cells = [runs.get(Run(n_layer, n_embd, steps, seed).name, {}).get("test_loss") for steps in LADDER]
        text = "".join(f"{cell - floor:7.4f}" if cell is not None else f"{'-':>7}" for cell in cells)
        lines.append(f"{n_layer}x{n_embd:<5} {block_parameters(n_layer, n_embd):>9,} {text}")
    return "\n".join(lines)


def _run_here(runs: list[Run], *, out: Path, device: str, deadline: float, floor: dict, started: float) -> None:
    _one_thread()
    for run in runs:
        if time.perf_counter() - started > deadline:
            print(f"deadline: {run.name} and the runs after it not started", flush=True)
            return
        name, row = _measure_one(run, device)
        _report(name, row, floor["test_entropy"], started)
        if "error" not in row:
            save_row(out, name, row, floor)


def _run_pool(runs: list[Run], *, out: Path, device: str, deadline: float, floor: dict, started: float,
              workers: int) -> None:  # fmt: skip
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_one_thread) as pool:
        pending = [pool.submit(_measure_one, run, device) for run in runs]  # started in this order
        while pending:
            done, _ = wait(pending, timeout=5, return_when=FIRST_COMPLETED)
            for future in done:
                pending.remove(future)
                if not future.cancelled():
                    name, row = future.result()
                    _report(name, row, floor["test_entropy"], started)
                    if "error" not in row:
                        save_row(out, name, row, floor)
            if time.perf_counter() - started > deadline:
                cancelled = sum(future.cancel() for future in pending if not future.cancelled())
                if cancelled:
                    print(f"deadline: {cancelled} runs not started", flush=True)


def run_all(runs: list[Run], *, out: Path, device: str = "cpu", workers: int = 1, deadline: float = math.inf) -> None:
    """Train ``runs``, the longest first (``launch_order``), in ``workers`` processes of one thread each, or here
    for one worker on the CPU; store each row as soon as it arrives. No run starts after ``deadline`` seconds (the
    runs under way then finish)."""
    floor, started = oracle_entropies(), time.perf_counter()
    settings = {"out": out, "device": device, "deadline": deadline, "floor": floor, "started": started}
    if workers == 1 and torch.device(device).type == "cpu":
        _run_here(launch_order(runs), **settings)
    else:
        _run_pool(launch_order(runs), workers=workers, **settings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS_FILE, help="the JSON file to write (runs are added to it)")
    parser.add_argument("--only", nargs="*", help='names or shell patterns of the runs, e.g. "1x16 *" "* seed 0"')
    parser.add_argument("--missing", action="store_true", help="only the chosen runs that --out does not hold yet")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--workers", type=int, default=1, help="parallel training processes, one thread each")
    parser.add_argument("--deadline", type=float, help="start no run after this many seconds")
    parser.add_argument("--list", action="store_true", help="print the runs and the FLOP budgets; train nothing")
    args = parser.parse_args(argv)
    check_choice("device", torch.device(args.device).type, ("cpu", "cuda"))
    workers = check_int("workers", args.workers, minimum=1)
    deadline = math.inf if args.deadline is None else check_positive("deadline", args.deadline)
    runs = chosen_runs(args.only)
    if args.missing and args.out.is_file():
        runs = [run for run in runs if run.name not in load_results(args.out)["runs"]]
    if args.list:
        for k, group in isoflop_groups(runs).items():
            print(f"FLOP budget {k:2}: " + ", ".join(f"{r.n_layer}x{r.n_embd}@{r.steps}" for r in group))
        print(f"{len(runs)} runs, {sum(run.steps for run in runs):,} steps")
        return
    print(f"{len(runs)} runs, {sum(run.steps for run in runs):,} steps, {workers} workers on {args.device}", flush=True)
    start = time.perf_counter()
    run_all(runs, out=args.out, device=args.device, workers=workers, deadline=deadline)
    print(f"done in {time.perf_counter() - start:.0f} s", flush=True)
    if args.out.is_file():
        print(excess_table(load_results(args.out)))


if __name__ == "__main__":
    main()
