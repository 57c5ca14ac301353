"""Translation benchmarks (notebook 07): training time to target, the length table, AER, the passive,
the bottleneck, training-step time and decoding speed.

Called by ``benchmarks/run.py`` (``--skip-language`` leaves it out). Alone,
``python benchmarks/translation_bench.py [--retrain]`` measures and rewrites only its own section of
BENCHMARKS.md. Training times come from the shipped checkpoints' ``config.json``; ``--retrain`` trains the
additive and dot models again here with an evaluation every 250 steps, and reports when each first
translated ≥ 95% of 300 validation passages exactly.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_EXACT, TARGET_BLEU, TARGET_AER, TARGET_TRAIN_S = 0.95, 95.0, 0.10, 180.0
LABELS = {"no attention": None, "additive": "additive", "dot": "dot", "general": "general"}
SECTION = "## Notebook 07: translation, without and with attention"


def _models():
    from course_utils.zoo import load
    from course_utils.zoo import translation_checkpoints as zoo

    return {label: load(zoo.model_name(kind, 128)) for label, kind in LABELS.items()}


def bench_time_to_target(retrain: bool) -> dict:
    """Seconds (and steps) until ≥ 95% exact match on 300 validation passages; else the checkpoints' times."""
    import torch

    from course_utils.language import parallel
    from course_utils.zoo import translation_checkpoints as zoo
    from course_utils.models.recurrent import seq2seq as s2s
    from course_utils.training import train

    rows = {}
    for label, kind in LABELS.items():
        config = zoo.checkpoint_config(zoo.model_name(kind, 128))
        rows[label] = {
            "recipe_seconds": config["train_seconds"],
            "threads": config["torch_threads"],
            "how": "checkpoint build",
        }
    if not retrain:
        return rows
    torch.set_num_threads(2)
    valid = parallel.load("valid")[:300]
    source_vocab, target_vocab = zoo.vocabularies()
    for label in ("additive", "dot"):
        name = zoo.model_name(LABELS[label], 128)
        torch.manual_seed(zoo.TRAINING["seed"])
        model = zoo.build_model(zoo.RECIPES[name])
        batches = s2s.batch_stream(parallel.load("train"), source_vocab, target_vocab,
                                   batch_size=zoo.TRAINING["batch_size"], seed=zoo.TRAINING["seed"])  # fmt: skip
        reached, start, spent_evaluating = None, time.perf_counter(), 0.0

        def evaluate():
            nonlocal reached, spent_evaluating
            began = time.perf_counter()
            exact = zoo.scores(model, valid)["exact_match"]
            spent_evaluating += time.perf_counter() - began
            if reached is None and exact >= TARGET_EXACT:
                reached = time.perf_counter() - start - spent_evaluating
            return 1 - exact

        history = train(model, batches, steps=zoo.TRAINING["steps"], lr=zoo.TRAINING["lr"], schedule="cosine",
                        clip_grad_norm=zoo.TRAINING["clip_grad_norm"], progress=False, evaluate=evaluate,
                        eval_every=250)  # fmt: skip
        steps = next((s for s, e in zip(history.eval_steps, history.eval_losses) if e <= 1 - TARGET_EXACT), None)
        rows[label].update(recipe_seconds=round(time.perf_counter() - start - spent_evaluating, 1), threads=2,
                           how="trained by this run", target_seconds=None if reached is None else round(reached, 1),
                           target_steps=steps)  # fmt: skip
    return rows


def bench_quality() -> dict:
    """The length table, AER, voices, unseen combinations and the bottleneck, on the shipped models."""
    import torch

    from course_utils.language import parallel
    from course_utils.analysis import translation_analysis as analysis
    from course_utils.zoo import load
    from course_utils.zoo import translation_checkpoints as zoo

    torch.set_num_threads(2)
    models = _models()
    test = parallel.load("test")
    table = analysis.length_table(models)
    unseen = parallel.load("test_unseen")
    bottleneck = {label: {str(h): round(zoo.scores(load(zoo.model_name(kind, h)), test)["exact_match"], 4)
                          for h in zoo.HIDDEN_SIZES} for label, kind in (("no attention", None), ("dot", "dot"))}  # fmt: skip
    return {
        "lengths": {label: {b: {k: round(v, 4) for k, v in s.items()} for b, s in row.items()} for label, row in table.items()},
        "aer": {label: round(analysis.attention_aer(models[label], test), 4) for label in ("additive", "dot", "general")},
        "voices": {label: {v: round(x, 4) for v, x in row.items()} for label, row in analysis.voice_table(models).items()},
        "unseen": {label: round(zoo.scores(model, unseen)["exact_match"], 4) for label, model in models.items()},
        "bottleneck": bottleneck,
    }  # fmt: skip


def bench_cost() -> dict:
    """Median training-step time (batch 64) and greedy decoding tokens/s, 2 threads."""
    import torch

    from course_utils.language import parallel
    from course_utils.analysis import translation_analysis as analysis
    from course_utils.zoo import load
    from course_utils.zoo import translation_checkpoints as zoo

    torch.set_num_threads(2)
    test = parallel.load("test")[:1024]
    rows = {}
    for label, kind in LABELS.items():
        model = load(zoo.model_name(kind, 128))
        step = analysis.train_step_seconds(load(zoo.model_name(kind, 128)), steps=20)
        rows[label] = {"step_ms": round(1000 * step, 1), "tokens_per_s": round(analysis.decoding_speed(model, test))}
    return rows


