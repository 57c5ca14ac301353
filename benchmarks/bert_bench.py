"""BERT on the course language (notebook 09, issue 12): pretraining time against masked NLL ÷ oracle, fine-tuning
accuracy beside notebooks 04 and 06, the layer table beside Devlin et al. Table 7, and the masked-word table.

Measured by hand, like ``translation_bench.py``'s section, and not called by ``benchmarks/run.py``:

    OMP_NUM_THREADS=1 python benchmarks/bert_bench.py            # measure, print the section
    OMP_NUM_THREADS=1 python benchmarks/bert_bench.py --write    # … and replace its section of BENCHMARKS.md
    python benchmarks/bert_bench.py --only finetuning,layers     # only those parts; the others from the last JSON

It needs the shipped checkpoints of ``data/checkpoints/09/`` (``python -m course_utils.zoo --notebook 09``)
and notebooks 04–06's. The section goes among the hand-measured sections below run.py's marker, which run.py
keeps. Raw numbers: ``benchmarks/results/bert_bench.json``. One torch thread throughout; pretraining ``bert_mlm``
again (4,000 steps) is most of the run, about 3–4 minutes of one core.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from translation_bench import write_section  # noqa: E402  (one way of replacing a section, shared)

SECTION = "## Notebook 09: BERT on the course language (issue 12)"
DATE = "2026-11-24"
MARKER = "<!-- Below: sections measured by other scripts"  # run.py's KEPT_MARKER starts so
RESULTS = ROOT / "benchmarks" / "results" / "bert_bench.json"
THREADS = 1
CURVE_ITEMS, CLOZE_ITEMS, EVAL_EVERY = 400, 500, 1000
PARTS = ("pretraining", "finetuning", "layers", "cloze")

# Probes measured by the lead on the same day, one busy core, 400 test items (not re-run here).
PROBES = [
    ("token masking (the library's collator), 2×64, lr 2·10⁻³", 2000, None, 1.67),
    ("whole-word masking, 2×64, lr 2·10⁻³", 2000, None, 1.65),
    ("+ length-bucketed batches, lr 2·10⁻³", 4000, 195, 1.41),
    ("+ length-bucketed batches, lr 4·10⁻³ (the recipe)", 4000, 180, 1.30),
    ("+ length-bucketed batches, lr 6·10⁻³", 4000, None, 1.52),
    ("4×64, lr 4·10⁻³", 2200, 170, 1.52),
]


def machine() -> dict:
    """CPU model, cores, torch and the threads it runs on, load at the start."""
    import torch

    from run import cpu_model  # benchmarks/run.py: one way of naming the machine

    cpu = cpu_model()
    capability = None
    with contextlib.suppress(Exception):
        capability = torch.backends.cpu.get_cpu_capability()
    return {"cpu": cpu, "cores": os.cpu_count(), "torch": torch.__version__, "cpu_capability": capability,
            "threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(), "load_1min": round(os.getloadavg()[0], 2), "date": DATE}  # fmt: skip


def _shared():
    """The tokenizer, the exact language, the candidate words."""
    from course_utils.language.grammar import CourseLanguage
    from course_utils.zoo import load

    lang = CourseLanguage(include_held_out=False)
    return load("tokenizer"), lang, sorted(lang.vocabulary)


def _ratios(nlls: list[float], oracle: list[float], one_piece: list[int]) -> dict:
    from course_utils.models.bert import bert_mlm as bm

    return {"ratio": round(bm.nll_ratio(nlls, oracle), 4),
            "one_piece_ratio": round(bm.nll_ratio([nlls[i] for i in one_piece], [oracle[i] for i in one_piece]), 4)}  # fmt: skip


def bench_pretraining() -> dict:
    """``bert_mlm``'s recipe trained again (its cosine over 4,000 steps), scored every 1,000 steps; the checkpoints' records."""
    from course_utils.language import corpus
    from course_utils.zoo import bert_checkpoints as bzoo
    from course_utils.zoo import load
    from course_utils.models.bert import bert_mlm as bm
    from course_utils.training import train

    tok, lang, words = _shared()
    items = bm.masked_items(corpus.load_split("test"), CURVE_ITEMS, seed=1)
    oracle = bm.oracle_scores(lang, items, tok)[0]
    one_piece = [i for i, item in enumerate(items) if bm.piece_count(tok, item["words"][item["position"]]) == 1]

    recipe = bzoo.RECIPES["bert_mlm"]
    config = bm.bert_config(tok, **{k: recipe[k] for k in ("layers", "hidden", "heads", "max_len")})
    model = bm.CourseBERT(config, seed=recipe["seed"])
    batches = bm.whole_word_batches(
        corpus.load_split(recipe["data"]), tok, batch_size=recipe["batch_size"], seed=recipe["seed"]
    )
    points, spent, start = [], 0.0, time.perf_counter()

    def evaluate() -> float:
        nonlocal spent
        began = time.perf_counter()
        nlls = bm.bert_scores(bm.WordScorer(model, tok, words), items)[0]
        row = {"steps": min(EVAL_EVERY * (len(points) + 1), recipe["steps"]),
               "seconds": round(began - start - spent, 1), **_ratios(nlls, oracle, one_piece),
               "mean_nll": round(sum(nlls) / len(nlls), 4)}  # fmt: skip
        spent += time.perf_counter() - began
        row["eval_seconds"] = round(time.perf_counter() - began, 1)
        points.append(row)
        print(f"[bench]   {row}", flush=True)
        return row["ratio"]

    history = train(model, batches, steps=recipe["steps"], lr=recipe["lr"], schedule="cosine",
                    clip_grad_norm=recipe["clip_grad_norm"], progress=False, evaluate=evaluate,
                    eval_every=EVAL_EVERY)  # fmt: skip
    for row in points:  # the training loss near each point (mean of the 50 steps before it)
        losses = [loss for step, loss in zip(history.steps, history.losses) if row["steps"] - 50 < step <= row["steps"]]
        row["train_loss"] = round(sum(losses) / len(losses), 4)

    shipped = {}
    for name in bzoo.MASKED_LMS:
        record = bzoo.training_record(name)
        nlls = bm.bert_scores(bm.WordScorer(load(name), tok, words), items)[0]
        shipped[name] = {"recipe": record["recipe"], "train_seconds": record["train_seconds"],
                         "torch_threads": record.get("torch_threads"), "final_train_loss": record.get("final_train_loss"),
                         "valid_masked_ratio": record.get("valid_masked_ratio"),
                         "reviews_valid_masked_ratio": record.get("reviews_valid_masked_ratio"),
                         "test": _ratios(nlls, oracle, one_piece)}  # fmt: skip
    return {"recipe": recipe, "items": CURVE_ITEMS, "one_piece_items": len(one_piece),
            "oracle_mean_nll": round(sum(oracle) / len(oracle), 4), "curve": points,
            "train_seconds": round(time.perf_counter() - start - spent, 1), "shipped": shipped,
            "probes": [{"probe": p, "steps": s, "seconds": t, "ratio": r} for p, s, t, r in PROBES]}  # fmt: skip


def bench_finetuning() -> dict:
    """Test-review accuracy (all / plain / but-not) of the BERT classifiers and of notebooks 04 and 06's."""
    import torch

    from course_utils.language import corpus
    from course_utils.zoo import bert_checkpoints as bzoo
    from course_utils.zoo import lm_checkpoints as zoo
    from course_utils.zoo import load
    from course_utils.models.bert.bert_finetuning import review_accuracy, turns

    tok = load("tokenizer")
    reviews = corpus.load_eval("reviews_test")
    turning = turns(reviews)

    @torch.no_grad()
    def earlier_accuracy(name: str) -> tuple[float, float, float]:  # notebook 06's review_accuracy
        x, labels = zoo.review_tensors("test", zoo.ALL_RECIPES[name][0])
        right = load(name)(x)[0].argmax(-1) == labels
        return (
            right.double().mean().item(),
            right[~turning].double().mean().item(),
            right[turning].double().mean().item(),
        )

    rows = {}
    for label, name in (("hand features (04)", "sentiment_features"), ("bag of embeddings (04)", "sentiment_embeddings"),
                        ("bag, FFNN-LM embeddings (04)", "sentiment_pretrained"), ("ELMo mix, frozen (06)", "elmo_sentiment")):  # fmt: skip
        rows[label] = {"checkpoint": name, "accuracy": [round(a, 4) for a in earlier_accuracy(name)]}
    for label, name in (
        ("BERT, no pretraining", "bert_sentiment_scratch"),
        ("BERT, pretrained + LM + task fine-tuning", "bert_sentiment"),
    ):
        record = bzoo.training_record(name)
        accuracy = review_accuracy(load(name), tok, reviews)
        rows[label] = {"checkpoint": name, "accuracy": [round(a, 4) for a in accuracy],
                       "train_seconds": record["train_seconds"], "torch_threads": record.get("torch_threads"),
                       "steps": record["recipe"]["steps"], "valid_accuracy": record.get("valid_accuracy")}  # fmt: skip
    return {"reviews": len(reviews), "turning": int(turning.sum()), "rows": rows}


