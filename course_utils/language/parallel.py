"""The parallel corpus of notebook 07: course-language passages, their Tarevi translations, exact alignments.

Regenerate everything in ``data/translation`` with one command::

    python -m course_utils.language.parallel

A *passage* is one or more simple clauses of the translatable fragment, given as one input
("kayla runs . the ball was kicked by the old boys ."). Clauses come from the course grammar's own
rules (declaratives without subject modifiers, and passives); ``translate_passage`` gives the target
and the word alignment, which stays exact however long the passage. Training passages are at most
``TRAIN_MAX_LENGTH`` source words; the long test sets reach several times that.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import statistics
from pathlib import Path

from course_utils.language import stored_text
from course_utils.language.grammar import CourseLanguage, rules
from course_utils.language.tarevi import (
    TAREVI,
    NounPhrase,
    Token,
    Translation,
    analyses,
    parse,
    split_sentences,
    translate_passage,
)
from course_utils.validation import CourseInputError

PARALLEL_DIR = Path(__file__).resolve().parents[2] / "data" / "translation"
REGENERATE = "python -m course_utils.language.parallel"
TRAIN_MAX_LENGTH = 14  # source words; the long test buckets start after it
PASSIVE_SHARE = 0.25  # of clauses: the grammar's own share (10 of 52) would leave passives rare
LONG_BUCKETS = ((15, 21), (22, 28), (29, 35), (36, 42))  # source lengths beyond the training lengths
SPLITS = {"train": (40_000, 1), "valid": (1_000, 2), "test": (2_000, 3)}  # passages within the training lengths
LONG_PER_BUCKET, LONG_SEED = 300, 4
UNSEEN_SIZE, UNSEEN_SEED = 500, 5
VOICE_SIZE, VOICE_SEED = 500, 6
HELD_OUT_SHARE = 0.1  # of (verb, theme noun) pairs: never in training, the "unseen" test set has them


Pair = Translation  # a source passage, its translation and the alignment as (source index, target index) pairs


# ---------------------------------------------------------------- sampling the fragment


def sample_clause(rng: random.Random, stack: list, modifiers: bool = False) -> list[str]:
    """Expand ``stack`` with the course grammar's own rules; with ``modifiers``, the first MODS gets one.

    Without modifiers, a DECL or PASSIVE clause lands in the translatable fragment.
    """
    words = []
    while stack:
        top = stack.pop(0)
        if isinstance(top, str):
            words.append(str(top))
            continue
        options = [(p, rhs) for p, rhs in rules(top) if top[0] != "MODS" or bool(rhs) == modifiers]
        rhs = rng.choices([r for _, r in options], weights=[p for p, _ in options])[0]
        stack[:0] = rhs
        modifiers = modifiers and top[0] != "MODS"  # one modifier is enough
    return words


def random_clause(rng: random.Random) -> list[str]:
    """One clause of the fragment: a passive with probability ``PASSIVE_SHARE``, else a declarative."""
    return sample_clause(rng, [("PASSIVE",) if rng.random() < PASSIVE_SHARE else ("DECL",)])


def event(clause) -> tuple[str, str] | None:
    """(verb lemma, theme noun lemma) of a transitive clause, active or passive; None otherwise."""
    parsed = parse(clause)
    if parsed.voice == "passive":
        theme = parsed.subject
    elif isinstance(parsed.complement, NounPhrase):
        theme = parsed.complement
    else:
        return None
    if theme.head.analysis.category != "noun":
        return None
    return parsed.verb[-1].analysis.lemma, theme.head.analysis.lemma


def is_held_out(pair: tuple[str, str] | None) -> bool:
    """Whether a (verb, theme) pair is one of the combinations kept out of training (a fixed hash)."""
    if pair is None:
        return False
    return random.Random(f"held-out:{pair[0]}:{pair[1]}").random() < HELD_OUT_SHARE


def has_unseen_combination(words) -> bool:
    """Whether any clause of the passage has a held-out (verb, theme) pair."""
    return any(is_held_out(event(clause)) for clause in split_sentences(words))


def sample_passage(rng: random.Random, clauses: int, *, unseen: bool = False) -> list[str]:
    """``clauses`` clauses as one passage; seen combinations only, or (``unseen``) at least one held out."""
    while True:
        parts = []
        while len(parts) < clauses:
            clause = random_clause(rng)
            if not is_held_out(event(clause)) or unseen:
                parts.append(clause)
        words = [w for part in parts for w in part]
        if not unseen or has_unseen_combination(words):
            return words


def _within(rng: random.Random, n: int, exclude: set) -> list[Pair]:
    """``n`` passages of one or two clauses and at most ``TRAIN_MAX_LENGTH`` words, none in ``exclude``."""
    pairs = []
    while len(pairs) < n:
        words = sample_passage(rng, 1 if rng.random() < 0.5 else 2)
        if len(words) <= TRAIN_MAX_LENGTH and tuple(words) not in exclude:
            pairs.append(translate_passage(words))
    return pairs


def _long_bucket(rng: random.Random, low: int, high: int, n: int) -> list[Pair]:
    pairs = []
    while len(pairs) < n:
        words = []
        while len(words) < low:
            words += sample_passage(rng, 1)
        if len(words) <= high:
            pairs.append(translate_passage(words))
    return pairs


def voice_items(n: int = VOICE_SIZE, seed: int = VOICE_SEED) -> list[dict]:
    """The same event in both voices, each translated ("kayla kicked the ball ." / "the ball was kicked by kayla .")."""
    from course_utils.language.phenomena import voice_pairs

    items = []
    for item in voice_pairs(n=n, seed=seed):
        active, passive = translate_passage(item["active"]), translate_passage(item["passive"])
        items.append({"active": _as_json(active), "passive": _as_json(passive)})
    return items


def build_corpus() -> dict[str, list]:
    """Every split and test set, in memory: name -> list of Pair (or of dicts for "voice")."""
    train_rng = random.Random(SPLITS["train"][1])
    sets = {"train": _within(train_rng, SPLITS["train"][0], set())}
    seen = {pair.source for pair in sets["train"]}
    for name in ("valid", "test"):
        n, seed = SPLITS[name]
        sets[name] = _within(random.Random(seed), n, seen)  # passages never seen in training
        seen |= {pair.source for pair in sets[name]}
    rng = random.Random(LONG_SEED)
    for low, high in LONG_BUCKETS:
        sets[f"test_long_{low}_{high}"] = _long_bucket(rng, low, high, LONG_PER_BUCKET)
    rng = random.Random(UNSEEN_SEED)
    train_words = {word for pair in sets["train"] for word in pair.source}
    unseen = []
    while len(unseen) < UNSEEN_SIZE:
        words = sample_passage(rng, 1, unseen=True)
        if len(words) <= TRAIN_MAX_LENGTH and set(words) <= train_words:  # new combinations of known words
            unseen.append(translate_passage(words))
    sets["test_unseen"] = unseen
    sets["voice"] = voice_items()
    return sets


# ---------------------------------------------------------------- files


def _as_json(pair: Pair) -> dict:
    return {"source": " ".join(pair.source), "target": " ".join(pair.target),
            "alignment": " ".join(f"{s}-{t}" for s, t in pair.alignment)}  # fmt: skip


def _from_json(item: dict) -> Pair:
    alignment = tuple(tuple(int(i) for i in link.split("-")) for link in item["alignment"].split())
    return Pair(tuple(item["source"].split()), tuple(item["target"].split()), alignment)


def set_names() -> list[str]:
    """The names of the shipped sets: splits, long buckets, unseen combinations, voice."""
    return list(SPLITS) + [f"test_long_{low}_{high}" for low, high in LONG_BUCKETS] + ["test_unseen", "voice"]


def load(name: str, directory: Path | str = PARALLEL_DIR) -> list:
    """A shipped set as a list of ``Pair`` ("voice": a list of {"active": Pair, "passive": Pair})."""
    if name not in set_names():
        raise CourseInputError(f"unknown set {name!r}; the sets are {', '.join(set_names())}")
    path = Path(directory) / f"{name}.jsonl"
    if stored_text.stored_file(path) is None:
        missing = stored_text.compressed(path)
        raise CourseInputError(f"{missing} is missing; regenerate the parallel corpus with `{REGENERATE}`")
    items = [json.loads(line) for line in stored_text.read_text(path).splitlines()]
    if name == "voice":
        return [{voice: _from_json(item[voice]) for voice in ("active", "passive")} for item in items]
    return [_from_json(item) for item in items]


def vocabularies() -> tuple[list[str], list[str]]:
    """Every source word and every target word the fragment can produce, sorted: nothing is unknown."""
    source = sorted(CourseLanguage().vocabulary)
    target = sorted({TAREVI.word(Token(0, word, analysis)) for word in source for analysis in analyses(word)})
    return source, target


# ---------------------------------------------------------------- the datasheet


def reorders(pair: Pair) -> bool:
    """Whether the target changes the source's word order (some aligned pair of words crosses)."""
    order = [s for s, _ in sorted(pair.alignment, key=lambda link: link[1])]
    return order != sorted(order)


