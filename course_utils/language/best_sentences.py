"""The most probable sentences of the course language, found exactly, and how untypical they are.

The slides say beam search "focuses on the most probable, which is the most typical". The oracle
lets us check: ``most_probable_sentences(lang, k)`` returns the ``k`` most probable complete
sentences of the language with their exact probabilities, and ``typicality`` puts the best one
beside sentences sampled from the language (their length, their log-probability, the entropy rate).

**The search.** A uniform-cost (best-first, Dijkstra) search over the *prefix tree*: a node is a
prefix ``w1 … wt``; its cost is ``-log P(w1 … wt …)``, the probability that a sentence starts with
it (the forward probability, summed over every derivation, so an ambiguous prefix is scored as the
oracle scores it); a child appends one word, or ``</s>`` to make a complete sentence, whose cost is
then ``-log P(w1 … wt)``, exactly ``-lang.score(words).logprob``.

**Why the k first complete sentences popped are the k best, exactly.** (1) Costs never decrease
along an edge: the children of a prefix partition its continuations, so
``P(prefix + w …) <= P(prefix …)`` (each step costs ``-log p >= 0``). (2) A priority queue then pops
nodes in non-decreasing cost: whatever is still in the queue, or not yet generated (a descendant of a
queued node), costs at least as much as the node just popped. (3) So when a complete sentence is
popped, no sentence not yet popped is more probable: the complete sentences come out in
non-increasing probability. The nodes are word strings in a tree, so each sentence is reached by one
node only: no two returned sentences are equal and no merging of states is needed.

**Ambiguity.** Different stacks can emit the same word string (a word's two senses, "the" opening
many kinds of sentence). A search over *stacks* would rank derivations, not sentences; this one keeps,
per prefix, every live stack with its forward weight (the oracle's own belief), so each node's cost
sums over derivations. ``derivations(lang, words)`` counts the stack paths of a sentence and gives
the best one's probability, to show how far a derivation search would be off.

Cost: every prefix more probable than the k-th best sentence is expanded once, so the work is bounded
by ``max_expansions`` (an error says so when it is reached, rather than returning a non-exact answer).
"""

from __future__ import annotations

import heapq
import itertools
import math
import statistics
from dataclasses import dataclass

from course_utils.language.corpus import oracle_entropy
from course_utils.language.grammar import EOS, CourseLanguage
from course_utils.validation import CourseInputError, check_int


@dataclass(frozen=True)
class RankedSentence:
    """A complete sentence (``</s>`` not included in ``words``) and its exact log-probability."""

    words: tuple[str, ...]
    logprob: float

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)

    @property
    def length(self) -> int:
        """Words, ``</s>`` not counted."""
        return len(self.words)

    @property
    def logprob_per_token(self) -> float:
        """Per token with ``</s>`` counted, as ``oracle_entropy`` counts."""
        return self.logprob / (len(self.words) + 1)

    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class SearchResult:
    """The k best sentences, best first, and how much search it took."""

    sentences: tuple[RankedSentence, ...]
    expansions: int  # prefixes expanded (popped and their next words generated)
    pushed: int  # nodes put on the queue


def most_probable_search(lang: CourseLanguage, k: int = 10, max_expansions: int = 500_000) -> SearchResult:
    """The ``k`` most probable sentences of ``lang``, exactly, best first (see the module docstring)."""
    k = check_int("k", k, minimum=1)
    max_expansions = check_int("max_expansions", max_expansions, minimum=1)
    tie = itertools.count()  # equal costs pop in insertion order; beliefs are never compared
    queue: list = [(0.0, next(tie), (), {lang.start: 1.0})]
    found: list[RankedSentence] = []
    expansions = 0
    pushed = 1
    while queue and len(found) < k:
        cost, _, prefix, belief = heapq.heappop(queue)
        if isinstance(belief, float):  # a complete sentence; the slot holds its exact log-probability
            found.append(RankedSentence(prefix, belief))
            continue
        if expansions >= max_expansions:
            raise CourseInputError(
                f"the search stopped after max_expansions={max_expansions} prefixes with {len(found)} of the "
                f"{k} sentences found; raise max_expansions (the answer so far would not be exact)"
            )
        expansions += 1
        children: dict[str, dict[tuple, float]] = {}
        for stack, weight in belief.items():
            for edge in lang.edges(stack):
                step = children.setdefault(edge.word, {})
                step[edge.next_stack] = step.get(edge.next_stack, 0.0) + weight * edge.prob
        for word, step in children.items():
            total = sum(step.values())
            if total <= 0.0:
                continue
            # max(): rounding must never make a child cheaper than its parent (monotone costs)
            child_cost = max(cost, -math.log(total))
            if word == EOS:
                heapq.heappush(queue, (child_cost, next(tie), prefix, math.log(total)))
            else:
                heapq.heappush(queue, (child_cost, next(tie), prefix + (word,), step))
            pushed += 1
    return SearchResult(tuple(found), expansions, pushed)


