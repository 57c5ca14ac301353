"""The explorer of the course GPT's attention (notebook 08): by layer and head, heatmap or arcs, mask on or off."""

import contextlib
import io

import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgb
from PIL import Image

from course_utils.language.vocab import course_vocab
from course_utils.models.transformer.transformer_lm import CourseGPT, ScratchGPT, attention_maps
from course_utils.validation import CourseInputError
from course_utils.widgets.attention_demo import (
    EVERY_WORD,
    EXAMPLES,
    MAX_TOKENS,
    MEAN_OF_HEADS,
    AttentionDemo,
    layer_attention,
)

from widget_support import assert_inline_error, labels_of, normal_and_lecture, quiet, set_value, text_of  # noqa: E402

GOAT = "the goat behind the parks from the boys near the children hides ."
MAX_LEN = 48  # the small model's: longer than the picture's 41 tokens, so both limits can be met


@pytest.fixture(scope="module")
def vocab():
    return course_vocab()


@pytest.fixture(scope="module")
def model(vocab):
    """A small untrained GPT: the mechanics do not need trained weights (the shipped one is tested at the end)."""
    return CourseGPT.for_vocab(vocab, n_layer=2, n_embd=32, n_head=4, max_len=MAX_LEN, seed=0).eval()


@pytest.fixture
def demo(model, vocab):
    return quiet(AttentionDemo, model, vocab)


def ids_of(vocab, sentence):
    return [vocab.bos_id, *vocab.encode(sentence.split())]


def test_first_render_happens_on_construction(demo):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png.startswith(b"\x89PNG")
    assert demo.controls["sentence"].value == GOAT and demo.examples.value == GOAT
    assert list(demo.controls["layer"].options) == [("1", 0), ("2", 1)]
    assert [value for _, value in demo.controls["head"].options] == [0, 1, 2, 3, MEAN_OF_HEADS]
    tokens = demo.shown["tokens"]
    assert tokens == ("<s>", *GOAT.split()) and demo.shown["focus"] == tokens.index("children")
    assert [value for _, value in demo.controls["focus"].options] == [EVERY_WORD, *range(len(tokens))]
    assert "'children' (position 11) looks most at" in text_of(demo.readout)
    assert all(name in labels_of(demo) for name in ("examples", "sentence", "layer", "head", "view", "causal mask"))


def test_with_the_mask_the_picture_is_the_models_own_attention(demo, model, vocab):
    maps = attention_maps(model, ids_of(vocab, GOAT)).numpy()  # (L, H, T, T)
    for layer in (0, 1):
        set_value(demo, "layer", layer)
        for head in (0, 3, MEAN_OF_HEADS):
            set_value(demo, "head", head)
            expected = maps[layer].mean(0) if head == MEAN_OF_HEADS else maps[layer, head]
            assert demo.last_error is None and np.allclose(demo.shown["weights"], expected, atol=1e-6)
            assert np.allclose(np.triu(demo.shown["weights"], 1), 0)  # nothing after the word itself


def test_without_the_mask_the_same_queries_and_keys_see_every_word(demo, model, vocab):
    set_value(demo, "mask", False)
    set_value(demo, "layer", 1)
    set_value(demo, "head", 2)
    open_ = demo.shown["weights"]  # (T, T)
    masked = attention_maps(model, ids_of(vocab, GOAT)).numpy()[1, 2]  # (T, T)
    assert np.allclose(open_.sum(1), 1, atol=1e-5) and (np.triu(open_, 1)[:-1].sum(1) > 0).all()
    for t in range(len(open_)):  # the mask renormalises the same weights over the words up to t
        assert np.allclose(masked[t, : t + 1], open_[t, : t + 1] / open_[t, : t + 1].sum(), atol=1e-5)
    line = text_of(demo.readout)
    assert "without the mask" in line and "would go to later words" in line


def test_layer_attention_with_the_mask_is_the_library_models(model, vocab):
    ids = ids_of(vocab, "the movie was good and you will love it .")
    masked, open_ = layer_attention(ScratchGPT.from_hf(model).eval(), torch.tensor([ids]))  # (L, H, T, T) each
    assert masked.shape == open_.shape == (2, 4, len(ids), len(ids))
    assert torch.allclose(masked, attention_maps(model, ids), atol=1e-5)
    assert torch.allclose(open_.sum(-1), torch.ones(2, 4, len(ids))) and not torch.allclose(open_, masked)


