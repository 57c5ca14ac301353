"""A tiny BERT pretrained by masked-language modelling on the course language, and scored against the oracle.

BERT is a transformer *encoder* stack (every position reads every other: no causal mask) with a masked-LM
head: hide some tokens, predict them from both sides. ``CourseBERT`` wraps ``transformers.BertForMaskedLM``
in the course's contract ``model(input_ids, labels=None) -> (logits, loss)``, so the course's ``train`` loop
trains it; ``model.hf`` is the library model (``hf.bert`` gives the hidden states of every layer).

Scoring a masked *word*: WordPiece splits rarer words ("outside" = ``o ##u ##ts ##ide``), and a masked LM
predicts pieces, not words. A word of k pieces is hidden behind k ``[MASK]`` s, so the model is told k:
BERT's own task gives away the length of the gap. The model has no P(k), so its scores for words of
different lengths cannot be put on one scale (the first try, renormalising over all words, gave every
long word far too little). The fair comparison gives everyone the same hint: P(word | left ___ right,
the word has k pieces), for the model (``WordScorer``), for the oracle (``given_piece_count`` on
``CourseLanguage.masked_distribution``) and for word-level models such as notebook 05's BiLSTM. 90 % of
running words are one piece, for which the hint says nothing new about the word. Then, item by item:

    masked NLL ratio = exp(mean model NLL - mean oracle NLL)     (1 = the truth; the masked analogue of perplexity ÷ oracle)
"""

from __future__ import annotations

import copy
import math
import random
from functools import lru_cache
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.models.lm import IGNORE_INDEX
from course_utils.validation import CourseInputError, check_dropout, check_heads, check_int

Tensor = torch.Tensor

POOL = 16  # batches per length-sorted pool in whole_word_batches
SPECIAL_IDS = range(5)  # [PAD] [UNK] [CLS] [SEP] [MASK]: the course tokenizer's first five ids
ATTENTION = "eager"  # the only implementation that returns attention weights (for bertviz and the probes)


def bert_config(tokenizer, *, layers: int, hidden: int, heads: int, intermediate: int | None = None,
                max_len: int = 64, dropout: float = 0.0):  # fmt: skip
    """A ``BertConfig`` for ``tokenizer``'s vocabulary (``intermediate`` defaults to 4 × hidden, as in BERT)."""
    from transformers import BertConfig

    hidden, heads = check_heads("hidden", hidden, "heads", heads)
    dropout = check_dropout(dropout)
    return BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=check_int("layers", layers, minimum=1),
        num_attention_heads=heads,
        intermediate_size=check_int("intermediate", intermediate or 4 * hidden, minimum=1),
        max_position_embeddings=check_int("max_len", max_len, minimum=2),
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        pad_token_id=tokenizer.pad_token_id,
        type_vocab_size=2,
    )


