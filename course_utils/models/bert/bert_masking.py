"""BERT's masking written from the paper, measured beside the library's ``DataCollatorForLanguageModeling``.

Devlin et al. (2019), §3.1 and appendix A.1: choose 15 % of the tokens as prediction targets; of the chosen,
replace 80 % by ``[MASK]``, 10 % by a random token and leave 10 % unchanged. The loss is read only at the
chosen positions: ``labels`` holds the original id there and ``IGNORE_INDEX`` (-100) everywhere else.

What ``mask_tokens`` counts. It chooses an *exact number* of targets, as BERT's ``create_pretraining_data.py``
and d2l do, among the *maskable* tokens: every token whose id is not in ``special_ids`` (so never ``[CLS]``,
``[SEP]`` or ``[PAD]``; with ``tokenizer.all_special_ids`` not ``[UNK]`` or ``[MASK]`` either).

- ``count="sequence"`` (the default, BERT's rule): each row of n maskable tokens gets
  k = max(1, round(0.15 · n)) targets, rounding halves up; the "at least one" is BERT's and d2l's, so that
  every sentence has something to predict. Short sentences round: the course's 7-token sentences
  (5 maskable) get 1 target, 20 %; its 10-token ones (8 maskable) get 1, 12.5 %.
- ``count="batch"``: K = round(0.15 · N) of the batch's N maskable tokens, wherever they fall.

Only the number chosen is exact: the 80/10/10 split is drawn token by token, as in BERT's code.

The library differs in two ways. It draws a Bernoulli(0.15) per token, so the number varies (a sentence may
get no target at all); and it draws random replacements from the *whole* tokenizer, special tokens included:
on the course's 1,000-entry vocabulary 5 of every 1,000 random replacements are ``[PAD]``, ``[UNK]``, ``[CLS]``,
``[SEP]`` or ``[MASK]``. ``mask_tokens`` draws from the non-special vocabulary only.

What the counts can see. From (original, masked, labels) alone, a random draw that happens to equal the
original looks "unchanged", and a library draw of ``[MASK]`` looks like a ``[MASK]`` replacement; so the
observed "random" share is 0.1 · (1 − 1/995) here and 0.1 · (1 − 2/1000) in the library, a difference of
0.0001, far below the standard errors of 100k tokens (``expected_shares`` gives the exact values).
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from course_utils.models.lm import IGNORE_INDEX
from course_utils.validation import CourseInputError, check_choice, check_int, check_number
from course_utils.reference import course_reference

Tensor = torch.Tensor

COUNTS = ("sequence", "batch")
PAPER_SHARES = {"chosen": 0.15, "mask": 0.8, "random": 0.1, "unchanged": 0.1}
SHARE_NAMES = {"chosen": "chosen / maskable", "mask": "[MASK] / chosen", "random": "random / chosen",
               "unchanged": "unchanged / chosen"}  # fmt: skip
AGREEMENT_SES = 3.0  # two shares agree when they differ by less than 3 combined standard errors
MIN_COMPARISON_TOKENS = 100_000

# Devlin et al. (2019), appendix C.2, Table 8 "Ablation over different masking strategies": BERT-base, Dev set.
# MASK / SAME / RND = the % of targets replaced by [MASK], kept, replaced by a random token. Feature-based NER
# concatenates the last 4 layers of BERT without fine-tuning them.
TABLE_8_COLUMNS = ("MASK %", "SAME %", "RND %", "MNLI", "NER fine-tune", "NER feature-based")
TABLE_8_MASKING_ABLATION = (
    (80, 10, 10, 84.2, 95.4, 94.9),  # BERT's choice
    (100, 0, 0, 84.3, 94.9, 94.0),
    (80, 0, 20, 84.1, 95.2, 94.6),
    (80, 20, 0, 84.4, 95.2, 94.7),
    (0, 20, 80, 83.7, 94.8, 94.6),
    (0, 0, 100, 83.6, 94.9, 94.6),
)


def table_8_rows() -> list[dict]:
    """Devlin et al.'s Table 8 (masking ablation, Dev set) as one dict per row, columns ``TABLE_8_COLUMNS``."""
    return [dict(zip(TABLE_8_COLUMNS, row)) for row in TABLE_8_MASKING_ABLATION]