@pytest.mark.parametrize("name, value", [("layer", 1), ("head", 2), ("head", MEAN_OF_HEADS), ("view", "arcs"),
                                         ("mask", False), ("focus", EVERY_WORD), ("focus", 2)])  # fmt: skip
def test_each_control_redraws(demo, name, value):
    before = demo.last_png
    set_value(demo, name, value)
    assert demo.renders == 2 and demo.last_error is None and demo.last_png != before
    assert demo.shown[name] == value


def test_every_combination_draws(demo):
    for view in ("heatmap", "arcs"):
        set_value(demo, "view", view)
        for mask in (True, False):
            set_value(demo, "mask", mask)
            for focus in (EVERY_WORD, 0, 5, len(demo.shown["tokens"]) - 1):
                set_value(demo, "focus", focus)
                assert demo.last_error is None, (view, mask, focus)
    assert "on average" in text_of(demo.readout) or "looks most at" in text_of(demo.readout)


def test_choosing_an_example_sets_the_sentence_and_its_word_in_one_redraw(demo):
    for sentence, (word, _) in list(EXAMPLES.items())[1:]:
        renders = demo.renders
        quiet(setattr, demo.examples, "value", sentence)
        assert demo.renders == renders + 1 and demo.last_error is None
        tokens = demo.shown["tokens"]
        assert tokens == ("<s>", *sentence.split()) and tokens[demo.shown["focus"]] == word
        assert f"'{word}' (position {tokens.index(word)}) looks most at" in text_of(demo.readout)
    set_value(demo, "sentence", "the dog runs .")
    assert demo.examples.value is None and demo.shown["focus"] == EVERY_WORD  # typed by hand
    assert [value for _, value in demo.controls["focus"].options] == [EVERY_WORD, 0, 1, 2, 3, 4]


def test_each_sentence_is_read_once(demo):
    reading = demo.reading(tuple(GOAT.split()))
    for name, value in (("layer", 1), ("head", 3), ("mask", False), ("view", "arcs"), ("focus", 3)):
        set_value(demo, name, value)
    assert demo.reading(tuple(GOAT.split())) is reading


def test_text_is_lowercased_and_tokenized(demo):
    set_value(demo, "sentence", "The Movie was good and you will love it.")
    words = "the movie was good and you will love it .".split()
    assert demo.last_error is None and demo.shown["tokens"] == ("<s>", *words)


def test_an_unknown_word_is_named_with_the_closest_words(demo):
    assert_inline_error(demo, "sentence", "the gaot hides .", "'gaot'", "goat", "not a word the model knows")


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_sentence_asks_for_one(demo, text):
    assert_inline_error(demo, "sentence", text, "type a sentence")


def test_a_sentence_longer_than_the_model_reads_is_refused(demo):
    words = " ".join(["the dog runs ."] * 13)  # 52 words
    assert_inline_error(demo, "sentence", words, f"max_len = {MAX_LEN}", "53")


def test_a_sentence_longer_than_the_picture_is_refused(demo):
    words = " ".join(["the dog runs ."] * 10 + ["the dog"])  # 42 words, 43 tokens: the model reads them
    assert_inline_error(demo, "sentence", words, f"room for {MAX_TOKENS - 1} words")


def test_the_longest_sentence_fits(demo):
    words = " ".join(["the dog runs ."] * 10)  # 40 words
    for view in ("heatmap", "arcs"):
        set_value(demo, "view", view)
        set_value(demo, "sentence", words)
        assert demo.last_error is None and len(demo.shown["tokens"]) == MAX_TOKENS


def test_the_demo_recovers_after_bad_input(demo):
    set_value(demo, "layer", 1)
    set_value(demo, "sentence", "the gaot hides .")
    set_value(demo, "head", 2)  # other controls still answer with the message
    assert isinstance(demo.last_error, CourseInputError)
    set_value(demo, "sentence", "the goat hides .")
    assert demo.last_error is None and demo.message.value == ""
    assert demo.shown["tokens"] == ("<s>", "the", "goat", "hides", ".") and demo.shown["layer"] == 1