class CourseBERT(nn.Module):
    """``BertForMaskedLM`` in the course's contract; ``forward(input_ids, labels) -> (logits, loss)``.

    The attention mask is read from the input (``[PAD]`` positions are not attended to).
    """

    def __init__(self, config, *, seed: int = 0):
        super().__init__()
        from transformers import BertForMaskedLM

        torch.manual_seed(seed)
        self.hf = BertForMaskedLM._from_config(copy.deepcopy(config), attn_implementation=ATTENTION)
        self.pad_id = config.pad_token_id

    @property
    def bert(self):
        """The encoder stack (``BertModel``): embeddings, layers, no masked-LM head."""
        return self.hf.bert

    def forward(self, input_ids: Tensor, labels: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        if input_ids.ndim != 2:
            raise CourseInputError(f"input_ids must be (B, T), got {list(input_ids.shape)}")
        out = self.hf(input_ids=input_ids, attention_mask=(input_ids != self.pad_id).long(), labels=labels)
        return out.logits, out.loss  # (B, T, V), scalar or None

    @torch.no_grad()
    def hidden_states(self, input_ids: Tensor) -> tuple[Tensor, ...]:
        """Layer 0 (embeddings) to layer L, each (B, T, C)."""
        out = self.hf.bert(
            input_ids=input_ids, attention_mask=(input_ids != self.pad_id).long(), output_hidden_states=True
        )
        return out.hidden_states

    @torch.no_grad()
    def attentions(self, input_ids: Tensor) -> tuple[Tensor, ...]:
        """Per layer, the attention weights (B, H, T, T)."""
        out = self.hf.bert(
            input_ids=input_ids, attention_mask=(input_ids != self.pad_id).long(), output_attentions=True
        )
        return out.attentions


def encode_sentences(tokenizer, sentences: Sequence[Sequence[str]]) -> list[list[int]]:
    """``[CLS] sentence [SEP]`` ids for each sentence (a list of words)."""
    if not sentences:
        raise CourseInputError("no sentences to encode")
    return tokenizer([" ".join(words) for words in sentences], add_special_tokens=True)["input_ids"]


def mlm_collator(tokenizer, *, seed: int = 0, mlm_probability: float = 0.15,
                 mask_replace_prob: float = 0.8, random_replace_prob: float = 0.1):  # fmt: skip
    """The library's masking: ``DataCollatorForLanguageModeling`` with BERT's 15 % and 80/10/10, seeded."""
    from transformers import DataCollatorForLanguageModeling

    return DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability, mask_replace_prob=mask_replace_prob,
                                           random_replace_prob=random_replace_prob, seed=seed)  # fmt: skip


def mlm_batches(id_lists: Sequence[Sequence[int]], tokenizer, *, batch_size: int, seed: int = 0, **masking):
    """``batch(step) -> (input_ids, labels)``: random sentences, padded, masked by the library's collator."""
    if not id_lists:
        raise CourseInputError("no sentences to batch")
    batch_size = check_int("batch_size", batch_size, minimum=1)
    collator = mlm_collator(tokenizer, seed=seed, **masking)
    rng = random.Random(seed)

    def batch(step: int) -> tuple[Tensor, Tensor]:
        chosen = [id_lists[rng.randrange(len(id_lists))] for _ in range(batch_size)]
        out = collator([{"input_ids": ids} for ids in chosen])
        return out["input_ids"], out["labels"]  # (B, T), (B, T) with IGNORE_INDEX where nothing is masked

    return batch


def whole_word_batches(sentences: Sequence[Sequence[str]], tokenizer, *, batch_size: int, seed: int = 0,
                       probability: float = 0.15, mask_share: float = 0.8, random_share: float = 0.1):  # fmt: skip
    """``batch(step) -> (input_ids, labels)`` with *whole-word* masking: a chosen word has all its pieces hidden.

    Each word is chosen with ``probability``; a chosen word's pieces all become ``[MASK]`` (80 %), all
    random pieces (10 %) or all stay (10 %): Devlin et al.'s 80/10/10, applied per word, as in the
    whole-word-masking BERTs Google released in 2019. With token masking, the pieces of one word are
    rarely hidden together (0.15² of the time for two), so a model never learns to fill a gap of k masks.
    The library's ``whole_word_mask=True`` does 100/0/0 only, so this is written here.

    Sentences are batched with others of similar length (from a random pool of ``POOL`` batches), so that
    little of each batch is ``[PAD]``: with random batches 58 % of the positions were padding.
    """
    if not sentences:
        raise CourseInputError("no sentences to batch")
    batch_size = check_int("batch_size", batch_size, minimum=1)
    ids, word_ids = _encode_with_words(tokenizer, sentences)
    mask = _whole_word_masker(tokenizer, seed=seed, probability=probability, mask_share=mask_share,
                              random_share=random_share)  # fmt: skip
    rng = random.Random(seed)
    queue: list[list[int]] = []

    def next_rows() -> list[int]:
        """Batches of similar lengths: draw a pool of POOL batches' worth, sort it by length, cut, shuffle."""
        if not queue:
            pool = sorted((rng.randrange(len(ids)) for _ in range(POOL * batch_size)), key=lambda r: len(ids[r]))
            queue.extend(pool[i : i + batch_size] for i in range(0, len(pool), batch_size))
            rng.shuffle(queue)
        return queue.pop()

    def batch(step: int) -> tuple[Tensor, Tensor]:
        rows = next_rows()
        return mask([ids[r] for r in rows], [word_ids[r] for r in rows])

    return batch


