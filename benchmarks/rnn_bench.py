"""Recurrent-LM benchmarks (notebooks 05-06): perplexity ÷ the oracle's, agreement by distance, training
time, scratch against library speed, and time per sequence against length.

Called by ``benchmarks/run.py`` (``--skip-language`` leaves it out). Training times are read from the
shipped checkpoints' ``config.json`` (measured when ``python -m course_utils.zoo --notebook 05_06``
made them); ``--retrain`` trains the RNN, GRU and LSTM of the comparison again here and times that.
"""

from __future__ import annotations

import json
import math
import time

LSTM_RATIO = 1.10  # target: LSTM <= 1.10x the oracle's perplexity ...
LSTM_TRAIN_S = 180.0  # ... after <= 3 min of CPU training
LSTM_AGREEMENT_2 = 0.95  # target: LSTM agreement >= 95% with 2 attractors
MODELS = {"rnn_lm": "RNN", "gru_lm": "GRU", "lstm_lm": "LSTM", "lstm2_lm": "LSTM, 2 layers",
          "rnn_wide_lm": "RNN, hidden 256", "lstm_wide_lm": "LSTM, hidden 256"}  # fmt: skip
RETRAINED = ("rnn_lm", "gru_lm", "lstm_lm")
SPEED_BATCH, SPEED_LENGTH, SPEED_REPEATS = 64, 16, 5  # a training batch of sentence-length sequences
LENGTHS = (8, 16, 32, 64, 128)


def bench_models(retrain: bool = False) -> dict:
    """Each recurrent LM: test perplexity ÷ the oracle's, agreement accuracy by attractors, training time."""
    import torch

    from course_utils.language import corpus
    from course_utils.models import lm
    from course_utils.zoo import lm_checkpoints as zoo
    from course_utils.zoo import load
    from course_utils.language.vocab import course_vocab
    from course_utils.evaluation.agreement import accuracy_by_attractors, form_probs
    from course_utils.language.grammar import CourseLanguage

    torch.set_num_threads(2)
    test, vocab, items = corpus.load_split("test"), course_vocab(), corpus.load_eval("agreement")
    oracle = math.exp(corpus.oracle_entropy(CourseLanguage(include_held_out=False), test)[0])
    rows = {}
    for name, label in MODELS.items():
        if retrain and name in RETRAINED:
            start = time.perf_counter()
            model, _ = zoo.train_model(name, progress=False)
            seconds, how = time.perf_counter() - start, "trained by this run"
            model.eval()
        else:
            model = load(name)
            config = json.loads((zoo.checkpoint_dir(name) / "config.json").read_text(encoding="utf-8"))
            seconds, how = config["train_seconds"], "checkpoint build"
        ratio = lm.evaluate(model, vocab, test).perplexity / oracle
        agreement = accuracy_by_attractors(form_probs(model, vocab, items), items)
        rows[label] = {"name": name, "seconds": round(seconds, 1), "how": how, "ratio": round(ratio, 3),
                       "agreement": {str(k): round(v, 2) for k, v in agreement.items()}}  # fmt: skip
    return {"oracle_perplexity": round(oracle, 3), "models": rows}


def _training_tokens_per_s(model, idx) -> float:
    """Tokens per second of forward + backward on ``idx`` (B, T); the fastest of a few runs."""
    import torch

    targets = torch.roll(idx, -1, dims=1)  # (B, T): any targets do for timing
    model(idx, targets)[1].backward()  # warm-up
    best = math.inf
    for _ in range(SPEED_REPEATS):
        start = time.perf_counter()
        model(idx, targets)[1].backward()
        best = min(best, time.perf_counter() - start)
    return idx.numel() / best


def _inference_tokens_per_s(model, idx) -> float:
    import torch

    from course_utils.analysis.rnn_analysis import time_per_sequence

    with torch.no_grad():
        seconds = time_per_sequence(model, [idx.shape[1]], batch_size=idx.shape[0], repeats=SPEED_REPEATS)
    return idx.shape[1] / seconds[idx.shape[1]]


