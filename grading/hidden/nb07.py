"""Hidden tests of notebook 07 (seq2seq with attention): new shapes, dtypes, sentences and seeds."""

from __future__ import annotations

import torch

from course_utils.evaluation.translation_metrics import alignment_error_rate, argmax_alignment, bleu
from course_utils.models.recurrent.seq2seq import attend
from grading.spec import Case, HiddenExercise, Judged, compare_numbers, numbers_judge

NOTEBOOK = "07_seq2seq_attention"


def parts_judge(reference, names: tuple[str, ...], rels: tuple[float | None, ...] | None = None):
    """A judge for an answer of several parts (tensors or numbers, in the order of ``names``), each compared with
    ``reference(*case.args)``'s part of the same name, at its ``rels`` tolerance (None: the answer's precision)."""

    def judge(answer, case: Case) -> Judged:
        expected = reference(*case.args)
        if not isinstance(answer, list | tuple | torch.Tensor) or len(answer) != len(names):
            return Judged(False, f"return {len(names)} things, ({', '.join(names)}); got {type(answer).__name__}")
        for name, part, wanted, rel in zip(names, answer, expected, rels or (None,) * len(names)):
            judged = compare_numbers(part, wanted, rel=rel)
            if not judged.passed:
                return Judged(False, f"{name}: {judged.message}")
        return Judged(True, "right")

    return judge


def _attention_cases() -> list[Case]:
    cases = []
    for seed, (B, T, S, H, lengths, dtype) in enumerate([(3, 2, 5, 4, (5, 2, 4), torch.float64),
                                                         (1, 1, 1, 3, (1,), torch.float64),
                                                         (2, 6, 8, 5, (3, 8), torch.float32),
                                                         (5, 3, 4, 2, (1, 1, 4, 2, 3), torch.float64)],
                                                        start=9071):  # fmt: skip
        generator = torch.Generator().manual_seed(seed)
        query = torch.randn(B, T, H, generator=generator, dtype=dtype)  # (B, T, H)
        keys = torch.randn(B, S, H, generator=generator, dtype=dtype)  # (B, S, H)
        mask = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]  # (B, S): True at real words
        label = f"B={B}, T={T}, S={S}, H={H}, source lengths {list(lengths)}, {str(dtype)[6:]}"
        cases.append(Case((query, keys, mask), label=label))
    return cases


def _dot_attention(query, keys, mask) -> tuple[torch.Tensor, torch.Tensor]:
    query, keys = query.double(), keys.double()
    return attend(query @ keys.transpose(1, 2), keys, mask)  # (B, T, H), (B, T, S)


# hypotheses against references: every n-gram order (1-4) has at least one match, so no smoothing is needed
_BLEU_PAIRS = [
    ("the old man reads a long letter to his daughter every evening",
     "the old man reads a short letter to his daughter every evening", "one word replaced"),
    ("we saw the small red boat near the river bank today",
     "we saw the small red boat near the river bank this morning", "shorter than the reference"),
    ("she sings she sings the same song the same song again and again",
     "she sings the same song again and again", "repeated n-grams, longer than the reference"),
    ("my brother and my sister walked to the market in the rain",
     "my brother and my sister walked to the market in the rain", "the reference itself"),
    ("in the morning the children play in the garden",
     "the children play in the garden in the morning before school", "the same words in another order, shorter"),
]  # fmt: skip


def _bleu_cases() -> list[Case]:
    return [Case((hypothesis.split(), reference.split()), label=what) for hypothesis, reference, what in _BLEU_PAIRS]


def _sentence_bleu(hypothesis, reference) -> float:
    return bleu([hypothesis], [reference]).score


def _aer_cases() -> list[Case]:
    cases = []
    for seed, (M, S, dtype) in enumerate([(5, 6, torch.float64), (7, 3, torch.float32), (1, 1, torch.float64),
                                          (6, 9, torch.float64)], start=9081):  # fmt: skip
        generator = torch.Generator().manual_seed(seed)
        weights = torch.softmax(3 * torch.randn(M, S, generator=generator, dtype=torch.float64), dim=-1).to(dtype)
        best = weights.argmax(dim=1).tolist()  # (M,): each row's source argmax
        guesses = torch.randint(S, (M,), generator=generator).tolist()
        links = {(best[t] if t % 3 else guesses[t], t) for t in range(M)}  # some rows linked to their argmax
        if seed == 9084:  # extra links: a target word with two source words, so |S| > |A|
            links |= {((best[t] + 1) % S, t) for t in range(0, M, 2)}
        cases.append(Case((weights, links), label=f"{M}×{S} attention, {len(links)} true links, {str(dtype)[6:]}"))
    weights = torch.eye(4, dtype=torch.float64) * 0.7 + 0.075  # (4, 4): the diagonal wins every row
    cases.append(Case((weights, {(3 - t, t) for t in range(4)}), label="no predicted link is true"))
    return cases


def _attention_aer(weights, true_links) -> float:
    return alignment_error_rate(argmax_alignment(weights.double()), true_links)


EXERCISES = (
    HiddenExercise(
        1,
        ("dot_attention",),
        parts_judge(_dot_attention, ("context", "weights")),
        _attention_cases,
        references=(attend,),
    ),  # fmt: skip
    HiddenExercise(2, ("sentence_bleu",), numbers_judge(_sentence_bleu), _bleu_cases, references=(bleu,)),
    HiddenExercise(
        3,
        ("attention_aer",),
        numbers_judge(_attention_aer),
        _aer_cases,
        references=(alignment_error_rate, argmax_alignment),
    ),  # fmt: skip
)