def stream_whole_word_batches(tokenizer, *, batch_size: int, seed: int = 0, probability: float = 0.15,
                              mask_share: float = 0.8, random_share: float = 0.1):  # fmt: skip
    """``whole_word_batches`` over fresh sentences: batch ``step`` (1, 2, …) holds sentences of ``language.stream``,
    none seen twice. Steps ``POOL·p + 1 … POOL·(p + 1)`` share one pool of the stream's batches, sorted by length
    and cut, so a batch's rows are of similar lengths; the masks are drawn in step order, as in training."""
    from course_utils.language import stream

    batch_size = check_int("batch_size", batch_size, minimum=1)
    mask = _whole_word_masker(tokenizer, seed=seed, probability=probability, mask_share=mask_share,
                              random_share=random_share)  # fmt: skip
    pools: dict[int, list[tuple[list, list]]] = {}

    def pool_of(index: int) -> list[tuple[list, list]]:
        if index not in pools:
            sentences = [s for step in range(POOL * index + 1, POOL * (index + 1) + 1)
                         for s in stream.fresh_sentences(step, batch_size=batch_size, seed=seed)]  # fmt: skip
            ids, word_ids = _encode_with_words(tokenizer, sentences)
            rows = sorted(range(len(ids)), key=lambda r: len(ids[r]))
            cut = [rows[i : i + batch_size] for i in range(0, len(rows), batch_size)]
            random.Random(f"{stream.batch_seed(index, seed)} pool").shuffle(cut)
            pools.clear()  # only the current pool is kept
            pools[index] = [([ids[r] for r in chunk], [word_ids[r] for r in chunk]) for chunk in cut]
        return pools[index]

    def batch(step: int) -> tuple[Tensor, Tensor]:
        step = check_int("step", step, minimum=1)
        return mask(*pool_of((step - 1) // POOL)[(step - 1) % POOL])

    return batch


def _encode_with_words(tokenizer, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[list[int]]]:
    """Each sentence's piece ids and, per piece, the index of its word (-1 for ``[CLS]`` and ``[SEP]``)."""
    encoded = tokenizer([" ".join(words) for words in sentences])
    ids = encoded["input_ids"]
    return ids, [[-1 if w is None else w for w in encoded.word_ids(i)] for i in range(len(ids))]


def _whole_word_masker(tokenizer, *, seed: int, probability: float, mask_share: float, random_share: float):
    """``mask(rows, row_words) -> (input_ids, labels)``: pad the rows into a batch and hide whole words (see
    ``whole_word_batches``); its random draws come from one generator seeded by ``seed``, in call order."""
    first_real = len(SPECIAL_IDS)  # random replacements are drawn from the non-special pieces
    generator = torch.Generator().manual_seed(seed)

    def mask(rows: Sequence[Sequence[int]], row_words: Sequence[Sequence[int]]) -> tuple[Tensor, Tensor]:
        batch_size, width = len(rows), max(len(row) for row in rows)
        x = torch.full((batch_size, width), tokenizer.pad_token_id)  # (B, T)
        words = torch.full((batch_size, width), -1)  # (B, T): word index within the sentence, -1 for specials and pads
        for b, (row, row_word) in enumerate(zip(rows, row_words)):
            x[b, : len(row)], words[b, : len(row)] = torch.tensor(row), torch.tensor(row_word)
        n_words = int(words.max()) + 1
        chosen = torch.rand(batch_size, n_words, generator=generator) < probability  # (B, W)
        treatment = torch.rand(batch_size, n_words, generator=generator)  # (B, W): < 0.8 mask, < 0.9 random, else keep
        real = words >= 0
        safe = words.clamp(min=0)
        picked = real & chosen.gather(1, safe)  # (B, T): every piece of a chosen word
        how = treatment.gather(1, safe)
        labels = torch.where(picked, x, torch.full_like(x, IGNORE_INDEX))
        masked = x.clone()
        masked[picked & (how < mask_share)] = tokenizer.mask_token_id
        randomised = picked & (how >= mask_share) & (how < mask_share + random_share)
        masked[randomised] = torch.randint(first_real, len(tokenizer), (int(randomised.sum()),), generator=generator)
        return masked, labels

    return mask


# ---------------------------------------------------------------- masked words, scored against the oracle


def masked_items(sentences: Sequence[Sequence[str]], n: int, *, seed: int = 0) -> list[dict]:
    """``n`` cloze items: a random sentence and one random position in it, ``{"words", "position"}``."""
    n = check_int("n", n, minimum=1)
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        words = list(sentences[rng.randrange(len(sentences))])
        items.append({"words": words, "position": rng.randrange(len(words))})
    return items


@lru_cache(maxsize=None)
def piece_count(tokenizer, word: str) -> int:
    """How many WordPiece pieces ``word`` has, so how many ``[MASK]`` s its gap gets (remembered per tokenizer)."""
    return len(tokenizer.tokenize(word))


def given_piece_count(distribution: dict[str, float], tokenizer, pieces: int) -> dict[str, float]:
    """A word distribution told how many pieces the hidden word has: restricted to those words, renormalised."""
    kept = {w: p for w, p in distribution.items() if piece_count(tokenizer, w) == pieces}
    total = sum(kept.values())
    if total <= 0:
        raise CourseInputError(f"no word of {pieces} piece(s) has any probability here")
    return {w: p / total for w, p in kept.items()}


def split_word_example(sentences: Sequence[Sequence[str]], tokenizer, *, seed: int = 1) -> dict[str, str] | None:
    """Whole-word masking at work: of the ``sentences`` with a word of several pieces, masked as one batch
    (``whole_word_batches``), the first whose masking turned a split word into [MASK]s, as text: "sentence" (its
    pieces), "masked" (the model's input) and "labels" (the pieces to predict); None when no sentence has one."""
    split = [s for s in sentences if any(piece_count(tokenizer, w) > 1 for w in s)]
    if not split:
        return None
    masked, labels = whole_word_batches(split, tokenizer, batch_size=len(split), seed=seed)(0)
    chosen = labels != -100  # (B, T)
    original = torch.where(chosen, labels, masked)  # the batch's rows are sorted by length: read them from the batch
    for row in range(len(split)):
        pieces = tokenizer.convert_ids_to_tokens(original[row][original[row] != tokenizer.pad_token_id].tolist())
        hidden = chosen[row][: len(pieces)] & (masked[row][: len(pieces)] == tokenizer.mask_token_id)
        if any(h and p.startswith("##") for h, p in zip(hidden.tolist(), pieces)):  # a split word became [MASK]s
            return {"sentence": " ".join(pieces),
                    "masked": " ".join(tokenizer.convert_ids_to_tokens(masked[row][: len(pieces)].tolist())),
                    "labels": " ".join(tokenizer.convert_ids_to_tokens(labels[row][chosen[row]].tolist()))}  # fmt: skip
    return None


class WordScorer:
    """P(word | left ___ right, the gap has k pieces) from a WordPiece masked LM (see the module docstring).

    The gap gets k ``[MASK]`` s, each piece of a candidate is read at its own mask, and the log-probabilities
    are added; the sums are renormalised over the candidate ``words`` of k pieces. All k masks stay in
    place, as in whole-word-masking pretraining, where a word's pieces are always hidden together. (Filling
    the pieces one at a time, the chain rule, asks the model about half-hidden words, which whole-word
    masking never shows it: it scored much worse.)
    """

    def __init__(self, model: CourseBERT, tokenizer, words: Sequence[str]):
        self.model, self.tokenizer = model, tokenizer
        if not words:
            raise CourseInputError("no candidate words")
        self.by_count: dict[int, list[tuple[str, tuple[int, ...]]]] = {}
        for word in words:
            pieces = tuple(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word)))
            self.by_count.setdefault(len(pieces), []).append((word, pieces))

    def _context_ids(self, words: Sequence[str]) -> list[int]:
        return self.tokenizer(" ".join(words), add_special_tokens=False)["input_ids"] if words else []

    @torch.no_grad()
    def log_probs(self, left: Sequence[str], right: Sequence[str], pieces: int) -> tuple[list[str], Tensor]:
        """The candidate words of ``pieces`` pieces and their log-probabilities (n,), summing to 1 in probability."""
        if pieces not in self.by_count:
            raise CourseInputError(f"no candidate word has {pieces} piece(s); the counts are {sorted(self.by_count)}")
        tok, candidates = self.tokenizer, self.by_count[pieces]
        left_ids, right_ids = self._context_ids(left), self._context_ids(right)
        row = [tok.cls_token_id, *left_ids, *[tok.mask_token_id] * pieces, *right_ids, tok.sep_token_id]
        logits, _ = self.model(torch.tensor([row]))  # (1, T, V)
        start = 1 + len(left_ids)
        piece_logp = F.log_softmax(logits[0, start : start + pieces].float(), dim=-1)  # (k, V): one row per mask
        ids = torch.tensor([p for _, p in candidates])  # (n, k)
        scores = piece_logp.gather(1, ids.T).sum(0)  # (n,): log P(piece_j at mask j), summed over j
        return [w for w, _ in candidates], scores - torch.logsumexp(scores, 0)

    def distribution(self, left: Sequence[str], right: Sequence[str], pieces: int) -> dict[str, float]:
        """The candidate words of ``pieces`` pieces and their probabilities, most probable first."""
        words, logp = self.log_probs(left, right, pieces)
        return dict(sorted(zip(words, logp.exp().tolist()), key=lambda kv: -kv[1]))


