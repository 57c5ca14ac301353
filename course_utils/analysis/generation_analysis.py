"""Generation strategies judged by the course language's oracle (notebook 10, issue 13 §4).

Holtzman et al. (2020) had to judge generated text against human text. The course language has an
oracle: the exact probability of every sentence, so "average sounding", "degenerate" and "diverse" are
numbers. ``judge(lang, sentences)`` gives them for a list of generated sentences; ``strategy_table`` runs
every strategy of ``STRATEGIES`` on a course LM and judges each; ``oracle_samples`` is the reference row
(sampling at T = 1 from the oracle itself); ``beam_length_curve`` measures the beam search curse.

**What ``judge`` measures** (sentences are lists of words, without ``<s>``/``</s>``):

- ``grammatical``: the share of sentences the oracle gives non-zero probability (``lang.score``);
- ``logprob_per_token``: Σ log P(sentence) ÷ Σ (words + 1) over the *grammatical* sentences only (``</s>``
  counts as a token, as ``corpus.oracle_entropy`` counts): a token-weighted mean, so on the oracle's own
  samples it estimates minus the entropy rate. Ungrammatical sentences have log-probability −∞; they are
  left out of this mean and counted by ``grammatical`` instead (a model that writes few, very probable
  grammatical sentences is therefore not penalised here for its ungrammatical ones: read both columns).
  ``nll_per_token`` = −``logprob_per_token``; ``perplexity`` = exp(``nll_per_token``), beside
  ``entropy_rate`` (nats per token) and ``language_perplexity`` = exp(``entropy_rate``);
- ``distinct_1/2/3``: distinct n-grams ÷ total n-grams, over the whole set (n-grams within a sentence,
  words only, no ``</s>``); 0 when the set has no n-gram of that order;
- ``repetition``: Holtzman et al.'s Table 1 counts "the share of generations that end in a repeating
  loop". Course sentences are short and mostly end, so we adapt it: the share of sentences that contain
  a **repeated n-gram of length ≥ 2** (the same two consecutive words occurring twice, possibly
  overlapping: "a b a b" and "x a b y a b" both count; any repeated longer n-gram contains a repeated
  bigram) **or a word repeated consecutively** ("very very"). The oracle's own samples give the
  language's base rate (its "human" row): the language itself repeats bigrams now and then
  ("the movie … the movie");
- ``mean_length``/``median_length`` (words, ``</s>`` not counted), ``length_histogram`` {length: share},
  beside the language's (``reference_lengths``, from oracle samples) and ``length_tv``, the total variation
  distance between the two length distributions (0: the same, 1: disjoint).

The language's statistics (entropy rate, length distribution) come from ``language_reference(lang)``:
``n`` sentences sampled from the oracle (20 000 by default, cached), so the entropy rate is a Monte
Carlo estimate (its standard error is printed by ``language_reference``'s ``stderr``).
"""

from __future__ import annotations

import collections
import math
import statistics
import time
from functools import lru_cache

import torch

from course_utils.language.grammar import CourseLanguage
from course_utils.models import generation as g
from course_utils.validation import CourseInputError, check_int

# ---------------------------------------------------------------- Holtzman et al. 2020, Table 1

HOLTZMAN_TABLE_1 = {  # repetition (%): "the share of generations that end in a repeating loop", GPT-2 Large
    "greedy": 73.66,
    "beam (b=16)": 28.94,
    "nucleus (p=0.95)": 0.36,
    "human": 0.28,
}
HOLTZMAN_OURS = {  # which of our rows mirrors each of theirs; the oracle's samples stand for "human"
    "greedy": "greedy",
    "beam (b=16)": "beam 16",
    "nucleus (p=0.95)": "top-p 0.95",
    "human": "oracle (T=1)",
}

# ---------------------------------------------------------------- the strategies of issue 13 §4

