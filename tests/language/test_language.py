"""The course language's oracle is exact: distributions, sentence scores, sampling, failures."""

import math
import re
from collections import Counter
from functools import lru_cache

import pytest

from course_utils import CourseInputError
from course_utils.language import grammar as language
from course_utils.language.grammar import EOS, CourseLanguage, describe, rules

N_SAMPLES = 20_000  # for the frequency checks
SIGMAS = 5.0  # tolerance of each frequency check, in binomial standard errors
HELD_OUT = "i have to make sure that the dog gets fed ."


@pytest.fixture(scope="module")
def full():
    return CourseLanguage()


@pytest.fixture(scope="module")
def training():
    return CourseLanguage(include_held_out=False)


@pytest.fixture(scope="module", params=[True, False], ids=["full", "training"])
def lang(request, full, training):
    return full if request.param else training


@pytest.fixture(scope="module")
def samples(full):
    return full.sample_many(N_SAMPLES, seed=2024)


# --- an independent exact probability: sum over every derivation of the rules ------------------


@lru_cache(maxsize=None)
def starts(symbols: tuple) -> tuple[frozenset, bool]:
    """The words ``symbols`` can begin with, and whether they can derive nothing at all."""
    if not symbols:
        return frozenset(), True
    head, rest = symbols[0], symbols[1:]
    if isinstance(head, str):
        return frozenset([str(head)]), False
    first, empty = frozenset(), False
    for _, rhs in rules(head):
        rhs_first, rhs_empty = starts(rhs)
        first, empty = first | rhs_first, empty or rhs_empty
    if empty:
        rest_first, rest_empty = starts(rest)
        return first | rest_first, rest_empty
    return first, False


def can_derive(symbols: tuple, words: tuple) -> bool:
    """A quick necessary condition: the first word fits, or both are empty."""
    first, empty = starts(symbols)
    return words[0] in first if words else empty


@lru_cache(maxsize=None)
def derivation_probs(symbols: tuple, words: tuple) -> tuple[float, ...]:
    """The probability of each derivation of exactly ``words`` from ``symbols`` (plain str = word)."""
    if not can_derive(symbols, words):
        return ()
    if not symbols:
        return (1.0,)
    head, rest = symbols[0], symbols[1:]
    if isinstance(head, str):  # a tagged word compares equal to its text only through str()
        return derivation_probs(rest, words[1:]) if words[0] == str(head) else ()
    if rest:
        splits = [k for k in range(len(words) + 1) if can_derive(rest, words[k:])]
        return tuple(a * b for k in splits for a in derivation_probs((head,), words[:k])
                     for b in derivation_probs(rest, words[k:]))  # fmt: skip
    return tuple(p * d for p, rhs in rules(head) for d in derivation_probs(rhs, words))


def sentence_derivations(lang: CourseLanguage, words) -> tuple[float, ...]:
    """Every derivation of a whole sentence (with its end marker) from the start symbol."""
    return derivation_probs(lang.start, tuple(words) + (EOS,))


# --- distributions and the vocabulary ----------------------------------------------------------------


def test_every_reachable_stack_has_a_next_word_distribution_that_sums_to_one(lang):
    stacks = lang.reachable_stacks()
    assert len(stacks) > 100
    for stack in stacks:
        probs = [edge.prob for edge in lang.edges(stack)]
        assert probs and min(probs) > 0, stack
        assert abs(math.fsum(probs) - 1.0) < 1e-12, stack


def test_next_distributions_of_sampled_prefixes_sum_to_one(full, samples):
    for sentence in samples[:40]:
        for i in range(len(sentence.words) + 1):
            dist = full.next_distribution(sentence.words[:i])
            assert abs(math.fsum(dist.values()) - 1.0) < 1e-12


def test_the_vocabulary_has_at_least_300_lowercase_word_types(full, samples):
    vocab = full.vocabulary
    assert len(vocab) >= 300
    assert all(w == w.lower() and w and " " not in w for w in vocab)
    assert EOS not in vocab
    assert {w for s in samples for w in s.words} <= vocab


