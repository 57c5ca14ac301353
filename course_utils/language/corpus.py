"""The default corpus of the course language: splits, evaluation sets, datasheet.

Regenerate everything in ``data/course_language`` with one command::

    python -m course_utils.language.corpus

Splits are sampled from the training language (the held-out compositions have probability 0
there, so the oracle is exact for them); each split has its own seed, so they are deterministic.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
from pathlib import Path

from course_utils.language import lexicon as lx
from course_utils.language import phenomena, stored_text
from course_utils.language.grammar import CourseLanguage
from course_utils.validation import CourseInputError

CORPUS_DIR = Path(__file__).resolve().parents[2] / "data" / "course_language"
SPLITS = {"train": (60_000, 1), "valid": (4_000, 2), "test": (4_000, 3)}  # name: (sentences, seed)
REVIEW_SPLITS = {"train": (3_000, 11), "valid": (500, 12), "test": (1_000, 13)}
EVAL_SETS = {
    "agreement": lambda: phenomena.agreement_items(per_count=100, seed=21),
    "selection": lambda: phenomena.selection_items(per_verb=10, seed=22),
    "compositions": lambda: phenomena.composition_items(per_noun=20, seed=23),
    "senses": lambda: phenomena.sense_items(per_sense=30, seed=24),
    "voice": lambda: phenomena.voice_pairs(n=2_000, seed=25),
}
REGENERATE = "python -m course_utils.language.corpus"


def load_split(name: str, directory: Path | str = CORPUS_DIR) -> list[list[str]]:
    """The sentences of split ``name`` ("train", "valid" or "test") as lists of words."""
    if name not in SPLITS:
        raise CourseInputError(f"unknown split {name!r}; the splits are {', '.join(SPLITS)}")
    text = _read(Path(directory) / f"{name}.txt")
    return [line.split() for line in text.splitlines()]


def load_eval(name: str, directory: Path | str = CORPUS_DIR) -> list[dict]:
    """An evaluation set: "agreement", "selection", "compositions", "senses", "voice" or "reviews_<split>"."""
    known = list(EVAL_SETS) + [f"reviews_{s}" for s in REVIEW_SPLITS]
    if name not in known:
        raise CourseInputError(f"unknown evaluation set {name!r}; there are {', '.join(known)}")
    text = _read(Path(directory) / "eval" / f"{name}.jsonl")
    return [json.loads(line) for line in text.splitlines()]


def _read(path: Path) -> str:
    """The text of ``path`` (stored as ``path.bz2``), or an error that says how to regenerate it."""
    if stored_text.stored_file(path) is None:
        raise CourseInputError(f"{stored_text.compressed(path)} is missing; regenerate the corpus with `{REGENERATE}`")
    return stored_text.read_text(path)


# ---------------------------------------------------------------- writing


def generate_corpus(directory: Path | str = CORPUS_DIR, *, plots: bool = True) -> dict:
    """Write the splits, evaluation sets and datasheet to ``directory``; return the statistics."""
    directory = Path(directory)
    (directory / "eval").mkdir(parents=True, exist_ok=True)
    lang = CourseLanguage(include_held_out=False)
    splits = {name: lang.sample_many(n, seed) for name, (n, seed) in SPLITS.items()}
    for name, sentences in splits.items():
        _write_lines(directory / f"{name}.txt", (s.text() for s in sentences))
    sizes = {}
    for name, build in EVAL_SETS.items():
        items = build()
        sizes[name] = len(items)
        _write_jsonl(directory / "eval" / f"{name}.jsonl", items)
    for split, (n, seed) in REVIEW_SPLITS.items():
        _write_jsonl(directory / "eval" / f"reviews_{split}.jsonl", phenomena.review_items(n, seed))
        sizes[f"reviews_{split}"] = n
    stats = corpus_statistics(lang, {name: [list(s.words) for s in sents] for name, sents in splits.items()})
    stats["eval_sizes"] = sizes
    if plots:
        _plot_statistics(stats, directory)
    (directory / "datasheet.md").write_text(datasheet(stats), encoding="utf-8")
    return stats


def _write_lines(path: Path, lines) -> None:
    stored_text.write_text(path, "".join(line + "\n" for line in lines))


def _write_jsonl(path: Path, items: list[dict]) -> None:
    _write_lines(path, (json.dumps(item, separators=(",", ":")) for item in items))


def oracle_entropy(lang: CourseLanguage, sentences: list[list[str]]) -> tuple[float, int]:
    """Mean negative log-probability per token (nats, ``</s>`` counted) and the token count."""
    nll, tokens = 0.0, 0
    for words in sentences:
        score = lang.score(words)
        if not score.grammatical:
            raise CourseInputError(f"not in the language: {' '.join(words)}: {score.failure}")
        nll -= score.logprob
        tokens += len(words) + 1
    return nll / tokens, tokens


def corpus_statistics(lang: CourseLanguage, splits: dict[str, list[list[str]]]) -> dict:
    """Sizes, vocabulary, oracle entropy per split, word frequencies and sentence lengths."""
    counts = collections.Counter(w for words in splits["train"] for w in words)
    stats = {
        "grammar_vocabulary": len(lang.vocabulary),
        "grammar_states": len(lang.reachable_stacks()),
        "train_types": len(counts),
        "frequencies": [c for _, c in counts.most_common()],
        "top_words": counts.most_common(12),
        "lengths": [len(words) for words in splits["train"]],
        "splits": {},
    }
    for name, sentences in splits.items():
        entropy, tokens = oracle_entropy(lang, sentences)
        stats["splits"][name] = {"sentences": len(sentences), "tokens": tokens, "entropy_nats": entropy,
                                 "perplexity": math.exp(entropy)}  # fmt: skip
    return stats


def _plot_statistics(stats: dict, directory: Path) -> None:
    """zipf.png (rank-frequency, log-log) and lengths.png (sentence-length histogram)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    freqs = stats["frequencies"]
    ranks = range(1, len(freqs) + 1)
    ax.loglog(ranks, freqs, ".", label="course language (train)")
    ax.loglog(ranks, [freqs[0] / r for r in ranks], "--", label="Zipf: f ∝ 1/rank")
    ax.set(xlabel="rank", ylabel="count", title="Word frequency against rank")
    ax.legend()
    fig.tight_layout()
    fig.savefig(directory / "zipf.png", dpi=90, metadata={"Software": None})

    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    lengths = stats["lengths"]
    ax.hist(lengths, bins=range(1, max(lengths) + 2), align="left")
    ax.set(xlabel="words per sentence", ylabel="sentences", title="Sentence lengths (train)")
    fig.tight_layout()
    fig.savefig(directory / "lengths.png", dpi=90, metadata={"Software": None})


