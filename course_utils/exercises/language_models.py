"""Self-checks for notebook 04's exercises (n-gram and feed-forward language models).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: the MLE bigram probability, the add-k estimate, the
perplexity of a sentence's token log-probabilities, and the input e of Bengio's feed-forward model.
"""

from __future__ import annotations

import math

import torch

from course_utils.exercises.answers import as_tensors, shown
from course_utils.exercises import answer_of, close, never_raises, numeric_answer, verdict
from course_utils.models.lm import evaluate, token_logprobs
from course_utils.models.classic.neural_lm import FeedForwardLM
from course_utils.models.classic.ngram import NGramLM
from course_utils.language.text_pipeline import BOS, EOS, SPECIALS, Vocab

# Tiny corpora for the bigram exercise (sentences as lists of words, without <s> and </s>).
LATE_FOR_CLASS = [
    "eleni was late for class".split(),
    "anqi was late for lunch".split(),
    "anqi was early for class".split(),
    "class was over".split(),
    "the class was long".split(),
]
REPEATS = ["a a a b".split(), "b a".split()]
BIGRAM_CORPORA = {"late for class": LATE_FOR_CLASS, "repeats": REPEATS}

# (corpus, previous, word, what the case tests): the first failing case decides the hint.
_BIGRAM_CASES = [
    ("late for class", "for", "class", "formula"),
    ("late for class", "was", "late", "formula"),
    ("repeats", "a", "a", "formula"),
    ("late for class", "class", "anqi", "boundary"),
    ("late for class", BOS, "anqi", "markers"),
    ("late for class", "class", EOS, "markers"),
    ("repeats", "a", EOS, "markers"),
    ("late for class", "late", "class", "unseen pair"),
    ("late for class", "dog", "was", "unseen context"),
]
_BIGRAM_HINTS = {
    "markers": f"read each sentence as {BOS} w1 .. wn {EOS}: add the two markers before counting pairs",
    "boundary": "count pairs inside each sentence only: the last word of one sentence does not precede the next one",
    "unseen pair": "a pair never seen has count 0, so its probability is 0.0",
    "unseen context": "a context never seen has count 0, so there is nothing to divide: return 0.0 there",
}

_ADD_K_CASES = [(2, 3, 1, 10), (0, 3, 1, 10), (5, 20, 0.5, 8), (2, 3, 0, 10), (0, 0, 1, 10), (0, 0, 0.1, 4)]

# ((V, N, d, seed) of a reference FeedForwardLM, windows of N ids): a reversed window and a repeated id included
_FFNN_CASES = [((12, 3, 4, 0), [[2, 7, 9], [9, 7, 2], [5, 5, 11]]), ((9, 4, 3, 1), [[2, 2, 6, 8]])]


def _bigram_counts(corpus: str, previous: str, word: str) -> dict[str, float]:
    """The reference P(word | previous) and the counts a hint may need, from ``NGramLM``."""
    sentences = BIGRAM_CORPORA[corpus]
    words = sorted({w for s in sentences for w in s} | ({previous, word} - set(SPECIALS)))
    model = NGramLM(Vocab(words), 2, smoothing="none").fit(sentences)
    return {
        "p": model.prob(word, [previous]),
        "pair": model.count([previous, word]),
        "previous": model.context_count([previous]),
        "previous ends": model.count([previous, EOS]),
        "word": model.count([word]),
        "pairs": model.context_count([]),
    }


def _bigram_hint(tag: str, counts: dict[str, float], answer: float | None) -> str:
    """Why the answer is wrong, from what the case tests and which mistaken formula it matches."""
    if tag in _BIGRAM_HINTS:
        return _BIGRAM_HINTS[tag]
    if not 0 <= answer <= 1:
        return "a probability lies between 0 and 1: divide count(previous word) by count(previous)"
    if counts["word"] and close(answer, counts["pair"] / counts["word"]):
        return "you divided by count(word): divide by count(previous), how often the context occurred"
    if close(answer, counts["pair"] / counts["pairs"]):
        return "that is the joint probability of the pair among all pairs: divide by count(previous) instead"
    not_last = counts["previous"] - counts["previous ends"]
    if not_last and close(answer, counts["pair"] / not_last):
        return f"count(previous) must include the times it ends a sentence (is followed by {EOS})"
    return "divide count(previous word) by count(previous)"


