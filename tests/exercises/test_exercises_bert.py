"""The self-checks of notebook 09: each passes right answers, fails wrong and unfinished ones, never raises."""

import numpy as np
import pytest
import torch
from exercise_contract import contract_tests, solution_text

from course_utils.exercises.bert import check_layer_strategy, check_mask_batch, check_wordpiece_encode
from course_utils.models.bert import bert_masking
from course_utils.analysis.contextual_embeddings import LAYER_STRATEGIES
from course_utils.models.bert.wordpiece import WordPieceEncoder

CHECKS = (check_mask_batch, check_wordpiece_encode, check_layer_strategy)


# ----- the reference solutions (the notebook's <details> blocks show these) -----


def mask_batch(input_ids, mask_id, vocab_size, special_ids, generator):
    special = torch.isin(input_ids, torch.tensor(list(special_ids)))  # (B, T)
    chosen = (torch.rand(input_ids.shape, generator=generator) < 0.15) & ~special  # 15 % of the rest
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    u = torch.rand(input_ids.shape, generator=generator)  # one draw decides 80/10/10
    masked = input_ids.clone()
    masked[chosen & (u < 0.8)] = mask_id
    randomised = chosen & (u >= 0.8) & (u < 0.9)
    pool = torch.tensor([i for i in range(vocab_size) if i not in set(special_ids)])
    masked[randomised] = pool[torch.randint(len(pool), (int(randomised.sum()),), generator=generator)]
    return masked, labels


def encode_word(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):  # longest first
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return ["[UNK]"]  # nothing matches here
        pieces.append(piece)
        start = end
    return pieces


def encode_word_while(word, vocab):
    """The same with a while loop, as WordPieceEncoder writes it."""
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:  # the longest match first: shrink from the right
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:  # nothing matches here
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


def concat_last_four(hidden):
    return torch.cat(list(hidden[-4:]), dim=-1)  # (N, 4·C)


def sum_last_four(hidden):
    return hidden[-4:].sum(dim=0)  # (N, C)


SOLUTIONS = [(check_mask_batch, mask_batch), (check_wordpiece_encode, encode_word),
             (check_layer_strategy, concat_last_four)]  # fmt: skip


# ----- answers to the masking exercise -----


def masking(input_ids, mask_id, vocab_size, special_ids, generator, *, p=0.15, mask_share=0.8, random_share=0.1,
            two_draws=False, specials=True, labels_from_masked=False, ignore=-100, fixed_random=None,
            use_generator=True, inverted=False):  # fmt: skip
    """The reference with one knob turned: the usual mistakes."""
    gen = {"generator": generator} if use_generator else {}
    special = (
        torch.isin(input_ids, torch.tensor(special_ids)) if specials else torch.zeros_like(input_ids, dtype=torch.bool)
    )
    chosen = (torch.rand(input_ids.shape, **gen) < p) & ~special
    if inverted:
        chosen = ~chosen & ~special
    masked = input_ids.clone()
    fate = torch.rand(input_ids.shape, **gen)
    to_mask = chosen & (fate < mask_share)
    if two_draws:
        swap = chosen & (torch.rand(input_ids.shape, **gen) < random_share)
    else:
        swap = chosen & (fate >= mask_share) & (fate < mask_share + random_share)
    masked[to_mask] = mask_id
    drawn = (
        torch.randint(vocab_size, input_ids.shape, **gen)
        if fixed_random is None
        else torch.full_like(input_ids, fixed_random)
    )
    masked[swap] = drawn[swap]
    source = masked if labels_from_masked else input_ids
    labels = torch.where(chosen, source, torch.full_like(input_ids, ignore))
    return masked, labels


def library_masking(input_ids, mask_id, vocab_size, special_ids, generator):
    """DataCollatorForLanguageModeling's recipe: Bernoulli(0.15), then 80 % of those, then half of the rest."""
    labels = input_ids.clone()
    probability = torch.full(labels.shape, 0.15)
    probability.masked_fill_(torch.isin(input_ids, torch.tensor(special_ids)), 0.0)
    chosen = torch.bernoulli(probability, generator=generator).bool()
    labels[~chosen] = -100
    masked = input_ids.clone()
    replaced = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & chosen
    masked[replaced] = mask_id
    random = torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool() & chosen & ~replaced
    masked[random] = torch.randint(vocab_size, labels.shape, generator=generator)[random]
    return masked, labels