def crossing_share(pair: Pair) -> float:
    """The share of aligned word pairs whose order the target reverses (0: monotone)."""
    order = [s for s, _ in sorted(pair.alignment, key=lambda link: link[1])]
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :]]
    return sum(a > b for a, b in pairs) / len(pairs) if pairs else 0.0


def statistics_of(sets: dict[str, list]) -> dict:
    """Sizes, lengths, reordering and passives of every set."""
    rows = {}
    for name, pairs in sets.items():
        if name == "voice":
            pairs = [item[voice] for item in pairs for voice in ("active", "passive")]
        lengths = [len(p.source) for p in pairs]
        rows[name] = {
            "passages": len(pairs),
            "source_words": sum(lengths),
            "target_words": sum(len(p.target) for p in pairs),
            "min": min(lengths), "median": statistics.median(lengths), "max": max(lengths),
            "reordered": sum(map(reorders, pairs)) / len(pairs),
            "crossing": statistics.mean(map(crossing_share, pairs)),
            "passives": sum(c.count("by") for p in pairs for c in split_sentences(p.source))
            / sum(len(split_sentences(p.source)) for p in pairs),
        }  # fmt: skip
    source_vocab, target_vocab = vocabularies()
    train_lengths = [len(p.source) for p in sets["train"]]
    return {"sets": rows, "train_lengths": collections.Counter(train_lengths),
            "source_vocab": len(source_vocab), "target_vocab": len(target_vocab)}  # fmt: skip


