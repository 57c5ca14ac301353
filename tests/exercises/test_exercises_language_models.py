"""The self-checks of notebook 04: each passes right answers, fails wrong and unfinished ones, never raises."""

import math
import statistics
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from exercise_contract import contract_tests

from course_utils.exercises.language_models import (
    LATE_FOR_CLASS,
    check_add_k,
    check_bigram_probability,
    check_ffnn_input,
    check_perplexity,
)
from course_utils.models.classic.ngram import NGramLM
from course_utils.language.text_pipeline import Vocab

CHECKS = (check_bigram_probability, check_add_k, check_perplexity, check_ffnn_input)

# ----- answers to the bigram exercise -----


def pairs_of(sentences, *, markers=True):
    """All bigrams of the sentences, each sentence framed by <s> and </s> unless ``markers`` is False."""
    framed = [["<s>", *s, "</s>"] if markers else list(s) for s in sentences]
    return [pair for s in framed for pair in zip(s[:-1], s[1:])]


def unigram_count(sentences, token):
    return sum(s.count(token) for s in sentences) + (len(sentences) if token in ("<s>", "</s>") else 0)


def bigram(sentences, previous, word):
    pairs = pairs_of(sentences)
    return sum(p == (previous, word) for p in pairs) / max(1, sum(p[0] == previous for p in pairs))


def bigram_with_counters(sentences, previous, word):
    pairs = Counter(pairs_of(sentences))
    contexts = Counter(h for h, _ in pairs_of(sentences))
    return Fraction(pairs[previous, word], contexts[previous]) if contexts[previous] else 0


def bigram_in_place(sentences, previous, word):
    """Right, but frames the caller's lists in place: the check must hand it copies."""
    for s in sentences:
        s.insert(0, "<s>")
        s.append("</s>")
    pairs = [p for s in sentences for p in zip(s[:-1], s[1:])]
    return np.float64(sum(p == (previous, word) for p in pairs) / max(1, sum(p[0] == previous for p in pairs)))


def by_count_of_word(sentences, previous, word):
    pairs = pairs_of(sentences)
    return sum(p == (previous, word) for p in pairs) / max(1, unigram_count(sentences, word))


def joint(sentences, previous, word):
    pairs = pairs_of(sentences)
    return sum(p == (previous, word) for p in pairs) / len(pairs)


def without_markers(sentences, previous, word):
    pairs = pairs_of(sentences, markers=False)
    return sum(p == (previous, word) for p in pairs) / max(1, unigram_count(sentences, previous))


def context_without_end(sentences, previous, word):
    pairs = pairs_of(sentences, markers=False)
    return sum(p == (previous, word) for p in pairs) / max(1, sum(p[0] == previous for p in pairs))


def across_sentences(sentences, previous, word):
    stream = [w for s in sentences for w in s]  # one long text: the last word of a sentence precedes the next
    pairs = list(zip(stream[:-1], stream[1:]))
    return sum(p == (previous, word) for p in pairs) / max(1, unigram_count(sentences, previous))


def divides_by_zero(sentences, previous, word):
    pairs = pairs_of(sentences)
    return sum(p == (previous, word) for p in pairs) / sum(p[0] == previous for p in pairs)


def nan_when_unseen(sentences, previous, word):
    pairs = pairs_of(sentences)
    contexts = sum(p[0] == previous for p in pairs)
    return sum(p == (previous, word) for p in pairs) / contexts if contexts else float("nan")


def add_k(count_hw, count_h, k, vocab_size):
    return (count_hw + k) / (count_h + k * vocab_size)


RIGHT = [
    (check_bigram_probability, bigram),
    (check_bigram_probability, bigram_with_counters),
    (check_bigram_probability, bigram_in_place),
    (check_add_k, add_k),
    (check_add_k, lambda c, h, k, v: Fraction(c + k) / Fraction(h + k * v)),
    (check_add_k, lambda c, h, k, v: torch.tensor((c + k) / (h + k * v))),  # float32 is close enough
    (check_perplexity, lambda lp: math.exp(-sum(lp) / len(lp))),
    (check_perplexity, lambda lp: math.exp(-statistics.fmean(lp))),
    (check_perplexity, lambda lp: np.exp(-np.mean(lp))),
    (check_perplexity, lambda lp: torch.tensor(lp, dtype=torch.float64).mean().neg().exp()),
    (check_ffnn_input, lambda E, window: torch.cat([E[w] for w in window])),
    (check_ffnn_input, lambda E, window: E[window].flatten()),
    (check_ffnn_input, lambda E, window: (F.one_hot(torch.tensor(window), len(E)).float() @ E).reshape(-1)),
    (check_ffnn_input, lambda E, window: F.embedding(torch.tensor(window), E).view(-1)),
]