def exact_count_masking(input_ids, mask_id, vocab_size, special_ids, generator):
    return bert_masking.mask_tokens(input_ids, mask_id=mask_id, vocab_size=vocab_size, special_ids=special_ids,
                                   generator=generator)  # fmt: skip


def numpy_masking(input_ids, mask_id, vocab_size, special_ids, generator):
    """In NumPy with a seed from the generator, returned as tensors."""
    rng = np.random.default_rng(int(torch.randint(2**31, (), generator=generator)))
    ids = input_ids.numpy()
    chosen = (rng.random(ids.shape) < 0.15) & ~np.isin(ids, special_ids)
    fate = rng.random(ids.shape)
    masked = ids.copy()
    masked[chosen & (fate < 0.8)] = mask_id
    swap = chosen & (fate >= 0.8) & (fate < 0.9)
    masked[swap] = rng.integers(5, vocab_size, ids.shape)[swap]
    return torch.from_numpy(masked), torch.from_numpy(np.where(chosen, ids, -100))


def per_row_fixed(input_ids, mask_id, vocab_size, special_ids, generator):
    """15 targets in every row, whatever its length (15 % of the padded width)."""
    special = torch.isin(input_ids, torch.tensor(special_ids))
    scores = torch.rand(input_ids.shape, generator=generator).masked_fill(special, 2.0)
    chosen = scores.argsort(dim=1).argsort(dim=1) < round(0.15 * input_ids.shape[1])
    masked = input_ids.clone()
    masked[chosen] = mask_id
    return masked, torch.where(chosen, input_ids, torch.full_like(input_ids, -100))


def changes_padding(input_ids, mask_id, vocab_size, special_ids, generator):
    masked, labels = mask_batch(input_ids, mask_id, vocab_size, special_ids, generator)
    masked[input_ids == 0] = 5
    return masked, labels


# ----- answers to the WordPiece exercise -----


