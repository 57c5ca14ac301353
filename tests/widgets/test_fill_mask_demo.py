"""The fill-mask widget of notebook 09: BERT's guesses beside the oracle's, the piece count, bad input as a message."""

import contextlib
import io
import statistics

import numpy as np
import pytest
import torch

from course_utils.language.grammar import CourseLanguage
from course_utils.models.bert import bert_mlm
from course_utils.zoo import load
from course_utils.zoo.bert_checkpoints import checkpoint_dir
from course_utils.validation import CourseInputError
from course_utils.widgets.fill_mask_demo import (
    BERT,
    EXAMPLES,
    MAX_PIECES,
    ORACLE,
    FillMaskDemo,
    split_at_mask,
)
from course_utils.widgets.painting import MAX_K, wrapped

from widget_support import assert_inline_error, normal_and_lecture, quiet, set_value, text_of  # noqa: E402

CAKE = "he ate the cake [MASK] the fork ."
LUCAS = "lucas ate the [MASK] ."


@pytest.fixture(scope="module")
def tokenizer():
    return load("tokenizer")


@pytest.fixture(scope="module")
def model(tokenizer):
    """A small untrained BERT: the mechanics do not need trained weights (the shipped one is tested at the end)."""
    return bert_mlm.CourseBERT(bert_mlm.bert_config(tokenizer, layers=2, hidden=32, heads=4, max_len=24)).eval()


@pytest.fixture(scope="module")
def oracle():
    return CourseLanguage(include_held_out=False)


@pytest.fixture
def demo(model, tokenizer, oracle):
    return quiet(FillMaskDemo, model, tokenizer, oracle=oracle)


def oracle_of(oracle, tokenizer, sentence, pieces):
    left, right = sentence.split("[MASK]")
    return bert_mlm.given_piece_count(oracle.masked_distribution(left.split(), right.split()), tokenizer, pieces)


def test_first_render_happens_on_construction(demo):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png.startswith(b"\x89PNG")
    assert demo.controls["sentence"].value == CAKE and demo.examples.value == CAKE
    assert demo.controls["pieces"].value == 1 and demo.controls["k"].value == 8
    assert demo.shown[ORACLE] == [("with", 1.0, "oracle")]  # the slide's example: only "with" fits
    readout = text_of(demo.readout)
    assert "most likely 1-piece word is 'with': oracle 1.000, BERT" in readout
    assert "BERT reads: [CLS] he ate the cake [MASK] the fork . [SEP]" in readout


@pytest.mark.parametrize("name, value", [("sentence", LUCAS), ("pieces", 2), ("k", 3)])
def test_each_control_redraws(demo, name, value):
    before_png, before_shown = demo.last_png, demo.shown
    set_value(demo, name, value)
    assert demo.renders == 2 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png != before_png and demo.shown != before_shown
    assert all(len(bars) <= demo.controls["k"].value for bars in demo.shown.values())


def test_the_panels_are_bert_and_the_oracle_told_the_piece_count(demo, model, tokenizer, oracle):
    set_value(demo, "sentence", LUCAS)
    set_value(demo, "k", MAX_K)
    left, right = ["lucas", "ate", "the"], ["."]
    for pieces in range(1, MAX_PIECES + 1):
        set_value(demo, "pieces", pieces)
        exact = oracle_of(oracle, tokenizer, LUCAS, pieces)
        assert [(w, p) for w, p, _ in demo.shown[ORACLE]] == list(exact.items())[:MAX_K]
        assert all(kind == "oracle" for *_, kind in demo.shown[ORACLE])
        guesses = bert_mlm.WordScorer(model, tokenizer, sorted(oracle.vocabulary)).distribution(left, right, pieces)
        shown = demo.shown[BERT]
        assert [w for w, _, _ in shown] == list(guesses)[:MAX_K]
        assert [p for _, p, _ in shown] == pytest.approx(list(guesses.values())[:MAX_K], rel=1e-5)
        assert [kind for *_, kind in shown] == ["possible" if w in exact else "impossible" for w, _, _ in shown]
        assert all(bert_mlm.piece_count(tokenizer, w) == pieces for w, _, _ in shown + demo.shown[ORACLE])
        assert f"BERT reads: [CLS] lucas ate the {' '.join(['[MASK]'] * pieces)} . [SEP]" in text_of(demo.readout)