TIE = 1e-6  # probabilities this close (relative) count as tied: well above float32's last bits (~1e-7)


def side_by_side(scorer: WordScorer, lang, tokenizer, left: str, right: str, top: int = 5) -> tuple[dict, dict]:
    """Print BERT's (``scorer``) and the oracle's one-piece answers for the gap between ``left`` and ``right``,
    most probable first; return both distributions."""
    model = scorer.distribution(left.split(), right.split(), 1)
    exact = given_piece_count(lang.masked_distribution(left.split(), right.split()), tokenizer, 1)
    print(f"{left} ___ {right}")
    print("   BERT:  ", ", ".join(f"{w} {p:.2f}" for w, p in list(model.items())[:top]))
    print("   oracle:", ", ".join(f"{w} {p:.2f}" for w, p in list(exact.items())[:top]))
    return model, exact


def mass(distribution: dict[str, float], allowed) -> float:
    """The probability ``distribution`` puts on the words in ``allowed``."""
    return sum(p for w, p in distribution.items() if w in allowed)


def top_word(dist: dict[str, float]) -> str:
    """The most probable word of ``dist``; among tied words (within ``TIE`` of the best), the first alphabetically.

    The oracle gives many words exactly the same probability, and a sum computed in another order (another CPU,
    or Python 3.12's compensated ``sum``) moves their last bits: a fixed order, not the last bit, breaks the tie.
    """
    best = max(dist.values())
    return min(word for word, p in dist.items() if p >= best * (1 - TIE))