def bench_layers() -> dict:
    """Devlin et al.'s six layer choices on bert_deep (senses; subject number), and the sense probe by layer."""
    from course_utils.language import corpus
    from course_utils.zoo import bert_checkpoints as bzoo
    from course_utils.models.bert import bert_mlm as bm
    from course_utils.analysis import contextual_embeddings as ce
    from course_utils.evaluation import linear_probe
    from course_utils.zoo import load

    tok = load("tokenizer")
    deep, recipe = load("bert_deep"), bzoo.training_record("bert_deep")["recipe"]
    senses = corpus.load_eval("senses")
    number_items = ce.agreement_token_items(corpus.load_eval("agreement"))
    timings, tables = {}, {}
    began = time.perf_counter()
    tables["sense"] = ce.strategy_table(deep, tok, senses)
    timings["strategy_sense"] = round(time.perf_counter() - began, 1)
    began = time.perf_counter()
    tables["number"] = ce.strategy_table(deep, tok, number_items, per_word=False)
    timings["strategy_number"] = round(time.perf_counter() - began, 1)
    shape = {k: recipe[k] for k in ("layers", "hidden", "heads", "max_len")}
    untrained = bm.CourseBERT(bm.bert_config(tok, **shape), seed=0).eval()
    by_layer = {}
    for label, model in (("bert_deep", deep), ("untrained", untrained)):
        began = time.perf_counter()
        by_layer[label] = ce.sense_probe_by_layer(model, tok, senses)
        timings[f"by_layer_{label}"] = round(time.perf_counter() - began, 1)

    def clean(rows):
        return [
            {
                k: (list(v) if isinstance(v, tuple) else (round(v, 4) if isinstance(v, float) else v))
                for k, v in row.items()
            }
            for row in rows
        ]

    chance = {"sense": linear_probe.majority_accuracy([s["sense"] for s in senses], [s["word"] for s in senses]),
              "number": linear_probe.majority_accuracy([i["label"] for i in number_items])}  # fmt: skip
    return {"shape": shape, "sense_items": len(senses), "number_items": len(number_items),
            "chance": {k: round(v, 4) for k, v in chance.items()},
            "strategies": {k: clean(v) for k, v in tables.items()},
            "by_layer": {k: clean(v) for k, v in by_layer.items()}, "seconds": timings}  # fmt: skip