def _plot_lengths(sets: dict[str, list], directory: Path) -> None:
    """lengths.png: source lengths of the training passages and of every test set."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 3.5))
    ax = fig.subplots()
    train = [len(p.source) for p in sets["train"]]
    tests = [len(p.source) for name, pairs in sets.items() if name.startswith("test") for p in pairs]
    bins = range(1, LONG_BUCKETS[-1][1] + 2)
    ax.hist(train, bins=bins, align="left", density=True, alpha=0.7, label="train")
    ax.hist(tests, bins=bins, align="left", density=True, alpha=0.5, label="test sets")
    ax.axvline(TRAIN_MAX_LENGTH + 0.5, color="k", ls="--", lw=1, label=f"training lengths end ({TRAIN_MAX_LENGTH})")
    ax.set(xlabel="source words per passage", ylabel="share of passages", title="Passage lengths")
    ax.legend()
    fig.tight_layout()
    fig.savefig(directory / "lengths.png", dpi=90, metadata={"Software": None})


def datasheet(stats: dict) -> str:
    """The datasheet in Markdown."""
    rows = "\n".join(
        f"| {name} | {s['passages']:,} | {s['source_words']:,} | {s['target_words']:,} | {s['min']}–{s['max']} "
        f"(median {s['median']:g}) | {s['reordered']:.0%} | {s['crossing']:.2f} | {s['passives']:.0%} |"
        for name, s in stats["sets"].items()
    )
    histogram = " · ".join(f"{length}: {n:,}" for length, n in sorted(stats["train_lengths"].items()))
    median = stats["sets"]["train"]["median"]
    longest = LONG_BUCKETS[-1][1]
    return f"""# Datasheet: the parallel corpus (course language → Tarevi)

Generated by `{REGENERATE}` (written by code; do not edit by hand). `tests/language/test_parallel.py`
regenerates it and checks that every file here matches.