STRATEGIES: dict[str, dict] = {
    "greedy": {"kind": "greedy"},
    **{f"beam {k}": {"kind": "beam", "width": k, "normalisation": "none"} for k in (1, 4, 16)},
    **{f"beam {k} (norm)": {"kind": "beam", "width": k, "normalisation": "mean"} for k in (1, 4, 16)},
    "pure sampling": {"kind": "sample"},
    **{f"T={t}": {"kind": "sample", "temperature": t} for t in (0.5, 0.8, 1.2)},
    **{f"top-k {k}": {"kind": "sample", "top_k": k} for k in (5, 40)},
    **{f"top-p {p}": {"kind": "sample", "top_p": p} for p in (0.5, 0.9, 0.95)},
}
"""Name → configuration. ``kind``: "greedy", "beam" (``beam_search``: ``width``; ``normalisation`` "none" =
canonical beam search, "mean" = eq. 13.16, sum ÷ |Y|; ``generate()``'s ``early_stopping=False``) or
"sample" (``sample``: ``temperature``, ``top_k``, ``top_p``). Greedy and beam search are deterministic:
one sentence per prompt."""

DETERMINISTIC = ("greedy", "beam")

# ---------------------------------------------------------------- the language's own statistics


def _words(sentence) -> tuple[str, ...]:
    if isinstance(sentence, str):
        return tuple(sentence.split())
    return tuple(sentence)


@lru_cache(maxsize=8)
def _reference(include_held_out: bool, n: int, seed: int) -> dict:
    lang = CourseLanguage(include_held_out=include_held_out)
    return _reference_of(lang, n, seed)


def _reference_of(lang: CourseLanguage, n: int, seed: int) -> dict:
    sentences = [s.words for s in lang.sample_many(n, seed)]
    logprobs = [lang.score(words).logprob for words in sentences]
    tokens = [len(words) + 1 for words in sentences]
    entropy = -sum(logprobs) / sum(tokens)
    # standard error of the ratio estimator (delta method), per sentence residuals
    mean_tokens = sum(tokens) / n
    residuals = [-lp - entropy * t for lp, t in zip(logprobs, tokens)]
    stderr = statistics.pstdev(residuals) / (mean_tokens * math.sqrt(n)) if n > 1 else math.nan
    lengths = collections.Counter(len(words) for words in sentences)
    return {
        "samples": n,
        "seed": seed,
        "entropy_rate": entropy,
        "stderr": stderr,
        "perplexity": math.exp(entropy),
        "lengths": {k: c / n for k, c in sorted(lengths.items())},
        "mean_length": statistics.fmean(len(w) for w in sentences),
    }


def language_reference(lang: CourseLanguage, n: int = 20_000, seed: int = 0) -> dict:
    """The language's statistics from ``n`` oracle samples (cached for the standard languages).

    Returns ``entropy_rate`` (nats per token, ``</s>`` counted), its ``stderr``, ``perplexity``,
    ``lengths`` {words: share} and ``mean_length``.
    """
    n = check_int("n", n, minimum=1)
    if type(lang) is CourseLanguage:
        return _reference(lang.include_held_out, n, int(seed))
    return _reference_of(lang, n, int(seed))


# ---------------------------------------------------------------- the verdicts


def ngrams(words, n: int) -> list[tuple[str, ...]]:
    """The n-grams of one sentence (words only)."""
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def is_repetitive(words) -> bool:
    """A repeated n-gram of length ≥ 2 (⇔ a repeated bigram) or a word repeated consecutively."""
    words = _words(words)
    if any(a == b for a, b in zip(words, words[1:])):
        return True
    bigrams = ngrams(words, 2)
    return len(set(bigrams)) < len(bigrams)