def _add_score(scores: tuple[list, list], dist: dict[str, float], word: str) -> None:
    """Append the NLL of ``word`` under ``dist`` and the top-1 word of ``dist`` to ``scores``."""
    p = dist.get(word, 0.0)
    scores[0].append(-math.log(p) if p > 0 else math.inf)
    scores[1].append(top_word(dist))


def hinted_scores(distribution, items: Sequence[dict], tokenizer=None) -> tuple[list[float], list[str]]:
    """Score any word-level model on cloze items: (NLL of the true word, top-1 word) per item.

    ``distribution(left, right)`` gives {word: P(word | left ___ right)}; with ``tokenizer`` it is first told
    the hidden word's piece count (``given_piece_count``), as a WordPiece masked LM is.
    """
    return scores_with_and_without_hint(distribution, items, tokenizer)[0 if tokenizer is not None else 1]


def scores_with_and_without_hint(distribution, items: Sequence[dict], tokenizer=None):
    """Both scorings from one call of ``distribution`` per item: ((NLLs, tops) told the piece count, (NLLs, tops) not).

    Without ``tokenizer`` the first is None.
    """
    hinted, plain = ([], []), ([], [])
    for item in items:
        words, i = item["words"], item["position"]
        dist = distribution(words[:i], words[i + 1 :])
        _add_score(plain, dist, words[i])
        if tokenizer is not None:
            _add_score(hinted, given_piece_count(dist, tokenizer, piece_count(tokenizer, words[i])), words[i])
    return (hinted if tokenizer is not None else None), plain