def most_probable_sentences(lang: CourseLanguage, k: int = 10, max_expansions: int = 500_000) -> list[RankedSentence]:
    """The ``k`` most probable complete sentences of ``lang`` with their exact probabilities, best first."""
    return list(most_probable_search(lang, k, max_expansions).sentences)


def derivations(lang: CourseLanguage, words) -> tuple[int, float]:
    """How many stack paths emit ``words + </s>``, and the log-probability of the best one.

    ``lang.edges`` already sums rule expansions that reach the same word, tag and next stack, so
    "derivation" here means a path through stacks (and tags). A sentence is unambiguous when the count
    is 1; then its best derivation's probability is the sentence's probability.
    """
    words = tuple(words.split()) if isinstance(words, str) else tuple(words)
    paths: dict[tuple, tuple[int, float]] = {lang.start: (1, 0.0)}  # stack: (count, best logprob)
    for word in words + (EOS,):
        step: dict[tuple, tuple[int, float]] = {}
        for stack, (count, best) in paths.items():
            for edge in lang.edges(stack):
                if edge.word != word:
                    continue
                old_count, old_best = step.get(edge.next_stack, (0, -math.inf))
                step[edge.next_stack] = (old_count + count, max(old_best, best + math.log(edge.prob)))
        paths = step
    if not paths:
        return 0, -math.inf
    return sum(c for c, _ in paths.values()), max(b for _, b in paths.values())


@dataclass(frozen=True)
class Typicality:
    """The best sentence beside ``n`` sentences sampled from the language."""

    best: RankedSentence
    samples: int
    mean_length: float  # words per sampled sentence (``</s>`` not counted)
    median_length: float
    mean_logprob: float  # nats per sampled sentence: an estimate of the entropy per sentence, negated
    median_logprob: float
    entropy_rate: float  # nats per token (``</s>`` counted): oracle_entropy of the samples
    share_at_least_as_probable: float  # samples whose probability is >= the best's (ties: the best itself)
    share_equal_to_best: float  # samples that are the best sentence (about best.prob)
    best_logprob_z: float  # (best.logprob - mean) / sd over the samples
    best_logprob_per_token: float  # nats per token of the best sentence, against -entropy_rate

    def summary(self) -> str:
        b = self.best
        return (
            f"most probable: '{b.text()}' p = {b.prob:.3g}\n"
            f"  (log p = {b.logprob:.2f}, {b.length} words, {-b.logprob_per_token:.2f} nats/token)\n"
            f"typical ({self.samples} samples): {self.mean_length:.1f} words on average (median {self.median_length:g}),\n"
            f"  log p = {self.mean_logprob:.2f} on average (median {self.median_logprob:.2f}); "
            f"entropy rate {self.entropy_rate:.2f} nats/token\n"
            f"the best is {self.best_logprob_z:.1f} sd above the mean log-probability; "
            f"{100 * self.share_equal_to_best:.2f}% of samples are it"
        )


def sample_logprobs(lang: CourseLanguage, n: int, seed: int) -> tuple[list[tuple[str, ...]], list[float]]:
    """``n`` sampled sentences and each one's exact log-probability (from the oracle)."""
    sentences = [s.words for s in lang.sample_many(n, seed)]
    return sentences, [lang.score(words).logprob for words in sentences]


def typicality(lang: CourseLanguage, best: RankedSentence, n: int = 20_000, seed: int = 0) -> Typicality:
    """Where ``best`` sits among ``n`` sentences sampled from ``lang`` (length, log-probability)."""
    n = check_int("n", n, minimum=2)
    sentences, logprobs = sample_logprobs(lang, n, seed)
    lengths = [len(words) for words in sentences]
    entropy, _ = oracle_entropy(lang, [list(w) for w in sentences])
    mean, sd = statistics.fmean(logprobs), statistics.pstdev(logprobs)
    tol = 1e-9
    return Typicality(
        best=best,
        samples=n,
        mean_length=statistics.fmean(lengths),
        median_length=statistics.median(lengths),
        mean_logprob=mean,
        median_logprob=statistics.median(logprobs),
        entropy_rate=entropy,
        share_at_least_as_probable=sum(lp >= best.logprob - tol for lp in logprobs) / n,
        share_equal_to_best=sum(words == best.words for words in sentences) / n,
        best_logprob_z=(best.logprob - mean) / sd if sd > 0 else 0.0,
        best_logprob_per_token=best.logprob_per_token,
    )