def encode_shortest(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(start + 1, len(word) + 1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


def encode_keeping_pieces(word, vocab):
    """Returns the pieces found so far, then [UNK]."""
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start and (word[start:end] if start == 0 else "##" + word[start:end]) not in vocab:
            end -= 1
        if end == start:
            return pieces + ["[UNK]"]
        pieces.append(word[start:end] if start == 0 else "##" + word[start:end])
        start = end
    return pieces


def encode_without_prefix(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start and word[start:end] not in vocab:
            end -= 1
        if end == start:
            return ["[UNK]"]
        pieces.append(word[start:end])
        start = end
    return pieces


def encode_backtracking(word, vocab, start=0):
    """Any segmentation that works (depth first, longest first): right unless greedy gets stuck."""
    if start == len(word):
        return []
    for end in range(len(word), start, -1):
        piece = word[start:end] if start == 0 else "##" + word[start:end]
        if piece in vocab:
            rest = encode_backtracking(word, vocab, end)
            if rest is not None and rest != ["[UNK]"]:
                return [piece, *rest]
    return ["[UNK]"] if start == 0 else None


# ----- answers to the layer-strategy exercise -----


RIGHT = [
    (check_mask_batch, mask_batch),
    (check_mask_batch, library_masking),
    (check_mask_batch, exact_count_masking),
    (
        check_mask_batch,
        lambda *a: bert_masking.mask_tokens(
            a[0], mask_id=a[1], vocab_size=a[2], special_ids=a[3], generator=a[4], count="batch"
        ),
    ),
    (check_mask_batch, numpy_masking),
    (check_mask_batch, lambda *a: list(mask_batch(*a))),
    (check_mask_batch, lambda *a: masking(*a)),
    (check_wordpiece_encode, encode_word),
    (check_wordpiece_encode, encode_word_while),
    (check_wordpiece_encode, lambda word, vocab: WordPieceEncoder(vocab).encode_word(word)),
    (check_wordpiece_encode, lambda word, vocab: tuple(encode_word(word, vocab))),
    (check_layer_strategy, concat_last_four),
    (check_layer_strategy, lambda h: h[-4:].permute(1, 0, 2).reshape(h.shape[1], -1)),
    (check_layer_strategy, lambda h: torch.cat([h[-4], h[-3], h[-2], h[-1]], dim=1).float()),
    (check_layer_strategy, LAYER_STRATEGIES["concat last four hidden"]),
    (lambda fn: check_layer_strategy(fn, "sum of last four hidden"), sum_last_four),
    (lambda fn: check_layer_strategy(fn, "sum"), lambda h: h[-1] + h[-2] + h[-3] + h[-4]),
    (lambda fn: check_layer_strategy(fn, "last hidden layer"), lambda h: h[-1]),
    (lambda fn: check_layer_strategy(fn, "second-to-last hidden"), lambda h: h[-2]),
]

WRONG = [
    (check_mask_batch, lambda *a: masking(*a, mask_share=1.0), "every chosen token became [MASK]"),
    (check_mask_batch, lambda *a: masking(*a, two_draws=True), "exclude one another"),
    (check_mask_batch, lambda *a: masking(*a, mask_share=0.9, random_share=0.0), "no chosen token got a random id"),
    (check_mask_batch, lambda *a: masking(*a, random_share=0.2), "no chosen token stayed unchanged"),
    (check_mask_batch, lambda *a: masking(*a, p=0.2), "chosen: 0.2"),
    (check_mask_batch, lambda *a: masking(*a, p=0.1), "BERT's is 0.15"),
    (check_mask_batch, lambda *a: masking(*a, inverted=True), "inverted"),
    (
        check_mask_batch,
        lambda *a: masking(*a, specials=False),
        "special tokens were chosen ([CLS], [PAD], [SEP], [UNK])",
    ),
    (check_mask_batch, lambda *a: masking(*a, labels_from_masked=True), "the labels hold the masked ids"),
    (check_mask_batch, lambda *a: masking(*a, ignore=0), "labels must be -100"),
    (check_mask_batch, lambda *a: (a[0], a[0]), "labels must be -100"),
    (check_mask_batch, lambda *a: masking(*a, fixed_random=7), "only 1 different ids"),
    (check_mask_batch, lambda *a: masking(*a, use_generator=False), "the same seed gave another masking"),
    (check_mask_batch, lambda *a: masking(*a, fixed_random=700), "[0, 600)"),
    (check_mask_batch, lambda *a: mask_batch(*a)[::-1], "(masked, labels) in this order"),
    (check_mask_batch, lambda *a: mask_batch(*a)[0], "a pair (masked, labels)"),
    (check_mask_batch, lambda *a: tuple(t.float() for t in mask_batch(*a)), "integer ids"),
    (check_mask_batch, lambda *a: (mask_batch(*a)[0][:, :-1], mask_batch(*a)[1]), "the input's shape"),
    (check_mask_batch, per_row_fixed, "every row got the same number of targets"),
    (check_mask_batch, changes_padding, "positions without a label were changed (special tokens among them)"),
    (check_mask_batch, lambda ids, *a: masking(torch.zeros_like(ids) + 9, *a), "the original id"),
    (check_wordpiece_encode, encode_shortest, "not the shortest"),
    (check_wordpiece_encode, encode_keeping_pieces, "not the pieces so far plus [UNK]"),
    (check_wordpiece_encode, encode_without_prefix, "looked up with ## in front"),
    (
        check_wordpiece_encode,
        lambda w, v: encode_without_prefix(w, v) if len(w) > 9 else encode_word(w, v),
        "with the course's vocabulary",
    ),
    (check_wordpiece_encode, encode_backtracking, "greedy does not back off"),
    (check_wordpiece_encode, lambda w, v: " ".join(encode_word(w, v)), "return a list of pieces"),
    (check_wordpiece_encode, lambda w, v: [sorted(v).index(p) for p in encode_word(w, v)], "not their ids"),
    (
        check_wordpiece_encode,
        lambda w, v: encode_word(w, v) if len(w) < 10 else encode_shortest(w, v),
        "with the course's vocabulary",
    ),
    (check_wordpiece_encode, lambda w, v: [w] if w in v else encode_word(w, v)[:1], "your pieces spell only 'ab'"),
    (check_wordpiece_encode, lambda w, v: [w[0]] + ["##" + c for c in w[1:]], "not the shortest"),
    (
        check_wordpiece_encode,
        lambda w, v: ["##" + w] if "##" + w in v else encode_word(w, v),
        "'##a' is an entry that only continues a word",
    ),
    (check_wordpiece_encode, lambda w, v: v, "return a list of pieces (strings); got set"),
    (check_layer_strategy, sum_last_four, "concatenate them instead"),
    (check_layer_strategy, lambda h: h[-4:], "stacking adds an axis"),
    (check_layer_strategy, lambda h: torch.cat(list(h[-4:]), dim=0), "dim=-1"),
    (check_layer_strategy, lambda h: h[-4:].reshape(h.shape[1], -1), "a reshape mixes the occurrences"),
    (check_layer_strategy, lambda h: torch.cat([h[-1], h[-2], h[-3], h[-4]], dim=-1), "other order"),
    (check_layer_strategy, lambda h: h[-1], "the last layer alone"),
    (check_layer_strategy, lambda h: torch.cat(list(h[:4]), dim=-1), "hidden[:4] is the embedding layer"),
    (check_layer_strategy, lambda h: torch.cat(list(h[-5:]), dim=-1), "not five"),
    (check_layer_strategy, lambda h: torch.cat(list(h[-3:]), dim=-1), "not three"),
    (check_layer_strategy, lambda h: list(h[-4:]), "stacking adds an axis"),
    (check_layer_strategy, lambda h: torch.cat(list(h[-4:]), dim=-1) * 2, "takes layers"),
    (lambda fn: check_layer_strategy(fn, "sum"), concat_last_four, "sum them instead"),
    (lambda fn: check_layer_strategy(fn, "sum"), lambda h: h[-4:].mean(0), "do not average"),
    (lambda fn: check_layer_strategy(fn, "sum"), lambda h: h[-5:].sum(0), "not five"),
    (lambda fn: check_layer_strategy(fn, "sum"), lambda h: h.sum(0), "the sum of all the layers"),
    (lambda fn: check_layer_strategy(fn, "sum"), lambda h: h[-4:].sum(-1), "(N, 1·C)"),
]


# The same right answers as NumPy arrays: a check judges the value, not the type (issue 33).
RIGHT += [
    (check_mask_batch, lambda *a: tuple(t.numpy() for t in mask_batch(*a))),
    (check_layer_strategy, lambda h: torch.cat(list(h[-4:]), dim=-1).numpy()),
]
test_right, test_wrong, test_unfinished, test_forms = contract_tests(CHECKS, RIGHT, WRONG)


@pytest.mark.parametrize("check, solution", SOLUTIONS)
def test_the_reference_solutions_pass(capsys, check, solution):
    assert check(solution) is True
    assert capsys.readouterr().out.startswith("✓")


def test_the_reference_encoder_agrees_with_the_course_encoder_and_the_library():
    from course_utils import zoo

    tokenizer = zoo.load("tokenizer")
    vocab = set(tokenizer.get_vocab())
    for word in ["the", "outside", "cherries", "zebra", "unbelievable", "café"]:
        assert encode_word(word, vocab) == WordPieceEncoder(vocab).encode_word(word)
    for word in ["the", "outside", "cherries", "zebra", "unbelievable"]:
        assert encode_word(word, vocab) == tokenizer.tokenize(word)


def test_the_reference_layer_strategies_are_the_modules():
    hidden = torch.randn(13, 4, 6)
    assert torch.equal(concat_last_four(hidden), LAYER_STRATEGIES["concat last four hidden"](hidden))
    assert torch.allclose(sum_last_four(hidden), LAYER_STRATEGIES["sum of last four hidden"](hidden))


def test_an_unknown_strategy_is_refused_in_one_line(capsys):
    assert check_layer_strategy(concat_last_four, "concat everything") is False
    assert capsys.readouterr().out.startswith("✗ strategy must be one of")


def test_the_masking_check_leaves_no_trace_of_the_students_generator(capsys):
    """A check is deterministic: the same answer gets the same verdict, whatever ran before."""
    torch.manual_seed(1)
    first = check_mask_batch(mask_batch)
    torch.manual_seed(2)
    assert check_mask_batch(mask_batch) is first is True
    outputs = capsys.readouterr().out.splitlines()
    assert outputs[0] == outputs[1]


def test_the_notebooks_solutions_hold_the_reference_answers_and_the_docstrings_do_not():
    """The answers live in the notebook's <details> solutions; Shift-Tab on a check must not show them."""
    solutions = solution_text("09_bert")
    for answer, check in [
        ("masked[chosen & (u < 0.8)] = mask_id", check_mask_batch),
        ('piece = word[start:end] if start == 0 else "##" + word[start:end]', check_wordpiece_encode),
        ("torch.cat(list(hidden[-4:]), dim=-1)", check_layer_strategy),
    ]:
        assert answer in solutions, answer
        assert answer not in check.__doc__, check.__name__
    assert "hidden[-4:].sum(dim=0)" not in check_layer_strategy.__doc__  # the other strategy's answer
