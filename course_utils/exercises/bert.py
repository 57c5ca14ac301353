"""Self-checks for notebook 09's exercises (BERT: its masking, WordPiece encoding, features from its layers).

Each check prints one ✓ or ✗ line with a hint and returns a bool; it never raises on a wrong,
unfinished (``None``) or crashing answer. The exercises: BERT's masking (15 % of the maskable tokens chosen, of
those 80 % ``[MASK]``, 10 % a random id, 10 % unchanged; labels -100 elsewhere), checked by counting on a large
batch since a masking is random; WordPiece's greedy longest-match-first encoding of one word; and Devlin et al.'s
features from the last four layers (Table 7).
"""

from __future__ import annotations

import math

import torch

from course_utils.exercises.answers import as_tensors
from course_utils.exercises import answer_of, never_raises, verdict
from course_utils.analysis.contextual_embeddings import LAYER_STRATEGIES
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.bert.wordpiece import CONTINUATION, UNK, WordPieceEncoder
from course_utils.validation import CourseInputError

Tensor = torch.Tensor

# ---------------------------------------------------------------- exercise: BERT's masking

PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)  # the course tokenizer's special ids
SPECIAL_NAMES = {PAD_ID: "[PAD]", UNK_ID: "[UNK]", CLS_ID: "[CLS]", SEP_ID: "[SEP]", MASK_ID: "[MASK]"}
VOCAB_SIZE = 600
_ROWS = 1000
_LENGTHS = (
    20,
    40,
    60,
    80,
    100,
)  # maskable tokens per row: 15 % of each is a whole number, so any count rule gives 0.15
_SEED = 9
_SES = 5.0  # a share passes within 5 binomial standard errors (deterministic: the batch and the seeds are fixed)
_SHARES = {"chosen": 0.15, "mask": 0.8, "random": 0.1, "unchanged": 0.1}


def _mask_case(seed: int = _SEED) -> Tensor:
    """A padded batch (rows, T): [CLS], 20-100 ordinary ids (every third row also holds an [UNK]), [SEP], [PAD]s."""
    g = torch.Generator().manual_seed(seed)
    width = max(_LENGTHS) + 3  # [CLS] words [UNK] [SEP]
    ids = torch.full((_ROWS, width), PAD_ID, dtype=torch.long)  # (B, T)
    for row in range(_ROWS):
        words = torch.randint(len(SPECIAL_NAMES), VOCAB_SIZE, (_LENGTHS[row % len(_LENGTHS)],), generator=g)
        if row % 3 == 0:  # an unknown word somewhere: special, never to be chosen
            at = int(torch.randint(len(words) + 1, (), generator=g))
            words = torch.cat([words[:at], torch.tensor([UNK_ID]), words[at:]])
        sentence = torch.cat([torch.tensor([CLS_ID]), words, torch.tensor([SEP_ID])])
        ids[row, : len(sentence)] = sentence
    return ids


def _masking_answer(fn, ids: Tensor, seed: int) -> tuple[tuple[Tensor, Tensor] | None, str | None]:
    """Call ``fn`` on a copy of ``ids`` with a fresh generator seeded ``seed``; (masked, labels) or (None, why not)."""
    args = (ids.clone(), MASK_ID, VOCAB_SIZE, sorted(SPECIAL_NAMES), torch.Generator().manual_seed(seed))
    crash_hint = ("input_ids is a (B, T) LongTensor, special_ids a list of ints (torch.isin(input_ids, "
                  "torch.tensor(special_ids)) marks them); draw random numbers with generator=generator")  # fmt: skip
    answer, why = answer_of(fn, args, crash_hint, copy_args=False)
    if why:
        return None, why
    parts, why = as_tensors(answer, 2, "a pair (masked, labels)", floats=False)
    if why:
        return None, why
    masked, labels = parts
    for name, part in (("masked", masked), ("labels", labels)):
        if part.shape != ids.shape:
            return None, f"{name} must have the input's shape (B, T) = {tuple(ids.shape)}; got {tuple(part.shape)}"
        if part.is_floating_point() or part.dtype == torch.bool:
            return None, f"{name} must hold integer ids (torch.long, like input_ids); got dtype {part.dtype}"
    return (masked.long(), labels.long()), None