def oracle_scores(lang, items: Sequence[dict], tokenizer=None) -> tuple[list[float], list[str]]:
    """The oracle on each item: (NLL of the true word, its top-1 word); told the piece count if ``tokenizer``."""
    return hinted_scores(lang.masked_distribution, items, tokenizer)


def word_model_distribution(predict, model, vocab, words: Sequence[str]):
    """``distribution(left, right)`` for a course word-level masked model (notebook 04's window, 05's BiLSTM).

    ``predict(model, vocab, words_with_one_<mask>)`` gives probabilities over ``vocab`` (V,); only the
    language's ``words`` are kept (not ``<s>``, ``</s>`` or ``<unk>``).
    """
    ids = [(w, vocab.stoi[w]) for w in words if w in vocab.stoi]

    def distribution(left, right) -> dict[str, float]:
        probs = predict(model, vocab, [*left, "<mask>", *right])  # (V,)
        return {w: float(probs[i]) for w, i in ids}

    return distribution


def bert_scores(scorer: WordScorer, items: Sequence[dict]) -> tuple[list[float], list[str]]:
    """The BERT on each item, told the piece count: (NLL of the true word, its top-1 word)."""
    nlls, tops = [], []
    for item in items:
        words, i = item["words"], item["position"]
        candidates, logp = scorer.log_probs(words[:i], words[i + 1 :], piece_count(scorer.tokenizer, words[i]))
        if words[i] not in candidates:
            raise CourseInputError(f"{words[i]!r} is not among the scorer's words")
        nlls.append(-logp[candidates.index(words[i])].item())
        tops.append(top_word(dict(zip(candidates, logp.exp().tolist()))))
    return nlls, tops


def nll_ratio(model_nlls: Sequence[float], oracle_nlls: Sequence[float]) -> float:
    """exp(mean model NLL − mean oracle NLL) over the same items: 1 is the truth."""
    if len(model_nlls) != len(oracle_nlls) or not model_nlls:
        raise CourseInputError("score the same, non-empty list of items with both")
    return math.exp((sum(model_nlls) - sum(oracle_nlls)) / len(model_nlls))


def masked_nll(model: CourseBERT, batches, steps: int) -> float:
    """Mean masked-token NLL (per WordPiece) over ``steps`` batches, for training curves."""
    total, count = 0.0, 0
    with torch.no_grad():
        for step in range(steps):
            input_ids, labels = batches(step)
            logits, _ = model(input_ids)
            keep = labels != IGNORE_INDEX
            total += F.cross_entropy(logits[keep], labels[keep], reduction="sum").item()
            count += int(keep.sum())
    return total / max(count, 1)
