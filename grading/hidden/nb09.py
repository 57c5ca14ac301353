"""Hidden tests of notebook 09 (BERT): new batches and special ids, vocabularies and words, layer counts.

The masking's ``generator`` cannot travel to the student's process (a ``torch.Generator`` is not plain data), so
its cases pass ``generator=None`` (torch's global generator then draws) and the judge counts what the masking did:
BERT's shares within 5 binomial standard errors, not one particular draw. That the same seed repeats a masking is
the self-check's to see.
"""

from __future__ import annotations

import math

import torch

from course_utils.analysis.contextual_embeddings import LAYER_STRATEGIES, LayerStrategy
from course_utils.models.bert.bert_masking import mask_tokens
from course_utils.models.bert.wordpiece import UNK, WordPieceEncoder
from course_utils.models.lm import IGNORE_INDEX
from grading.spec import Case, HiddenExercise, Judged, equal_judge, numbers_judge

NOTEBOOK = "09_bert"
SES = 5.0  # a share passes within 5 binomial standard errors
SHARES = {"chosen": 0.15, "mask": 0.8, "random": 0.1, "unchanged": 0.1}


def _batch(seed: int, lengths: list[int], vocab: int, pad: int, cls: int, sep: int, unk: int) -> torch.Tensor:
    """A padded batch (B, T): [CLS], ordinary ids (every fourth row also an [UNK]), [SEP], then [PAD]s."""
    generator = torch.Generator().manual_seed(seed)
    ordinary = torch.tensor([i for i in range(vocab) if i not in {pad, cls, sep, unk, 103, 4}])  # never special
    ids = torch.full((len(lengths), max(lengths) + 3), pad, dtype=torch.long)  # (B, T)
    for row, length in enumerate(lengths):
        words = ordinary[torch.randint(len(ordinary), (length,), generator=generator)]
        if row % 4 == 1:
            at = int(torch.randint(length + 1, (), generator=generator))
            words = torch.cat([words[:at], torch.tensor([unk]), words[at:]])
        sentence = torch.cat([torch.tensor([cls]), words, torch.tensor([sep])])
        ids[row, : len(sentence)] = sentence
    return ids


def _masking_cases() -> list[Case]:
    small = _batch(9121, [20, 40, 60, 80, 100] * 160, 600, 0, 2, 3, 1)  # (800, 103): the course's special ids
    bert = _batch(9122, [40, 60, 80] * 200, 1000, 0, 101, 102, 100)  # (600, 83): BERT's ids, [MASK] = 103
    one = _batch(9123, [20000], 300, 0, 2, 3, 1)  # (1, 20003): a batch of one long row
    return [
        Case((small, 4, 600, [0, 1, 2, 3, 4], None), label="800 rows of 20-100 tokens, vocabulary of 600"),
        Case((bert, 103, 1000, [0, 100, 101, 102, 103], None), label="600 rows, BERT's special ids ([MASK] = 103)"),
        Case((one, 4, 300, [4, 3, 2, 1, 0], None), label="one row of 20,000 tokens, special ids in another order"),
    ]


def _share_problem(name: str, count: int, out_of: int) -> str | None:
    expected = SHARES[name]
    share = count / out_of
    tolerance = SES * math.sqrt(expected * (1 - expected) / out_of)
    if abs(share - expected) <= tolerance:
        return None
    return f"{name}: {share:.3f} where BERT's is {expected:.2f} (± {tolerance:.3f} on {out_of:,} tokens)"