# --- sampling ----------------------------------------------------------------------------------------


def test_sampling_is_deterministic_for_a_seed_and_differs_between_seeds(full):
    first = full.sample_many(60, seed=5)
    assert first == CourseLanguage().sample_many(60, seed=5)
    assert [s.words for s in first] != [s.words for s in full.sample_many(60, seed=6)]
    assert all(s.words and len(s.tags) == len(s.words) for s in first)


# --- scores ------------------------------------------------------------------------------------------


def test_a_sentence_logprob_is_the_sum_of_its_next_token_logprobs(full, samples):
    for sentence in samples[:30]:
        words = sentence.words
        steps = [math.log(full.next_distribution(words[:i])[w]) for i, w in enumerate(words + (EOS,))]
        score = full.score(words)
        assert score.grammatical and len(score.token_logprobs) == len(words) + 1
        assert score.token_logprobs == pytest.approx(steps, rel=1e-12, abs=1e-12)
        assert score.logprob == pytest.approx(math.fsum(steps), rel=1e-12, abs=1e-12)
        assert full.prefix_logprob(words) == pytest.approx(math.fsum(steps[:-1]), rel=1e-12, abs=1e-12)


def test_sampled_sentences_get_the_probability_summed_over_all_their_derivations(lang):
    ambiguous = 0
    for sentence in lang.sample_many(500, seed=11):
        derivations = sentence_derivations(lang, sentence.words)
        assert derivations, sentence.text()
        ambiguous += len(derivations) > 1
        assert lang.score(sentence.words).prob == pytest.approx(math.fsum(derivations), rel=1e-9)
    assert ambiguous > 0  # the check above really covered sums over several derivations


def test_an_ambiguous_sentence_gets_the_sum_of_its_two_derivations(full):
    words = "they read the book .".split()  # "read": present or past, the same string
    derivations = sentence_derivations(full, words)
    assert len(derivations) == 2 and min(derivations) > 0
    assert full.score(words).prob == pytest.approx(sum(derivations), rel=1e-12)
    assert full.score(words).prob > 1.5 * max(derivations)


def test_the_independent_computation_gives_zero_to_ungrammatical_strings(full):
    assert sentence_derivations(full, "the dog run .".split()) == ()
    assert sentence_derivations(full, "the dog runs".split()) == ()


# --- sampled frequencies against the oracle ----------------------------------------------------


def assert_counts_match(counts: Counter, expected: dict, n: int) -> None:
    """Each count within SIGMAS binomial standard errors, no count outside the support, chi-square."""
    assert set(counts) <= set(expected), set(counts) - set(expected)
    for outcome, p in expected.items():
        mean, sd = n * p, math.sqrt(n * p * (1 - p))
        assert abs(counts[outcome] - mean) <= SIGMAS * sd + 1, (outcome, counts[outcome], mean)
    chi2, df = chi_square(counts, expected, n)
    assert chi2 <= chi_square_bound(df), (chi2, df)


def chi_square(counts: Counter, expected: dict, n: int) -> tuple[float, int]:
    """Pearson's statistic over outcomes expected >= 5 times, the rest pooled into one bin."""
    big = [o for o, p in expected.items() if n * p >= 5]
    observed = [counts[o] for o in big] + [n - sum(counts[o] for o in big)]
    means = [n * expected[o] for o in big] + [n * (1 - math.fsum(expected[o] for o in big))]
    if means[-1] < 5:  # nothing worth a bin was pooled
        observed, means = observed[:-1], means[:-1]
    return sum((o - m) ** 2 / m for o, m in zip(observed, means)), len(means) - 1


def chi_square_bound(df: int, z: float = SIGMAS) -> float:
    """The chi-square quantile ``z`` normal sigmas up (Wilson-Hilferty approximation)."""
    c = 2 / (9 * df)
    return df * (1 - c + z * math.sqrt(c)) ** 3