def _share_problem(name: str, share: float, out_of: int) -> str | None:
    """Why ``share`` (of ``out_of`` tokens) is not BERT's, or None when it is within ``_SES`` standard errors."""
    expected = _SHARES[name]
    tolerance = _SES * math.sqrt(expected * (1 - expected) / out_of)
    if abs(share - expected) <= tolerance:
        return None
    return f"{share:.3f} where BERT's is {expected:.2f} (± {tolerance:.3f} on {out_of:,} tokens)"


def _fate_hint(shares: dict[str, float]) -> str:
    """A hint for chosen tokens whose [MASK] / random / unchanged shares are off."""
    mask, random, unchanged = shares["mask"], shares["random"], shares["unchanged"]
    if mask > 0.97:
        return ("every chosen token became [MASK]; only 80 % should: 10 % get a random id and 10 % stay as they are "
                "(still with their label)")  # fmt: skip
    if abs(mask - 0.72) < 0.03:
        return ("a random replacement overwrote some [MASK]s: the three fates exclude one another, so draw one number "
                "per chosen token: below 0.8 → [MASK], 0.8 to 0.9 → a random id, else unchanged")  # fmt: skip
    if random < 0.02:
        return "no chosen token got a random id: 10 % of them become torch.randint(vocab_size, ...)"
    if unchanged < 0.02:
        return "no chosen token stayed unchanged: 10 % keep their original id (and their label)"
    if abs(mask - 0.15 * 0.8) < 0.03 or abs(mask - 0.8 * 0.8) < 0.04:
        return ("the 80/10/10 is a split of the chosen tokens: draw it among the chosen, independently of the "
                "draw that chose them")  # fmt: skip
    return "of the chosen tokens, 80 % become [MASK], 10 % a random id, 10 % stay unchanged"


