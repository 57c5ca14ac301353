"""The shipped corpus: regenerating it gives the same files; splits and evaluation sets are well-formed."""

from __future__ import annotations

import json

import pytest

from course_utils.language import corpus, stored_text
from course_utils.language import lexicon as lx
from course_utils.language.grammar import CourseLanguage
from course_utils.validation import CourseInputError

ALL_NOUNS = {n.form(num) for nouns in lx.NOUNS.values() for n in nouns for num in ("sg", "pl")}
TEXT_FILES = ["train.txt.bz2", "valid.txt.bz2", "test.txt.bz2", "datasheet.md"] + [
    f"eval/{name}.jsonl.bz2" for name in list(corpus.EVAL_SETS) + [f"reviews_{s}" for s in corpus.REVIEW_SPLITS]
]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    corpus.generate_corpus(out, plots=False)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", TEXT_FILES)
def test_regenerating_gives_the_shipped_files(regenerated, name):
    shipped = (corpus.CORPUS_DIR / name).read_bytes()
    assert (regenerated / name).read_bytes() == shipped, (
        f"{name} differs from a fresh run: run `{corpus.REGENERATE}` and commit the result"
    )


def test_only_the_compressed_text_is_shipped():
    shipped = {str(p.relative_to(corpus.CORPUS_DIR)) for p in corpus.CORPUS_DIR.rglob("*") if p.is_file()}
    assert shipped == set(TEXT_FILES) | {"zipf.png", "lengths.png"}


def test_plots_are_shipped():
    for name in ("zipf.png", "lengths.png"):
        assert (corpus.CORPUS_DIR / name).stat().st_size > 1000


def test_splits_are_deterministic_and_disjoint_in_seed():
    lang = CourseLanguage(include_held_out=False)
    n, seed = corpus.SPLITS["valid"]
    again = [list(s.words) for s in lang.sample_many(50, seed)]
    assert corpus.load_split("valid")[:50] == again
    assert corpus.load_split("valid")[:50] != corpus.load_split("test")[:50]
    assert len({seed for _, seed in corpus.SPLITS.values()}) == len(corpus.SPLITS)


def test_training_split_never_shows_the_held_out_compositions():
    train = corpus.load_split("train")
    held_out = {n.form(num) for cls, noun in lx.HELD_OUT_IN_GETS_FRAME.items() for n in lx.NOUNS[cls]
                if n.singular == noun for num in ("sg", "pl")}  # fmt: skip
    for words in train:
        for left, right in zip(words, words[1:]):
            assert not (left in held_out and right in ("gets", "get")), " ".join(words)
    assert sum(w.count("dog") for w in train) > 100  # dog is frequent elsewhere


def test_the_datasheet_reports_the_oracle_entropy_of_each_split():
    text = (corpus.CORPUS_DIR / "datasheet.md").read_text(encoding="utf-8")
    lang = CourseLanguage(include_held_out=False)
    entropy, tokens = corpus.oracle_entropy(lang, corpus.load_split("test"))
    assert f"| test | 4,000 | {tokens:,} | {entropy:.4f} |" in text


def test_agreement_items():
    lang = CourseLanguage(include_held_out=False)
    items = corpus.load_eval("agreement")
    assert {item["attractors"] for item in items} == set(range(6))
    for item in items[::7]:
        assert lang.score(item["prefix"] + [item["correct"], "."]).grammatical
        assert lang.prefix_logprob(item["prefix"] + [item["wrong"]]) == float("-inf")


def test_selection_items():
    lang = CourseLanguage(include_held_out=False)
    items = corpus.load_eval("selection")
    assert {item["kind"] for item in items} == {"object", "instrument", "mask"}
    for item in items:
        if item["kind"] == "mask":
            dist = lang.masked_distribution(item["left"], item["right"])
            assert dist[item["target"]] == pytest.approx(1.0)
        else:  # after "the" an adjective may come first; every noun that can come is allowed
            dist = lang.next_distribution(item["prefix"])
            assert {w for w in dist if w in ALL_NOUNS} <= set(item["allowed"])
            assert sum(dist.get(w, 0.0) for w in item["allowed"]) > 0


def test_composition_items_are_unseen_in_training_but_licensed_by_the_grammar():
    train_lang, full = CourseLanguage(include_held_out=False), CourseLanguage()
    items = corpus.load_eval("compositions")
    assert {item["held_out"] for item in items} == {True, False}
    for item in items:
        sentence = item["prefix"] + [item["target"], "."]
        assert full.score(sentence).grammatical
        assert train_lang.score(sentence).grammatical is not item["held_out"]
        assert sum(full.next_distribution(item["prefix"]).get(w, 0.0) for w in item["allowed"]) == pytest.approx(1.0)


def test_sense_items_cover_every_sense_with_the_word_at_its_position():
    items = corpus.load_eval("senses")
    senses = {(item["word"], item["sense"]) for item in items}
    assert len(senses) == 16 and len({w for w, _ in senses}) == 8
    assert all(item["words"][item["position"]] == item["word"] for item in items)


def test_voice_pairs_describe_the_same_event():
    lang = CourseLanguage(include_held_out=False)
    for pair in corpus.load_eval("voice")[:200]:
        assert lang.score(pair["active"]).grammatical and lang.score(pair["passive"]).grammatical
        assert pair["active"][: len(pair["agent"])] == pair["agent"]
        assert pair["passive"][: len(pair["theme"])] == pair["theme"]
        assert pair["passive"][-len(pair["agent"]) - 1 : -1] == pair["agent"]


def test_reviews_are_labelled_by_their_last_clause():
    items = corpus.load_eval("reviews_train")
    assert {item["label"] for item in items} == {"pos", "neg"}
    for item in items:
        words = item["words"]
        if "but" not in words and "not" not in words and "no" not in words and "will" not in words:
            polar = [
                w for w in words if w in lx.POSITIVE + lx.NEGATIVE + ("loved", "liked", "enjoyed", "hated", "disliked")
            ]
            expected = "pos" if polar[-1] in lx.POSITIVE + ("loved", "liked", "enjoyed") else "neg"
            assert item["label"] == expected, " ".join(words)
    balance = sum(item["label"] == "pos" for item in items) / len(items)
    assert 0.4 < balance < 0.6


def test_unknown_split_or_set_is_a_clear_error(tmp_path):
    with pytest.raises(CourseInputError, match="splits are"):
        corpus.load_split("training")
    with pytest.raises(CourseInputError, match="evaluation set"):
        corpus.load_eval("agreements")
    with pytest.raises(CourseInputError, match=r"train\.txt\.bz2 is missing.*python -m course_utils.language.corpus"):
        corpus.load_split("train", directory=tmp_path)


def test_reviews_lines_are_json(tmp_path):
    line = stored_text.read_text(corpus.CORPUS_DIR / "eval" / "reviews_test.jsonl").splitlines()[0]
    assert set(json.loads(line)) == {"words", "label"}