def bench_speed() -> dict:
    """Scratch loop against the library's fused RNN/LSTM: tokens per second, training and inference."""
    import torch

    from course_utils.models.recurrent.recurrent_lm import RecurrentLM

    torch.set_num_threads(2)
    idx = torch.randint(600, (SPEED_BATCH, SPEED_LENGTH), generator=torch.Generator().manual_seed(0))  # (B, T)
    rows = {}
    for cell in ("rnn", "lstm"):
        for impl in ("scratch", "library"):
            model = RecurrentLM(610, cell=cell, impl=impl, embed_dim=64, hidden_dim=128, seed=0)
            rows[f"{cell.upper()} {impl}"] = {"train_tokens_per_s": round(_training_tokens_per_s(model, idx)),
                                              "forward_tokens_per_s": round(_inference_tokens_per_s(model, idx))}  # fmt: skip
    return {"batch": SPEED_BATCH, "length": SPEED_LENGTH, "rows": rows}


def bench_lengths() -> dict:
    """Milliseconds per sequence of one forward pass against its length: the recurrence is sequential."""
    import torch

    from course_utils.models.recurrent.recurrent_lm import RecurrentLM
    from course_utils.analysis.rnn_analysis import time_per_sequence

    torch.set_num_threads(2)
    rows = {}
    for cell in ("rnn", "lstm"):
        model = RecurrentLM(610, cell=cell, embed_dim=64, hidden_dim=128, max_len=max(LENGTHS), seed=0)
        times = time_per_sequence(model, LENGTHS, batch_size=16, repeats=SPEED_REPEATS)
        rows[cell.upper()] = {str(n): round(1000 * s, 3) for n, s in times.items()}
    return {"lengths": list(LENGTHS), "ms_per_sequence": rows}


def target_rows(results: dict) -> list[tuple[str, str, bool | None]]:
    """(target, measured, ok) for the recurrent benchmarks."""
    lstm = results.get("models", {}).get("models", {}).get("LSTM")
    if not lstm:
        return []
    ok = lstm["ratio"] <= LSTM_RATIO and lstm["seconds"] <= LSTM_TRAIN_S
    two = lstm["agreement"]["2"]
    return [(f"LSTM ≤ {LSTM_RATIO}× oracle perplexity after ≤ {LSTM_TRAIN_S / 60:g} min",
             f"{lstm['ratio']}× after {lstm['seconds']} s", ok),
            (f"LSTM agreement ≥ {LSTM_AGREEMENT_2:.0%} with 2 attractors", f"{two:.0%}", two >= LSTM_AGREEMENT_2)]  # fmt: skip


def markdown(results: dict) -> list[str]:
    """The recurrent section of BENCHMARKS.md."""
    lines = ["## Notebooks 05-06: recurrent language models", ""]
    models = results.get("models")
    if models:
        counts = list(next(iter(models["models"].values()))["agreement"])
        lines += [f"Test perplexity ÷ the oracle's ({models['oracle_perplexity']}) and agreement accuracy by number of "
                  "attractors (100 items each):", "",
                  "| model | perplexity ÷ oracle | " + " | ".join(f"{k} attr." for k in counts) + " | training | how |",
                  "|---|---|" + "---|" * len(counts) + "---|---|"]  # fmt: skip
        for label, row in models["models"].items():
            accuracies = " | ".join(f"{row['agreement'][k]:.2f}" for k in counts)
            lines.append(f"| {label} | {row['ratio']} | {accuracies} | {row['seconds']} s | {row['how']} |")
        lines.append("")
    speed = results.get("speed")
    if speed:
        lines += [f"Scratch loop against the library (batch {speed['batch']}, length {speed['length']}, hidden 128), "
                  "tokens per second:", "", "| model | training (forward + backward) | forward only |", "|---|---:|---:|"]  # fmt: skip
        for label, row in speed["rows"].items():
            lines.append(f"| {label} | {row['train_tokens_per_s']:,} | {row['forward_tokens_per_s']:,} |")
        lines.append("")
    lengths = results.get("lengths")
    if lengths:
        lines += ["Forward pass, milliseconds per sequence (batch 16) against length:", "",
                  "| model | " + " | ".join(str(n) for n in lengths["lengths"]) + " |",
                  "|---|" + "---:|" * len(lengths["lengths"])]  # fmt: skip
        for label, row in lengths["ms_per_sequence"].items():
            lines.append(f"| {label} | " + " | ".join(str(row[str(n)]) for n in lengths["lengths"]) + " |")
        lines.append("")
    return lines


def run(retrain: bool = False) -> dict:
    """All recurrent benchmarks."""
    results = {}
    for key, bench in (("speed", bench_speed), ("lengths", bench_lengths), ("models", lambda: bench_models(retrain))):
        print(f"[bench] recurrent {key} ...", flush=True)
        results[key] = bench()
        print(f"[bench]   {results[key]}", flush=True)
    return results