@never_raises
def check_mask_batch(fn) -> bool:
    """Exercise: ``fn(input_ids, mask_id, vocab_size, special_ids, generator) -> (masked, labels)``, BERT's masking.

    input_ids (B, T) LongTensor; special_ids a list of ints ([PAD], [UNK], [CLS], [SEP], [MASK]), never chosen;
    generator a ``torch.Generator``, for every random number, so that a seed repeats the masking. Choose 15 % of
    the other tokens; of the chosen, replace 80 % by ``mask_id``, 10 % by a random id in [0, vocab_size) and leave
    10 % unchanged. ``labels`` (B, T) is the original id at the chosen positions and -100 elsewhere. A coin per token
    (as the library) or an exact count (as BERT's own code) both pass, and so do random ids drawn from the whole
    vocabulary (as the library) or from its non-special ids: the check counts the shares on a batch of 1,000 rows
    (60,000 maskable tokens).
    """
    ids = _mask_case()
    answer, why = _masking_answer(fn, ids, _SEED)
    if why:
        return verdict(False, why)
    masked, labels = answer
    if bool((masked == IGNORE_INDEX).any()) and not bool((labels == IGNORE_INDEX).any()):
        return verdict(False, "not yet. Hint: return (masked, labels) in this order")
    special = torch.isin(ids, torch.tensor(sorted(SPECIAL_NAMES)))  # (B, T)
    chosen = labels != IGNORE_INDEX  # (B, T)
    if not bool((~chosen).any()) or (labels == 0).double().mean() > 0.5:
        return verdict(False, "labels must be -100 wherever a token was not chosen, so that the loss skips it "
                              "(cross_entropy ignores -100, IGNORE_INDEX; 0 would be a real id, [PAD]'s). "
                              "Hint: torch.where(chosen, input_ids, torch.full_like(input_ids, -100))")  # fmt: skip
    if not torch.equal(labels[chosen], ids[chosen]):
        if bool((labels[chosen] == masked[chosen]).all()):
            return verdict(False, "the labels hold the masked ids. Hint: a label is the *original* id, what the "
                                  "model must recover: take it from input_ids before replacing anything "
                                  "(masked = input_ids.clone())")  # fmt: skip
        return verdict(
            False, "at a chosen position the label must be the original id (input_ids there), elsewhere -100"
        )
    changed = ~chosen & (masked != ids)  # (B, T)
    if bool(changed.any()):
        where = "special tokens among them" if bool((changed & special).any()) else "none of them special"
        return verdict(False, f"{int(changed.sum())} positions without a label were changed ({where}). Hint: only "
                              "the chosen tokens (those with a label) may be replaced")  # fmt: skip
    if bool((chosen & special).any()):
        names = sorted({SPECIAL_NAMES[i] for i in ids[chosen & special].tolist()})
        return verdict(False, f"{int((chosen & special).sum())} special tokens were chosen ({', '.join(names)}). "
                              "Hint: never choose an id in special_ids: "
                              "& ~torch.isin(input_ids, torch.tensor(special_ids))")  # fmt: skip
    maskable = int((~special).sum())
    share = int(chosen.sum()) / maskable
    problem = _share_problem("chosen", share, maskable)
    if problem:
        per_row = chosen.sum(dim=1)  # (B,)
        hint = "choose each maskable token with probability 0.15 (or 15 % of each row's maskable tokens)"
        if share > 0.5:
            hint = "it looks inverted: the chosen 15 % get a label, the other 85 % get -100"
        elif bool((per_row == per_row[0]).all()):
            hint = ("every row got the same number of targets, but the rows hold 20 to 100 maskable tokens: count 15 % "
                    "of each row's maskable tokens ([PAD], [CLS], [SEP] and [UNK] are not maskable)")  # fmt: skip
        return verdict(False, f"chosen: {problem}. Hint: {hint}")
    as_mask = chosen & (masked == MASK_ID)
    unchanged = chosen & (masked == ids)
    random = chosen & ~as_mask & ~unchanged
    count = int(chosen.sum())
    shares = {"mask": int(as_mask.sum()) / count, "random": int(random.sum()) / count,
              "unchanged": int(unchanged.sum()) / count}  # fmt: skip
    problems = [f"{name} {problem}" for name in shares if (problem := _share_problem(name, shares[name], count))]
    if problems:
        return verdict(False, f"of the chosen tokens: {'; '.join(problems)}. Hint: {_fate_hint(shares)}")
    drawn = masked[random]
    if int(drawn.min()) < 0 or int(drawn.max()) >= VOCAB_SIZE:
        return verdict(False, f"a random replacement must be an id in [0, vocab_size) = [0, {VOCAB_SIZE}); "
                              f"got {int(drawn.min())}..{int(drawn.max())}")  # fmt: skip
    distinct = len(set(drawn.tolist()))
    if distinct < 0.25 * min(len(drawn), VOCAB_SIZE):
        return verdict(False, f"the {len(drawn)} random replacements use only {distinct} different ids. Hint: "
                              "draw each uniformly from the vocabulary: "
                              "torch.randint(vocab_size, ..., generator=generator)")  # fmt: skip
    again, why = _masking_answer(fn, ids, _SEED)
    if why or not (torch.equal(again[0], masked) and torch.equal(again[1], labels)):
        return verdict(False, "the same seed gave another masking. Hint: draw every random number from generator "
                              "(torch.rand(..., generator=generator), torch.randint(..., generator=generator)), "
                              "so that the masking can be repeated")  # fmt: skip
    other, why = _masking_answer(fn, ids, _SEED + 1)
    if why or torch.equal(other[1] != IGNORE_INDEX, chosen):
        return verdict(False, "another seed chose the very same positions. Hint: choose the tokens at random, "
                              "with numbers drawn from generator")  # fmt: skip
    return verdict(True, f"your masking chose {share:.3f} of the maskable tokens (never a special one); of those "
                         f"[MASK] {shares['mask']:.2f}, random {shares['random']:.2f}, "
                         f"unchanged {shares['unchanged']:.2f}: "
                         "BERT's 15 % and 80/10/10, labels -100 elsewhere, and a seed repeats it")  # fmt: skip


# ---------------------------------------------------------------- exercise: WordPiece encoding of one word

