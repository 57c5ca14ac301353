"""The text pipeline: any plain-text file -> tokens -> sentences -> vocabulary -> ids -> batches."""

from pathlib import Path

import pytest
import torch

from course_utils.models.lm import encode_sentences, make_batch
from course_utils.language.text_pipeline import (
    SPECIALS,
    Vocab,
    load_text_corpus,
    read_text_file,
    split_sentences,
    tokenize,
)
from course_utils.validation import CourseInputError

README = Path(__file__).resolve().parents[2] / "README.md"

STORY = """Eleni was late for class. The class had started at 9.30, and the lecturer said: "Welcome!"

Anqi was late for class too -- she didn't mind... Was it raining?! No
it was not.
"""


def test_tokenize_lowercases_and_separates_words_numbers_and_punctuation():
    assert tokenize('Eleni wasn\u2019t late, at 9.30 or 1,000 "Caf\u00e9s"!') == [
        "eleni",
        "wasn't",
        "late",
        ",",
        "at",
        "9.30",
        "or",
        "1,000",
        '"',
        "cafés",
        '"',
        "!",
    ]
    assert tokenize("well-known...") == ["well", "-", "known", ".", ".", "."]
    assert tokenize("in 2020.") == ["in", "2020", "."]
    assert tokenize("  \n\t ") == []


def test_tokenize_rejects_non_strings():
    with pytest.raises(CourseInputError, match="needs a string"):
        tokenize(["a", "list"])


def test_split_sentences_after_end_marks_and_at_blank_lines():
    sentences = split_sentences(STORY)
    assert sentences[0] == ["eleni", "was", "late", "for", "class", "."]
    assert sentences[1][-4:] == ['"', "welcome", "!", '"']  # a closing quote stays with its sentence
    assert ["was", "it", "raining", "?", "!"] in sentences  # a run of marks stays with its sentence
    assert sentences[-1] == ["no", "it", "was", "not", "."]  # a single newline does not end a sentence
    assert split_sentences("no end mark\n\nnext paragraph") == [["no", "end", "mark"], ["next", "paragraph"]]
    assert split_sentences("") == []
    with pytest.raises(CourseInputError, match="needs a string"):
        split_sentences(None)


def test_read_text_file_reads_the_readme_and_strips_a_byte_order_mark(tmp_path):
    assert "language models" in read_text_file(README)
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffHello.".encode("utf-8"))
    assert read_text_file(path) == "Hello."


def _bad_path(folder: Path, kind: str) -> Path:
    """A path of the given kind: missing, a folder, an empty file or a white-space-only file."""
    content = {"empty": "", "blank": " \n\t\n"}
    if kind in content:
        (folder / kind).write_text(content[kind])
    return folder if kind == "folder" else folder / kind


@pytest.mark.parametrize(
    "kind, message",
    [("missing", "no file at"), ("folder", "is a folder"), ("empty", "is empty"), ("blank", "only white space")],
)
def test_read_text_file_explains_bad_paths(tmp_path, kind, message):
    with pytest.raises(CourseInputError, match=message):
        read_text_file(_bad_path(tmp_path, kind))


