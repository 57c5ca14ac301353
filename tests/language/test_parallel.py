"""The shipped parallel corpus: regenerating it gives the same files; its sets are what the datasheet says."""

from __future__ import annotations

import statistics

import pytest

from course_utils.language import parallel
from course_utils.language.tarevi import split_sentences, translate_passage
from course_utils.validation import CourseInputError
from course_utils.analysis.translation_analysis import held_out_pairs

TEXT_FILES = [f"{name}.jsonl.bz2" for name in parallel.set_names()] + ["datasheet.md"]
WITHIN = ("train", "valid", "test")
LONG = [f"test_long_{low}_{high}" for low, high in parallel.LONG_BUCKETS]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("translation")
    parallel.generate(out, plots=False)
    return out


@pytest.fixture(scope="module")
def sets():
    return {name: parallel.load(name) for name in parallel.set_names()}


def pairs_of(sets, name):
    """The pairs of a set; voice items give both their active and their passive pair."""
    if name == "voice":
        return [item[voice] for item in sets[name] for voice in ("active", "passive")]
    return sets[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", TEXT_FILES)
def test_regenerating_gives_the_shipped_files(regenerated, name):
    shipped = (parallel.PARALLEL_DIR / name).read_bytes()
    assert (regenerated / name).read_bytes() == shipped, (
        f"{name} differs from a fresh run: run `{parallel.REGENERATE}` and commit the result"
    )


def test_the_length_plot_is_shipped_and_nothing_else_is_unexpected():
    assert (parallel.PARALLEL_DIR / "lengths.png").stat().st_size > 1000
    shipped = {path.name for path in parallel.PARALLEL_DIR.iterdir()}
    assert shipped == set(TEXT_FILES) | {"lengths.png"}


def test_set_sizes(sets):
    for name, (n, _) in parallel.SPLITS.items():
        assert len(sets[name]) == n
    assert all(len(sets[name]) == parallel.LONG_PER_BUCKET for name in LONG)
    assert len(sets["test_unseen"]) == parallel.UNSEEN_SIZE and len(sets["voice"]) == parallel.VOICE_SIZE


@pytest.mark.parametrize("name", parallel.set_names())
def test_every_alignment_is_the_translators_and_a_bijection(sets, name):
    for pair in pairs_of(sets, name):
        truth = translate_passage(pair.source)
        assert (pair.target, pair.alignment) == (truth.target, truth.alignment), " ".join(pair.source)
        assert len(pair.target) == len(pair.source)
        assert sorted(s for s, _ in pair.alignment) == list(range(len(pair.source)))
        assert sorted(t for _, t in pair.alignment) == list(range(len(pair.target)))


def test_training_lengths_and_long_buckets(sets):
    for name in WITHIN + ("test_unseen",):
        assert max(len(p.source) for p in sets[name]) <= parallel.TRAIN_MAX_LENGTH, name
    for name, (low, high) in zip(LONG, parallel.LONG_BUCKETS):
        lengths = [len(p.source) for p in sets[name]]
        assert low <= min(lengths) and max(lengths) <= high, name
        assert low > parallel.TRAIN_MAX_LENGTH
    median = statistics.median(len(p.source) for p in sets["train"])
    assert max(len(p.source) for p in sets[LONG[-1]]) >= 3 * median
    assert min(len(p.source) for p in sets[LONG[-1]]) >= 3 * median  # the whole last bucket, not one passage


def test_passages_are_whole_clauses_each_ending_in_a_full_stop(sets):
    for name in parallel.set_names():
        for pair in pairs_of(sets, name)[::10]:
            assert pair.source[-1] == "." and pair.target[-1] == "."
            assert pair.source.count(".") == pair.target.count(".")


def test_valid_and_test_share_no_passage_with_train_or_each_other(sets):
    train = {p.source for p in sets["train"]}
    valid, test = {p.source for p in sets["valid"]}, {p.source for p in sets["test"]}
    assert not valid & train and not test & train and not valid & test
    assert len(valid) == len(sets["valid"]) and len(test) == len(sets["test"])  # no repeats either


def test_held_out_combinations_are_never_trained_and_always_in_test_unseen(sets):
    for name in WITHIN:
        offending = [" ".join(p.source) for p in sets[name] if parallel.has_unseen_combination(p.source)]
        assert not offending, (name, offending[:3])
    assert all(parallel.has_unseen_combination(p.source) for p in sets["test_unseen"])


def test_the_words_of_the_unseen_combinations_all_occur_in_training(sets):
    train_words = {w for p in sets["train"] for w in p.source}
    assert {w for p in sets["test_unseen"] for w in p.source} <= train_words


def test_the_held_out_share_of_combinations_is_about_the_stated_share(sets):
    events = {parallel.event(clause) for p in sets["train"][:5000] for clause in split_sentences(p.source)}
    events.discard(None)
    assert len(events) > 200
    assert not any(parallel.is_held_out(e) for e in events)
    unseen = {parallel.event(c) for p in sets["test_unseen"] for c in split_sentences(p.source)} - {None}
    held = [e for e in unseen if parallel.is_held_out(e)]
    assert len(held) > 20  # many different held-out combinations, not one repeated


def phrase_words(phrase) -> list[str]:
    return [token.word for token in (phrase.determiner, phrase.adjective, phrase.head) if token]


def test_voice_items_are_one_event_in_both_voices(sets):
    for item in sets["voice"]:
        active, passive = item["active"].source, item["passive"].source
        a, p = parallel.parse(active), parallel.parse(passive)
        assert (a.voice, p.voice) == ("active", "passive")
        agent, theme = a.subject, a.complement
        assert phrase_words(p.subject) == phrase_words(theme)  # the theme is the passive's subject
        assert phrase_words(p.oblique.phrase) == phrase_words(agent)  # the agent follows "by"
        assert p.oblique.preposition.word == "by"
        assert a.verb[-1].analysis.lemma == p.verb[-1].analysis.lemma
        assert parallel.event(active) == parallel.event(passive)
        assert item["active"].target != item["passive"].target  # Tarevi keeps the voice


def test_loading_an_unknown_set_or_a_missing_file_says_how_to_regenerate(tmp_path):
    with pytest.raises(CourseInputError, match="unknown set 'training'"):
        parallel.load("training")
    with pytest.raises(CourseInputError, match="python -m course_utils.language.parallel") as err:
        parallel.load("train", directory=tmp_path)
    assert "missing" in str(err.value)


def test_vocabularies_cover_every_word_of_every_set(sets):
    source_vocab, target_vocab = map(set, parallel.vocabularies())
    for name in parallel.set_names():
        for pair in pairs_of(sets, name):
            assert set(pair.source) <= source_vocab, (name, set(pair.source) - source_vocab)
            assert set(pair.target) <= target_vocab, (name, set(pair.target) - target_vocab)
    assert parallel.vocabularies() == parallel.vocabularies()  # sorted, fixed
    assert list(parallel.vocabularies()[0]) == sorted(source_vocab)


def test_the_datasheet_reports_the_measured_numbers(sets):
    text = (parallel.PARALLEL_DIR / "datasheet.md").read_text(encoding="utf-8")
    train = sets["train"]
    lengths = [len(p.source) for p in train]
    words = sum(lengths)
    assert f"| train | {len(train):,} | {words:,} | {words:,} | {min(lengths)}–{max(lengths)} " in text
    assert f"**L = {parallel.TRAIN_MAX_LENGTH}**" in text
    passives = sum(p.source.count("by") > 0 for p in sets["test_unseen"])
    assert passives > 0  # the unseen set has passives ("the bread was eaten by ...")


def test_reorders_and_crossing_share_on_hand_examples():
    monotone = parallel.Pair(("a", "b", "c"), ("x", "y", "z"), ((0, 0), (1, 1), (2, 2)))
    reversed_ = parallel.Pair(("a", "b", "c"), ("x", "y", "z"), ((0, 2), (1, 1), (2, 0)))
    one_swap = parallel.Pair(("a", "b", "c"), ("x", "y", "z"), ((0, 0), (1, 2), (2, 1)))
    assert not parallel.reorders(monotone) and parallel.crossing_share(monotone) == 0.0
    assert parallel.reorders(reversed_) and parallel.crossing_share(reversed_) == 1.0
    assert parallel.crossing_share(one_swap) == pytest.approx(1 / 3)


def test_the_held_out_pairs_notebook_07_prints_cover_every_event_at_about_the_stated_share(sets):
    held, allowed = held_out_pairs()
    events = {parallel.event(c) for p in sets["train"] + sets["test_unseen"] for c in split_sentences(p.source)}
    events.discard(None)
    assert allowed >= len(events)  # the lexicon's pairs include every pair a passage uses
    assert held >= len([e for e in events if parallel.is_held_out(e)])
    spread = 3 * (parallel.HELD_OUT_SHARE * (1 - parallel.HELD_OUT_SHARE) / allowed) ** 0.5
    assert abs(held / allowed - parallel.HELD_OUT_SHARE) < spread