# (word, the vocabulary's entries, what the case tests)
_HAND_CASES = [
    ("cat", ("cat", "c", "##a", "##t", "ca"), "a word that is in the vocabulary is one piece"),
    ("a", ("a", "##a"), "a one-letter word in the vocabulary is one piece"),
    ("x", ("a", "##x"), "nothing starts the word: ['[UNK]']"),
    ("abc", ("a", "ab", "##b", "##c", "##bc"),
     "take the longest entry that starts the rest ('ab'), not the shortest ('a')"),
    ("aaaa", ("a", "aa", "##a", "##aa"), "longest match first at every step: aa ##aa"),
    ("ab", ("##a", "b", "##b"), "the first piece has no ##: '##a' can only continue a word, so 'ab' is [UNK]"),
    ("ab", ("a", "b"), "a piece after the first must be a ## entry: 'b' alone cannot continue a word, so 'ab' is [UNK]"),
    ("catx", ("cat", "c", "##a", "##t"),
     "when some rest cannot be matched the *whole word* becomes ['[UNK]'], not the pieces found so far"),
    ("abc", ("a", "ab", "##bc"),
     "greedy does not back off: after 'ab', '##c' is not in the vocabulary, so the whole word is [UNK] "
     "(even though a ##bc would spell it)"),
    ("unaffable", ("un", "##aff", "##able", "u", "##n", "##a", "##f", "##ab", "##le"),
     "BERT's own example, un ##aff ##able: at each point take the longest entry that matches"),
]  # fmt: skip
_EXTRA_WORDS = ("zebra", "zebras", "xylophone", "outside", "café", "naïve", "q", "unbelievable", "pancakes")


def _greedy(word: str, vocab, *, longest: bool = True, prefix: str = CONTINUATION, whole_unk: bool = True) -> list[str]:
    """A WordPiece encoder with one rule changed (shortest match, no ##, keep the pieces before an [UNK]), for hints."""
    pieces, start = [], 0
    while start < len(word):
        ends = range(len(word), start, -1) if longest else range(start + 1, len(word) + 1)
        candidates = (word[start:end] if start == 0 else prefix + word[start:end] for end in ends)
        piece = next((candidate for candidate in candidates if candidate in vocab), None)
        if piece is None:
            return [UNK] if whole_unk else [*pieces, UNK]
        pieces.append(piece)
        start += len(piece) - (len(prefix) if start else 0)
    return pieces


def _pieces_problem(answer) -> str | None:
    """Why ``answer`` is not a list of pieces (strings), or None."""
    if isinstance(answer, str):
        return f"return a list of pieces, e.g. ['un', '##aff', '##able'] or ['{UNK}']; got the string {answer!r}"
    if not isinstance(answer, (list, tuple)):
        return f"return a list of pieces (strings); got {type(answer).__name__}"
    if answer and all(isinstance(p, int) for p in answer):
        return "return the pieces themselves (strings such as '##able'), not their ids"
    if not answer or not all(isinstance(p, str) for p in answer):
        return f"return a non-empty list of strings (the pieces); got {list(answer)!r:.80}"
    return None


def _encoding_hint(word: str, vocab, got: list[str], expected: list[str]) -> str | None:
    """Name the rule a wrong answer broke, if it is one of the usual ones."""
    spelled = "".join(p[len(CONTINUATION) :] if i and p.startswith(CONTINUATION) else p for i, p in enumerate(got))
    if expected == [UNK] and UNK not in got and spelled == word and all(p in vocab for p in got):
        return ("greedy does not back off: take the longest match at each point and never undo it; if a rest then "
                "matches nothing, the whole word is ['[UNK]'], even when another split would spell it")  # fmt: skip
    if got and got[0].startswith(CONTINUATION) and got != [UNK]:
        return f"the first piece has no ##: {got[0]!r} is an entry that only continues a word"
    if UNK not in got and spelled != word and word.startswith(spelled):
        return (f"your pieces spell only {spelled!r}: go on until the whole word is covered, each time with the "
                "longest '##' entry that starts the rest")  # fmt: skip
    if got == _greedy(word, vocab, longest=False):
        return "take the longest vocabulary entry that starts the rest, not the shortest (shrink from the right)"
    if got == _greedy(word, vocab, whole_unk=False):
        return "when some rest cannot be matched the whole word becomes ['[UNK]'], not the pieces so far plus [UNK]"
    if got == _greedy(word, vocab, prefix=""):
        return "a piece that continues a word is looked up with ## in front (word[start:end] becomes '##' + …)"
    return None