WRONG = [
    (check_bigram_probability, by_count_of_word, "count(word)"),
    (check_bigram_probability, joint, "joint probability"),
    (check_bigram_probability, without_markers, "<s> w1 .. wn </s>"),
    (check_bigram_probability, across_sentences, "inside each sentence"),
    (check_bigram_probability, context_without_end, "followed by </s>"),
    (check_bigram_probability, divides_by_zero, "ZeroDivisionError"),
    (check_bigram_probability, nan_when_unseen, "return 0.0"),
    (check_bigram_probability, lambda sentences, previous, word: 0.5, "P(class | for) = 2/3"),
    (check_bigram_probability, lambda sentences, previous, word: "2/3", "one number"),
    (check_bigram_probability, lambda sentences, previous, word: True, "one number"),
    (check_add_k, lambda c, h, k, v: (c + k) / h, "k·|V| too"),
    (check_add_k, lambda c, h, k, v: (c + k) / (h + k), "not k"),
    (check_add_k, lambda c, h, k, v: (c + k) / (h + v), "multiply |V| by k"),
    (check_add_k, lambda c, h, k, v: c / (h + k * v), "numerator"),
    (check_add_k, lambda c, h, k, v: (c + 1) / (h + v), "add-one"),
    (check_add_k, lambda c, h, k, v: (c + (k or 1)) / (h + (k or 1) * v), "add-one"),  # wrong at k = 0 only
    (check_add_k, lambda c, h, k, v: (c + k) / (h + k * v) / 2, "(c(h, w) + k) / (c(h) + k·|V|)"),
    (check_add_k, lambda c, h, k, v: (c + k) / (h + k * v) if h else (c + k) / h, "leave k·|V| out"),
    (check_add_k, lambda c, h, k, v: [c, h], "one number"),
    (check_perplexity, lambda lp: 2 ** (-sum(lp) / len(lp)), "natural logs"),
    (check_perplexity, lambda lp: math.exp(sum(lp) / len(lp)), "minus sign"),
    (check_perplexity, lambda lp: math.exp(-sum(lp)), "do not sum"),
    (check_perplexity, lambda lp: -sum(lp) / len(lp), "exponentiate it"),
    (check_perplexity, lambda lp: sum(math.exp(-x) for x in lp) / len(lp), "average the log-probs first"),
    (check_perplexity, lambda lp: math.exp(-sum(lp) / len(lp)) + 1, "exp(−(mean"),
    (check_perplexity, lambda lp: math.exp(-statistics.fmean([x for x in lp if x > -math.inf])), "perplexity is inf"),
    (check_perplexity, lambda lp: math.prod(math.exp(x) for x in lp) ** (-1 / len(lp)), "probability 0 should give"),
    (check_perplexity, lambda lp: lp, "one number"),
    (check_ffnn_input, lambda E, window: E[window].sum(0), "you summed"),
    (check_ffnn_input, lambda E, window: E[window].mean(0), "you averaged"),
    (check_ffnn_input, lambda E, window: E[window].amax(0), "you pooled"),
    (check_ffnn_input, lambda E, window: E[window], "stacked"),
    (check_ffnn_input, lambda E, window: E[window[::-1]].flatten(), "oldest word"),
    (check_ffnn_input, lambda E, window: E[window].T.flatten(), "interleaves"),
    (check_ffnn_input, lambda E, window: E[[w - 1 for w in window]].flatten(), "row i of E"),
    (check_ffnn_input, lambda E, window: torch.cat([E[window[0]], E[window[1]], E[window[2]]]), "N·d = 4·3 = 12"),
    (check_ffnn_input, lambda E, window: E[100], "IndexError"),
]


# The same right answers as NumPy arrays: a check judges the value, not the type (issue 33).
RIGHT += [
    (check_ffnn_input, lambda E, window: E[window].flatten().numpy()),
]
test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


def test_the_lecture_example_is_in_the_corpus():
    assert bigram(LATE_FOR_CLASS, "for", "class") == pytest.approx(2 / 3)  # count(for class) / count(for)


def test_wrong_bigrams_are_told_the_expected_counts(capsys):
    check_bigram_probability(by_count_of_word)
    assert "2/3 = 0.6667; yours gives 0.5000" in capsys.readouterr().out


def test_add_k_formula_matches_ngram_lm():
    vocab = Vocab.build(LATE_FOR_CLASS)
    for k in (0.1, 1.0, 2.5):
        model = NGramLM(vocab, 2, smoothing="add-k", k=k).fit(LATE_FOR_CLASS)
        predictable = len(vocab) - 3  # all but <pad>, <s>, <mask>
        for previous, word in [("for", "class"), ("<s>", "anqi"), ("class", "</s>"), ("late", "over")]:
            counts = model.count([previous, word]), model.context_count([previous])
            assert add_k(*counts, k, predictable) == pytest.approx(model.prob(word, [previous]), rel=1e-12)
