"""Language benchmarks: generator and oracle throughput; each model's perplexity against the oracle's.

Called by ``benchmarks/run.py`` (``--skip-language`` leaves it out). Training times are read from the
shipped checkpoints' ``config.json`` (measured when ``python -m course_utils.zoo --notebook 04`` made them);
``--retrain`` trains the FFNNs again here and times that instead.
"""

from __future__ import annotations

import json
import math
import time

GENERATED_TOKENS = 1_000_000
GENERATE_S = 10.0  # target: 1M tokens in <= 10 s
FFNN_RATIO = 1.25  # target: FFNN <= 1.25x the oracle's perplexity ...
FFNN_TRAIN_S = 180.0  # ... after <= 3 min of CPU training
BIGRAM_RATIO = 1.3  # target: bigram >= 1.3x the oracle's (structure beyond bigrams)


def bench_generator() -> dict:
    """Seconds to sample 1M tokens (``</s>`` counted) from the course language."""
    from course_utils.language.grammar import CourseLanguage

    lang = CourseLanguage(include_held_out=False)
    lang.sample_many(100, seed=0)  # warm the cache of expansions
    start, tokens, seed = time.perf_counter(), 0, 0
    while tokens < GENERATED_TOKENS:
        seed += 1
        tokens += sum(len(s.words) + 1 for s in lang.sample_many(1000, seed=seed))
    seconds = time.perf_counter() - start
    return {"tokens": tokens, "seconds": round(seconds, 2), "tokens_per_s": round(tokens / seconds)}


def bench_oracle() -> dict:
    """The oracle scoring the test split: tokens per second, and its entropy."""
    from course_utils.language import corpus
    from course_utils.language.grammar import CourseLanguage

    lang, test = CourseLanguage(include_held_out=False), corpus.load_split("test")
    start = time.perf_counter()
    entropy, tokens = corpus.oracle_entropy(lang, test)
    seconds = time.perf_counter() - start
    return {"tokens": tokens, "seconds": round(seconds, 2), "tokens_per_s": round(tokens / seconds),
            "entropy_nats": round(entropy, 4), "perplexity": round(math.exp(entropy), 3)}  # fmt: skip


def bench_models(retrain: bool = False) -> dict:
    """Test perplexity ÷ the oracle's for every notebook-04 LM, with its training (or counting) time."""
    import torch

    from course_utils.language import corpus
    from course_utils.models import lm
    from course_utils.zoo import lm_checkpoints as zoo
    from course_utils.zoo import load
    from course_utils.language.vocab import course_vocab
    from course_utils.language.grammar import CourseLanguage

    torch.set_num_threads(2)
    test, vocab = corpus.load_split("test"), course_vocab()
    oracle = math.exp(corpus.oracle_entropy(CourseLanguage(include_held_out=False), test)[0])
    rows = {}
    for order, name in ((1, "unigram"), (2, "bigram"), (3, "trigram")):
        start = time.perf_counter()
        model = zoo.ngram_models(orders=(order,))[name]
        rows[f"{name} (Kneser–Ney)"] = {"seconds": round(time.perf_counter() - start, 1), "how": "counting"}
        rows[f"{name} (Kneser–Ney)"]["ratio"] = round(lm.evaluate(model, vocab, test).perplexity / oracle, 3)
    for n in (2, 3, 5):
        name = f"ffnn_n{n}"
        if retrain:
            start = time.perf_counter()
            model, _ = zoo.train_model(name, progress=False)
            seconds, how = time.perf_counter() - start, "trained by this run"
        else:
            model = load(name)
            config = json.loads((zoo.CHECKPOINT_DIR / name / "config.json").read_text(encoding="utf-8"))
            seconds, how = config["train_seconds"], "checkpoint build"
        ratio = lm.evaluate(model, vocab, test).perplexity / oracle
        rows[f"FFNN N={n}"] = {"seconds": round(seconds, 1), "how": how, "ratio": round(ratio, 3)}
    return {"oracle_perplexity": round(oracle, 3), "models": rows}


def target_rows(results: dict) -> list[tuple[str, str, bool | None]]:
    """(target, measured, ok) for the language benchmarks."""
    rows = []
    gen = results.get("generator")
    if gen:
        rows.append((f"1M tokens generated in ≤ {GENERATE_S:g} s", f"{gen['seconds']} s", gen["seconds"] <= GENERATE_S))
    models = results.get("models", {}).get("models", {})
    if "FFNN N=5" in models:
        best = models["FFNN N=5"]
        ok = best["ratio"] <= FFNN_RATIO and best["seconds"] <= FFNN_TRAIN_S
        rows.append((f"FFNN ≤ {FFNN_RATIO}× oracle perplexity after ≤ {FFNN_TRAIN_S / 60:g} min",
                     f"{best['ratio']}× after {best['seconds']} s", ok))  # fmt: skip
    if "bigram (Kneser–Ney)" in models:
        ratio = models["bigram (Kneser–Ney)"]["ratio"]
        rows.append((f"bigram ≥ {BIGRAM_RATIO}× oracle perplexity", f"{ratio}×", ratio >= BIGRAM_RATIO))
    return rows


def markdown(results: dict) -> list[str]:
    """The language section of BENCHMARKS.md."""
    gen, oracle, models = results.get("generator"), results.get("oracle"), results.get("models")
    lines = ["## Course language and notebook 04's models", ""]
    if gen:
        lines.append(f"- Generator: {gen['tokens']:,} tokens in {gen['seconds']} s ({gen['tokens_per_s']:,} tokens/s).")
    if oracle:
        lines.append(f"- Oracle scoring the test split: {oracle['tokens']:,} tokens in {oracle['seconds']} s "
                     f"({oracle['tokens_per_s']:,} tokens/s); entropy {oracle['entropy_nats']} nats/token, "
                     f"perplexity {oracle['perplexity']}.")  # fmt: skip
    if models:
        lines += ["", f"Test perplexity ÷ the oracle's ({models['oracle_perplexity']}):", "",
                  "| model | perplexity ÷ oracle | time | how |", "|---|---|---|---|"]  # fmt: skip
        for name, row in models["models"].items():
            lines.append(f"| {name} | {row['ratio']} | {row['seconds']} s | {row['how']} |")
    lines.append("")
    return lines


def run(retrain: bool = False) -> dict:
    """All language benchmarks."""
    results = {}
    for key, bench in (("generator", bench_generator), ("oracle", bench_oracle)):
        print(f"[bench] {key} ...", flush=True)
        results[key] = bench()
        print(f"[bench]   {results[key]}", flush=True)
    print("[bench] language models ...", flush=True)
    results["models"] = bench_models(retrain)
    print(f"[bench]   {results['models']}", flush=True)
    return results
