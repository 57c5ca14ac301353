"""The translation widget driven from code: the attention matrix grows step by step, the true alignment
is overlaid where translate_passage puts it, models toggle, bad input is explained inline."""

import io
import statistics

import numpy as np
import pytest
import torch
from PIL import Image
from matplotlib.colors import to_rgb

from course_utils.language.parallel import TRAIN_MAX_LENGTH
from course_utils.language.tarevi import split_sentences, translate_passage
from course_utils.zoo import translation_checkpoints as tc
from course_utils.evaluation import translation_metrics as metrics
from course_utils.models.recurrent.seq2seq import Seq2Seq, translate_words
from course_utils.validation import CourseInputError
from course_utils.widgets.translation_demo import (
    EOS,
    EXAMPLES,
    MARK_COLOR,
    MAX_WORDS,
    SHIPPED,
    TranslationDemo,
    max_steps,
    plot_alignment,
)

from widget_support import assert_inline_error, normal_and_lecture, quiet, set_value, text_of  # noqa: E402

PASSIVE = "the ball was kicked by kayla ."
ACTIVE = "kayla kicked the ball ."


@pytest.fixture(scope="module")
def models():
    """Small untrained translators: the mechanics do not need trained weights (one without attention)."""
    made = {}
    for seed, (name, attention) in enumerate((("no attention", None), ("additive", "additive"), ("dot", "dot"))):
        torch.manual_seed(seed)
        made[name] = tc.build_model({"attention": attention, "embed_dim": 16, "hidden_dim": 24}).eval()
    return made


def make_demo(*args, **kwargs) -> TranslationDemo:
    return quiet(TranslationDemo, *args, **kwargs)


@pytest.fixture
def demo(models):
    return make_demo(models)


@torch.no_grad()
def greedy_weights(model, words) -> tuple[list[str], np.ndarray]:
    """The model's own greedy output ids and attention (T, S), straight from Seq2Seq.greedy."""
    source_vocab, target_vocab = tc.vocabularies()
    source = torch.tensor([source_vocab.encode(words)])  # (1, S)
    ids, matrices = model.greedy(source, max_len=max_steps(len(words)))
    return [target_vocab.itos[i] for i in ids[0]], matrices[0].numpy()


def pixel(demo, x: int, y: int) -> tuple[int, int, int]:
    """The colour of the last picture at (x, y), read back from its PNG."""
    return Image.open(io.BytesIO(demo.last_png)).convert("RGB").getpixel((x, y))