def distinct_n(sentences, n: int) -> float:
    """Distinct n-grams ÷ total n-grams over the set (0 when there is none)."""
    grams = [gram for words in sentences for gram in ngrams(_words(words), n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def total_variation(p: dict, q: dict) -> float:
    """½ Σ |p(x) − q(x)| between two distributions given as {value: probability}."""
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def judge(lang: CourseLanguage, sentences, *, reference: dict | None = None) -> dict:
    """The oracle's verdicts on generated ``sentences`` (lists of words, no ``<s>``/``</s>``).

    See the module docstring for each number. ``reference``: ``language_reference(lang)`` by default.
    """
    sentences = [_words(s) for s in sentences]
    if not sentences:
        raise CourseInputError("judge needs at least one sentence")
    reference = language_reference(lang) if reference is None else reference
    scores = [lang.score(words) for words in sentences]
    good = [s for s in scores if s.grammatical]
    tokens = sum(len(s.words) + 1 for s in good)
    logprob = sum(s.logprob for s in good) / tokens if good else math.nan
    lengths = [len(words) for words in sentences]
    counts = collections.Counter(lengths)
    histogram = {k: c / len(sentences) for k, c in sorted(counts.items())}
    return {
        "n": len(sentences),
        "grammatical": len(good) / len(sentences),
        "logprob_per_token": logprob,
        "nll_per_token": -logprob,
        "perplexity": math.exp(-logprob) if good else math.nan,
        "entropy_rate": reference["entropy_rate"],
        "language_perplexity": reference["perplexity"],
        "distinct_1": distinct_n(sentences, 1),
        "distinct_2": distinct_n(sentences, 2),
        "distinct_3": distinct_n(sentences, 3),
        "repetition": sum(map(is_repetitive, sentences)) / len(sentences),
        "mean_length": statistics.fmean(lengths),
        "median_length": float(statistics.median(lengths)),
        "length_histogram": histogram,
        "reference_lengths": reference["lengths"],
        "length_tv": total_variation(histogram, reference["lengths"]),
    }


def share_difference(row_a: dict, row_b: dict, key: str = "grammatical") -> tuple[float, float]:
    """The difference of a share (``judge``'s ``key``) between two rows, a − b, and its standard error: binomial,
    the two samples independent, each of its row's ``n`` sentences."""
    a, b = row_a[key], row_b[key]
    return a - b, math.sqrt(a * (1 - a) / row_a["n"] + b * (1 - b) / row_b["n"])


def oracle_samples(lang: CourseLanguage, n: int = 2_000, seed: int = 1, *, reference: dict | None = None) -> dict:
    """The reference row: ``n`` sentences sampled at T = 1 from the oracle itself, judged like the rest.

    Its ``nll_per_token`` estimates the entropy rate (its perplexity ≈ ``language_perplexity``); use a
    ``seed`` other than the reference's so the two estimates are independent.
    """
    n = check_int("n", n, minimum=1)
    start = time.perf_counter()
    sentences = [s.words for s in lang.sample_many(n, seed)]
    row = {"name": "oracle (T=1)", "kind": "oracle", **judge(lang, sentences, reference=reference)}
    row["unfinished"] = 0.0
    row["seconds"] = time.perf_counter() - start
    row["sentences"] = sentences
    return row


# ---------------------------------------------------------------- running the strategies


def prompts_from_test(n: int = 20, lengths=(1, 2)) -> list[tuple[str, ...]]:
    """``n`` distinct prompts: the first 1 or 2 words (alternately) of the test split's sentences."""
    from course_utils.language.corpus import load_split

    n = check_int("n", n, minimum=1)
    out: list[tuple[str, ...]] = []
    for i, words in enumerate(load_split("test")):
        k = lengths[i % len(lengths)]
        prompt = tuple(words[:k])
        if len(prompt) == k and prompt not in out:
            out.append(prompt)
        if len(out) == n:
            break
    return out


def generate(model, vocab, config: dict, prompt, *, max_new_tokens: int, generator=None) -> g.Generation:
    """One generation after ``[<s>] + prompt`` with a ``STRATEGIES`` configuration."""
    prefix = g.encode_prompt(vocab, list(prompt))
    options = {k: v for k, v in config.items() if k != "kind"}
    kind = config["kind"]
    if kind == "greedy":
        return g.greedy(model, prefix, max_new_tokens)
    if kind == "beam":
        return g.beam_search(model, prefix, max_new_tokens=max_new_tokens, **options)
    if kind == "sample":
        return g.sample(model, prefix, max_new_tokens=max_new_tokens, generator=generator, **options)
    raise CourseInputError(f"unknown strategy kind {kind!r}: greedy, beam or sample")


def generate_many(model, vocab, config: dict, prompt, n: int, *, max_new_tokens: int,
                  generator=None) -> list[g.Generation]:  # fmt: skip
    """``n`` samples after ``[<s>] + prompt``, drawn side by side; a deterministic strategy's one generation."""
    if config["kind"] != "sample":
        return [generate(model, vocab, config, prompt, max_new_tokens=max_new_tokens)]
    options = {k: v for k, v in config.items() if k != "kind"}
    prefix = g.encode_prompt(vocab, list(prompt))
    return g.sample_many(model, prefix, n, max_new_tokens=max_new_tokens, generator=generator, **options)


def _sentence(vocab, prompt, generation: g.Generation) -> tuple[str, ...]:
    return tuple(prompt) + tuple(vocab.decode(generation.content))


def strategy_table(
    model,
    vocab,
    lang: CourseLanguage,
    prompts=None,
    *,
    samples_per_prompt: int = 20,
    seed: int = 0,
    max_new_tokens: int = 40,
    strategies: dict | None = None,
    reference: dict | None = None,
) -> list[dict]:
    """One row per strategy: ``judge``'s numbers on the sentences it generates, and how long it took.

    ``prompts``: word lists after ``<s>``; default ``[()]``, unconditional generation. The judged sentence is
    the prompt followed by the generated words (``</s>`` removed). A generation that reaches
    ``max_new_tokens`` without ``</s>`` is judged as if it ended there (the oracle usually rejects it) and
    counted in ``unfinished``. Greedy and beam search are deterministic: they give one sentence per prompt,
    so give them many prompts (``prompts_from_test``); sampling draws ``samples_per_prompt`` per prompt, side
    by side (``sample_many``), from a ``torch.Generator`` seeded with ``seed`` (the same seed for every
    strategy). Each row also keeps its ``sentences``.
    """
    prompts = [()] if prompts is None else [_words(p) for p in prompts]
    if not prompts:
        raise CourseInputError("give at least one prompt (() is the empty prompt: unconditional generation)")
    samples_per_prompt = check_int("samples_per_prompt", samples_per_prompt, minimum=1)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    strategies = STRATEGIES if strategies is None else strategies
    reference = language_reference(lang) if reference is None else reference
    rows = []
    for name, config in strategies.items():
        generator = torch.Generator().manual_seed(int(seed))
        repeats = 1 if config["kind"] in DETERMINISTIC else samples_per_prompt
        start = time.perf_counter()
        sentences, unfinished = [], 0
        with torch.no_grad():
            for prompt in prompts:
                for out in generate_many(model, vocab, config, prompt, repeats, max_new_tokens=max_new_tokens,
                                         generator=generator):  # fmt: skip
                    sentences.append(_sentence(vocab, prompt, out))
                    unfinished += not out.ended
        seconds = time.perf_counter() - start
        row = {"name": name, "kind": config["kind"], **judge(lang, sentences, reference=reference)}
        row["unfinished"] = unfinished / len(sentences)
        row["seconds"] = seconds
        row["sentences"] = sentences
        rows.append(row)
    return rows


def holtzman_comparison(rows) -> list[tuple[str, float, float]]:
    """Holtzman et al.'s Table 1 beside ours: (their method, their repetition %, our repetition %).

    ``rows``: ``strategy_table`` rows plus the ``oracle_samples`` row (which stands for "human"); a method
    whose row is missing gets NaN.
    """
    by_name = {row["name"]: row for row in rows}
    return [(method, theirs, 100 * by_name[HOLTZMAN_OURS[method]]["repetition"]
             if HOLTZMAN_OURS[method] in by_name else math.nan)
            for method, theirs in HOLTZMAN_TABLE_1.items()]  # fmt: skip


# (key, format, title): one line of the table is at most 88 characters, a projector's width
COLUMNS = (("name", "{:<15}", "strategy"), ("n", "{:>4}", "n"), ("grammatical", "{:>6.1%}", "gram"),
           ("nll_per_token", "{:>5.3f}", "nll/t"), ("perplexity", "{:>5.2f}", "ppl"),
           ("distinct_1", "{:>4.2f}", "d-1"), ("distinct_2", "{:>4.2f}", "d-2"), ("distinct_3", "{:>4.2f}", "d-3"),
           ("repetition", "{:>5.1%}", "rep"), ("mean_length", "{:>4.1f}", "len"),
           ("median_length", "{:>3.0f}", "med"), ("length_tv", "{:>4.2f}", "TV"),
           ("unfinished", "{:>5.1%}", "unfin"), ("seconds", "{:>5.2f}", "s"))  # fmt: skip


def format_table(rows) -> str:
    """The rows as a text table (with the language's entropy rate and perplexity in a last line)."""
    head = " ".join(f"{{:>{len(fmt.format(rows[0][key]))}}}".format(title) for key, fmt, title in COLUMNS)
    lines = [head]
    for row in rows:
        lines.append(" ".join(fmt.format(row[key]) for key, fmt, _ in COLUMNS))
    lines.append(f"language: entropy rate {rows[0]['entropy_rate']:.3f} nats/token, "
                 f"perplexity {rows[0]['language_perplexity']:.2f}")  # fmt: skip
    return "\n".join(lines)


def strategy_verdicts(by_name: dict, entropy_rate: float) -> list[tuple[str, bool]]:
    """Section 7's claims on the strategy table, each with its verdict: ``by_name`` maps a strategy's name to its
    row (``strategy_table``, ``oracle_samples`` as "oracle (T=1)"), ``entropy_rate`` is the language's."""
    search = [by_name[n] for n in ("greedy", "beam 4", "beam 16")]
    sampled = [by_name[n] for n in ("pure sampling", "T=1.2", "top-k 40", "top-p 0.9", "top-p 0.95")]
    length = {n: by_name[n]["mean_length"] for n in ("greedy", "beam 4", "beam 16", "beam 16 (norm)")}
    cold, hot, oracle = by_name["T=0.5"], by_name["T=1.2"], by_name["oracle (T=1)"]
    return [
        ("greedy and beam search write more probable text (nll/t < entropy rate - 0.2)",
         all(row["nll_per_token"] < entropy_rate - 0.2 for row in search)),
        ("sampling at T ≥ 1, top-k 40 and top-p ≥ .9 does not (nll/t ≥ entropy rate - 0.2)",
         all(row["nll_per_token"] >= entropy_rate - 0.2 for row in sampled)),
        ("the wider the beam, the shorter the sentence (greedy > beam 4 > beam 16)",
         length["greedy"] > length["beam 4"] > length["beam 16"]),
        ("eq. 13.16 makes beam 16 write longer sentences", length["beam 16 (norm)"] > length["beam 16"] + 1),
        ("sampled lengths are closer to the language's than beam 16's (TV)",
         all(row["length_tv"] < by_name["beam 16"]["length_tv"] for row in sampled)),
        ("greedy repeats more than the language", by_name["greedy"]["repetition"] > 2 * oracle["repetition"]),
        ("lower temperature: more probable, less diverse",
         cold["nll_per_token"] < hot["nll_per_token"] and cold["distinct_2"] < hot["distinct_2"]),
        ("beam 16 writes only grammatical sentences", by_name["beam 16"]["grammatical"] == 1.0),
        ("the oracle's own samples reproduce the entropy rate (within 0.05)",
         abs(oracle["nll_per_token"] - entropy_rate) < 0.05),
    ]  # fmt: skip


# ---------------------------------------------------------------- the beam search curse


def _length_curve(jobs, widths, normalisation, *, max_new_tokens: int, early_stopping) -> dict:
    """{normalisation: {width: mean length}} over ``jobs``: (model, prefix ids, ids → output length), and
    ``"changed"``: {normalisation: how many jobs' outputs differ at some width from the first width's}."""
    norms = (normalisation,) if isinstance(normalisation, str) else tuple(normalisation)
    widths = [check_int("width", w, minimum=1) for w in widths]
    curve: dict[str, dict] = {"changed": {}}
    with torch.no_grad():
        for norm in norms:
            curve[norm], outputs = {}, []
            for width in widths:
                found = [g.beam_search(model, prefix, width=width, max_new_tokens=max_new_tokens, normalisation=norm,
                                       early_stopping=early_stopping) for model, prefix, _ in jobs]  # fmt: skip
                curve[norm][width] = statistics.fmean(length_of(out) for out, (_, _, length_of) in zip(found, jobs))
                outputs.append([out.ids for out in found])
            curve["changed"][norm] = sum(any(row != first for row in rows[1:]) for first, *rows in zip(*outputs))
    return curve


def beam_length_curve(
    model,
    vocab,
    prompts=None,
    widths=(1, 2, 4, 8, 16),
    normalisation=("none", "mean"),
    *,
    max_new_tokens: int = 40,
    early_stopping=False,
) -> dict:
    """Mean output length (words of prompt + output, ``</s>`` not counted) by beam width.

    Returns ``{normalisation: {width: mean length}}`` and ``"changed"``: {normalisation: how many prompts' outputs
    differ at some width from the first width's}. Murray & Chiang (2018), "Correcting length bias in
    neural machine translation": wider beams find higher-probability, shorter outputs (the beam search
    curse); length normalisation ("mean": sum ÷ |Y|) counters it.
    """
    prompts = [()] if prompts is None else [_words(p) for p in prompts]
    jobs = [(model, g.encode_prompt(vocab, list(prompt)), lambda out, p=prompt: len(_sentence(vocab, p, out)))
            for prompt in prompts]  # fmt: skip
    return _length_curve(jobs, widths, normalisation, max_new_tokens=max_new_tokens, early_stopping=early_stopping)


def translation_length_curve(
    model,
    source_vocab,
    pairs,
    widths=(1, 2, 4, 8, 16),
    normalisation=("none", "mean"),
    *,
    max_new_tokens: int = 80,
    early_stopping=False,
) -> dict:
    """The same curve for a translation model (07's ``Seq2Seq`` or 08's ``TransformerTranslator``).

    ``pairs``: ``parallel`` pairs (``.source``, ``.target``); lengths are output words (``</s>`` not counted).
    Returns ``{normalisation: {width: mean length}}``, ``"changed"`` (as ``beam_length_curve``) and
    ``"reference"``: the references' mean length.
    """
    pairs = list(pairs)
    if not pairs:
        raise CourseInputError("give at least one sentence pair")
    jobs = []
    for pair in pairs:
        conditioned = g.SourceConditioned(model, source_vocab.encode(list(pair.source)))
        jobs.append((conditioned, conditioned.target_prefix, lambda out: len(out.content)))
    curve = _length_curve(jobs, widths, normalisation, max_new_tokens=max_new_tokens, early_stopping=early_stopping)
    curve["reference"] = statistics.fmean(len(pair.target) for pair in pairs)
    return curve


# ---------------------------------------------------------------- three length normalisations, one pool


def normalised_scores(logprob: float, length: int, alpha: float) -> dict[str, float]:
    """A finished hypothesis's score under each normalisation (``length`` generated tokens, ``</s>`` included)."""
    return {"sum": logprob, "eq. 13.16": logprob / g.length_divisor("mean", alpha, length),
            f"HF α={alpha:g}": logprob / g.length_divisor("hf", alpha, length),
            f"GNMT α={alpha:g}": logprob / g.length_divisor("gnmt", alpha, length)}  # fmt: skip


def rankings(pool, alpha: float) -> dict[str, list[int]]:
    """Each normalisation's order of ``pool`` [(ids, summed log P)], best first, as indices into the pool."""
    scores = [normalised_scores(logprob, len(ids), alpha) for ids, logprob in pool]
    return {name: sorted(range(len(pool)), key=lambda i: -scores[i][name]) for name in scores[0]}


def ranking_example(model, vocab, prompts, *, width: int = 16, alpha: float = 0.6, max_new_tokens: int = 30):
    """The first prompt whose pool of finished beam hypotheses the three normalisations do not all crown alike.

    The pool: the ``width`` finished hypotheses of an unnormalised beam search that never stops early
    (``early_stopping="never"``), each with its summed log-probability. Returns ``(prompt, pool, rankings)``
    or None when every prompt's winners agree.
    """
    for prompt in prompts:
        out = g.beam_search(model, g.encode_prompt(vocab, list(prompt)), width=width, max_new_tokens=max_new_tokens,
                            normalisation="none", early_stopping="never")  # fmt: skip
        pool = [(ids, score) for ids, score in out.hypotheses]  # "none": the score is the sum of log P
        order = rankings(pool, alpha)
        if len({ranked[0] for name, ranked in order.items() if name != "sum"}) > 1:
            return tuple(prompt), pool, order
    return None
