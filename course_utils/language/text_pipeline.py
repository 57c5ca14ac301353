"""From any plain-text file to word ids: read, tokenize, split into sentences, build a vocabulary."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from course_utils.validation import CourseInputError, check_choice, check_int

PAD, UNK, BOS, EOS, MASK = "<pad>", "<unk>", "<s>", "</s>", "<mask>"
SPECIALS = (PAD, UNK, BOS, EOS, MASK)  # their ids are 0, 1, 2, 3, 4 in every vocabulary

SENTENCE_END = frozenset({".", "!", "?"})
_CLOSERS = frozenset({'"', "'", ")", "]", "}", "\u201d", "\u00bb"})  # stay with the sentence they close

# A word (letters, with inner apostrophes: "don't"), a number ("3.14", "1,000"), or one other symbol.
_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d+(?:[.,]\d+)*|[^\w\s]|_")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and cut it into words, numbers and punctuation marks."""
    if not isinstance(text, str):
        raise CourseInputError(f"tokenize needs a string, got {type(text).__name__}")
    text = unicodedata.normalize("NFC", text).replace("\u2019", "'").lower()
    return _TOKEN.findall(text)


def split_sentences(text: str) -> list[list[str]]:
    """Tokenize ``text`` into sentences: one ends after . ! ? (a run of them, and closing quotes) or at a blank line."""
    if not isinstance(text, str):
        raise CourseInputError(f"split_sentences needs a string, got {type(text).__name__}")
    sentences = []
    for paragraph in _BLANK_LINE.split(text):
        current: list[str] = []
        ended = False
        for token in tokenize(paragraph):
            if ended and token not in SENTENCE_END and token not in _CLOSERS:
                sentences.append(current)
                current, ended = [], False
            current.append(token)
            ended = ended or token in SENTENCE_END
        if current:
            sentences.append(current)
    return sentences


def read_text_file(path) -> str:
    """Read a UTF-8 text file, with a clear message when it is missing, empty or not UTF-8."""
    path = Path(path)
    if not path.exists():
        raise CourseInputError(f"there is no file at {str(path)!r} (working directory: {Path.cwd()})")
    if path.is_dir():
        raise CourseInputError(f"{str(path)!r} is a folder, not a text file; give the path of a .txt file in it")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise CourseInputError(
            f"{str(path)!r} is not UTF-8 text: byte {err.start} is 0x{data[err.start]:02x}, which UTF-8 "
            "cannot start or continue a character with. Open the file in a text editor and save it again "
            "with the encoding 'UTF-8'."
        ) from None
    if not text.strip():
        raise CourseInputError(f"{str(path)!r} is empty (or holds only white space): there is no text to read")
    return text


class Vocab:
    """Words <-> ids. The special tokens come first, with fixed ids: <pad>=0 <unk>=1 <s>=2 </s>=3 <mask>=4."""

    def __init__(self, words: Iterable[str]):
        words = list(words)
        for word in words:
            if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
                raise CourseInputError(f"vocabulary words must be non-empty strings without spaces, got {word!r}")
        repeated = sorted(word for word, n in Counter(words).items() if n > 1)
        if repeated:
            raise CourseInputError(f"each word may appear once in a vocabulary; repeated: {repeated[:10]}")
        self.itos: list[str] = list(SPECIALS) + [w for w in words if w not in SPECIALS]
        self.stoi: dict[str, int] = {word: i for i, word in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], *, min_count: int = 1, max_size: int | None = None) -> "Vocab":
        """Keep words seen at least ``min_count`` times, most frequent first (ties alphabetical).

        ``max_size`` caps the number of ordinary words kept (the five special tokens come on top).
        """
        min_count = check_int("min_count", min_count, minimum=1)
        if max_size is not None:
            max_size = check_int("max_size", max_size, minimum=1)
        counts: Counter = Counter()
        for sentence in sentences:
            if isinstance(sentence, str):
                raise CourseInputError("Vocab.build needs sentences as lists of words; use split_sentences(text)")
            counts.update(sentence)
        ranked = sorted(
            (w for w, n in counts.items() if n >= min_count and w not in SPECIALS), key=lambda w: (-counts[w], w)
        )
        if not ranked:
            raise CourseInputError(
                f"no word occurs at least min_count={min_count} times: the vocabulary would be empty"
            )
        return cls(ranked[:max_size])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word) -> bool:
        return word in self.stoi

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        words = self.itos[len(SPECIALS) :]
        preview = " ".join(words[:8]) + (" ..." if len(words) > 8 else "")
        return f"Vocab({len(self)} entries: 5 special tokens + {len(words)} words: {preview})"

    pad_id = property(lambda self: 0, doc="Id of <pad>.")
    unk_id = property(lambda self: 1, doc="Id of <unk>.")
    bos_id = property(lambda self: 2, doc="Id of <s>.")
    eos_id = property(lambda self: 3, doc="Id of </s>.")
    mask_id = property(lambda self: 4, doc="Id of <mask>.")

    def encode(self, tokens: Sequence[str], *, unknown: str = "error") -> list[int]:
        """Word ids of ``tokens``; an unknown word raises (``unknown="error"``) or becomes <unk> (``"unk"``)."""
        check_choice("unknown", unknown, ("error", "unk"))
        if isinstance(tokens, str):
            raise CourseInputError(f"encode needs a list of words, not a string: use tokenize({tokens[:30]!r}) first")
        missing = [t for t in dict.fromkeys(tokens) if t not in self.stoi]
        if missing and unknown == "error":
            raise CourseInputError(self._unknown_message(missing))
        return [self.stoi.get(token, 1) for token in tokens]

    def _unknown_message(self, missing: list) -> str:
        """Name the unknown words and the closest vocabulary words."""
        words = self.itos[len(SPECIALS) :]
        hints = []
        for word in missing[:5]:
            close = difflib.get_close_matches(str(word), words, n=3) if isinstance(word, str) else []
            hints.append(f"{word!r}" + (f" (did you mean {', '.join(map(repr, close))}?)" if close else ""))
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        return (
            f"not in the vocabulary ({len(self)} entries): {'; '.join(hints)}{more}. "
            "Use unknown='unk' to map unknown words to <unk>."
        )

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Words of ``ids`` (a list or a 1-D tensor)."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self)]
        if bad:
            raise CourseInputError(f"ids must be integers in [0, {len(self) - 1}]; got {bad[:5]}")
        return [self.itos[i] for i in ids]

    def save(self, path) -> None:
        """Write the word list as JSON."""
        Path(path).write_text(json.dumps(self.itos, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path) -> "Vocab":
        """Read a vocabulary written by ``save``."""
        try:
            words = json.loads(read_text_file(path))
        except json.JSONDecodeError as err:
            raise CourseInputError(f"{str(path)!r} is not a saved vocabulary (invalid JSON: {err})") from None
        if not isinstance(words, list) or words[: len(SPECIALS)] != list(SPECIALS):
            raise CourseInputError(
                f"{str(path)!r} is not a saved vocabulary: expected a JSON list starting with {list(SPECIALS)}"
            )
        return cls(words)


def load_text_corpus(path, *, min_count: int = 1, max_size: int | None = None) -> tuple[Vocab, list[list[str]]]:
    """Read a text file and return ``(vocab, sentences)``; rarer words than ``min_count`` will map to <unk>."""
    sentences = split_sentences(read_text_file(path))
    return Vocab.build(sentences, min_count=min_count, max_size=max_size), sentences