def test_the_readout_gives_the_probability_of_the_oracles_top_word(demo, oracle, tokenizer):
    set_value(demo, "sentence", LUCAS)
    set_value(demo, "pieces", 2)
    numbers = demo.numbers
    exact = oracle_of(oracle, tokenizer, LUCAS, 2)
    top = next(iter(exact))
    guesses = demo.fill(("lucas", "ate", "the"), (".",), 2).bert
    assert numbers["top"] == top and numbers["oracle_top"] == exact[top]
    assert numbers["bert_top"] == pytest.approx(guesses[top])
    impossible = sum(p for w, p in guesses.items() if w not in exact)
    assert numbers["impossible"] == pytest.approx(impossible)
    assert numbers["tv"] == pytest.approx(0.5 * sum(abs(guesses.get(w, 0) - exact.get(w, 0)) for w in guesses))
    full = oracle.masked_distribution(["lucas", "ate", "the"], ["."])
    share = sum(p for w, p in full.items() if bert_mlm.piece_count(tokenizer, w) == 2)
    assert numbers["share"] == pytest.approx(share)
    readout = text_of(demo.readout)
    assert (
        f"the oracle's most likely 2-piece word is '{top}': oracle {exact[top]:.3f}, BERT {guesses[top]:.3f}" in readout
    )
    assert f"2-piece words hold {share:.0%} of the oracle's probability" in readout


def test_a_piece_count_no_fitting_word_has_is_a_note_not_an_error(demo):
    set_value(demo, "pieces", 3)  # only "with" (one piece) fits the cake sentence
    assert demo.last_error is None and demo.message.value == ""
    assert demo.shown[ORACLE] == [] and len(demo.shown[BERT]) == demo.controls["k"].value
    assert all(kind == "impossible" for *_, kind in demo.shown[BERT])
    assert "no 3-piece word fits: the words that fit have 1 piece" in text_of(demo.readout)


def test_an_example_sets_the_sentence_and_its_piece_count_in_one_redraw(demo):
    for sentence, pieces in list(EXAMPLES.items())[1:]:
        renders = demo.renders
        quiet(setattr, demo.examples, "value", sentence)
        assert demo.renders == renders + 1 and demo.last_error is None
        assert demo.controls["sentence"].value == sentence and demo.controls["pieces"].value == pieces
    set_value(demo, "pieces", 1)
    renders = demo.renders
    quiet(setattr, demo.examples, "value", None)
    quiet(setattr, demo.examples, "value", list(EXAMPLES)[-1])  # the sentence is already there: the pieces change
    assert demo.renders == renders + 1 and demo.controls["pieces"].value == EXAMPLES[list(EXAMPLES)[-1]]
    set_value(demo, "sentence", "the cat [MASK] the dog .")
    assert demo.examples.value is None  # typed by hand


def test_the_examples_are_precomputed_and_kept(demo):
    cached = dict(demo._cache)
    assert len(cached) >= len(EXAMPLES) * MAX_PIECES
    for sentence in EXAMPLES:
        quiet(setattr, demo.examples, "value", sentence)
        for k in (1, 5):
            set_value(demo, "k", k)
    assert all(demo._cache[key] is cached[key] for key in cached)


def test_text_is_lowercased_and_tokenized_and_the_mask_may_be_any_case(demo):
    set_value(demo, "sentence", "He ATE the cake [mask] the fork.")
    assert demo.last_error is None and demo.shown[ORACLE] == [("with", 1.0, "oracle")]
    assert split_at_mask("Lucas ate the [ Mask ].") == (("lucas", "ate", "the"), (".",))