def test_read_text_file_names_the_first_bad_byte_of_non_utf8_text(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\u00e9 au lait".encode("latin-1"))
    with pytest.raises(CourseInputError, match=r"not UTF-8.*byte 3 is 0xe9.*save it again.*UTF-8"):
        read_text_file(path)


def test_special_tokens_have_fixed_ids_in_every_vocabulary():
    vocab = Vocab(["b", "<s>", "a"])
    assert SPECIALS == ("<pad>", "<unk>", "<s>", "</s>", "<mask>")
    assert vocab.itos == list(SPECIALS) + ["b", "a"]
    assert (vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.mask_id) == (0, 1, 2, 3, 4)
    assert [vocab.stoi[s] for s in SPECIALS] == [0, 1, 2, 3, 4]
    assert "a" in vocab and "z" not in vocab and len(vocab) == 7


def test_build_orders_by_frequency_then_alphabet_and_applies_min_count_and_max_size():
    sentences = [["b", "a", "c", "c"], ["a", "b", "d", "c"]]
    assert Vocab.build(sentences).itos[5:] == ["c", "a", "b", "d"]
    assert Vocab.build(sentences, min_count=2).itos[5:] == ["c", "a", "b"]
    assert Vocab.build(sentences, max_size=2).itos[5:] == ["c", "a"]
    with pytest.raises(CourseInputError, match="vocabulary would be empty"):
        Vocab.build(sentences, min_count=5)
    with pytest.raises(CourseInputError, match="min_count must be >= 1"):
        Vocab.build(sentences, min_count=0)
    with pytest.raises(CourseInputError, match="lists of words"):
        Vocab.build(["a sentence as one string"])


@pytest.mark.parametrize(
    "words, message",
    [(["a", "a"], "repeated"), (["two words"], "without spaces"), ([""], "non-empty"), ([3], "strings")],
)
def test_vocab_rejects_bad_word_lists(words, message):
    with pytest.raises(CourseInputError, match=message):
        Vocab(words)


def test_encode_names_unknown_words_and_suggests_close_ones():
    vocab = Vocab(["class", "late", "was"])
    assert vocab.encode(["was", "late"]) == [7, 6]
    with pytest.raises(CourseInputError, match=r"'clas' \(did you mean 'class'\?\).*unknown='unk'"):
        vocab.encode(["was", "clas"])
    assert vocab.encode(["was", "clas"], unknown="unk") == [7, vocab.unk_id]
    with pytest.raises(CourseInputError, match="not a string"):
        vocab.encode("was late")
    with pytest.raises(CourseInputError, match="unknown must be one of"):
        vocab.encode(["was"], unknown="skip")


def test_decode_round_trip_and_bad_ids():
    vocab = Vocab(["class", "late"])
    ids = vocab.encode(["late", "class"])
    assert vocab.decode(ids) == ["late", "class"]
    assert vocab.decode(torch.tensor(ids)) == ["late", "class"]
    with pytest.raises(CourseInputError, match=r"\[0, 6\]"):
        vocab.decode([7])


def test_save_and_load(tmp_path):
    vocab = Vocab.build(split_sentences(STORY))
    vocab.save(tmp_path / "vocab.json")
    assert Vocab.load(tmp_path / "vocab.json") == vocab
    (tmp_path / "bad.json").write_text('["a", "b"]')
    with pytest.raises(CourseInputError, match="not a saved vocabulary"):
        Vocab.load(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text("[not json")
    with pytest.raises(CourseInputError, match="invalid JSON"):
        Vocab.load(tmp_path / "broken.json")


@pytest.mark.parametrize("source", ["readme", "story"])
def test_pipeline_on_the_projects_own_text(tmp_path, source):
    if source == "readme":
        path = README
    else:
        path = tmp_path / "story.txt"
        path.write_text(STORY, encoding="utf-8")
    vocab, sentences = load_text_corpus(path, min_count=2)
    assert len(sentences) >= 4 and all(sentences)
    rare = [w for s in sentences for w in s if w not in vocab]
    assert rare, "min_count=2 should leave some rare words out"
    ids = encode_sentences(vocab, sentences, unknown="unk")
    assert vocab.unk_id in {i for s in ids for i in s}
    for words, encoded in zip(sentences, ids):
        assert vocab.decode(encoded) == [w if w in vocab else "<unk>" for w in words]
    idx, targets = make_batch(ids[:3], vocab)
    longest = max(len(s) for s in ids[:3])
    assert idx.shape == targets.shape == (3, longest + 1)
    assert (idx[:, 0] == vocab.bos_id).all()


def test_load_text_corpus_caps_the_vocabulary(tmp_path):
    path = tmp_path / "story.txt"
    path.write_text(STORY, encoding="utf-8")
    vocab, _ = load_text_corpus(path, max_size=3)
    assert len(vocab) == len(SPECIALS) + 3
    assert vocab.itos[5:] == Vocab.build(split_sentences(STORY)).itos[5:8]
