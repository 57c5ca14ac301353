"""Generation strategies (notebook 10, issue 13): our loops against ``generate()``, the KV cache, and every
strategy judged by the oracle.

Measured by hand, like ``bert_bench.py``'s section, and not called by ``benchmarks/run.py``:

    OMP_NUM_THREADS=1 python benchmarks/generation_bench.py            # measure, print the section
    OMP_NUM_THREADS=1 python benchmarks/generation_bench.py --write    # … and replace its section of BENCHMARKS.md

It needs the shipped ``gpt_lm`` (``data/checkpoints/08/``). Raw numbers: ``benchmarks/results/generation_bench.json``.
One torch thread throughout; about a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bert_bench import machine, write  # noqa: E402  (one way of naming the machine and writing a section)
from course_utils.zoo.transformer_checkpoints import lm_checkpoint_config  # noqa: E402

SECTION = "## Notebook 10: generation strategies (issue 13)"
RESULTS = ROOT / "benchmarks" / "results" / "generation_bench.json"
NEW_TOKENS, REPEATS, WIDTHS = 40, 10, (4, 8)
LENGTHS = (8, 16, 32, 64, 120)


def bench_speed() -> dict:
    """Ours against ``generate()``: greedy and beam search (ratios), tokens/s with and without the KV cache."""
    import torch

    from course_utils.models import generation as g
    from course_utils.analysis import generation_timing as speed
    from course_utils.language.vocab import course_vocab
    from course_utils import zoo

    def _best_of(fn) -> float:
        return speed.best_time(fn, REPEATS)

    model, vocab = zoo.load("gpt_lm"), course_vocab()
    prefix = g.encode_prompt(vocab, ["the"])
    idx = torch.tensor([prefix])  # (1, T)
    hf = {"attention_mask": torch.ones_like(idx), "do_sample": False}
    rows = {}
    with torch.no_grad():
        for cache in (True, False):  # tokens/s: </s> forbidden in generate() so both make NEW_TOKENS tokens
            ours = _best_of(lambda: g.greedy(model, prefix, NEW_TOKENS, eos_id=len(vocab) + 1, use_cache=cache))
            theirs = _best_of(lambda: model.hf.generate(idx, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                                        use_cache=cache, **hf))  # fmt: skip
            rows[f"greedy, cache {'on' if cache else 'off'}"] = (ours, theirs)
        for width in WIDTHS:
            ours = _best_of(lambda: g.beam_search(model, prefix, width=width, max_new_tokens=NEW_TOKENS))
            theirs = _best_of(lambda: model.hf.generate(idx, num_beams=width, max_new_tokens=NEW_TOKENS, **hf))
            rows[f"beam {width}"] = (ours, theirs)
    per_token = speed.time_per_token(model, prefix, lengths=LENGTHS, repeats=REPEATS)
    return {"rows": {k: {"ours": a, "hf": b, "ratio": a / b} for k, (a, b) in rows.items()},
            "per_token": {str(n): {"cache": c, "no_cache": n_} for n, (c, n_) in per_token.items()}}  # fmt: skip


def bench_strategies() -> dict:
    """The notebook's strategy table: 40 prompts, 5 samples each per sampling strategy, and the oracle's row."""
    from course_utils.language.grammar import CourseLanguage
    from course_utils.analysis import generation_analysis as ga
    from course_utils.language.vocab import course_vocab
    from course_utils import zoo

    lang = CourseLanguage(include_held_out=False)
    reference = ga.language_reference(lang)
    rows = ga.strategy_table(zoo.load("gpt_lm"), course_vocab(), lang, ga.prompts_from_test(40), samples_per_prompt=5,
                             reference=reference)  # fmt: skip
    rows.append(ga.oracle_samples(lang, 2000, reference=reference))
    keep = ("name", "n", "grammatical", "nll_per_token", "perplexity", "distinct_1", "distinct_2", "distinct_3",
            "repetition", "mean_length", "length_tv", "seconds")  # fmt: skip
    return {"entropy_rate": reference["entropy_rate"], "stderr": reference["stderr"],
            "rows": [{k: row[k] for k in keep} for row in rows],
            "holtzman": ga.holtzman_comparison(rows)}  # fmt: skip


def markdown(results: dict) -> list[str]:
    m = results["machine"]
    shape = lm_checkpoint_config("gpt_lm")["model"]
    lines = [
        f"{SECTION}, {m['date']}",
        "",
        f"Measured by `OMP_NUM_THREADS=1 python benchmarks/generation_bench.py --write` on {m['cpu']} "
        f"({m['cores']} cores, shared; load average {m['load_1min']} at the start), torch {m['torch']} "
        f"({m['cpu_capability']}), 1 thread, in {results['total_seconds']:.0f} s. The shipped `gpt_lm` "
        f"({shape['n_layer']} layers × {shape['n_embd']}, notebook 08); prompt `<s> the`; best of {REPEATS}.",
        "",
        f"**Ours against `generate()`** ({NEW_TOKENS} new tokens; greedy with `</s>` forbidden so that both "
        "write all of them; target: ours within 1.5× of `generate()`):",
        "",
        "| decoding | ours (ms) | `generate()` (ms) | ours ÷ HF | ours, tokens/s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in results["speed"]["rows"].items():
        rate = f"{NEW_TOKENS / row['ours']:.0f}" if name.startswith("greedy") else "–"
        lines.append(f"| {name} | {1000 * row['ours']:.1f} | {1000 * row['hf']:.1f} | {row['ratio']:.2f} | {rate} |")
    lines += [
        "",
        "**The KV cache**: `generate()`'s time per generated token, against the number generated:",
        "",
        "| tokens | with cache (ms/token) | without (ms/token) | without ÷ with |",
        "|---:|---:|---:|---:|",
    ]
    for n, row in results["speed"]["per_token"].items():
        lines.append(f"| {n} | {1000 * row['cache']:.2f} | {1000 * row['no_cache']:.2f} | "
                     f"{row['no_cache'] / row['cache']:.2f} |")  # fmt: skip
    s = results["strategies"]
    lines += [
        "",
        f"**Every strategy judged by the oracle** (notebook 10 §7: 40 test prompts; greedy and beam one "
        f"sentence each, sampling 5 each; the language's entropy rate {s['entropy_rate']:.3f} ± "
        f"{s['stderr']:.3f} nats/token from 20,000 oracle samples):",
        "",
        "| strategy | n | grammatical | NLL/token | ppl | distinct-1/2/3 | repetition | mean length | length TV | s |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in s["rows"]:
        lines.append(f"| {r['name']} | {r['n']} | {100 * r['grammatical']:.1f} % | {r['nll_per_token']:.3f} | "
                     f"{r['perplexity']:.2f} | {r['distinct_1']:.2f} / {r['distinct_2']:.2f} / {r['distinct_3']:.2f} | "
                     f"{100 * r['repetition']:.1f} % | {r['mean_length']:.1f} | {r['length_tv']:.2f} | "
                     f"{r['seconds']:.2f} |")  # fmt: skip
    lines += [
        "",
        'Holtzman et al. (2020), Table 1, repetition, beside ours (the oracle\'s samples for "human"):',
        "",
        "| method | Holtzman et al. | ours |",
        "|---|---:|---:|",
    ]
    for method, theirs, ours in s["holtzman"]:
        lines.append(f"| {method} | {theirs:.2f} % | {ours:.1f} % |")
    lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    results = {"machine": machine()}
    began = time.perf_counter()
    for part, bench in (("speed", bench_speed), ("strategies", bench_strategies)):
        print(f"[bench] generation {part} ...", flush=True)
        results[part] = bench()
    results["total_seconds"] = round(time.perf_counter() - began, 1)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = markdown(results)
    print("\n".join(lines))
    if args.write:
        write(ROOT / "BENCHMARKS.md", lines, SECTION)
        print("[bench] wrote the notebook 10 section of BENCHMARKS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