def bench_cloze() -> dict:
    """The notebook's masked-word table: 500 test items, with the piece-count hint and without."""
    from course_utils.language import corpus
    from course_utils.zoo import load
    from course_utils.models.bert import bert_mlm as bm
    from course_utils.language.vocab import course_vocab
    from course_utils.models.classic.window_mlm import predict_masked
    from course_utils.models.recurrent.recurrent_lm import predict_masked_words

    tok, lang, words = _shared()
    vocab = course_vocab()
    items = bm.masked_items(corpus.load_split("test"), CLOZE_ITEMS, seed=1)
    truth = [item["words"][item["position"]] for item in items]
    pieces = [bm.piece_count(tok, w) for w in truth]
    word_models = {
        "window, 4 each side (04)": bm.word_model_distribution(predict_masked, load("masked_concat_w4"), vocab, words),
        "BiLSTM (05)": bm.word_model_distribution(predict_masked_words, load("masked_bilstm"), vocab, words),
    }
    seconds = {}

    def timed(key, make):
        began = time.perf_counter()
        out = make()
        seconds[key] = round(time.perf_counter() - began, 1)
        return out

    hinted = {"oracle": timed("oracle, hint", lambda: bm.oracle_scores(lang, items, tok)),
              "BERT 2×64 (bert_mlm)": timed("BERT", lambda: bm.bert_scores(bm.WordScorer(load("bert_mlm"), tok, words), items))}  # fmt: skip
    hinted.update(
        {
            name: timed(f"{name}, hint", lambda d=dist: bm.hinted_scores(d, items, tok))
            for name, dist in word_models.items()
        }
    )
    unhinted = {"oracle": timed("oracle", lambda: bm.oracle_scores(lang, items))}
    unhinted.update(
        {name: timed(name, lambda d=dist: bm.hinted_scores(d, items)) for name, dist in word_models.items()}
    )

    def table(scores: dict) -> dict:
        oracle = scores["oracle"][0]
        rows = {}
        for name, (nlls, tops) in scores.items():
            by_pieces = {}
            for k in sorted(set(pieces)):
                chosen = [i for i, p in enumerate(pieces) if p == k]
                by_pieces[str(k)] = {"items": len(chosen),
                                     "ratio": round(bm.nll_ratio([nlls[i] for i in chosen], [oracle[i] for i in chosen]), 4)}  # fmt: skip
            rows[name] = {"nll": round(sum(nlls) / len(nlls), 4), "ratio": round(bm.nll_ratio(nlls, oracle), 4),
                          "top1": round(sum(t == w for t, w in zip(tops, truth)) / len(truth), 4), "by_pieces": by_pieces}  # fmt: skip
        return rows

    return {"items": CLOZE_ITEMS, "hinted": table(hinted), "unhinted": table(unhinted), "seconds": seconds}


