"""WordPiece: BERT's tokenizer, trained with Hugging Face ``tokenizers``, and its encoder written from scratch.

Training (the library): ``tokenizers``' WordPiece *trainer* starts from single characters and merges the most
useful pairs, BPE-style, until the vocabulary has ``vocab_size`` entries; pieces that continue a word carry
the prefix ``##``. Many entries go to pieces, so even with more entries than the course has words, frequent
words stay whole and the rarest split: "amazing" is one piece, "cherries" is ``ch ##erri ##es``.

Encoding (from scratch, ``WordPieceEncoder``): greedy longest-match-first. Take the longest vocabulary entry
that starts the word, then the longest ``##`` entry that starts the rest, and so on. If some rest cannot be
matched, the whole word becomes ``[UNK]``. The library encodes the same way, which a test checks word by word.

Special tokens (ids 0–4): ``[PAD]`` fills a batch to one length, ``[UNK]`` stands for what cannot be
encoded, ``[CLS]`` starts every input (its vector is what a classifier reads), ``[SEP]`` ends each
sentence, ``[MASK]`` hides a word for masked-language-model training. A pair is
``[CLS] A [SEP] B [SEP]``, with ``token_type_ids`` 0 for A's part and 1 for B's.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

from course_utils.validation import CourseInputError, check_int
from course_utils.reference import course_reference

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # ids 0, 1, 2, 3, 4
PAD, UNK, CLS, SEP, MASK = SPECIAL_TOKENS
CONTINUATION = "##"
MAX_WORD_CHARACTERS = 100  # BERT's max_input_chars_per_word: a longer word is [UNK] at once
# The size chosen from a measured curve (notebook 09, ``analysis.bert_choices``): with 1,000 entries the 102 rarest of
# the 605 words split (0.9 % of running words) and the BERT does as well as with every word whole; with 600 it
# splits 357 words, and split words cost the BERT most of its distance from the oracle.
COURSE_VOCAB_SIZE = 1000


def train_wordpiece(sentences: Iterable[Sequence[str]], vocab_size: int = COURSE_VOCAB_SIZE):
    """Train a WordPiece vocabulary on ``sentences`` (lists of words); return a ``BertTokenizerFast``.

    The pipeline is BERT's: lowercase (``BertNormalizer``), split at spaces and punctuation
    (``BertPreTokenizer``), WordPiece, then the ``[CLS] A [SEP] (B [SEP])`` template.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    vocab_size = check_int("vocab_size", vocab_size, minimum=len(SPECIAL_TOKENS) + 1)
    tokenizer = Tokenizer(models.WordPiece(unk_token=UNK, continuing_subword_prefix=CONTINUATION,
                                           max_input_chars_per_word=MAX_WORD_CHARACTERS))  # fmt: skip
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                        continuing_subword_prefix=CONTINUATION, show_progress=False)  # fmt: skip
    texts = [" ".join(words) for words in sentences]
    if not texts:
        raise CourseInputError("no sentences to train the tokenizer on")
    tokenizer.train_from_iterator(texts, trainer)
    # The trainer breaks ties between equally good merges in no fixed order, so two runs can differ in a few
    # pieces and in their ids (the course ships its tokenizer for this reason); number them in a fixed order,
    # special tokens first, then A-Z, so that ids follow from the pieces.
    learned = sorted(set(tokenizer.get_vocab()) - set(SPECIAL_TOKENS))
    tokenizer.model = models.WordPiece({t: i for i, t in enumerate([*SPECIAL_TOKENS, *learned])}, unk_token=UNK,
                                       continuing_subword_prefix=CONTINUATION, max_input_chars_per_word=MAX_WORD_CHARACTERS)  # fmt: skip
    cls_id, sep_id = tokenizer.token_to_id(CLS), tokenizer.token_to_id(SEP)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}", pair=f"{CLS} $A {SEP} $B:1 {SEP}:1", special_tokens=[(CLS, cls_id), (SEP, sep_id)]
    )
    tokenizer.decoder = decoders.WordPiece(prefix=CONTINUATION, cleanup=False)  # keep the space before "."
    return BertTokenizerFast(tokenizer_object=tokenizer, unk_token=UNK, sep_token=SEP, pad_token=PAD,
                             cls_token=CLS, mask_token=MASK)  # fmt: skip