_RULE = ("greedy longest-match-first: the longest entry that starts the word, then the longest '##' entry that starts "
         "the rest, and so on; if some rest matches nothing, the whole word is ['[UNK]']")  # fmt: skip


def _course_cases():
    """Every word of the course language (held-out words too) and a few others, with the course's vocabulary."""
    from course_utils.language.grammar import CourseLanguage
    from course_utils import zoo

    vocab = set(zoo.load("tokenizer").get_vocab())
    return vocab, [*sorted(CourseLanguage(include_held_out=True).vocabulary), *_EXTRA_WORDS]


@never_raises
def check_wordpiece_encode(fn) -> bool:
    """Exercise: ``fn(word, vocab) -> list of pieces``, WordPiece's greedy longest-match-first encoding of one word.

    ``vocab`` is a set of strings, the vocabulary's entries (``set(tokenizer.get_vocab())``); a piece that continues
    a word carries ``##``. Take the longest entry that starts the word, then the longest ``##`` entry that starts the
    rest, and so on; if some rest matches nothing, the whole word is ``['[UNK]']``. Checked on hand-made
    vocabularies (the edge cases) and on every word of the course language with the course's tokenizer.
    """
    cases = [(word, {UNK, *tokens}, why, tokens) for word, tokens, why in _HAND_CASES]
    try:
        course_vocab, course_words = _course_cases()
    except CourseInputError:  # the shipped tokenizer is missing: the hand-made cases still check the rules
        course_vocab, course_words = set(), []
    cases += [(word, course_vocab, None, None) for word in course_words]
    for word, vocab, why, tokens in cases:
        expected = WordPieceEncoder(vocab).encode_word(word)
        answer, problem = answer_of(fn, (word, set(vocab)), "word is a string, vocab a set of strings: test "
                                    "`piece in vocab`", copy_args=False)  # fmt: skip
        problem = problem or _pieces_problem(answer)
        if problem:
            return verdict(False, f"for {word!r}: {problem}")
        got = list(answer)
        if got == expected:
            continue
        hint = _encoding_hint(word, vocab, got, expected) or why or _RULE
        if why is not None:
            return verdict(False, f"for {word!r} with the vocabulary {list(tokens)} (and {UNK}) you return {got}, the "
                                  f"encoding is {expected}. Hint: {hint}")  # fmt: skip
        return verdict(False, f"for {word!r} with the course's vocabulary you return {got}, the encoding is "
                              f"{expected}. Hint: {hint}")  # fmt: skip
    course = f" and all {len(course_words)} words of the course language and a few others" if course_words else ""
    return verdict(True, f"your encoder is greedy longest-match-first on {len(_HAND_CASES)} edge cases (longest match first, "
                         f"## continuations, a whole-word [UNK]){course}")  # fmt: skip


# ---------------------------------------------------------------- exercise: features from the last four layers

STRATEGY_ALIASES = {"concat": "concat last four hidden", "sum": "sum of last four hidden"}
# (hidden layers L, occurrences N, width C, seed): L >= 4, so "the last four" means the same in every convention
_LAYER_CASES = [(12, 5, 8, 0), (4, 3, 6, 1), (6, 1, 4, 2), (24, 2, 3, 3)]


def _strategy(name: str):
    name = STRATEGY_ALIASES.get(name, name)
    if name not in LAYER_STRATEGIES:
        raise CourseInputError(f"strategy must be one of {', '.join(map(repr, [*STRATEGY_ALIASES, *LAYER_STRATEGIES]))}; "
                               f"got {name!r}")  # fmt: skip
    return name, LAYER_STRATEGIES[name]