BENCHES = {
    "pretraining": bench_pretraining,
    "finetuning": bench_finetuning,
    "layers": bench_layers,
    "cloze": bench_cloze,
}


# ---------------------------------------------------------------- the section


def _f(value, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(results: dict) -> list[str]:
    """The notebook 09 section of BENCHMARKS.md."""
    m, seconds = results.get("machine", {}), results.get("seconds", {})
    lines = [f"{SECTION}, {DATE}", ""]
    parts = ", ".join(f"{part} {seconds[part]:.0f} s" for part in PARTS if part in seconds)
    lines += [f"Measured by `OMP_NUM_THREADS=1 python benchmarks/bert_bench.py --write` on {m.get('cpu')} "
              f"({m.get('cores')} cores, shared with other jobs; load average {m.get('load_1min')} at the start), "
              f"torch {m.get('torch')} ({m.get('cpu_capability')}), {m.get('threads')} thread. Run time "
              f"{results.get('total_seconds', 0):.0f} s ({parts}). Raw numbers: `benchmarks/results/bert_bench.json` "
              "(not committed). Masked NLL ÷ oracle is exp(mean model NLL − mean oracle NLL) over the same cloze "
              "items, every model and the oracle told the hidden word's piece count (`bert_mlm`'s docstring).", ""]  # fmt: skip

    pre = results.get("pretraining")
    if pre:
        r = pre["recipe"]
        lines += [f"**Pretraining time against masked NLL ÷ oracle.** `bert_mlm`'s recipe trained again here: "
                  f"{r['layers']} layers × {r['hidden']}, {r['heads']} heads, whole-word masking, {r['batch_size']} "
                  f"sentences a batch (length-bucketed), AdamW {r['lr']:g}, cosine over {r['steps']:,} steps, clipping "
                  f"{r['clip_grad_norm']:g}, seed {r['seed']}; scored every {EVAL_EVERY:,} steps (scoring time not "
                  f"counted) on {pre['items']} test items (`masked_items(test, {pre['items']}, seed=1)`; "
                  f"{pre['one_piece_items']} of them hide a one-piece word; oracle mean NLL {pre['oracle_mean_nll']:.3f} nats). "
                  "Wall seconds on one thread:", "",
                  "| steps | seconds | ÷ oracle | one-piece words ÷ oracle | train loss (per piece) |",
                  "|---:|---:|---:|---:|---:|"]  # fmt: skip
        for row in pre["curve"]:
            lines.append(f"| {row['steps']:,} | {row['seconds']:.1f} | {row['ratio']:.3f} | {row['one_piece_ratio']:.3f} | "
                         f"{row['train_loss']:.3f} |")  # fmt: skip
        lines += ["", "The shipped checkpoints: steps, seconds and the validation ratios from their `training.json` "
                  "(300 cloze items of the validation split and of `reviews_valid`, seed 0; the checkpoint build's "
                  "threads and load), and measured here on the 400 test items above:", "",
                  "| checkpoint | shape | steps | train seconds (threads) | valid ÷ oracle | reviews valid ÷ oracle | "
                  "test ÷ oracle | test, one-piece |", "|---|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for name, s in pre["shipped"].items():
            rec = s["recipe"]
            shape = f"{rec['layers']} × {rec['hidden']}" if "layers" in rec else f"from `{rec['start']}`"
            lines.append(f"| `{name}` | {shape} | {rec['steps']:,} | {s['train_seconds']:.1f} ({s['torch_threads']}) | "
                         f"{_f(s['valid_masked_ratio'], 3)} | {_f(s['reviews_valid_masked_ratio'], 3)} | "
                         f"{s['test']['ratio']:.3f} | {s['test']['one_piece_ratio']:.3f} |")  # fmt: skip
        lines += ["", "Probes, same day, one busy core, 400 test items (measured by hand while choosing the recipe; "
                  "not re-run here):", "", "| probe (2 × 64 unless said) | steps | seconds | ÷ oracle |", "|---|---:|---:|---:|"]  # fmt: skip
        for p in pre["probes"]:
            lines.append(
                f"| {p['probe']} | {p['steps']:,} | {'—' if p['seconds'] is None else p['seconds']} | {p['ratio']:.2f} |"
            )
        lines.append("")

    fine = results.get("finetuning")
    if fine:
        lines += [f"**Fine-tuning accuracy** on the {fine['reviews']} test reviews (`reviews_test`; {fine['turning']} of "
                  "them have \"but\" or \"not\"), beside notebook 04's and 06's classifiers (computed as notebook 06's "
                  "`review_accuracy` cell does):", "",
                  "| classifier | checkpoint | all | plain | but/not | fine-tuning |", "|---|---|---:|---:|---:|---:|"]  # fmt: skip
        for label, row in fine["rows"].items():
            a = row["accuracy"]
            how = (
                f"{row['steps']:,} steps, {row['train_seconds']:.1f} s ({row['torch_threads']} thr.)"
                if "steps" in row
                else "—"
            )
            lines.append(f"| {label} | `{row['checkpoint']}` | {a[0]:.3f} | {a[1]:.3f} | {a[2]:.3f} | {how} |")
        lines.append("")

    layers = results.get("layers")
    if layers:
        shape = layers["shape"]
        lines += [f"**The layer table** (Devlin et al. 2019, Table 7, on course token tasks): `bert_deep` "
                  f"({shape['layers']} layers × {shape['hidden']}), frozen, a linear probe 5-fold cross-validated on "
                  f"the first piece's vector. Sense: {layers['sense_items']} items of `senses`, one probe per word, "
                  f"averaged (chance {layers['chance']['sense']:.2f}); subject number: the verb masked after "
                  f"{layers['number_items']} `agreement` prefixes, one probe (chance {layers['chance']['number']:.2f}).", "",
                  "| strategy | layers taken | sense | subject number | Devlin et al. NER dev F1 (BERT-base) |",
                  "|---|---|---:|---:|---:|"]  # fmt: skip
        for s_row, n_row in zip(layers["strategies"]["sense"], layers["strategies"]["number"]):
            taken = ",".join(map(str, s_row["layers"]))
            lines.append(f"| {s_row['strategy']} | {taken} | {s_row['accuracy']:.3f} | {n_row['accuracy']:.3f} | "
                         f"{s_row['devlin_dev_f1']:.1f} |")  # fmt: skip
        untrained = {row["representation"]: row for row in layers["by_layer"]["untrained"]}
        lines += ["", "Sense probe by layer (`sense_probe_by_layer`), `bert_deep` against an untrained CourseBERT of the "
                  "same shape (seed 0): per-word probe accuracy / 1-nearest-neighbour sense agreement:", "",
                  "| representation | trained: probe | trained: nearest neighbour | untrained: probe | untrained: nearest neighbour |",
                  "|---|---:|---:|---:|---:|"]  # fmt: skip
        for row in layers["by_layer"]["bert_deep"]:
            other = untrained.get(row["representation"], {})
            lines.append(f"| {row['representation']} | {row['per_word']:.3f} | {_f(row['nearest_neighbour'], 3)} | "
                         f"{_f(other.get('per_word'), 3)} | {_f(other.get('nearest_neighbour'), 3)} |")  # fmt: skip
        lines.append("")

    cloze = results.get("cloze")
    if cloze:
        hinted, unhinted = cloze["hinted"], cloze["unhinted"]
        lines += [f"**Masked words**, the notebook's {cloze['items']} test items (`masked_items(test, {cloze['items']}, "
                  "seed=1)`): mean NLL (nats), ÷ oracle, top-1 accuracy; with the piece-count hint (every distribution "
                  "restricted to the words of the hidden word's piece count) and, for the word-level models, without:", "",
                  "| model | hint: NLL | hint: ÷ oracle | hint: top-1 | no hint: NLL | no hint: ÷ oracle | no hint: top-1 |",
                  "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for name, row in hinted.items():
            other = unhinted.get(name)
            rest = f"{other['nll']:.3f} | {other['ratio']:.3f} | {other['top1']:.3f}" if other else "— | — | —"
            lines.append(f"| {name} | {row['nll']:.3f} | {row['ratio']:.3f} | {row['top1']:.3f} | {rest} |")
        counts = list(hinted["oracle"]["by_pieces"])
        lines += ["", "With the hint, ÷ oracle by the hidden word's piece count (items):", "",
                  "| model | " + " | ".join(f"{k} piece{'s' if k != '1' else ''} ({hinted['oracle']['by_pieces'][k]['items']})"
                                            for k in counts) + " |", "|---|" + "---:|" * len(counts)]  # fmt: skip
        for name, row in hinted.items():
            if name != "oracle":
                lines.append(f"| {name} | " + " | ".join(f"{row['by_pieces'][k]['ratio']:.3f}" for k in counts) + " |")
        lines.append("")
    return lines


def write(path: Path, lines: list[str], section: str = SECTION) -> None:
    """Replace the ``section`` of ``path``; the first time, put it just below run.py's marker line."""
    text = path.read_text(encoding="utf-8")
    if section not in text:
        if MARKER not in text:
            raise SystemExit(f"{path} has no line starting {MARKER!r}; not writing")
        end = text.index("\n", text.index(MARKER)) + 1
        path.write_text(text[:end] + "\n" + section + "\n" + text[end:], encoding="utf-8")
    write_section(path, lines, section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma-separated parts of {', '.join(PARTS)}; "
                        "the others are taken from the last results JSON")  # fmt: skip
    args = parser.parse_args(argv)
    only = [p for p in args.only.split(",") if p]
    unknown = [p for p in only if p not in PARTS]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; the parts are {', '.join(PARTS)}")

    import torch

    torch.set_num_threads(THREADS)
    partial = set(only) != set(PARTS)
    results = json.loads(RESULTS.read_text(encoding="utf-8")) if partial and RESULTS.exists() else {}
    if only or "machine" not in results:  # `--only ""` rewrites the section from the last JSON, measuring nothing
        results["machine"] = machine()
    results.setdefault("seconds", {})
    began = time.perf_counter()
    for part in PARTS:
        if part not in only:
            continue
        print(f"[bench] bert {part} ...", flush=True)
        start = time.perf_counter()
        results[part] = BENCHES[part]()
        results["seconds"][part] = round(time.perf_counter() - start, 1)
        print(f"[bench]   {part}: {results['seconds'][part]} s", flush=True)
    if not partial:
        results["total_seconds"] = round(time.perf_counter() - began, 1)
    elif only or "total_seconds" not in results:
        results["total_seconds"] = round(sum(results["seconds"].get(p, 0) for p in PARTS), 1)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = markdown(results)
    print("\n".join(lines))
    print("[bench] summary: " + ", ".join(f"{p} {results['seconds'][p]:.1f} s" for p in PARTS if p in results["seconds"])
          + f"; total {results['total_seconds']:.1f} s; raw numbers in {RESULTS.relative_to(ROOT)}")  # fmt: skip
    if args.write:
        write(ROOT / "BENCHMARKS.md", lines)
        print("[bench] wrote the notebook 09 section of BENCHMARKS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