def datasheet(stats: dict) -> str:
    """The datasheet in Markdown: how the corpus was made, its sizes, vocabulary and entropy."""
    rows = "\n".join(
        f"| {name} | {s['sentences']:,} | {s['tokens']:,} | {s['entropy_nats']:.4f} | "
        f"{s['entropy_nats'] / math.log(2):.4f} | {s['perplexity']:.3f} |"
        for name, s in stats["splits"].items()
    )
    evals = "\n".join(f"| {name} | {n:,} |" for name, n in stats["eval_sizes"].items())
    top = ", ".join(f"{w} ({c:,})" for w, c in stats["top_words"])
    held = ", ".join(f"{noun} ({cls})" for cls, noun in lx.HELD_OUT_IN_GETS_FRAME.items())
    lengths = stats["lengths"]
    return f"""# Datasheet: the course language

Generated by `{REGENERATE}` (written by code; do not edit by hand). `tests/language/test_corpus.py`
regenerates it and checks that every file here matches.

## How it was generated
- A probabilistic grammar (`course_utils/language/grammar.py`, words in `course_utils/language/lexicon.py`) whose
  rules recurse only at the right end, so it is a finite-state source with
  {stats["grammar_states"]:,} states (stacks of symbols still to expand).
- Sentence types: declaratives with subject modifiers (prepositional phrases, relative clauses),
  passives, the "... make sure that the cat gets fed" frame, short reviews, and frames for
  polysemous words. Words are chosen within their class with Zipf weights (1/rank).
- The splits are sampled from the *training language*: the "gets" frame never has these
  held-out nouns in it: {held}. They appear everywhere else. `eval/compositions.jsonl.bz2` asks
  about them; the full language (`CourseLanguage(include_held_out=True)`) gives their probability.
- Seeds: {", ".join(f"{n} {seed}" for n, (_, seed) in SPLITS.items())}. The splits are `train.txt.bz2`, `valid.txt.bz2`
  and `test.txt.bz2`: text compressed with bz2 (`bzcat` shows it; `load_split` reads it). One sentence per line,
  words separated by single spaces; `</s>` is not written but counts as a token below.

## Sizes, vocabulary and the oracle's entropy
The grammar can emit {stats["grammar_vocabulary"]} word types; {stats["train_types"]} occur in train.
Entropy is the oracle's exact mean negative log-probability per token on each split
(`</s>` included): the floor that no model can beat on average.

| split | sentences | tokens | entropy (nats/token) | entropy (bits/token) | perplexity |
|---|---|---|---|---|---|
{rows}

Sentence length (train, words without `</s>`): mean {sum(lengths) / len(lengths):.2f},
min {min(lengths)}, max {max(lengths)}. Most frequent words: {top}.

![Zipf plot](zipf.png) ![Sentence lengths](lengths.png)

## Evaluation sets (`eval/*.jsonl.bz2`, one JSON object per line, bz2-compressed; `load_eval` reads them)
| set | items |
|---|---|
{evals}

- **agreement**: a prefix ending before the main verb, with 0 to 5 attractors (nouns of the
  other number in prepositional phrases or relative clauses); `correct` and `wrong` verb forms.
- **selection**: `object` items (which nouns a verb takes), `instrument` items ("with the ..."),
  `mask` items (P(with | he ate the cake <mask> the fork .)).
- **compositions**: the "gets" frame with held-out nouns (`held_out: true`) and seen controls.
- **senses**: sentences with a polysemous word, its position and its sense.
- **voice**: active and passive forms of the same event.
- **reviews_train/valid/test**: reviews with a sentiment label (the last clause's sentiment:
  "and" keeps it, "but" turns it; "not" flips an adjective).
"""


def main(argv=None) -> None:
    """Command line: regenerate the corpus (default: the repository's ``data/course_language``)."""
    parser = argparse.ArgumentParser(description="Regenerate the course-language corpus.")
    parser.add_argument("--out", type=Path, default=CORPUS_DIR, help="output directory")
    args = parser.parse_args(argv)
    stats = generate_corpus(args.out)
    for name, s in stats["splits"].items():
        print(f"{name}: {s['sentences']} sentences, {s['tokens']} tokens, oracle {s['entropy_nats']:.4f} nats/token")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
