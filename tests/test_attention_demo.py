"""The two demos of notebook 08: the slide's Q·K·V step-through and the explorer of the course GPT's attention."""

import html
import math

import numpy as np
import pytest
import torch

from course_utils.models.transformer.attention import THINKING_MACHINES, parse_runs, scaled_dot_product_attention
from course_utils.language.vocab import course_vocab
from course_utils.models.transformer.transformer_lm import CourseGPT, ScratchGPT, attention_maps
from course_utils.validation import CourseInputError
from course_utils.widgets.attention_demo import (
    EVERY_WORD,
    EXAMPLES,
    MAX_TOKENS,
    MEAN_OF_HEADS,
    AttentionDemo,
    QKVDemo,
    layer_attention,
    qkv_numbers,
    vector_text,
    weight_text,
)

from widget_support import assert_inline_error, normal_and_lecture, quiet, set_value, text_of  # noqa: E402

GOAT = "the goat behind the parks from the boys near the children hides ."
MAX_LEN = 48  # the small model's: longer than the picture's 41 tokens, so both limits can be met


def labels_of(demo) -> str:
    """The text of every label in the demo's control rows."""
    found = []

    def walk(widget):
        if hasattr(widget, "children"):
            for child in widget.children:
                walk(child)
        elif hasattr(widget, "value") and isinstance(widget.value, str) and "<span" in widget.value:
            found.append(html.unescape(widget.value))

    walk(demo.box.children[1])
    return " ".join(found)


# ================================================================ QKVDemo


@pytest.fixture
def qkv():
    return quiet(QKVDemo)


def test_the_default_is_the_slides_thinking_machines(qkv):
    assert qkv.renders == 1 and qkv.last_error is None and qkv.last_png.startswith(b"\x89PNG")
    assert [qkv.controls[name].value for name in ("q1", "k1", "k2", "v1", "v2")] == list(THINKING_MACHINES.values())
    assert qkv.controls["divide"].value is True and qkv.controls["step"].value == 4
    line = text_of(qkv.readout)
    for fragment in ("q₁·k₁ = 112", "q₁·k₂ = 96", "÷8", "14, 12", "softmax 0.88, 0.12"):
        assert fragment in line, line
    shown = qkv.shown
    assert shown["d_k"] == 64 and shown["divisor"] == 8
    assert shown["scores"] == [112, 96] and shown["scaled"] == [14, 12]
    assert shown["weights"] == pytest.approx([0.8808, 0.1192], abs=1e-4)
    assert all(name in labels_of(qkv) for name in ("q₁", "k₁", "k₂", "v₁", "v₂", "step"))


def test_the_output_is_the_courses_scaled_dot_product_attention(qkv):
    vectors = {name: parse_runs(text) for name, text in THINKING_MACHINES.items()}
    keys, values = torch.stack([vectors["k1"], vectors["k2"]]), torch.stack([vectors["v1"], vectors["v2"]])
    out, weights = scaled_dot_product_attention(vectors["q1"][None], keys, values)  # (1, d_v), (1, 2)
    assert np.allclose(qkv.shown["z"], out[0].numpy()) and np.allclose(qkv.shown["weights"], weights[0].numpy())
    assert np.allclose(qkv.shown["parts"].sum(0), qkv.shown["z"])


def test_without_the_division_one_key_takes_everything(qkv):
    with_division = qkv.last_png
    set_value(qkv, "divide", False)
    assert qkv.last_error is None and qkv.last_png != with_division
    first, second = qkv.shown["weights"]
    assert first == pytest.approx(1.0, abs=1e-6) and second == pytest.approx(math.exp(-16) / (1 + math.exp(-16)))
    assert qkv.shown["scaled"] == [112, 96]
    line = text_of(qkv.readout)
    assert "not divided" in line and "softmax 0.9999999, 1.1e-07" in line
    set_value(qkv, "divide", True)
    assert qkv.shown["weights"][0] == pytest.approx(0.8808, abs=1e-4)


def test_each_step_redraws_and_the_readout_grows(qkv):
    pictures, lines = set(), []
    for step in (1, 2, 3, 4):
        renders = qkv.renders
        set_value(qkv, "step", step)
        assert qkv.renders == renders + 1 and qkv.last_error is None and qkv.shown["step"] == step
        pictures.add(qkv.last_png)
        lines.append(text_of(qkv.readout))
    assert len(pictures) == 4
    assert "÷8" not in lines[0] and "14, 12" in lines[1] and "softmax" not in lines[1]
    assert "softmax 0.88, 0.12" in lines[2] and "z₁" not in lines[2] and "z₁ = 0.88·v₁ + 0.12·v₂" in lines[3]