@pytest.mark.parametrize(
    "text, words",
    [
        ("", ("type a sentence with one [MASK]",)),
        ("   ", ("type a sentence with one [MASK]",)),
        ("the cat sleeps .", ("no [MASK] in the sentence",)),
        ("the [MASK] chased the [MASK] .", ("2 [MASK]s: hide exactly one word",)),
        ("the dgo [MASK] .", ("not a word of the course language", "'dgo'", "dog")),
        ("the zebra [MASK] .", ("'zebra'",)),
    ],
)
def test_bad_input_is_an_inline_message(demo, text, words):
    assert_inline_error(demo, "sentence", text, *words)


def test_a_sentence_no_word_fits_shows_berts_guesses_and_the_oracles_account(demo, oracle):
    before = demo.last_png
    set_value(demo, "sentence", "the dog run [MASK] .")
    with pytest.raises(CourseInputError) as failure:
        oracle.masked_distribution(["the", "dog", "run"], ["."])
    assert isinstance(demo.last_error, CourseInputError)
    assert str(failure.value) in text_of(demo.message)
    assert demo.last_png != before and demo.shown[ORACLE] == [] and len(demo.shown[BERT]) == demo.controls["k"].value
    assert "the oracle has no word for this gap" in text_of(demo.readout)
    set_value(demo, "sentence", "the cat [MASK] the dog")  # no full stop: not a sentence of the language
    assert "ends with '.'" in text_of(demo.message)
    set_value(demo, "sentence", LUCAS)
    assert demo.last_error is None and demo.message.value == ""


def test_a_sentence_longer_than_the_model_reads_is_refused(demo):
    words = " ".join(["the dog runs and"] * 6)  # 24 words: more pieces than max_len = 24
    assert_inline_error(demo, "sentence", f"{words} the [MASK] sleeps .", "it reads at most 24")


def test_the_demo_recovers_after_bad_input(demo):
    set_value(demo, "sentence", "the dgo [MASK] .")
    set_value(demo, "k", 4)  # other controls still answer with the message
    assert isinstance(demo.last_error, CourseInputError)
    set_value(demo, "sentence", LUCAS)
    assert demo.last_error is None and demo.message.value == "" and len(demo.shown[ORACLE]) == 4