def test_the_first_word_frequencies_match_the_oracle(full, samples):
    counts = Counter(s.words[0] for s in samples)
    expected = {w: p for w, p in full.next_distribution([]).items() if w != EOS}
    assert len(expected) > 20
    assert_counts_match(counts, expected, len(samples))


def test_the_first_two_words_frequencies_match_the_oracle(full, samples):
    counts = Counter(s.words[:2] for s in samples)
    expected = {}
    for w1, p1 in full.next_distribution([]).items():
        for w2, p2 in full.next_distribution([w1]).items():
            expected[(w1, w2)] = p1 * p2
    assert math.fsum(expected.values()) == pytest.approx(1.0, abs=1e-12)
    for pair in list(counts)[:50]:
        assert math.exp(full.prefix_logprob(pair)) == pytest.approx(expected[pair], rel=1e-12)
    assert_counts_match(counts, expected, len(samples))


@pytest.mark.parametrize("prefix", [("the",), ("i",), ("the", "dog")])
def test_the_word_after_a_frequent_prefix_matches_the_oracle(full, samples, prefix):
    k = len(prefix)
    after = Counter((s.words + (EOS,))[k] for s in samples if s.words[:k] == prefix)
    n = sum(after.values())
    assert n >= 100
    assert n == pytest.approx(len(samples) * math.exp(full.prefix_logprob(prefix)), abs=SIGMAS * math.sqrt(n) + 1)
    assert_counts_match(after, full.next_distribution(prefix), n)


# --- the held-out compositions --------------------------------------------------------------------


def test_the_held_out_composition_is_absent_from_training_but_in_the_full_language(full, training):
    score = training.score(HELD_OUT)
    assert score.prob == 0.0 and score.logprob == -math.inf
    assert score.failure.position == 7 and score.failure.word == "dog"
    assert full.score(HELD_OUT).prob > 0
    assert training.score(HELD_OUT.replace("dog", "cat")).prob > 0


def test_dog_stays_frequent_elsewhere_in_the_training_language(training):
    sentences = training.sample_many(5000, seed=3)
    assert sum("dog" in s.words for s in sentences) >= 50
    assert training.next_distribution(["the"])["dog"] > 0.005


# --- ungrammatical strings: probability 0 and an account, never an exception ------------------


@pytest.mark.parametrize(
    "text, position, word, expect, reason",
    [
        ("the dog run .", 2, "run", "runs", "does not allow"),
        ("the dog runs", 3, EOS, ".", "not finished"),
        ("the zebra runs .", 1, "zebra", "cat", "not a word"),
        ("", 0, EOS, "the", "not finished"),
    ],
    ids=["agreement", "unfinished", "unknown-word", "empty"],
)
def test_an_ungrammatical_string_gets_probability_zero_and_an_account(full, text, position, word, expect, reason):
    score = full.score(text)
    assert not score.grammatical and score.prob == 0.0 and score.logprob == -math.inf
    failure = score.failure
    assert (failure.position, failure.word) == (position, word)
    assert failure.prefix == tuple(text.split())[:position]
    assert expect in dict(failure.expected_words) and failure.expected
    assert reason in failure.reason
    message = str(failure)
    assert f"'{word}'" in message and f"word {position + 1}" in message and reason in message


def test_every_kind_of_word_source_is_described_in_plain_english(full):
    sources = {e.source for stack in full.reachable_stacks() for e in full.edges(stack)}
    missing = sorted({s[0] for s in sources if isinstance(s, tuple) and s[0] not in language._DESCRIPTIONS})
    assert not missing, f"no description for {missing}"
    bad_articles = sorted({describe(s) for s in sources if re.search(r"\ba [aeiou]", describe(s))})
    assert not bad_articles, bad_articles