@never_raises
def check_bigram_probability(fn) -> bool:
    """Exercise: ``fn(sentences, previous, word)`` is the MLE bigram P(word | previous) = c(previous word) / c(previous).

    Each sentence (a list of words) is read as ``<s> w1 .. wn </s>``; ``previous`` may be ``"<s>"`` and
    ``word`` may be ``"</s>"``. A context never seen returns 0.0. Checked on the small corpora of
    ``BIGRAM_CORPORA``.
    """
    for corpus, previous, word, tag in _BIGRAM_CASES:
        counts = _bigram_counts(corpus, previous, word)
        crash_hint = _BIGRAM_HINTS[tag] if tag == "unseen context" else ""
        value, why = numeric_answer(fn, (BIGRAM_CORPORA[corpus], previous, word), crash_hint)
        if why:
            return verdict(False, why)
        if not close(value, counts["p"]):
            seen = counts["previous"] > 0
            fraction = f"{counts['pair']}/{counts['previous']}" if seen else f"0 ({previous} never occurs)"
            want, got = shown(counts["p"], value)
            return verdict(
                False,
                f"on the corpus '{corpus}', P({word} | {previous}) = {fraction} = {want}; yours gives "
                f"{got}. Hint: {_bigram_hint(tag, counts, value)}",
            )
    return verdict(True, f"all {len(_BIGRAM_CASES)} bigram probabilities are c(previous word) / c(previous)")


def _add_k_hint(answer: float, count_hw: float, count_h: float, k: float, vocab_size: int) -> str:
    """Name the mistaken formula the answer matches, if any."""
    mistakes = [
        ((count_hw + k) / count_h if count_h else None, "the denominator needs k·|V| too: each of the |V| words got k"),
        ((count_hw + k) / (count_h + k), "add k once for every vocabulary word: k·|V| in the denominator, not k"),
        ((count_hw + k) / (count_h + vocab_size), "multiply |V| by k in the denominator: k·|V|"),
        (count_hw / (count_h + k * vocab_size), "add k to the numerator too: c(h, w) + k"),
        ((count_hw + 1) / (count_h + vocab_size), "use the k you are given: add-one (Laplace) is only k = 1"),
    ]
    for value, hint in mistakes:
        if value is not None and close(answer, value):
            return hint
    return "(c(h, w) + k) / (c(h) + k·|V|)"


@never_raises
def check_add_k(fn) -> bool:
    """Exercise: ``fn(count_hw, count_h, k, vocab_size)`` is the add-k estimate (c(h, w) + k) / (c(h) + k·|V|)."""
    for count_hw, count_h, k, vocab_size in _ADD_K_CASES:
        expected = (count_hw + k) / (count_h + k * vocab_size)
        crash_hint = "with c(h) = 0 the denominator is k·|V|; did you leave k·|V| out?" if count_h == 0 else ""
        value, why = numeric_answer(fn, (count_hw, count_h, k, vocab_size), crash_hint)
        if why:
            return verdict(False, why)
        if not close(value, expected):
            case = f"c(h, w)={count_hw}, c(h)={count_h}, k={k}, |V|={vocab_size}"
            hint = _add_k_hint(value, count_hw, count_h, k, vocab_size)
            want, got = shown(expected, value)
            return verdict(False, f"with {case} the estimate is {want}; yours gives {got}. Hint: {hint}")
    return verdict(True, f"add-k is right on all {len(_ADD_K_CASES)} cases, k = 0 and unseen contexts included")


def _model_logprobs() -> tuple[list[float], float]:
    """Token log-probs of a sentence under a small add-one bigram model, and ``evaluate``'s perplexity."""
    vocab = Vocab.build(LATE_FOR_CLASS)
    model = NGramLM(vocab, 2, smoothing="add-k", k=1.0).fit(LATE_FOR_CLASS)
    sentence = "anqi was late for class".split()
    return token_logprobs(model, vocab, sentence), evaluate(model, vocab, [sentence]).perplexity


def _perplexity_cases() -> list[tuple[list[float], float, str]]:
    """(log-probs, expected perplexity, what they are), the last one from a real model."""
    cases = [
        ([math.log(0.5)] * 4, 2.0, "four tokens of probability 1/2"),
        ([math.log(p) for p in (0.25, 0.5, 0.125, 1.0)], 64**0.25, "probabilities 1/4, 1/2, 1/8, 1"),
        ([math.log(1 / 10)] * 3, 10.0, "a uniform guess among 10 words"),
        ([0.0, 0.0], 1.0, "a model that is always sure and right"),
        ([math.log(0.5), -math.inf], math.inf, "a token of probability 0"),
    ]
    logprobs, perplexity = _model_logprobs()
    return cases + [(logprobs, perplexity, "an add-one bigram model on 'anqi was late for class'")]


