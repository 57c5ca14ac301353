"""Self-attention against recurrence (notebook 08): Vaswani et al. (2017) Table 1, counted and measured.

One layer of each kind against the sequence length n (causal self-attention through the fused SDPA
kernel with its Q, K, V and output projections; the fused ``nn.LSTM``; the same LSTM stepped through
``nn.LSTMCell`` in a Python loop), the multiply-adds Table 1 counts, and training tokens per second of
notebook 06's LSTM LM against notebook 08's GPT on course-language batches. One CPU thread throughout.

Called by ``benchmarks/run.py`` as ``transformer_bench.run()`` / ``markdown()`` / ``target_rows()``.
Alone, ``python benchmarks/transformer_bench.py`` prints the section (about 30 s on an idle machine);
``--write`` also replaces its section of BENCHMARKS.md.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Notebook 08: self-attention against recurrence (Vaswani et al. Table 1)"
LENGTHS = (16, 32, 64, 128, 256, 512, 1024)
WIDTHS = (64, 128)  # d; the flop table uses the last
BATCH, REPEATS, THREADS = 8, 7, 1
TRAIN_STEPS, TRAIN_BATCH = 20, 64
ATTENTIONS = ("eager", "sdpa")  # the GPT's attention kernels: the notebook's, and the fused one


def bench_layers() -> dict:
    """Forward milliseconds of one layer of each kind against n, for each width d; the measured crossover."""
    from course_utils.analysis import attention_cost as cost

    tables = {}
    for d in WIDTHS:
        rows = cost.time_layers(LENGTHS, d, batch=BATCH, repeats=REPEATS, threads=THREADS)
        tables[str(d)] = {
            "ms": {
                str(r["n"]): {k: round(1000 * r[f"{k}_s"], 4) for k in ("attention", "lstm", "lstm_cell")} for r in rows
            },
            "crossover": cost.measured_crossover(rows),
            "flop_crossover": cost.layer_flops(1, d)["crossover_n"],
        }
    return {"batch": BATCH, "repeats": REPEATS, "threads": THREADS, "lengths": list(LENGTHS), "widths": tables}


def bench_flops() -> dict:
    """Table 1 with the constants: multiply-adds of one layer on one sequence, width ``WIDTHS[-1]``."""
    from course_utils.analysis.attention_cost import layer_flops

    return {"d": WIDTHS[-1], "rows": {str(n): layer_flops(n, WIDTHS[-1]) for n in LENGTHS}}


def bench_training() -> dict:
    """Training tokens per second of the LSTM LM and the GPT (each attention kernel) on the same batches."""
    from course_utils.analysis import attention_cost as cost
    from course_utils.models import lm
    from course_utils.language.vocab import course_vocab, train_ids

    vocab = course_vocab()
    models = cost.comparison_models(vocab, attentions=ATTENTIONS)
    batches = lm.batch_stream(train_ids(), vocab, batch_size=TRAIN_BATCH, seed=0)
    speed = cost.training_throughput(models, batches, steps=TRAIN_STEPS, threads=THREADS)
    return {"steps": TRAIN_STEPS, "batch": TRAIN_BATCH, "threads": THREADS,
            "rows": {label: {"parameters": cost.parameter_count(model), "tokens_per_s": round(speed[label])}
                     for label, model in models.items()}}  # fmt: skip


def _ms(value: float) -> str:
    """Milliseconds to three significant figures (timings under load are no more precise than that)."""
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def _ratio(table: dict, kind: str, long: int, short: int) -> float:
    """How many times longer layer ``kind`` took at n = ``long`` than at n = ``short``."""
    return table["ms"][str(long)][kind] / table["ms"][str(short)][kind]


def target_rows(results: dict) -> list[tuple[str, str, bool | None]]:
    """(claim, measured, ok) for the layer timings and the training speed."""
    rows = []
    layers = results.get("layers")
    if layers:
        long, short = layers["lengths"][-1], layers["lengths"][-3]  # 1024 and 256: n × 4
        for d, table in layers["widths"].items():
            attention, lstm = _ratio(table, "attention", long, short), _ratio(table, "lstm", long, short)
            loop = min(row["lstm_cell"] / row["lstm"] for row in table["ms"].values())
            at_long = table["ms"][str(long)]
            rows += [
                (f"d = {d}: self-attention's time grows faster than n (×{long // short} n → > ×{long // short} time, "
                 f"n = {short} → {long})", f"×{attention:.1f}", attention > long / short),
                (f"d = {d}: nn.LSTM's time grows slower than self-attention's (n = {short} → {long})",
                 f"×{lstm:.1f} vs ×{attention:.1f}", lstm < attention),
                (f"d = {d}: the LSTMCell loop is slower than the fused nn.LSTM at every n", f"≥ ×{loop:.1f}", loop > 1),
                (f"d = {d}: self-attention is slower than nn.LSTM at n = {long} (n > 2d: its n²·d term dominates)",
                 f"{_ms(at_long['attention'])} ms vs {_ms(at_long['lstm'])} ms", at_long["attention"] > at_long["lstm"]),
            ]  # fmt: skip
    training = results.get("training")
    if training:
        lstm = training["rows"]["LSTM LM"]["tokens_per_s"]
        best = max(row["tokens_per_s"] for label, row in training["rows"].items() if label.startswith("GPT"))
        rows.append(("one CPU thread, course sentences: the LSTM LM trains more tokens/s than the GPT of similar size "
                     "(attention's parallelism needs parallel hardware)", f"{lstm:,} vs {best:,} tokens/s", lstm > best))  # fmt: skip
    return rows


def markdown(results: dict) -> list[str]:
    """The notebook 08 cost section of BENCHMARKS.md."""
    lines = [SECTION, ""]
    layers, flops, training = results.get("layers"), results.get("flops"), results.get("training")
    if layers:
        lines += [f"Forward time of one layer, milliseconds (median of {layers['repeats']}, batch {layers['batch']}, "
                  f"{layers['threads']} thread, no autograd). Attention: causal, 4 heads, fused SDPA with the Q, K, V "
                  "and output projections. LSTMCell loop: the same LSTM weights, one Python step per token.", ""]  # fmt: skip
        for d, table in layers["widths"].items():
            lines += [f"d = {d}: attention overtakes nn.LSTM from n = {table['crossover'] or '— (not within these n)'} "
                      f"measured; at n = {table['flop_crossover']} = 2d by the counts below.", "",
                      "| n | attention | nn.LSTM | LSTMCell loop | attention ÷ nn.LSTM | loop ÷ nn.LSTM |",
                      "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
            for n, ms in table["ms"].items():
                lines.append(f"| {n} | {_ms(ms['attention'])} | {_ms(ms['lstm'])} | {_ms(ms['lstm_cell'])} | "
                             f"{ms['attention'] / ms['lstm']:.2f} | {ms['lstm_cell'] / ms['lstm']:.1f} |")  # fmt: skip
            lines.append("")
    if flops:
        d = flops["d"]
        lines += [f"Multiply-adds of one layer on one sequence, d = {d} (matrix products only): attention 4nd² "
                  "(projections) + n²d (QKᵀ) + n²d (AV); LSTM 8nd² (4 gates × input and recurrent). Sequential steps: "
                  "attention 1, LSTM n.", "",
                  "| n | attention (M) | of which n²·d terms (M) | LSTM (M) | attention ÷ LSTM, counted | "
                  "attention ÷ nn.LSTM, timed | sequential steps (attention / LSTM) |",
                  "|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
        timed = (layers or {}).get("widths", {}).get(str(d), {}).get("ms", {})
        for n, row in flops["rows"].items():
            ms = timed.get(n)
            ratio = f"{ms['attention'] / ms['lstm']:.2f}" if ms else "—"
            quadratic = row["attention_scores"] + row["attention_mix"]
            lines.append(f"| {n} | {row['attention'] / 1e6:.2f} | {quadratic / 1e6:.2f} | {row['lstm'] / 1e6:.2f} | "
                         f"{row['attention'] / row['lstm']:.2f} | {ratio} | {row['attention_steps']} / {row['lstm_steps']} |")  # fmt: skip
        lines.append("")
    if training:
        lines += [f"Training tokens per second (forward, backward, AdamW; {training['steps']} course-language batches of "
                  f"{training['batch']} sentences, the same for every model; predicted tokens, padding not counted; "
                  f"{training['threads']} thread):", "", "| model | parameters | tokens/s |", "|---|---:|---:|"]  # fmt: skip
        for label, row in training["rows"].items():
            lines.append(f"| {label} | {row['parameters']:,} | {row['tokens_per_s']:,} |")
        lines.append("")
    rows = target_rows(results)
    if rows:
        lines += ["| claim | measured | status |", "|---|---:|---|"]
        lines += [
            f"| {t} | {m} | {'not measured' if ok is None else ('PASS' if ok else 'FAIL')} |" for t, m, ok in rows
        ]
    return lines + [""]


def run() -> dict:
    """All notebook 08 cost benchmarks."""
    results = {}
    for key, bench in (("layers", bench_layers), ("flops", bench_flops), ("training", bench_training)):
        print(f"[bench] transformer {key} ...", flush=True)
        results[key] = bench()
        print(f"[bench]   {results[key] if key != 'flops' else 'counted'}", flush=True)
    return results


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    start = time.perf_counter()
    results = run()
    section = markdown(results)
    print("\n".join(section))
    print(f"[bench] transformer section measured in {time.perf_counter() - start:.0f} s")
    if "--write" in sys.argv:
        from translation_bench import write_section  # benchmarks/translation_bench.py

        write_section(ROOT / "BENCHMARKS.md", section, SECTION)
        print("[bench] wrote the notebook 08 cost section of BENCHMARKS.md")