def target_rows(results: dict) -> list[tuple[str, str, bool | None]]:
    """(target, measured, ok) for notebook 07's models."""
    quality = results.get("quality")
    if not quality:
        return []
    best = quality["lengths"]["additive"]
    within = list(best)[:3]
    exact, bleu = min(best[b]["exact_match"] for b in within), min(best[b]["bleu"] for b in within)
    seconds = results.get("training", {}).get("additive", {}).get("recipe_seconds")
    return [
        (f"best attention model (additive): exact match ≥ {TARGET_EXACT:.0%} and BLEU ≥ {TARGET_BLEU:g} within the "
         "training lengths", f"worst bucket {exact:.1%}, {bleu:.1f}", exact >= TARGET_EXACT and bleu >= TARGET_BLEU),
        (f"its AER ≤ {TARGET_AER}", f"{quality['aer']['additive']:.3f}", quality["aer"]["additive"] <= TARGET_AER),
        (f"trained in ≤ {TARGET_TRAIN_S / 60:g} min", f"{seconds} s", None if seconds is None else seconds <= TARGET_TRAIN_S),
    ]  # fmt: skip


def markdown(results: dict) -> list[str]:
    """The notebook 07 section of BENCHMARKS.md."""
    lines = [SECTION, ""]
    quality, training, cost = results.get("quality"), results.get("training"), results.get("cost")
    if quality:
        buckets = list(next(iter(quality["lengths"].values())))
        lines += ["Exact match / BLEU by source length (test split in three buckets within the training lengths ≤ 14, "
                  "then 300 passages per longer bucket):", "",
                  "| model | " + " | ".join(buckets) + " |", "|---|" + "---:|" * len(buckets)]  # fmt: skip
        for label, row in quality["lengths"].items():
            lines.append(
                f"| {label} | "
                + " | ".join(f"{row[b]['exact_match']:.1%} / {row[b]['bleu']:.1f}" for b in buckets)
                + " |"
            )
        lines += [
            "",
            "| model | AER (test, argmax) | active | passive | unseen combinations |",
            "|---|---:|---:|---:|---:|",
        ]
        for label in quality["voices"]:
            aer = f"{quality['aer'][label]:.3f}" if label in quality["aer"] else "—"
            voices = quality["voices"][label]
            lines.append(
                f"| {label} | {aer} | {voices['active']:.1%} | {voices['passive']:.1%} | {quality['unseen'][label]:.1%} |"
            )
        sizes = list(next(iter(quality["bottleneck"].values())))
        lines += ["", "The bottleneck: exact match on the test split against the hidden size:", "",
                  "| model | " + " | ".join(f"H = {h}" for h in sizes) + " |", "|---|" + "---:|" * len(sizes)]  # fmt: skip
        for label, row in quality["bottleneck"].items():
            lines.append(f"| {label} | " + " | ".join(f"{row[h]:.1%}" for h in sizes) + " |")
    if training or cost:
        lines += ["", "| model | recipe (2,000 steps) | to ≥ 95% exact match (300 valid) | training step (batch 64) | "
                  "greedy decoding |", "|---|---:|---:|---:|---:|"]  # fmt: skip
        for label in LABELS:
            t, c = (training or {}).get(label, {}), (cost or {}).get(label, {})
            target = f"{t['target_seconds']} s ({t['target_steps']} steps)" if t.get("target_seconds") else "—"
            recipe = f"{t.get('recipe_seconds')} s ({t.get('threads')} thr., {t.get('how')})" if t else "—"
            lines.append(
                f"| {label} | {recipe} | {target} | {c.get('step_ms', '—')} ms | {c.get('tokens_per_s', 0):,} tokens/s |"
            )
    rows = target_rows(results)
    if rows:
        lines += ["", "| target | measured | status |", "|---|---:|---|"]
        lines += [
            f"| {t} | {m} | {'not measured' if ok is None else ('PASS' if ok else 'FAIL')} |" for t, m, ok in rows
        ]
    return lines + [""]


def run(retrain: bool = False) -> dict:
    """All translation benchmarks."""
    results = {}
    for key, bench in (
        ("quality", bench_quality),
        ("cost", bench_cost),
        ("training", lambda: bench_time_to_target(retrain)),
    ):
        print(f"[bench] translation {key} ...", flush=True)
        results[key] = bench()
        print(f"[bench]   {results[key]}", flush=True)
    return results


def write_section(path: Path, lines: list[str], heading: str = SECTION) -> None:
    """Replace the section that starts with ``heading`` (this script's by default) in ``path``,
    or put it before "## Targets", else at the end."""
    text = path.read_text(encoding="utf-8")
    block = "\n".join(lines) + "\n"
    pattern = re.compile(re.escape(heading) + r".*?(?=^## |^<!-- |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    elif "\n## Targets" in text:
        text = text.replace("\n## Targets", "\n" + block + "\n## Targets", 1)
    else:
        text += "\n" + block
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    results = run(retrain="--retrain" in sys.argv)
    write_section(ROOT / "BENCHMARKS.md", markdown(results))
    print("[bench] wrote the notebook 07 section of BENCHMARKS.md")