@pytest.mark.parametrize("bad", [5, None, ["the", 3], [b"the", b"dog"]])
def test_a_sentence_that_is_not_text_raises_course_input_error(full, bad):
    for method in (full.score, full.next_distribution, full.prefix_logprob):
        with pytest.raises(CourseInputError, match="string"):
            method(bad)


def test_any_iterable_of_words_is_read_as_the_same_sentence(full):
    words = "the dog runs .".split()
    expected = full.score(words).logprob
    assert full.score(tuple(words)).logprob == expected
    assert full.score(iter(words)).logprob == expected
    assert full.score(w for w in words).logprob == expected


def test_next_distribution_of_an_ungrammatical_prefix_raises_with_the_account(full):
    with pytest.raises(CourseInputError, match=r"'run' \(word 3\) cannot follow 'the dog'"):
        full.next_distribution("the dog run")
    assert full.prefix_logprob("the dog run") == -math.inf


# --- masked words -------------------------------------------------------------------------------------


@pytest.mark.parametrize("left, right", [("he ate the cake", "the fork ."), ("the dog", "the cat .")])
def test_the_masked_distribution_equals_the_hand_computation_from_scores(full, left, right):
    left, right = left.split(), right.split()
    joint = {w: full.score(left + [w] + right).prob for w in sorted(full.vocabulary)}
    total = math.fsum(joint.values())
    by_hand = {w: p / total for w, p in joint.items() if p > 0}
    masked = full.masked_distribution(left, right)
    assert masked.keys() == by_hand.keys()
    for w, p in by_hand.items():
        assert masked[w] == pytest.approx(p, rel=1e-9)
    assert math.fsum(masked.values()) == pytest.approx(1.0, abs=1e-12)
    if left[:2] == ["he", "ate"]:  # the lecture's P(with | he ate the cake <mask> the fork)
        assert masked["with"] == pytest.approx(1.0, rel=1e-12)


def test_a_mask_that_no_word_fits_raises_course_input_error(full):
    with pytest.raises(CourseInputError, match="no word fits"):
        full.masked_distribution("the dog".split(), "the the .".split())


# ---------------------------------------------------------------- spelling

IRREGULAR_PLURALS = {"man": "men", "woman": "women", "child": "children", "wolf": "wolves", "mouse": "mice",
                     "potato": "potatoes", "tomato": "tomatoes", "loaf": "loaves", "knife": "knives"}  # fmt: skip


def _english_plural(singular):
    """The rules, written out once more here: -ch/-sh/-s/-x/-z take -es; consonant + y takes -ies."""
    if re.search(r"(ch|sh|s|x|z)$", singular):
        return singular + "es"
    if re.search(r"[^aeiou]y$", singular):
        return singular[:-1] + "ies"
    return singular + "s"


def test_every_noun_spells_its_plural_by_the_english_rules_or_is_a_listed_irregular():
    from course_utils.language.lexicon import NOUNS

    nouns = [noun for group in NOUNS.values() for noun in group]
    wrong = [
        (n.singular, n.plural)
        for n in nouns
        if n.plural != IRREGULAR_PLURALS.get(n.singular, _english_plural(n.singular))
    ]
    assert not wrong, f"misspelled plurals: {wrong}"
    assert {"beaches", "churches", "libraries", "foxes", "cherries", "monkeys", "keys"} <= {n.plural for n in nouns}


def test_every_verb_spells_its_third_person_singular_by_the_same_rules():
    from course_utils.language.lexicon import INTRANSITIVE, VERBS

    forms = [(v.base, v.third) for v in VERBS + INTRANSITIVE]
    wrong = [(base, third) for base, third in forms if third != _english_plural(base)]
    assert not wrong, f"misspelled verb forms: {wrong}"


def test_no_word_of_the_language_has_the_misspelled_plural_endings(full):
    bad = sorted(w for w in full.vocabulary if re.search(r"(ch|sh|x|z)s$|[^aeiou]ys$", w))
    assert not bad, f"misspelled words in the vocabulary: {bad}"