def load_tokenizer(directory: Path | str):
    """A tokenizer saved by ``save_pretrained``, loaded offline, with the course's decoder.

    transformers rebuilds a saved BERT tokenizer from its vocabulary with BERT's standard pipeline, which
    encodes exactly as before (a test checks the test split) but decodes "cake ." as "cake."; the
    decoder is set back to keep the course's spaces.
    """
    from tokenizers import decoders
    from transformers import AutoTokenizer

    path = Path(directory)
    if not (path / "tokenizer.json").is_file():
        raise CourseInputError(f"no tokenizer in {path} (tokenizer.json is missing)")
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    tokenizer.backend_tokenizer.decoder = decoders.WordPiece(prefix=CONTINUATION, cleanup=False)
    return tokenizer


def pretokenize(text: str) -> list[str]:
    """BERT's basic tokenizer: special tokens kept whole; lowercase, strip accents, split at spaces and punctuation."""
    if not isinstance(text, str):
        raise CourseInputError(f"text must be a string, got {type(text).__name__}")
    words: list[str] = []
    for part in re.split("(" + "|".join(re.escape(token) for token in SPECIAL_TOKENS) + ")", text):
        words += [part] if part in SPECIAL_TOKENS else _basic_words(part)
    return words


def _basic_words(text: str) -> list[str]:
    text = "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")
    words: list[str] = []
    for chunk in text.split():
        current = ""
        for char in chunk:
            if _is_punctuation(char):
                words += [current, char] if current else [char]
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


def _is_punctuation(char: str) -> bool:
    """BERT's rule: ASCII symbols count as punctuation, and so does every Unicode "P*" character."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


class WordPieceEncoder:
    """Greedy longest-match-first WordPiece encoding over a fixed vocabulary (a list or a token → id dict)."""

    def __init__(self, vocab, *, unk: str = UNK, prefix: str = CONTINUATION, max_characters: int = MAX_WORD_CHARACTERS):
        tokens = list(vocab.keys()) if isinstance(vocab, dict) else list(vocab)
        if not tokens:
            raise CourseInputError("the vocabulary is empty")
        self.ids = dict(vocab) if isinstance(vocab, dict) else {token: i for i, token in enumerate(tokens)}
        if unk not in self.ids:
            raise CourseInputError(f"the unknown token {unk!r} is not in the vocabulary")
        self.unk, self.prefix, self.max_characters = unk, prefix, max_characters

    @course_reference
    def encode_word(self, word: str) -> list[str]:
        """The pieces of one word: the longest vocabulary entry at each point, or
        ``[UNK]`` for the whole word."""
        if not isinstance(word, str) or not word:
            raise CourseInputError(f"a word must be a non-empty string, got {word!r}")
        if len(word) > self.max_characters:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            # shrink the candidate from the right until it is in the vocabulary
            while end > start:
                piece = word[start:end]
                candidate = piece if start == 0 else self.prefix + piece
                if candidate in self.ids:
                    break
                end -= 1
            if end == start:  # nothing matches here: the whole word is unknown
                return [self.unk]
            pieces.append(candidate)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """All pieces of a text (no special tokens)."""
        return [piece for word in pretokenize(text)
                for piece in ([word] if word in SPECIAL_TOKENS else self.encode_word(word))]  # fmt: skip

    def encode(self, text: str, pair: str | None = None) -> dict[str, list[int]]:
        """``[CLS] A [SEP] (B [SEP])`` as ids, with ``token_type_ids`` and ``attention_mask``, as the library gives."""
        first = [CLS, *self.tokenize(text), SEP]
        second = [] if pair is None else [*self.tokenize(pair), SEP]
        return {"input_ids": [self.ids[token] for token in first + second],
                "token_type_ids": [0] * len(first) + [1] * len(second),
                "attention_mask": [1] * (len(first) + len(second))}  # fmt: skip


def word_pieces(tokenizer, words: Sequence[str]) -> list[list[str]]:
    """How the library splits each word: one list of pieces per word."""
    return [tokenizer.tokenize(word) for word in words]


def split_share(tokenizer, sentences: Sequence[Sequence[str]]) -> tuple[float, float]:
    """(share of distinct words split into ≥ 2 pieces, share of running words split): how much WordPiece splits."""
    counts: dict[str, int] = {}
    for words in sentences:
        for word in words:
            counts[word] = counts.get(word, 0) + 1
    if not counts:
        raise CourseInputError("no words to count")
    split = {word for word in counts if len(tokenizer.tokenize(word)) > 1}
    return len(split) / len(counts), sum(counts[w] for w in split) / sum(counts.values())