def _perplexity_hint(answer: float, logprobs: list[float]) -> str:
    """Name the mistaken formula the answer matches, if any."""
    if math.isinf(sum(logprobs)):
        return "one −inf log-prob makes the mean −inf, so the perplexity is inf"
    mean = sum(logprobs) / len(logprobs)
    mistakes = [
        (2 ** (-mean), "these are natural logs: use exp(−mean), not 2 ** (−mean)"),
        (math.exp(mean), "you forgot the minus sign: exp(−mean); a perplexity is never below 1"),
        (math.exp(-sum(logprobs)), "average the log-probs over the tokens before exponentiating; do not sum them"),
        (-mean, "that is the mean negative log-prob (the loss): exponentiate it"),
        (sum(math.exp(-lp) for lp in logprobs) / len(logprobs), "average the log-probs first, then take exp once"),
    ]
    for value, hint in mistakes:
        if close(answer, value):
            return hint
    return "exp(−(mean of the log-probs))"


@never_raises
def check_perplexity(fn) -> bool:
    """Exercise: ``fn(logprobs)`` is the perplexity exp(−mean) of a sentence's natural-log token probabilities."""
    cases = _perplexity_cases()
    for logprobs, expected, what in cases:
        crash_hint = "a token of probability 0 should give perplexity inf, not an error" if math.isinf(expected) else ""
        value, why = numeric_answer(fn, (list(logprobs),), crash_hint)
        if why:
            return verdict(False, why)
        if not close(value, expected):
            hint = _perplexity_hint(value, logprobs)
            want, got = shown(expected, value)
            return verdict(False, f"on {what} the perplexity is {want}; yours gives {got}. Hint: {hint}")
    return verdict(True, f"perplexity is right on all {len(cases)} cases, a real bigram model's sentence included")


@torch.no_grad()
def _projection(model: FeedForwardLM, window: list[int]) -> torch.Tensor:
    """The e that ``FeedForwardLM.forward`` builds from ``window``: (N·d,)."""
    idx = torch.tensor([window])  # (1, N)
    return model.embedding(model.context_windows(idx)).flatten(2)[0, -1]  # (N·d,): the last position reads window


def _ffnn_hint(answer: torch.Tensor, E: torch.Tensor, window: list[int]) -> str:
    """Name the mistake: summing, averaging, stacking, reversing or interleaving the embeddings."""
    rows = E[window]  # (N, d)
    n, d = rows.shape
    if answer.shape == (d,):
        pooled = {"summed": rows.sum(0), "averaged": rows.mean(0)}
        how = next((name for name, value in pooled.items() if torch.allclose(answer, value)), "pooled")
        return (
            f"a vector of d={d}: you {how} the embeddings. Concatenate them (torch.cat) into N·d={n * d} numbers: "
            "a sum or mean forgets the word order ('dog bites man' = 'man bites dog')"
        )
    if answer.shape == (n, d):
        return f"that is the N embeddings stacked (N, d) = {(n, d)}: flatten them into one vector of N·d={n * d}"
    if answer.shape != (n * d,):
        return f"e must be one vector of N·d = {n}·{d} = {n * d} numbers; yours has shape {tuple(answer.shape)}"
    if torch.allclose(answer, rows.flip(0).flatten()):
        return "keep the window's order: the oldest word's embedding first"
    if torch.allclose(answer, rows.T.flatten()):
        return "concatenate whole rows, E[w1] then E[w2] ...: yours interleaves their coordinates"
    return "row i of E is the embedding of word id i: e = [E[w1]; E[w2]; ...; E[wN]]"


@never_raises
def check_ffnn_input(fn) -> bool:
    """Exercise: ``fn(E, window)`` is Bengio's projection layer e = [E[w1]; ...; E[wN]]: (V, d), N ids → (N·d,).

    Row i of E is the embedding of word id i; the window's embeddings are concatenated, the oldest word's first.
    """
    checked = 0
    for (vocab_size, context_size, embed_dim, seed), windows in _FFNN_CASES:
        model = FeedForwardLM(vocab_size, context_size, embed_dim=embed_dim, seed=seed)
        E = model.embedding.weight.detach().clone()  # (V, d)
        for window in windows:
            expected = _projection(model, window)  # (N·d,)
            answer, why = answer_of(fn, (E, list(window)))
            if why:
                return verdict(False, why)
            parts, why = as_tensors(answer, 1, "one vector e (N·d,)")
            if why:
                return verdict(False, why)
            answer = parts[0].to(expected.dtype)
            if answer.shape == expected.shape and torch.allclose(answer, expected, atol=1e-6):
                checked += 1
                continue
            hint = _ffnn_hint(answer, E, window)
            return verdict(False, f"not e yet for the window {window} (V={vocab_size}, d={embed_dim}). Hint: {hint}")
    return verdict(True, f"your e is the concatenation [E[w1]; ...; E[wN]] on {checked} windows, order kept")
