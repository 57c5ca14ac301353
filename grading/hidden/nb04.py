"""Hidden tests of notebook 04 (n-gram and feed-forward LMs): new corpora, counts, log-probs and embeddings; the
references are the course's ``NGramLM`` and ``FeedForwardLM`` and the formulas, computed here."""

from __future__ import annotations

import math

import torch

from course_utils.exercises.answers import one_number
from course_utils.language.text_pipeline import BOS, EOS, SPECIALS, Vocab
from course_utils.models.classic.neural_lm import FeedForwardLM
from course_utils.models.classic.ngram import NGramLM
from grading.spec import Case, HiddenExercise, Judged, compare_numbers, numbers_judge

NOTEBOOK = "04_ngram_and_feedforward_lms"

BIRDS = [
    "the owl sat on the branch".split(),
    "the owl flew".split(),
    "a crow sat on the owl".split(),
    "owl".split(),
]
CHAIN = ["x y x y x".split(), "y y".split()]


def _bigram_cases() -> list[Case]:
    return [Case((BIRDS, "the", "owl"), label="P(owl | the) in a bird corpus"),
            Case((BIRDS, "sat", "on"), label="P(on | sat)"),
            Case((BIRDS, "owl", EOS), label=f"P({EOS} | owl): an owl that ends sentences"),
            Case((BIRDS, BOS, "the"), label=f"P(the | {BOS})"),
            Case((CHAIN, "y", "y"), label="P(y | y) with repeats"),
            Case((BIRDS, "crow", "owl"), label="a pair never seen"),
            Case((CHAIN, "owl", "y"), label="a context never seen")]  # fmt: skip


def _bigram_probability(sentences, previous: str, word: str) -> float:
    """The MLE P(word | previous) from ``NGramLM(smoothing="none")``; 0.0 for a context never seen."""
    words = sorted({w for s in sentences for w in s} | ({previous, word} - set(SPECIALS)))
    return NGramLM(Vocab(words), 2, smoothing="none").fit(sentences).prob(word, [previous])


def _add_k_cases() -> list[Case]:
    return [Case(args, label="c(h, w)={}, c(h)={}, k={}, |V|={}".format(*args))
            for args in [(7, 40, 1, 500), (0, 12, 0.05, 30), (3, 3, 0, 6), (0, 0, 2, 25), (1, 9, 0.25, 1)]]  # fmt: skip


def _add_k(count_hw, count_h, k, vocab_size) -> float:
    return (count_hw + k) / (count_h + k * vocab_size)


def _perplexity_cases() -> list[Case]:
    generator = torch.Generator().manual_seed(9041)
    probabilities = 0.01 + 0.99 * torch.rand(30, generator=generator, dtype=torch.float64)  # (30,)
    return [Case((probabilities.log().tolist(),), label="30 tokens"),
            Case(([math.log(0.2)],), label="one token of probability 0.2"),
            Case(([math.log(1 / 7)] * 5 + [0.0] * 2,), label="five guesses among 7 words, two sure tokens"),
            Case(([math.log(0.9), -math.inf, math.log(0.3)],), label="a token of probability 0")]  # fmt: skip


def _perplexity(token_logprobs) -> float:
    return math.exp(-math.fsum(token_logprobs) / len(token_logprobs))


def _judge_perplexity(answer, case: Case) -> Judged:
    expected = _perplexity(*case.args)
    if math.isinf(expected):
        value, why = one_number(answer, finite=False)
        return Judged(True, "right") if value == math.inf else Judged(False, why or f"got {value:g}, expected inf")
    return compare_numbers(answer, expected)


def _ffnn_cases() -> list[Case]:
    cases = []
    for seed, (V, d, window, dtype) in enumerate([(10, 3, [4, 0, 9, 4], torch.float64), (6, 5, [5], torch.float64),
                                                  (20, 2, [3, 17], torch.float32),
                                                  (8, 4, [7, 6, 5, 4, 3], torch.float64)], start=9042):  # fmt: skip
        E = torch.randn(V, d, generator=torch.Generator().manual_seed(seed), dtype=dtype)  # (V, d)
        cases.append(Case((E, window), label=f"V={V}, d={d}, window {window}, {str(dtype)[6:]}"))
    return cases


@torch.no_grad()
def _ffnn_input(E: torch.Tensor, window: list[int]) -> torch.Tensor:
    """The e that ``FeedForwardLM`` builds from ``window`` with ``E`` as its embeddings: (N·d,)."""
    model = FeedForwardLM(E.shape[0], len(window), embed_dim=E.shape[1], hidden_dim=1).to(E.dtype)
    model.embedding.weight.copy_(E)
    windows = model.context_windows(torch.tensor([window]))  # (1, N, N): the last position reads window
    return model.embedding(windows).flatten(2)[0, -1]  # (N·d,)


EXERCISES = (
    HiddenExercise(1, ("bigram_probability",), numbers_judge(_bigram_probability), _bigram_cases),
    HiddenExercise(2, ("add_k",), numbers_judge(_add_k), _add_k_cases),
    HiddenExercise(3, ("perplexity_of",), _judge_perplexity, _perplexity_cases),
    HiddenExercise(4, ("ffnn_input",), numbers_judge(_ffnn_input), _ffnn_cases),
)
