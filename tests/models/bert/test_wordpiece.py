"""WordPiece: the library's trained tokenizer, the scratch encoder's parity with it, special tokens, pairs, reload."""

import collections

import pytest

from course_utils import CourseInputError
from course_utils.language import corpus
from course_utils import zoo
from course_utils.models.bert.wordpiece import (
    COURSE_VOCAB_SIZE,
    SPECIAL_TOKENS,
    WordPieceEncoder,
    load_tokenizer,
    pretokenize,
    split_share,
    train_wordpiece,
)

pytestmark = pytest.mark.parity  # a library release can change what this checks (course.sh floor, lock)


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(corpus.load_split("train"))


@pytest.fixture(scope="module")
def encoder(tokenizer):
    return WordPieceEncoder(tokenizer.get_vocab())


def test_frequent_words_are_whole_and_the_rarest_split(tokenizer):
    counts = collections.Counter(w for s in corpus.load_split("train") for w in s)
    assert len(tokenizer) == COURSE_VOCAB_SIZE
    assert [tokenizer.convert_ids_to_tokens(i) for i in range(5)] == list(SPECIAL_TOKENS)
    distinct, running = split_share(tokenizer, corpus.load_split("train"))
    assert 0.1 < distinct < 0.3 and 0.003 < running < 0.03  # 102 of 605 words, 0.9 % of running words
    ranked = [w for w, _ in counts.most_common()]
    most_frequent_split = min(rank for rank, w in enumerate(ranked) if len(tokenizer.tokenize(w)) > 1)
    assert most_frequent_split > 0.7 * len(ranked)  # the split words are among the rarest (from rank 488 of 605)
    assert tokenizer.tokenize("the") == ["the"]
    assert any(piece.startswith("##") for piece in tokenizer.tokenize("outside"))


def test_scratch_encoder_agrees_with_the_library_on_every_vocabulary_entry(tokenizer, encoder):
    disagreements = [
        t for t in tokenizer.get_vocab() if t not in SPECIAL_TOKENS and encoder.tokenize(t) != tokenizer.tokenize(t)
    ]
    assert disagreements == []


def test_scratch_encoder_agrees_with_the_library_on_the_test_split(tokenizer, encoder):
    for words in corpus.load_split("test"):
        text = " ".join(words)
        assert encoder.encode(text) == {k: v for k, v in tokenizer(text).items()}, text


@pytest.mark.parametrize(
    "text", ["Zebra!! x", "the [MASK] cat .", "naïve Ça va?", "a" * 150, "hello,world", "[CLS]x[SEP]", ""]
)
def test_scratch_encoder_agrees_on_odd_text(tokenizer, encoder, text):
    assert encoder.tokenize(text) == tokenizer.tokenize(text)


def test_greedy_longest_match_first_and_unknown_words(encoder):
    vocab = WordPieceEncoder(["[UNK]", "un", "unaff", "##aff", "##able", "##a", "##ble"])
    assert vocab.encode_word("unaffable") == ["unaff", "##able"]  # longest first, not un ##aff ##able
    assert vocab.encode_word("unxable") == ["[UNK]"]  # one unmatched rest makes the whole word unknown
    assert encoder.encode_word("a" * 101) == ["[UNK]"]
    with pytest.raises(CourseInputError):
        encoder.encode_word("")
    with pytest.raises(CourseInputError):
        WordPieceEncoder(["a", "b"])  # no [UNK]
    with pytest.raises(CourseInputError):
        pretokenize(None)


def test_pair_format_token_types_and_attention_mask(tokenizer, encoder):
    pair = tokenizer("the cat sleeps .", "the dogs eat .")
    tokens = tokenizer.convert_ids_to_tokens(pair["input_ids"])
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2 and tokens[-1] == "[SEP]"
    first_sep = tokens.index("[SEP]")
    assert pair["token_type_ids"] == [0] * (first_sep + 1) + [1] * (len(tokens) - first_sep - 1)
    assert pair["attention_mask"] == [1] * len(tokens)
    assert encoder.encode("the cat sleeps .", "the dogs eat .") == dict(pair)
    padded = tokenizer(["the cat sleeps .", "the dogs eat the food ."], padding=True)
    assert padded["attention_mask"][0].count(0) == padded["input_ids"][0].count(tokenizer.pad_token_id) > 0


def test_save_pretrained_reloads_offline_with_the_same_encoding(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path)
    reloaded = load_tokenizer(tmp_path)
    for words in corpus.load_split("test")[:500]:
        text = " ".join(words)
        assert reloaded(text)["input_ids"] == tokenizer(text)["input_ids"]
    ids = tokenizer("the cat sleeps .")["input_ids"]
    assert reloaded.decode(ids, skip_special_tokens=True) == "the cat sleeps ."  # the space before "." is kept
    with pytest.raises(CourseInputError, match="tokenizer.json"):
        load_tokenizer(tmp_path / "nowhere")


def test_shipped_tokenizer_is_the_recipe(tokenizer):
    """The trainer breaks ties between equal merges in no fixed order, so a retrained vocabulary can differ in a few
    entries (0-13 of 1,000 in our runs); that is why the tokenizer is shipped, not retrained."""
    shipped = zoo.load("tokenizer")
    assert len(shipped) == len(tokenizer) == COURSE_VOCAB_SIZE
    assert [shipped.convert_ids_to_tokens(i) for i in range(5)] == list(SPECIAL_TOKENS)
    assert len(set(shipped.get_vocab()) & set(tokenizer.get_vocab())) >= 0.97 * COURSE_VOCAB_SIZE
    assert list(shipped.get_vocab()) and sorted(shipped.get_vocab(), key=shipped.get_vocab().get)[5:] == sorted(
        t for t in shipped.get_vocab() if t not in SPECIAL_TOKENS
    )  # numbered A-Z after the specials