## How it was generated
- **Source.** Clauses of the translatable fragment, drawn with the course grammar's own rules
  (`course_utils/language/grammar.py`): declaratives without subject modifiers, and passives
  ({PASSIVE_SHARE:.0%} of clauses, more than the grammar's own share, so that the passive challenge has data).
- **Passages.** One or more clauses given as one input. The alignment stays exact at any length,
  because `translate_passage` translates each clause and shifts its alignment.
- **Target.** `course_utils.language.tarevi.TAREVI`: subject–object–verb order, nouns before
  adjectives, postpositions, auxiliaries after the verb, suffixes for plural, past and participle.
  Names and "." are copied. Every target word has exactly one source word: the alignment is a bijection.
- **Training lengths.** Training passages (and valid, test) have one or two clauses and at most
  **L = {TRAIN_MAX_LENGTH}** source words. The long test sets have {len(LONG_BUCKETS)} buckets of
  {LONG_PER_BUCKET} passages each, from {LONG_BUCKETS[0][0]} to {longest} words:
  {longest / median:.1f}× the median training length ({median:g}).
- **Unseen combinations.** {HELD_OUT_SHARE:.0%} of the (verb, theme noun) pairs, picked by a fixed hash
  (`is_held_out`), never occur in training, valid or test. Every passage of `test_unseen` has one
  ("the bread was eaten by ..." when eat + bread is held out). The words themselves all occur in training.
- **Voice.** `voice.jsonl.bz2` has {VOICE_SIZE} events in both voices (`phenomena.voice_pairs`, seed
  {VOICE_SEED}): "kayla kicked the ball ." and "the ball was kicked by kayla .", each with its translation.
  Tarevi keeps the voice, so the two targets differ; the passive reorders more. Some events are held-out
  combinations (in both voices alike), so the two voices stay comparable.
- valid and test hold no passage that is in train. Seeds: {", ".join(f"{n} {seed}" for n, (_, seed) in SPLITS.items())},
  long {LONG_SEED}, unseen {UNSEEN_SEED}.
- Files: `<set>.jsonl.bz2`, bz2-compressed text (`bzcat` shows it; `parallel.load` reads it): one JSON object
  per line, `source` and `target` as words separated by single spaces,
  `alignment` as "source-target" index pairs (the Pharaoh format of fast_align and Moses).

## Sizes, lengths, reordering, passives
Vocabularies (`vocabularies()`, every word the fragment can produce): {stats["source_vocab"]} source words,
{stats["target_vocab"]} target words. "Reordered" is the share of passages whose target changes the word
order; "crossing" the mean share of word pairs whose order the target reverses.

| set | passages | source words | target words | length | reordered | crossing | passive clauses |
|---|---|---|---|---|---|---|---|
{rows}

Training lengths (source words: passages): {histogram}.

![Passage lengths](lengths.png)
"""


def generate(directory: Path | str = PARALLEL_DIR, *, plots: bool = True) -> dict:
    """Write every set and the datasheet to ``directory``; return the statistics."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    sets = build_corpus()
    for name, items in sets.items():
        lines = (json.dumps(item if name == "voice" else _as_json(item), separators=(",", ":")) for item in items)
        stored_text.write_text(directory / f"{name}.jsonl", "".join(line + "\n" for line in lines))
    parsed = {name: (load(name, directory) if name == "voice" else items) for name, items in sets.items()}
    stats = statistics_of(parsed)
    if plots:
        _plot_lengths(parsed, directory)
    (directory / "datasheet.md").write_text(datasheet(stats), encoding="utf-8")
    return stats


def main(argv=None) -> None:
    """Command line: regenerate the parallel corpus (default: the repository's ``data/translation``)."""
    parser = argparse.ArgumentParser(description="Regenerate the parallel corpus of notebook 07.")
    parser.add_argument("--out", type=Path, default=PARALLEL_DIR, help="output directory")
    args = parser.parse_args(argv)
    stats = generate(args.out)
    for name, s in stats["sets"].items():
        print(f"{name}: {s['passages']} passages, lengths {s['min']}-{s['max']}, reordered {s['reordered']:.0%}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