def _layer_variants(hidden: Tensor, combine: str) -> dict[str, Tensor]:
    """Features of the usual mistakes, each named by its hint (the first that matches is shown).

    ``combine`` is the asked strategy's ("sum" or "concat"): the wrong layers are combined the asked way.
    """
    last4 = hidden[-4:]  # (4, N, C)
    n = hidden.shape[1]
    cat = lambda layers: torch.cat(list(layers), dim=-1)  # noqa: E731
    combined = (lambda layers: cat(layers)) if combine == "concat" else (lambda layers: layers.sum(0))  # noqa: E731
    return {
        "that is the sum of the four; concatenate them instead, side by side along the features, (N, 4·C)":
            last4.sum(0),
        "that is the concatenation of the four; sum them instead, (N, C)": cat(last4),
        "sum the four layers, do not average them (the mean is the sum ÷ 4)": last4.mean(0),
        "concatenate the four (N, C) layers along the features: stacking adds an axis instead, (4, N, C)": last4,
        "concatenate along the last axis (dim=-1), so that each occurrence's four vectors sit side by side, (N, 4·C)":
            torch.cat(list(last4), dim=0),
        "a reshape mixes the occurrences: (4, N, C) → (N, 4·C) needs the layer axis moved next to the features first": last4.reshape(n, -1),
        "same numbers, other order: from layer L-3 up to layer L, as hidden[-4:] lists them": cat(last4.flip(0)),
        "that is the last layer alone; take the last four, hidden[-4:]": hidden[-1],
        "the last four hidden layers are L-3..L, hidden[-4:]; hidden[:4] is the embedding layer and the first three":
            combined(hidden[:4]),
        "four layers, not five: hidden[-4:] (hidden[-5:] has one too many)": combined(hidden[-5:]),
        "four layers, not three: hidden[-4:]": combined(hidden[-3:]),
        "the sum of all the layers is not the last four: hidden[-4:]": hidden.sum(0),
    }  # fmt: skip


def _layer_hint(answer: Tensor, hidden: Tensor, combine: str) -> str | None:
    """The hint of the first mistake whose features equal ``answer``, or None."""
    for hint, features in _layer_variants(hidden, combine).items():
        if answer.shape == features.shape and torch.allclose(answer, features, rtol=1e-5, atol=1e-6):
            return hint
    return None


@never_raises
def check_layer_strategy(fn, strategy: str = "concat last four hidden") -> bool:
    """Exercise: ``fn(hidden) -> features``: hidden states (L+1, N, C) → one feature row per occurrence.

    ``hidden`` stacks layer 0 (the embeddings) to layer L, as the notebook's word vectors come. ``strategy`` names the
    row of Devlin et al.'s Table 7 to write ("concat last four hidden", "sum of last four hidden", or "concat" /
    "sum"): "concat last four hidden" gives (N, 4·C), layers L-3, L-2, L-1, L side by side; "sum of last four hidden"
    gives (N, C). Checked on models of 4 to 24 layers. (On a model shallower than four layers the course's strategies
    take the hidden layers there are, never the embedding layer.)
    """
    name, reference = _strategy(strategy)
    for layers, count, width, seed in _LAYER_CASES:
        g = torch.Generator().manual_seed(seed)
        hidden = torch.randn(layers + 1, count, width, generator=g, dtype=torch.float64)  # (L+1, N, C)
        expected = reference(hidden)  # (N, C) or (N, k·C)
        answer, why = answer_of(fn, (hidden,), "hidden is one tensor (L+1, N, C): hidden[-4:] are the last four layers")
        if not why:
            parts, why = as_tensors(answer, 1, "one tensor (N, features)")
        if why:
            return verdict(False, why)
        (answer,) = parts
        if answer.shape == expected.shape and torch.allclose(answer, expected, rtol=1e-5, atol=1e-6):
            continue
        case = f"L={layers}, N={count}, C={width}"
        hint = _layer_hint(answer, hidden, reference.combine)
        if hint is None and answer.shape != expected.shape:
            hint = f"the features of '{name}' are (N, {expected.shape[1] // width}·C) = {tuple(expected.shape)}"
        if hint is None:
            hint = (
                f"'{name}' takes layers {', '.join(map(str, reference.layers(layers)))} of hidden (0 = the embeddings)"
            )
        return verdict(False, f"not '{name}' yet ({case}, you return shape {tuple(answer.shape)}). Hint: {hint}")
    return verdict(True, f"your features match '{name}' (Devlin et al., Table 7) for models of "
                         f"{', '.join(str(c[0]) for c in _LAYER_CASES)} layers")  # fmt: skip