def slide_example() -> dict[str, str]:
    """The CMU slide's masking example and its correction: masking *replaces* the word, it does not insert.

    The slide masks "outside" in "the girl was playing outside." and shows "the girl was playing [MASK]
    outside." — the answer is still in the input, so there is nothing left to predict.
    """
    words = ["the", "girl", "was", "playing", "outside", "."]
    target = 4
    corrected = words[:target] + ["[MASK]"] + words[target + 1 :]
    return {
        "sentence": " ".join(words),
        "target": words[target],
        "slide": "the girl was playing [MASK] outside.",
        "correct": " ".join(corrected),  # "the girl was playing [MASK] ."
        "why": "[MASK] replaces the chosen word; the slide inserts it before the word, which stays visible.",
    }


# ---------------------------------------------------------------- the masking, from the paper


def _generator(generator, seed) -> torch.Generator:
    if generator is not None and seed is not None:
        raise CourseInputError("pass either generator or seed, not both")
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise CourseInputError(f"generator must be a torch.Generator, got {type(generator).__name__}")
        return generator
    if seed is None:
        raise CourseInputError("pass a seed (or a torch.Generator) so that the masking can be repeated")
    return torch.Generator().manual_seed(check_int("seed", seed, minimum=0))


def _share(name: str, value, *, allow_zero: bool = True) -> float:
    value = check_number(name, value)
    if value < 0 or value > 1 or (value == 0 and not allow_zero):
        bound = "in [0, 1]" if allow_zero else "in (0, 1]"
        raise CourseInputError(f"{name} is a probability {bound}; got {value}")
    return value


def target_count(n_maskable: int, probability: float = 0.15) -> int:
    """BERT's number of targets for ``n_maskable`` tokens: max(1, round(probability · n)), halves up; 0 if n = 0."""
    n_maskable = check_int("n_maskable", n_maskable, minimum=0)
    if n_maskable == 0:
        return 0
    return min(n_maskable, max(1, math.floor(_share("probability", probability) * n_maskable + 0.5)))


def exact_count_share(id_lists: Sequence[Sequence[int]], special_ids: Sequence[int],
                      probability: float = 0.15) -> float:  # fmt: skip
    """The share of maskable tokens that ``count="sequence"`` chooses in these sentences: Σ k(n) / Σ n."""
    specials = set(special_ids)
    sizes = [sum(1 for i in ids if i not in specials) for ids in id_lists]
    if not sum(sizes):
        raise CourseInputError("the sentences hold no maskable tokens")
    return sum(target_count(n, probability) for n in sizes) / sum(sizes)


def _check_ids(input_ids, vocab_size: int) -> Tensor:
    if not isinstance(input_ids, torch.Tensor):
        raise CourseInputError(f"input_ids must be a torch tensor of shape (B, T), got {type(input_ids).__name__}")
    if input_ids.ndim != 2:
        raise CourseInputError(f"input_ids must be (B, T), got shape {list(input_ids.shape)}")
    if input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:
        raise CourseInputError(f"input_ids must hold integer ids, got dtype {input_ids.dtype}")
    if input_ids.numel() and (int(input_ids.min()) < 0 or int(input_ids.max()) >= vocab_size):
        raise CourseInputError(f"input_ids must lie in [0, vocab_size={vocab_size}); "
                               f"found {int(input_ids.min())}..{int(input_ids.max())}")  # fmt: skip
    return input_ids.long()