def _judge_masking(answer, case: Case) -> Judged:
    ids, mask_id, vocab_size, special_ids, _ = case.args
    if not isinstance(answer, list | tuple) or len(answer) != 2:
        return Judged(False, f"return a pair (masked, labels); got {type(answer).__name__}")
    for name, part in zip(("masked", "labels"), answer):
        if not isinstance(part, torch.Tensor) or part.shape != ids.shape:
            shape = tuple(part.shape) if isinstance(part, torch.Tensor) else type(part).__name__
            return Judged(False, f"{name} must be a tensor of the input's shape {tuple(ids.shape)}; got {shape}")
        if part.is_floating_point() or part.dtype == torch.bool:
            return Judged(False, f"{name} must hold integer ids; got dtype {part.dtype}")
    masked, labels = (part.long() for part in answer)
    special = torch.isin(ids, torch.tensor(special_ids))  # (B, T)
    chosen = labels != IGNORE_INDEX  # (B, T)
    if not torch.equal(labels[chosen], ids[chosen]):
        return Judged(False, "a label must be the original id at a chosen position and -100 elsewhere")
    if bool((~chosen & (masked != ids)).any()):
        return Judged(False, f"{int((~chosen & (masked != ids)).sum())} positions without a label were changed")
    if bool((chosen & special).any()):
        return Judged(False, f"{int((chosen & special).sum())} special tokens were chosen")
    count = int(chosen.sum())
    problems = [_share_problem("chosen", count, int((~special).sum()))] if count else ["no token was chosen"]
    if count and not problems[0]:
        fates = {"mask": chosen & (masked == mask_id), "unchanged": chosen & (masked == ids)}
        fates["random"] = chosen & ~fates["mask"] & ~fates["unchanged"]
        problems = [_share_problem(name, int(where.sum()), count) for name, where in fates.items()]
        drawn = masked[fates["random"]]
        if drawn.numel() and (int(drawn.min()) < 0 or int(drawn.max()) >= vocab_size):
            problems.append(f"random ids must lie in [0, {vocab_size}); got {int(drawn.min())}..{int(drawn.max())}")
        elif len(set(drawn.tolist())) < 0.25 * min(len(drawn), vocab_size):
            problems.append(f"the {len(drawn)} random replacements use only {len(set(drawn.tolist()))} ids")
    problems = [problem for problem in problems if problem]
    return Judged(not problems, "; ".join(problems) or "right")


# (word, the vocabulary's entries besides [UNK], what the case tests)
_WORDPIECE_CASES = [
    ("playing", ("play", "p", "pl", "##ing", "##in", "##g", "##i", "##n"), "longest first: play ##ing"),
    ("replayed", ("re", "rep", "##play", "##lay", "##ed", "##e", "##d"), "greedy: rep ##lay ##ed, not re ##play ##ed"),
    ("dogs", ("dog", "##s", "dogs"), "the whole word is an entry"),
    ("zz", ("z",), "a rest with no ## entry: the whole word is [UNK]"),
    ("unknowable", ("un", "##know", "##kn", "##ow", "##able", "##a", "##ble", "know"), "un ##know ##able"),
    ("b", ("##b", "a"), "a ## entry cannot start a word"),
]


def _wordpiece_cases() -> list[Case]:
    return [Case((word, {UNK, *entries}), label=f"{word!r}: {what}") for word, entries, what in _WORDPIECE_CASES]


def _encode_word(word: str, vocab) -> list[str]:
    return WordPieceEncoder(vocab).encode_word(word)


def _layer_cases() -> list[Case]:
    cases = []
    for seed, (L, N, C, dtype) in enumerate([(5, 2, 3, torch.float64), (8, 1, 7, torch.float32),
                                             (4, 6, 2, torch.float64), (13, 3, 5, torch.float64)],
                                            start=9131):  # fmt: skip
        hidden = torch.randn(L + 1, N, C, generator=torch.Generator().manual_seed(seed), dtype=dtype)  # (L+1, N, C)
        cases.append(Case((hidden,), label=f"L={L}, N={N}, C={C}, {str(dtype)[6:]}"))
    return cases


EXERCISES = (
    HiddenExercise(1, ("mask_batch",), _judge_masking, _masking_cases, references=(mask_tokens,)),
    HiddenExercise(
        2, ("encode_word",), equal_judge(_encode_word), _wordpiece_cases, references=(WordPieceEncoder.encode_word,)
    ),
    HiddenExercise(
        3,
        ("concat_last_four",),
        numbers_judge(LAYER_STRATEGIES["concat last four hidden"]),
        _layer_cases,
        references=(LayerStrategy.__call__,),
    ),
)