@pytest.mark.parametrize(
    "name, text, fragments",
    [
        ("q1", "one, two", ["q₁:", "'one' is not a number"]),
        ("k1", "", ["k₁:", "give a vector"]),
        ("v1", "2*x", ["v₁:"]),
        ("k2", "2*32, 1*31", ["q₁ has 64 numbers but k₂ has 63", "d_k"]),
        ("q1", "1*63", ["q₁ has 63 numbers but k₁ has 64"]),
        ("v2", "0, 3", ["v₁ has 3 numbers but v₂ has 2", "d_v"]),
        ("q1", "1e307*64", ["overflow"]),
    ],
)
def test_bad_vectors_are_inline_messages_and_the_picture_stays(qkv, name, text, fragments):
    assert_inline_error(qkv, name, text, *fragments)
    set_value(qkv, name, THINKING_MACHINES[name])
    assert qkv.last_error is None and qkv.message.value == "" and qkv.shown["scores"] == [112, 96]


def test_other_vectors(qkv):
    set_value(qkv, "q1", "1, 2, 3, 4")
    set_value(qkv, "k1", "1, 0, 0, 0")
    set_value(qkv, "k2", "0, 0, 0, 1")
    set_value(qkv, "v1", "1*10")
    set_value(qkv, "v2", "-1*10")
    assert qkv.last_error is None
    assert qkv.shown["scores"] == [1, 4] and qkv.shown["divisor"] == 2 and qkv.shown["scaled"] == [0.5, 2]
    weights = torch.softmax(torch.tensor([0.5, 2.0], dtype=torch.float64), 0).numpy()
    assert np.allclose(qkv.shown["z"], weights[0] - weights[1])
    assert "÷2 → 0.5, 2" in text_of(qkv.readout)


def test_weight_and_vector_texts():
    assert [weight_text(p) for p in (0.8808, 0.1192, 1 - 1.125e-7, 1.125e-7, 1.0, 0.0, 0.004)] == \
        ["0.88", "0.12", "0.9999999", "1.1e-07", "1", "0", "0.004"]  # fmt: skip
    for text in THINKING_MACHINES.values():
        assert torch.equal(parse_runs(vector_text(parse_runs(text))), parse_runs(text))
    assert vector_text(parse_runs("2*48, 1*16")) == "2*48, 1*16"


def test_qkv_numbers_on_a_hand_made_case():
    vectors = {"q1": torch.tensor([3.0, 4.0], dtype=torch.float64), "k1": torch.tensor([1.0, 0.0], dtype=torch.float64),
               "k2": torch.tensor([0.0, 1.0], dtype=torch.float64), "v1": torch.tensor([1.0], dtype=torch.float64),
               "v2": torch.tensor([0.0], dtype=torch.float64)}  # fmt: skip
    numbers = qkv_numbers(vectors, divide=True)
    assert numbers["scores"] == [3, 4] and numbers["scaled"] == pytest.approx([3 / math.sqrt(2), 4 / math.sqrt(2)])
    assert numbers["z"][0] == pytest.approx(numbers["weights"][0])


def test_a_bad_step_argument_raises():
    with pytest.raises(CourseInputError, match="step"):
        QKVDemo(step=5)


def test_qkv_lecture_mode_makes_a_larger_picture():
    normal, large = normal_and_lecture(QKVDemo)
    assert large.painter.px > normal.painter.px
    assert large.figure.get_size_inches()[1] > normal.figure.get_size_inches()[1]


# ================================================================ AttentionDemo


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


def test_attention_lecture_mode_makes_a_larger_picture(model, vocab):
    normal, large = normal_and_lecture(lambda: AttentionDemo(model, vocab))
    assert large.painter.px > normal.painter.px
    assert large.figure.get_size_inches()[1] > normal.figure.get_size_inches()[1]


def test_the_default_demo_loads_the_shipped_gpt(vocab):
    """With no arguments: notebook 08's gpt_lm; until it is shipped, a clear message that says how to make it."""
    from course_utils.zoo.transformer_checkpoints import checkpoint_dir, load_lm

    if not checkpoint_dir("gpt_lm").is_dir():
        with pytest.raises(CourseInputError, match="transformer_checkpoints gpt_lm"):
            quiet(AttentionDemo)
        return
    demo = quiet(AttentionDemo)
    assert demo.last_error is None and demo.renders == 1
    maps = attention_maps(load_lm("gpt_lm"), ids_of(vocab, GOAT)).numpy()  # (L, H, T, T)
    assert demo.layers == maps.shape[0] and demo.heads == maps.shape[1]
    assert np.allclose(demo.shown["weights"], maps[0, 0], atol=1e-6)


def test_the_explorer_can_open_on_a_chosen_layer_and_head(model, vocab):
    demo = AttentionDemo(model, vocab, layer=1, head=3)
    assert (demo.controls["layer"].value, demo.controls["head"].value) == (1, 3)
    assert demo.last_error is None and demo.renders == 1
    with pytest.raises(CourseInputError, match="head"):
        AttentionDemo(model, vocab, head=4)