@course_reference
def mask_tokens(input_ids: Tensor, *, mask_id: int, vocab_size: int, special_ids: Sequence[int],
                generator: torch.Generator | None = None, seed: int | None = None, probability: float = 0.15,
                mask_share: float = 0.8, random_share: float = 0.1,
                count: str = "sequence") -> tuple[Tensor, Tensor]:  # fmt: skip
    """BERT's masking of a padded batch: ``(masked_ids, labels)``, both (B, T); see the module docstring.

    ``special_ids`` are never chosen and never drawn as random replacements (``[MASK]`` counts as special
    whether listed or not). ``labels`` is the original id at the chosen positions and ``IGNORE_INDEX`` elsewhere.
    """
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    input_ids = _check_ids(input_ids, vocab_size)  # (B, T)
    mask_id = check_int("mask_id", mask_id, minimum=0, maximum=vocab_size - 1)
    specials = {check_int("a special id", i, minimum=0, maximum=vocab_size - 1) for i in special_ids}
    specials = sorted(specials | {mask_id})
    probability = _share("probability", probability, allow_zero=False)
    mask_share, random_share = _share("mask_share", mask_share), _share("random_share", random_share)
    if mask_share + random_share > 1 + 1e-12:
        raise CourseInputError(f"mask_share + random_share must be <= 1; got {mask_share} + {random_share}")
    count = check_choice("count", count, COUNTS)
    rng = _generator(generator, seed)
    special_set = set(specials)
    pool = torch.tensor([i for i in range(vocab_size) if i not in special_set], dtype=torch.long)  # non-special ids
    if random_share > 0 and pool.numel() == 0:
        raise CourseInputError("every id is special: there is no token to draw as a random replacement")

    maskable = ~torch.isin(input_ids, torch.tensor(specials))  # (B, T)
    scores = torch.rand(input_ids.shape, generator=rng).masked_fill(~maskable, 2.0)  # (B, T); specials sort last
    if count == "sequence":
        wanted = torch.tensor([target_count(int(n), probability) for n in maskable.sum(dim=1)])  # (B,)
        rank = scores.argsort(dim=1).argsort(dim=1)  # (B, T): 0 for the lowest score of the row
        chosen = rank < wanted[:, None]  # (B, T)
    else:
        wanted_total = math.floor(probability * int(maskable.sum()) + 0.5)
        rank = scores.flatten().argsort().argsort().view_as(scores)  # (B, T): rank over the whole batch
        chosen = rank < wanted_total  # (B, T)

    split = torch.rand(input_ids.shape, generator=rng)  # (B, T): one uniform per token decides its fate
    to_mask = chosen & (split < mask_share)
    to_random = chosen & (split >= mask_share) & (split < mask_share + random_share)
    if pool.numel():
        random_ids = pool[torch.randint(pool.numel(), input_ids.shape, generator=rng)]  # (B, T)
    else:  # nothing to draw, and random_share is 0 (checked above)
        random_ids = input_ids

    masked = input_ids.clone()  # (B, T)
    masked[to_mask] = mask_id
    masked[to_random] = random_ids[to_random]
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, IGNORE_INDEX))  # (B, T)
    return masked, labels


# ---------------------------------------------------------------- counting what a masking did


def masking_counts(original: Tensor, masked: Tensor, labels: Tensor, *, mask_id: int,
                   special_ids: Sequence[int]) -> dict[str, int]:  # fmt: skip
    """How many tokens were maskable, chosen, and of the chosen: ``[MASK]``, random, unchanged.

    Judged from the outputs only (see the module docstring): a random draw equal to the original counts as
    unchanged, a random draw of ``[MASK]`` as ``[MASK]``. ``chosen_special`` (chosen tokens whose original is
    special) must be 0.
    """
    for name, tensor in (("original", original), ("masked", masked), ("labels", labels)):
        if not isinstance(tensor, torch.Tensor) or tensor.ndim != 2:
            raise CourseInputError(f"{name} must be a (B, T) tensor")
    if not original.shape == masked.shape == labels.shape:
        raise CourseInputError(f"original, masked and labels must have one shape; got {list(original.shape)}, "
                               f"{list(masked.shape)}, {list(labels.shape)}")  # fmt: skip
    chosen = labels != IGNORE_INDEX  # (B, T)
    if not torch.equal(labels[chosen], original[chosen]):
        raise CourseInputError("labels must equal the original ids wherever they are not IGNORE_INDEX")
    special = torch.isin(original, torch.tensor(sorted(set(special_ids) | {mask_id})))  # (B, T)
    as_mask = chosen & (masked == mask_id)
    unchanged = chosen & (masked == original)
    return {
        "maskable": int((~special).sum()),
        "chosen": int(chosen.sum()),
        "mask": int(as_mask.sum()),
        "random": int((chosen & ~as_mask & ~unchanged).sum()),
        "unchanged": int(unchanged.sum()),
        "chosen_special": int((chosen & special).sum()),
    }