@pytest.mark.parametrize(
    "change, words",
    [
        ({"model": torch.nn.Linear(2, 2)}, "CourseBERT"),
        ({"tokenizer": "not a tokenizer"}, "WordPiece tokenizer"),
        ({"oracle": "a grammar"}, "CourseLanguage"),
        ({"sentence": ["he", "ate"]}, "sentence must be a string"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": MAX_K + 1}, "top_k"),
        ({"pieces": 4}, "pieces"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(model, tokenizer, oracle, change, words):
    with pytest.raises(CourseInputError, match=words):
        quiet(FillMaskDemo, **{"model": model, "tokenizer": tokenizer, "oracle": oracle, **change})


def test_a_model_of_another_vocabulary_is_refused(tokenizer, oracle):
    config = bert_mlm.bert_config(tokenizer, layers=1, hidden=8, heads=2)
    config.vocab_size = 50
    with pytest.raises(CourseInputError, match=f"50 pieces but the tokenizer has {len(tokenizer)}"):
        quiet(FillMaskDemo, bert_mlm.CourseBERT(config), tokenizer, oracle=oracle)


def test_lecture_mode_has_larger_text_on_a_picture_that_fits_a_projector(model, tokenizer, oracle):
    """Issue 34: 22 px text on a picture that a 1280 × 720 projector shows about 1:1 (its column is 750 px wide): the
    bars shorter, the key on one line, the readout shorter; the oracle's bars beside BERT's, up to top k = 10."""
    normal, large = normal_and_lecture(lambda: FillMaskDemo(model, tokenizer, oracle=oracle))
    assert large.text_px() == 22 and normal.text_px() == 14
    width, height = large.painter.size
    assert width <= 740 and height <= 420, large.painter.size
    assert large.painter.size[0] < 1.6 * normal.painter.size[0]  # shorter bars than a mere enlargement
    assert len(large.painter.key_lines) == 1
    assert set(large.painter.legend().values()) == set(normal.painter.legend().values())
    readout = text_of(large.readout)
    assert "top word 'with': oracle 1.000, BERT" in readout and "BERT on impossible words" in readout
    assert readout.endswith("BERT reads: [CLS] he ate the cake [MASK] the fork . [SEP]</span>")
    assert len(readout) < 0.75 * len(text_of(normal.readout))
    set_value(large, "k", MAX_K)
    assert len(large.shown[BERT]) == MAX_K and large.last_error is None


def test_a_note_in_a_lecture_panel_is_wrapped_to_the_panel(model, tokenizer, oracle):
    from course_utils.lecture import lecture_mode

    quiet(lecture_mode)
    try:
        demo = quiet(FillMaskDemo, model, tokenizer, oracle=oracle, sentence="the dogs [MASK] .", pieces=3)
    finally:
        quiet(lecture_mode, False)
    note = demo.fill(("the", "dogs"), (".",), 3).panels[0].note
    assert demo.last_error is None and note.startswith("no word of 3 pieces fits here")
    lines = wrapped(demo.painter.font, note, demo.painter.panel[0] - demo.painter.px).split("\n")
    assert len(lines) > len(note.split("\n")) and all(
        demo.painter.font.getlength(line) <= demo.painter.panel[0] - demo.painter.px for line in lines
    )
    assert wrapped(demo.painter.font, "a b\nc", 1000) == "a b\nc"


@pytest.mark.slow
def test_latency(model, tokenizer, oracle):
    """Median callback latency over k and pieces moves, examples and new sentences: at most 50 ms."""
    demo = quiet(FillMaskDemo, model, tokenizer, oracle=oracle)
    demo.latencies.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        for k in range(1, MAX_K + 1):
            demo.controls["k"].value = k
        for pieces in (2, 3, 1, 2):
            demo.controls["pieces"].value = pieces
        for sentence in EXAMPLES:
            demo.examples.value = sentence
        moves = list(demo.latencies)
        for sentence in ("the cat [MASK] the dog .", "the [MASK] sleeps .", "kayla [MASK] the cake with the fork ."):
            demo.controls["sentence"].value = sentence
    fresh = demo.latencies[len(moves) :]
    ms = lambda xs: f"median {1000 * statistics.median(xs):.1f} ms, max {1000 * max(xs):.1f} ms"  # noqa: E731
    print(f"\nFillMaskDemo: moves and examples {ms(moves)}; new sentences {ms(fresh)}")
    assert demo.last_error is None
    assert statistics.median(demo.latencies) <= 0.25  # a regression guard; the 50 ms target: BENCHMARKS.md


def test_the_default_demo_loads_the_shipped_bert(oracle, tokenizer):
    """With no arguments: notebook 09's bert_mlm; until it is shipped, a clear message that says how to make it."""
    if not checkpoint_dir("bert_mlm").is_dir():
        with pytest.raises(CourseInputError, match="python -m course_utils.zoo bert_mlm"):
            quiet(FillMaskDemo)
        return
    demo = quiet(FillMaskDemo)
    assert demo.last_error is None and demo.renders == 1
    assert demo.model.hf.config.vocab_size == len(tokenizer)
    expected = bert_mlm.WordScorer(load("bert_mlm"), tokenizer, sorted(oracle.vocabulary))
    guesses = expected.distribution(["he", "ate", "the", "cake"], ["the", "fork", "."], 1)
    assert [w for w, _, _ in demo.shown[BERT]] == list(guesses)[:8]
    assert np.isclose(demo.numbers["bert_top"], guesses["with"], rtol=1e-5)