def mark_pixel(demo, s: int, r: int) -> tuple[int, int]:
    """A point on the left edge of the hollow square of cell (source s, row r)."""
    painter, steps = demo.painter, demo.decoding(demo.controls["model"].value, demo.shown["source"]).steps
    rows = max(steps, len(demo.shown["reference"]) + 1)
    cell = painter.cell(len(demo.shown["source"]), rows)
    inset = max(1, cell // 6)
    return painter.left + s * cell + inset, painter.grid_top + r * cell + cell // 2


# ---------------------------------------------------------------- the picture follows the controls


def test_first_render_happens_on_construction(demo, models):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png.startswith(b"\x89PNG")
    assert demo.controls["sentence"].value == PASSIVE and demo.examples.value == PASSIVE
    assert demo.controls["model"].value == "no attention" and list(demo.controls["model"].options) == list(models)
    step = demo.controls["step"]
    assert step.value == 1 and step.max == demo.decoding("no attention", tuple(PASSIVE.split())).steps
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert all(name in labels for name in ("examples", "source", "model", "decoder step"))
    assert demo.next_button in demo.control_rows.children[-1].children


@pytest.mark.parametrize("name", ["additive", "dot"])
def test_the_step_slider_grows_the_attention_matrix_row_by_row(demo, models, name):
    set_value(demo, "model", name)
    words = PASSIVE.split()
    tokens, weights = greedy_weights(models[name], words)
    step = demo.controls["step"]
    assert step.max == len(weights)  # one step per word written, and one for </s> if it wrote one
    pictures = set()
    for t in range(1, step.max + 1):
        set_value(demo, "step", t)
        assert demo.last_error is None
        assert demo.shown["weights"].shape == (t, len(words))
        assert np.allclose(demo.shown["weights"], weights[:t], atol=1e-6)
        assert list(demo.shown["rows"]) == ([*tokens, EOS] if len(weights) > len(tokens) else tokens)[:t]
        assert f"step {t} of {step.max}" in text_of(demo.readout)
        pictures.add(demo.last_png)
    assert len(pictures) == step.max  # every step is a different picture
    assert np.allclose(demo.shown["weights"].sum(axis=1), 1.0, atol=1e-5)  # each row a distribution over the source


def test_the_readout_names_the_word_written_and_where_the_attention_looked(demo):
    set_value(demo, "model", "additive")
    set_value(demo, "step", 2)
    weights, rows = demo.shown["weights"], demo.shown["rows"]
    argmax = int(weights[1].argmax())
    true = dict((r, s) for s, r in translate_passage(PASSIVE).alignment)[1]
    line = text_of(demo.readout)
    assert f"wrote '{rows[1]}', looking most at '{PASSIVE.split()[argmax]}' ({weights[1, argmax]:.2f})" in line
    assert f"the reference's word 2 comes from '{PASSIVE.split()[true]}'" in line


@pytest.mark.parametrize("sentence", [PASSIVE, "kayla runs . the dog ate the cake ."])
def test_the_true_alignment_marks_are_translate_passages_alignment(demo, sentence):
    set_value(demo, "sentence", sentence)
    set_value(demo, "model", "dot")
    alignment = translate_passage(sentence).alignment
    orange = tuple(round(255 * c) for c in to_rgb(MARK_COLOR))
    for t in range(1, demo.controls["step"].max + 1):
        set_value(demo, "step", t)
        assert demo.shown["marks"] == sorted((s, r) for s, r in alignment if r < t)
        for s, r in alignment:  # drawn on the rows written so far, and only there
            assert (pixel(demo, *mark_pixel(demo, s, r)) == orange) == (r < t), (t, s, r)


def test_toggling_the_models(demo, models):
    set_value(demo, "model", "dot")
    set_value(demo, "step", 3)
    with_attention = demo.last_png
    set_value(demo, "model", "no attention")
    assert demo.last_error is None and demo.last_png != with_attention
    assert demo.shown["weights"] is None and demo.shown["marks"] == []
    assert demo.controls["step"].value == 3  # the step is kept, to compare models at the same point
    readout = text_of(demo.readout)
    assert "No attention" in readout and "h_S" in readout
    assert "attention argmax" not in readout
    set_value(demo, "model", "additive")
    assert demo.shown["weights"].shape == (3, len(PASSIVE.split()))
    for name in models:  # each model's output is its own greedy translation
        set_value(demo, "model", name)
        expected = translate_words(models[name], *tc.vocabularies(), [PASSIVE.split()])[0]
        assert demo.shown["output"] == expected


def test_the_step_is_clipped_to_a_models_steps_and_one_redraw_per_change(models):
    demo = make_demo(models, step=99)  # the first passage is shown at its last step
    step = demo.controls["step"]
    assert demo.renders == 1 and step.value == step.max == demo.decoding("no attention", tuple(PASSIVE.split())).steps
    for name in [*list(models)[1:], "no attention"]:
        renders = demo.renders
        set_value(demo, "model", name)
        assert demo.renders == renders + 1
        assert step.max == demo.decoding(name, tuple(PASSIVE.split())).steps and 1 <= step.value <= step.max


def test_a_new_passage_starts_at_step_one(demo):
    set_value(demo, "step", 4)
    renders = demo.renders
    set_value(demo, "sentence", ACTIVE)
    assert demo.renders == renders + 1 and demo.controls["step"].value == 1
    assert demo.examples.value == ACTIVE
    set_value(demo, "sentence", "kayla runs .")
    assert demo.examples.value is None  # typed by hand: no example is selected


def test_the_next_step_button_steps_and_wraps_around(demo):
    step = demo.controls["step"]
    for expected in range(2, step.max + 1):
        quiet(demo.next_button.click)
        assert step.value == expected and len(demo.shown["rows"]) == expected
    quiet(demo.next_button.click)
    assert step.value == 1


def test_choosing_an_example_sets_the_passage_in_one_redraw(demo):
    for sentence in list(EXAMPLES)[1:]:
        renders = demo.renders
        quiet(setattr, demo.examples, "value", sentence)
        assert demo.renders == renders + 1 and demo.last_error is None
        assert demo.controls["sentence"].value == sentence and demo.shown["source"] == tuple(sentence.split())


def test_the_examples():
    """An active, the slide's passive, two sentences as one input, and a passage beyond the training length."""
    assert PASSIVE in EXAMPLES and ACTIVE in EXAMPLES
    sizes = [len(split_sentences(sentence)) for sentence in EXAMPLES]
    assert 2 in sizes
    lengths = [len(sentence.split()) for sentence in EXAMPLES]
    assert max(lengths) >= 20 and max(lengths) > TRAIN_MAX_LENGTH
    assert all(len(translate_passage(sentence).target) == n for sentence, n in zip(EXAMPLES, lengths))


def test_text_is_lowercased_and_tokenized(demo):
    set_value(demo, "model", "dot")
    set_value(demo, "sentence", "The ball was kicked by Kayla.")
    assert demo.last_error is None and demo.shown["source"] == tuple(PASSIVE.split())


def test_each_passage_is_decoded_once_per_model(demo):
    decoding = demo.decoding("dot", tuple(PASSIVE.split()))
    set_value(demo, "model", "dot")
    for t in range(1, demo.controls["step"].max + 1):
        set_value(demo, "step", t)
    set_value(demo, "model", "additive")
    set_value(demo, "model", "dot")
    assert demo.decoding("dot", tuple(PASSIVE.split())) is decoding


def test_the_scores_are_the_metrics_of_the_whole_output(demo):
    for name in ("no attention", "dot"):
        set_value(demo, "model", name)
        output, reference = demo.shown["output"], translate_passage(PASSIVE).target
        assert demo.shown["reference"] == reference
        right = sum(a == b for a, b in zip(output, reference))
        line = text_of(demo.readout)
        assert f"exact match {'yes' if output == reference else 'no'}" in line
        assert f"token accuracy {right}/{len(reference)} ({metrics.token_accuracy([output], [reference]):.0%})" in line
        assert f"reference: {' '.join(reference)}" in line


# ---------------------------------------------------------------- bad input, inline


def parser_message(text: str) -> str:
    with pytest.raises(CourseInputError) as failure:
        translate_passage(text.split())
    return str(failure.value)


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_passage_asks_for_one(demo, text):
    assert_inline_error(demo, "sentence", text, "type a passage")


def test_an_unknown_word_gets_the_closest_words_and_the_parsers_explanation(demo):
    assert_inline_error(demo, "sentence", "the dgo runs .", "'dgo'", "dog", parser_message("the dgo runs ."))


@pytest.mark.parametrize("text", ["the dog that ran sleeps .", "kayla kicked the ball", "the dogs runs ."])
def test_a_passage_outside_the_fragment_gets_the_parsers_own_explanation(demo, text):
    assert_inline_error(demo, "sentence", text, parser_message(text))


def test_the_demo_recovers_after_bad_input(demo):
    set_value(demo, "step", 3)
    set_value(demo, "sentence", "the dog that ran sleeps .")
    set_value(demo, "sentence", PASSIVE)  # the passage shown before: its step is kept
    assert demo.last_error is None and demo.message.value == "" and demo.controls["step"].value == 3
    set_value(demo, "sentence", ACTIVE)
    assert demo.last_error is None and demo.shown["source"] == tuple(ACTIVE.split())


def test_a_passage_longer_than_the_picture_is_refused(demo):
    long = " ".join(["kayla runs ."] * (MAX_WORDS // 3 + 1))
    assert_inline_error(demo, "sentence", long, f"room for {MAX_WORDS} source words")


def test_the_longest_passage_fits(demo):
    longest = " ".join(["the farmer fixed the old car with the hammer ."] * 4)  # 40 words
    set_value(demo, "model", "dot")
    set_value(demo, "sentence", longest)
    set_value(demo, "step", demo.controls["step"].max)
    assert demo.last_error is None and demo.shown["weights"].shape[1] == 40


@pytest.mark.parametrize(
    "change, words",
    [
        ({"models": {}}, "1 to 4 entries"),
        ({"models": ["a list"]}, "must be a dict"),
        ({"models": {"x": torch.nn.Linear(2, 2)}}, "Seq2Seq"),
        ({"models": {"x": Seq2Seq(10, 10, embed_dim=4, hidden_dim=4, attention="dot")}}, "vocabularies have"),
        ({"sentence": ["the", "dog"]}, "sentence must be a string"),
        ({"step": 0}, "step"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(models, change, words):
    with pytest.raises(CourseInputError, match=words):
        make_demo(**{"models": models, **change})


# ---------------------------------------------------------------- projecting, speed, the shipped models


def picture_size(demo) -> tuple[int, int]:
    return Image.open(io.BytesIO(demo.last_png)).size


def colour_pixels(demo, colour: str) -> int:
    """How many pixels of the last picture have ``colour`` (within 10 of 255 in each channel)."""
    picture = np.asarray(Image.open(io.BytesIO(demo.last_png)).convert("RGB"), dtype=int)  # (H, W, 3)
    target = np.array([round(255 * c) for c in to_rgb(colour)])
    return int((np.abs(picture - target).max(axis=-1) <= 10).sum())


def test_lecture_mode_fits_a_projector(models):
    """Issue 34: in lecture mode the text is 22 px and the picture 770 × 528 (1364 × 899 before), so that a projector's
    right column (about 740 × 520 px at 1280 × 720) shows it near 1:1; the readout is two lines (four normally)."""
    normal, large = normal_and_lecture(lambda: make_demo(models))
    assert (normal.painter.px, large.painter.px) == (14, 22) and large.text_px() == 22
    assert picture_size(normal) == (868, 574)  # normal mode as it was
    width, height = picture_size(large)
    assert width <= 780 and height <= 540
    assert "font-size:22px" in large.readout.value and large.readout.value.count("<br>") == 1
    assert "font-size:16px" in normal.readout.value and normal.readout.value.count("<br>") == 3


def test_in_lecture_mode_the_matrix_keeps_its_key_and_its_labels_at_the_text_size(models):
    def additive():
        demo = make_demo(models)
        set_value(demo, "model", "additive")
        set_value(demo, "step", 3)
        return demo

    normal, large = normal_and_lecture(additive)
    rows = max(normal.controls["step"].max, len(normal.shown["reference"]) + 1)  # the steps, or the reference's
    assert normal.shown["window"] == (0, rows) and large.shown["window"][0] == 0  # from the first row
    assert large.text_px() == 22 and "looks most at" in text_of(large.readout)
    (legend,) = large.legends()
    assert set(legend) == {"true alignment", "same word as the reference", "different word"}
    for colour in legend.values():
        assert colour_pixels(large, colour) >= 4, colour


def test_in_lecture_mode_a_long_decoding_shows_the_rows_around_its_step(models):
    """The 24-word passage: its 24 columns fit at the text size; rows that would not are left out of the picture,
    the current step's row second from the bottom of the window (normal mode squeezes every row in, smaller)."""
    long = max(EXAMPLES, key=len)

    def last_step():
        demo = make_demo(models, sentence=long)
        set_value(demo, "model", "dot")
        set_value(demo, "step", 20)
        return demo

    normal, large = normal_and_lecture(last_step)
    total = max(normal.controls["step"].max, len(normal.shown["reference"]) + 1)
    first, end = large.shown["window"]
    assert normal.shown["window"] == (0, total) and 0 < first and end - first < total and end == 20 + 1
    assert large.text_px() == 22 and normal.text_px() < 14  # each reports the text it paints
    assert large.shown["rows"] == normal.shown["rows"] and "step 20 of" in text_of(large.readout)


def test_moving_the_step_only_repaints(models):
    """Median latency of step moves on the long example (printed; asserted only loosely: machines are shared)."""
    demo = make_demo(models, sentence=max(EXAMPLES, key=len))
    set_value(demo, "model", "dot")
    demo.latencies.clear()
    for t in range(1, demo.controls["step"].max + 1):
        set_value(demo, "step", t)
    median = statistics.median(demo.latencies)
    words = len(max(EXAMPLES, key=len).split())
    print(f"\nTranslationDemo, step moves on {words} words: median {1000 * median:.1f} ms")
    assert median < 0.5


def test_the_default_demo_loads_the_shipped_models():
    missing = [name for name in SHIPPED.values() if not (tc.TRANSLATION_DIR / name).is_dir()]
    if missing:
        pytest.skip(f"checkpoints not shipped yet: {missing}")
    demo = make_demo()
    assert list(demo.models) == ["no attention", "additive", "dot"]
    assert [model.attention_kind for model in demo.models.values()] == [None, "additive", "dot"]
    for name, model in demo.models.items():
        set_value(demo, "model", name)
        assert demo.last_error is None
        assert demo.shown["output"] == translate_words(model, *tc.vocabularies(), [PASSIVE.split()])[0]
        exact = metrics.exact_match([demo.shown["output"]], [translate_passage(PASSIVE).target]) == 1
        assert f"exact match {'yes' if exact else 'no'}" in text_of(demo.readout)


def test_plot_alignment_marks_each_true_link_on_the_heatmap():
    from matplotlib.figure import Figure

    pair = translate_passage(PASSIVE)
    ax = Figure().subplots()
    weights = np.zeros((len(pair.target), len(pair.source)))
    plot_alignment(ax, weights, pair, "title")
    corners = {(round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in ax.patches}
    assert corners == set(pair.alignment) and len(ax.patches) == len(pair.alignment)
    assert [label.get_text() for label in ax.get_xticklabels()] == list(pair.source)
    assert [label.get_text() for label in ax.get_yticklabels()] == list(pair.target)
    assert ax.get_title() == "title" and ax.images[0].get_clim() == (0, 1)