def add_counts(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    """Two count dicts added key by key."""
    return {key: total.get(key, 0) + more.get(key, 0) for key in set(total) | set(more)}


def proportions_with_errors(counts: dict[str, int]) -> dict[str, dict]:
    """The shares of ``masking_counts`` with binomial standard errors √(p(1−p)/n).

    ``chosen`` is out of the maskable tokens, ``mask``/``random``/``unchanged`` out of the chosen. (For
    ``mask_tokens`` the chosen count is fixed by construction, so its binomial SE overstates its spread.)
    """
    missing = {"maskable", "chosen", "mask", "random", "unchanged"} - set(counts)
    if missing:
        raise CourseInputError(f"counts lacks {sorted(missing)}; pass what masking_counts returns")
    shares = {}
    for name in ("chosen", "mask", "random", "unchanged"):
        out_of = counts["maskable"] if name == "chosen" else counts["chosen"]
        if out_of <= 0:
            raise CourseInputError(f"no tokens to take the {SHARE_NAMES[name]} share of")
        share = counts[name] / out_of
        se = math.sqrt(share * (1 - share) / out_of)
        shares[name] = {"share": share, "se": se, "count": counts[name], "out_of": out_of}
    return shares


def expected_shares(*, vocab_size: int, n_special: int, library: bool, probability: float = 0.15,
                    mask_share: float = 0.8, random_share: float = 0.1) -> dict[str, float]:  # fmt: skip
    """The shares ``masking_counts`` should see, after the look-alikes (draw = original, draw = [MASK]).

    The library draws from all ``vocab_size`` ids (one of them [MASK]); ``mask_tokens`` from the
    ``vocab_size − n_special`` others. ``chosen`` is the per-token probability (the library's mean).
    """
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    n_special = check_int("n_special", n_special, minimum=1, maximum=vocab_size - 1)
    pool = vocab_size if library else vocab_size - n_special
    drawn_mask = random_share / pool if library else 0.0
    drawn_same = random_share / pool
    return {"chosen": probability, "mask": mask_share + drawn_mask, "random": random_share - drawn_mask - drawn_same,
            "unchanged": 1 - mask_share - random_share + drawn_same}  # fmt: skip


# ---------------------------------------------------------------- beside the library


def _batches_of(id_lists: Sequence[Sequence[int]], special_ids: set[int], n_tokens: int, batch_size: int):
    """Sentences in order (cycling) until they hold ``n_tokens`` maskable tokens, in lists of ``batch_size``."""
    if not id_lists:
        raise CourseInputError("no sentences to mask")
    taken, batch, maskable, index = [], [], 0, 0
    while maskable < n_tokens:
        ids = list(id_lists[index % len(id_lists)])
        index += 1
        batch.append(ids)
        maskable += sum(1 for i in ids if i not in special_ids)
        if len(batch) == batch_size:
            taken.append(batch)
            batch = []
        if index > len(id_lists) and maskable == 0:
            raise CourseInputError("the sentences hold no maskable tokens")
    return taken + ([batch] if batch else [])


def _padded(batch: Sequence[Sequence[int]], pad_id: int) -> Tensor:
    width = max(map(len, batch))
    return torch.tensor([list(ids) + [pad_id] * (width - len(ids)) for ids in batch])  # (B, T)


def compare_with_library(tokenizer, id_lists: Sequence[Sequence[int]], *, n_tokens: int = MIN_COMPARISON_TOKENS,
                         seed: int = 0, count: str = "sequence", batch_size: int = 256) -> list[dict]:  # fmt: skip
    """Mask the same sentences with ``bert_mlm.mlm_collator`` and with ``mask_tokens``; a table of their shares.

    ``id_lists`` are encoded sentences (``[CLS] … [SEP]``), taken in order until they hold ``n_tokens``
    maskable tokens. One row per share: the paper's value, each side's share and SE, the difference, the
    combined SE √(SE₁² + SE₂²), and ``agrees`` (|difference| < 3 combined SEs). With ``count="sequence"``
    the chosen share is the rounding of BERT's per-sentence count, not 15 % (see the module docstring).
    """
    from course_utils.models.bert.bert_mlm import mlm_collator

    n_tokens = check_int("n_tokens", n_tokens, minimum=MIN_COMPARISON_TOKENS)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    count = check_choice("count", count, COUNTS)
    special_ids = set(tokenizer.all_special_ids)
    mask_id, pad_id, vocab_size = tokenizer.mask_token_id, tokenizer.pad_token_id, len(tokenizer)
    collator = mlm_collator(tokenizer, seed=seed)
    rng = torch.Generator().manual_seed(check_int("seed", seed, minimum=0))
    library, scratch = {}, {}
    for batch in _batches_of(id_lists, special_ids, n_tokens, batch_size):
        original = _padded(batch, pad_id)  # (B, T)
        out = collator([{"input_ids": ids} for ids in batch])
        seen = masking_counts(original, out["input_ids"], out["labels"], mask_id=mask_id, special_ids=special_ids)
        library = add_counts(library, seen)
        masked, labels = mask_tokens(original, mask_id=mask_id, vocab_size=vocab_size, special_ids=sorted(special_ids),
                                     generator=rng, count=count)  # fmt: skip
        seen = masking_counts(original, masked, labels, mask_id=mask_id, special_ids=special_ids)
        scratch = add_counts(scratch, seen)
    library_shares, scratch_shares = proportions_with_errors(library), proportions_with_errors(scratch)
    rows = []
    for name, label in SHARE_NAMES.items():
        lib, own = library_shares[name], scratch_shares[name]
        combined = math.sqrt(lib["se"] ** 2 + own["se"] ** 2)
        difference = own["share"] - lib["share"]
        rows.append({"share": label, "paper": PAPER_SHARES[name], "library": lib["share"], "library_se": lib["se"],
                     "scratch": own["share"], "scratch_se": own["se"], "difference": difference,
                     "combined_se": combined, "agrees": abs(difference) < AGREEMENT_SES * combined,
                     "library_count": lib["count"], "scratch_count": own["count"],
                     "maskable": library["maskable"]})  # fmt: skip
    return rows


def library_special_replacements(tokenizer, id_lists: Sequence[Sequence[int]], *, n_tokens: int = MIN_COMPARISON_TOKENS,
                                 seed: int = 0, examples: int = 3) -> dict:  # fmt: skip
    """Which special tokens the library draws as "random" replacements, and how often.

    To see every draw, the collator is run with ``mask_replace_prob=0, random_replace_prob=1``: each chosen
    token is then a random draw from the whole tokenizer (a draw equal to the original is still counted, as
    the original is never special). Expected: len(specials)/len(tokenizer) of the draws (5/1000 on the
    course's vocabulary); under 80/10/10 that is 0.1 × 5/1000 = 1 in 2,000 of all targets.
    """
    from course_utils.models.bert.bert_mlm import mlm_collator

    n_tokens = check_int("n_tokens", n_tokens, minimum=MIN_COMPARISON_TOKENS)
    examples = check_int("examples", examples, minimum=0)
    special_ids = sorted(set(tokenizer.all_special_ids))
    collator = mlm_collator(tokenizer, seed=seed, mask_replace_prob=0.0, random_replace_prob=1.0)
    draws, by_token, shown = 0, {tokenizer.convert_ids_to_tokens(i): 0 for i in special_ids}, []
    for batch in _batches_of(id_lists, set(special_ids), n_tokens, 256):
        original = _padded(batch, tokenizer.pad_token_id)  # (B, T)
        out = collator([{"input_ids": ids} for ids in batch])
        chosen = out["labels"] != IGNORE_INDEX  # (B, T)
        drew_special = chosen & torch.isin(out["input_ids"], torch.tensor(special_ids))  # (B, T)
        draws += int(chosen.sum())
        for token_id in out["input_ids"][drew_special].tolist():
            by_token[tokenizer.convert_ids_to_tokens(token_id)] += 1
        for row in drew_special.any(dim=1).nonzero().flatten().tolist()[: max(examples - len(shown), 0)]:
            length = len(batch[row])
            as_text = lambda ids: " ".join(tokenizer.convert_ids_to_tokens(ids[row, :length].tolist()))  # noqa: E731
            shown.append({"original": as_text(original), "masked": as_text(out["input_ids"])})
    if draws == 0:
        raise CourseInputError("the library chose no tokens; pass more sentences")
    special_draws = sum(by_token.values())
    share = special_draws / draws
    return {"draws": draws, "special_draws": special_draws, "by_token": by_token, "share": share,
            "se": math.sqrt(share * (1 - share) / draws), "expected": len(special_ids) / len(tokenizer),
            "expected_per_target_80_10_10": 0.1 * len(special_ids) / len(tokenizer), "examples": shown}  # fmt: skip