@pytest.mark.parametrize(
    "change, words",
    [
        ({"model": torch.nn.Linear(2, 2)}, "CourseGPT or a ScratchGPT"),
        ({"vocab": ["the", "dog"]}, "Vocab"),
        ({"sentence": ["the", "dog"]}, "sentence must be a string"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(model, vocab, change, words):
    with pytest.raises(CourseInputError, match=words):
        quiet(AttentionDemo, **{"model": model, "vocab": vocab, **change})


def test_a_model_of_another_vocabulary_is_refused(vocab):
    other = CourseGPT(50, bos_id=2, eos_id=3, pad_id=0, n_layer=1, n_embd=8, n_head=2, max_len=16)
    with pytest.raises(CourseInputError, match="the vocabulary has 610"):
        quiet(AttentionDemo, other, vocab)


def test_a_scratch_model_works_too(model, vocab):
    scratch = ScratchGPT.from_hf(model).eval()
    demo = quiet(AttentionDemo, scratch, vocab)
    assert demo.last_error is None and demo.scratch is scratch
    assert np.allclose(demo.shown["weights"], attention_maps(model, ids_of(vocab, GOAT))[0, 0].numpy(), atol=1e-5)


@contextlib.contextmanager
def lecture():
    """Lecture mode for the block's demos and their redraws."""
    from course_utils.lecture import lecture_mode

    quiet(lecture_mode)
    try:
        yield
    finally:
        quiet(lecture_mode, False)


def picture(demo) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(demo.last_png)).convert("RGB"), dtype=int)  # (H, W, 3)


def test_attention_lecture_mode_fits_a_projector(model, vocab):
    """Issue 34: in lecture mode the text is 22 px in a picture of 770 × 539 (1364 × 858 before), which a projector's
    right column (about 740 × 550 px at 1280 × 720) shows near 1:1, in both views, with the mask and without; every
    colour of the key is in the picture, and the readout is short."""
    normal, _ = normal_and_lecture(lambda: AttentionDemo(model, vocab))
    assert picture(normal).shape == (550, 868, 3)  # normal mode as it was
    with lecture():
        demo = quiet(AttentionDemo, model, vocab, layer=1, head=3)
        assert demo.painter.px == 22 and "'children' looks most at" in text_of(demo.readout)
        for view in ("heatmap", "arcs"):
            for mask in (True, False):
                set_value(demo, "view", view)
                set_value(demo, "mask", mask)
                height, width, _ = picture(demo).shape
                assert demo.last_error is None and width <= 780 and height <= 540 and demo.text_px() == 22
                assert ("would go to later words" in text_of(demo.readout)) == (not mask)
                for colour in demo.legends()[0].values():
                    target = np.array([round(255 * c) for c in to_rgb(colour)])
                    assert (np.abs(picture(demo) - target).max(axis=-1) <= 10).sum() >= 4, (view, mask, colour)


def test_in_lecture_mode_each_example_s_labels_are_as_large_as_its_length_allows(model, vocab):
    """The examples of up to 14 tokens have 22 px labels on the heatmap; the 18 tokens of the longest one leave
    cells too small for them: its labels shrink, and the demo reports the smaller text (the projector test multiplies
    it by the scale the picture is shown at)."""
    with lecture():
        demo = quiet(AttentionDemo, model, vocab)
        for sentence in EXAMPLES:
            quiet(setattr, demo.examples, "value", sentence)
            tokens = len(demo.shown["tokens"])
            assert demo.text_px() == demo.painter.smallest and (demo.text_px() == 22) == (tokens <= 14), tokens
        set_value(demo, "sentence", " ".join(["the"] * (MAX_TOKENS - 1)))
        assert demo.last_error is None and demo.text_px() < 14


def test_the_default_demo_loads_the_shipped_gpt(vocab):
    """With no arguments: notebook 08's gpt_lm; until it is shipped, a clear message that says how to make it."""
    from course_utils import zoo
    from course_utils.zoo.transformer_checkpoints import checkpoint_dir

    if not checkpoint_dir("gpt_lm").is_dir():
        with pytest.raises(CourseInputError, match="python -m course_utils.zoo gpt_lm"):
            quiet(AttentionDemo)
        return
    demo = quiet(AttentionDemo)
    assert demo.last_error is None and demo.renders == 1
    maps = attention_maps(zoo.load("gpt_lm"), ids_of(vocab, GOAT)).numpy()  # (L, H, T, T)
    assert demo.layers == maps.shape[0] and demo.heads == maps.shape[1]
    assert np.allclose(demo.shown["weights"], maps[0, 0], atol=1e-6)


def test_the_explorer_can_open_on_a_chosen_layer_and_head(model, vocab):
    demo = AttentionDemo(model, vocab, layer=1, head=3)
    assert (demo.controls["layer"].value, demo.controls["head"].value) == (1, 3)
    assert demo.last_error is None and demo.renders == 1
    with pytest.raises(CourseInputError, match="head"):
        AttentionDemo(model, vocab, head=4)
