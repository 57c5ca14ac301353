"""The sequence widget driven from code: heatmap = the model's states, bars = model and oracle, bad input inline."""

import contextlib
import io
import re
import statistics

import numpy as np
import pytest
import torch

from course_utils.models import lm
from course_utils.zoo.lm_checkpoints import RECIPES, build_model
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.widgets.sequence_demo import (
    EXAMPLES,
    HIDDEN,
    LSTM_VIEWS,
    MAX_UNITS,
    MAX_WORDS,
    NEXT,
    ORACLE,
    TOP_K,
    SequenceDemo,
    value_range,
    views,
)
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError

from widget_support import normal_and_lecture, quiet, set_value  # noqa: E402

AGREEMENT = "the cats near the dog are happy ."


@pytest.fixture(scope="module")
def models(vocab):
    """Three small untrained recurrent LMs; the LSTM's 40 units exceed the heatmap's 32 rows, the GRU's 12 do not."""
    sizes = {"rnn": 24, "gru": 12, "lstm": 40}
    return {cell.upper(): RecurrentLM(len(vocab), cell=cell, embed_dim=16, hidden_dim=h, seed=i).eval()
            for i, (cell, h) in enumerate(sizes.items())}  # fmt: skip


def make_demo(*args, **kwargs) -> SequenceDemo:
    return quiet(SequenceDemo, *args, **kwargs)


@pytest.fixture
def demo(models, vocab, lang):
    return make_demo(models, vocab, lang)


def readout(demo) -> str:
    return demo.readout.value.replace("&#x27;", "'").replace("&lt;", "<").replace("&gt;", ">")


def oracle_top(lang, vocab, words, k):
    """The oracle's k most likely next words, ties broken by vocabulary id, as the widget orders them."""
    ranked = sorted(lang.next_distribution(words).items(), key=lambda kv: (-kv[1], vocab.stoi[kv[0]]))
    return ranked[:k]


def test_first_render_happens_on_construction(demo, models):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png
    sentence = next(iter(EXAMPLES))
    assert demo.controls["sentence"].value == sentence and demo.examples.value == sentence
    position = demo.controls["position"]
    assert position.value == EXAMPLES[sentence] and position.max == len(sentence.split())
    assert "P(tripped)" in readout(demo)
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert all(name in labels for name in ("examples", "sentence", "position", "model", "show"))
    assert list(demo.shown) == [ORACLE, next(iter(models)), NEXT]


def test_examples_are_sentences_of_the_language_with_a_position_inside(lang):
    for sentence, t in EXAMPLES.items():
        words = sentence.split()
        assert lang.score(words).grammatical, sentence
        assert 0 <= t < len(words)


@pytest.mark.parametrize(
    "name, value, readout_changes",
    [("sentence", AGREEMENT, True), ("position", 3, True), ("model", "GRU", False)],
)
def test_each_control_redraws(demo, name, value, readout_changes):
    before_png, before_readout = demo.last_png, demo.readout.value
    set_value(demo, name, value)
    assert demo.renders == 2 and demo.last_error is None
    assert demo.last_png != before_png
    assert (demo.readout.value != before_readout) == readout_changes


def test_each_lstm_view_redraws_and_is_the_gate_or_cell_state(demo, models, vocab):
    set_value(demo, "model", "LSTM")
    for view, gate in LSTM_VIEWS.items():
        before = demo.last_png
        set_value(demo, "show", view)
        assert demo.last_error is None and demo.last_png != before
        idx = torch.tensor([[vocab.bos_id, *vocab.encode(next(iter(EXAMPLES)).split())]])  # (1, T)
        expected = models["LSTM"].gates(idx)[gate][0, :, :MAX_UNITS].T.numpy()  # (32, T)
        assert demo.shown_map.shape == (MAX_UNITS, idx.shape[1])
        assert np.allclose(demo.shown_map, expected, atol=1e-6)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_the_hidden_state_heatmap_is_the_models_hidden_states(demo, models, vocab, name):
    set_value(demo, "sentence", AGREEMENT)
    set_value(demo, "model", name)
    idx = torch.tensor([[vocab.bos_id, *vocab.encode(AGREEMENT.split())]])  # (1, T)
    with torch.no_grad():
        states = models[name].hidden_states(idx)[0]  # (T, H)
    units = min(MAX_UNITS, states.shape[1])
    assert demo.shown_map.shape == (units, idx.shape[1])
    assert np.allclose(demo.shown_map, states[:, :units].T.numpy(), atol=1e-6)


def test_only_an_lstm_offers_gates_and_switching_keeps_what_it_can(demo, models):
    assert views(models["LSTM"]) == [HIDDEN, *LSTM_VIEWS]
    assert views(models["RNN"]) == views(models["GRU"]) == [HIDDEN]
    set_value(demo, "model", "LSTM")
    set_value(demo, "show", "forget gate")
    renders = demo.renders
    set_value(demo, "model", "RNN")
    assert demo.renders == renders + 1  # one redraw, not one per adjusted control
    assert list(demo.controls["show"].options) == [HIDDEN] and demo.controls["show"].value == HIDDEN
    set_value(demo, "model", "LSTM")
    assert list(demo.controls["show"].options) == [HIDDEN, *LSTM_VIEWS] and demo.controls["show"].value == HIDDEN


def test_fixed_colour_scales():
    assert value_range(HIDDEN) == value_range("candidate") == (-1.0, 1.0)
    assert value_range("forget gate") == value_range("input gate") == value_range("output gate") == (0.0, 1.0)
    assert value_range("cell state") == (-3.0, 3.0)


@pytest.mark.parametrize("t", [0, 1, 5, 8])
def test_the_oracle_panel_is_the_oracle(demo, lang, vocab, t):
    set_value(demo, "sentence", AGREEMENT)
    set_value(demo, "position", t)
    words = AGREEMENT.split()[:t]
    assert [(w, p) for w, p, _ in demo.shown[ORACLE]] == oracle_top(lang, vocab, words, TOP_K)
    assert all(kind == "oracle" for *_, kind in demo.shown[ORACLE])


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_the_model_panel_is_the_models_distribution_coloured_by_the_oracle(demo, models, lang, vocab, name):
    set_value(demo, "sentence", AGREEMENT)
    set_value(demo, "model", name)
    set_value(demo, "position", 5)
    words = AGREEMENT.split()[:5]
    expected = lm.top_k(lm.next_token_probs(models[name], vocab, words), vocab, TOP_K)
    shown = demo.shown[name]
    assert [w for w, _, _ in shown] == [w for w, _ in expected]
    assert [p for _, p, _ in shown] == pytest.approx([p for _, p in expected], rel=1e-5, abs=1e-9)
    allowed = lang.next_distribution(words)
    assert [kind for *_, kind in shown] == ["possible" if w in allowed else "impossible" for w, _, _ in shown]


@pytest.mark.parametrize("t", [5, 8])
def test_the_readout_and_the_next_word_panel_give_p_of_the_actual_next_word(demo, models, lang, vocab, t):
    set_value(demo, "sentence", AGREEMENT)
    set_value(demo, "position", t)
    words = AGREEMENT.split()
    target = words[t] if t < len(words) else "</s>"
    expected = {name: float(lm.next_token_probs(model, vocab, words[:t])[vocab.stoi[target]])
                for name, model in models.items()}  # fmt: skip
    expected["oracle"] = lang.next_distribution(words[:t])[target]
    text = readout(demo)
    assert f"the next word is '{target}'" in text
    for name, p in expected.items():
        assert f"{name} {p:.3g}" in text
    shown = {name: p for name, p, _ in demo.shown[NEXT]}
    assert shown == pytest.approx(expected, rel=1e-5)
    assert [p for _, p, _ in demo.shown[NEXT]] == sorted(shown.values(), reverse=True)


def test_the_position_slider_follows_the_sentence(demo):
    set_value(demo, "position", 8)
    renders = demo.renders
    set_value(demo, "sentence", "the dogs sleep .")
    assert demo.renders == renders + 1 and demo.last_error is None
    assert demo.controls["position"].max == 4 and demo.controls["position"].value == 4
    assert demo.examples.value is None  # typed by hand: no example is selected
    set_value(demo, "sentence", AGREEMENT)
    assert demo.controls["position"].max == 8 and demo.controls["position"].value == 4


def test_choosing_an_example_sets_the_sentence_and_its_position_in_one_redraw(demo):
    for sentence, t in list(EXAMPLES.items())[1:3]:
        renders = demo.renders
        quiet(setattr, demo.examples, "value", sentence)
        assert demo.renders == renders + 1
        assert demo.controls["sentence"].value == sentence and demo.controls["position"].value == t
    first = next(iter(EXAMPLES))
    quiet(setattr, demo.examples, "value", first)
    set_value(demo, "position", 0)
    demo.examples.value = None
    quiet(setattr, demo.examples, "value", first)  # the same sentence again: only the position moves
    assert demo.controls["position"].value == EXAMPLES[first]


def test_text_is_lowercased_and_tokenized(demo):
    set_value(demo, "sentence", "The CATS near the dog are happy.")
    shown = demo.shown
    set_value(demo, "sentence", AGREEMENT)
    assert demo.shown == shown and demo.last_error is None


def test_each_sentence_is_read_once(demo):
    set_value(demo, "sentence", AGREEMENT)
    reading = demo.reading(tuple(AGREEMENT.split()))
    for t in range(5):
        set_value(demo, "position", t)
    set_value(demo, "model", "LSTM")
    set_value(demo, "show", "output gate")
    assert demo.reading(tuple(AGREEMENT.split())) is reading


# ---------------------------------------------------------------- bad input, inline


def test_an_unknown_word_becomes_a_message_and_the_demo_recovers(demo):
    before = demo.last_png
    set_value(demo, "sentence", "the dgo sleeps .")
    assert isinstance(demo.last_error, CourseInputError)
    assert "dgo" in demo.message.value and "dog" in demo.message.value
    assert demo.last_png == before  # the last good picture stays
    set_value(demo, "sentence", "the dog sleeps .")
    assert demo.last_error is None and demo.message.value == ""


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_sentence_asks_for_one(demo, text):
    set_value(demo, "sentence", text)
    assert isinstance(demo.last_error, CourseInputError) and "type a sentence" in demo.message.value
    assert demo.controls["position"].max == 0


def test_a_sentence_longer_than_a_models_max_len_names_the_limit(models, vocab, lang):
    short = RecurrentLM(len(vocab), cell="gru", embed_dim=8, hidden_dim=8, max_len=8)
    demo = make_demo({**models, "short GRU": short}, vocab, lang, sentence="the dogs sleep .")
    assert demo.last_error is None
    set_value(demo, "sentence", AGREEMENT)  # 8 words: 9 tokens with <s>
    assert isinstance(demo.last_error, CourseInputError)
    message = demo.message.value
    assert "short GRU" in message and "max_len = 8" in message and "9" in message


def test_a_sentence_longer_than_the_picture_is_refused(models, vocab, lang):
    demo = make_demo(models, vocab, lang)
    long = " ".join(["the cat near"] * 10 + ["the dog sleeps ."])  # more than MAX_WORDS words
    set_value(demo, "sentence", long)
    assert isinstance(demo.last_error, CourseInputError) and f"room for {MAX_WORDS} words" in demo.message.value


def test_an_ungrammatical_sentence_shows_the_oracles_account_and_the_models(demo, lang, vocab):
    before = demo.last_png
    set_value(demo, "sentence", "the dog run .")
    failure = lang.score(["the", "dog", "run", "."]).failure
    assert isinstance(demo.last_error, CourseInputError)
    message = demo.message.value.replace("&#x27;", "'")
    assert str(failure) in message and "from t = 3 on the oracle has no next word" in message
    assert demo.last_png != before  # the models are drawn anyway
    set_value(demo, "position", 2)  # "the dog" is in the language: the oracle answers, and rules out "run"
    assert [(w, p) for w, p, _ in demo.shown[ORACLE]] == oracle_top(lang, vocab, ["the", "dog"], TOP_K)
    assert all(kind == "impossible" for name, _, kind in demo.shown[NEXT] if name != "oracle")
    assert "oracle 0" in readout(demo)
    set_value(demo, "position", 3)
    assert demo.shown[ORACLE] == [] and "oracle: none" in readout(demo)
    assert all(len(demo.shown[name]) == TOP_K for name in demo.shown if name not in (ORACLE, NEXT))
    set_value(demo, "sentence", "the dog runs .")
    assert demo.last_error is None and demo.message.value == ""


def test_an_unfinished_sentence_is_explained_but_every_position_has_the_oracle(demo, lang, vocab):
    set_value(demo, "sentence", "the cats near the dog")
    assert isinstance(demo.last_error, CourseInputError) and "not finished" in demo.message.value
    assert "no next word" not in demo.message.value
    set_value(demo, "position", 5)
    assert [(w, p) for w, p, _ in demo.shown[ORACLE]] == oracle_top(lang, vocab, AGREEMENT.split()[:5], TOP_K)
    assert "the next word is '</s>'" in readout(demo) and "oracle 0" in readout(demo)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"models": {}}, "1 to 8 entries"),
        ({"models": ["a list"]}, "must be a dict"),
        ({"models": {"x": "not a model"}}, "torch.nn.Module"),
        ({"models": {"FFNN": build_model("ffnn", RECIPES["ffnn_n3"][1])}}, "hidden_states"),
        ({"vocab": ["the", "cat"]}, "Vocab"),
        ({"oracle": "a grammar"}, "CourseLanguage"),
        ({"sentence": ["the", "cat"]}, "sentence must be a string"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(models, vocab, lang, change, words):
    kwargs = {"models": models, "vocab": vocab, "oracle": lang, **change}
    with pytest.raises(CourseInputError, match=words):
        make_demo(**kwargs)


def test_a_model_over_another_vocabulary_is_refused(vocab, lang):
    other = RecurrentLM(len(vocab) + 1, cell="rnn", embed_dim=8, hidden_dim=8)
    with pytest.raises(CourseInputError, match="token types"):
        make_demo({"other": other}, vocab, lang)


def test_a_vocabulary_without_the_languages_words_is_refused(lang):
    small = Vocab(["the", "cat", "sleeps", "."])
    model = RecurrentLM(len(small), cell="rnn", embed_dim=8, hidden_dim=8)
    with pytest.raises(CourseInputError, match="lacks words of the course language"):
        make_demo({"RNN": model}, small, lang)


# ---------------------------------------------------------------- projecting


def test_lecture_mode_fits_a_projector(models, vocab, lang):
    """Issue 34: in lecture mode the text is larger (22 px) and the picture small enough to be shown near its own
    size in a 1280 × 720 window's picture column (about 740 × 520 px): 16 units, the oracle's and the model's panels
    with 5 shorter bars (P(the actual next word) is in the readout, two lines at most)."""
    normal, large = normal_and_lecture(lambda: make_demo(models, vocab, lang))
    assert large.heatmap.px > normal.heatmap.px and large.bars.px > normal.bars.px and large.text_px() == 22
    width, height = large.figure.canvas.get_width_height()
    assert width <= 760 and height <= 530, (width, height)
    assert list(large.shown) == [ORACLE, "RNN"] and all(len(bars) == 5 for bars in large.shown.values())
    assert list(normal.shown) == [ORACLE, "RNN", NEXT] and len(large.shown_map) == 16 < len(normal.shown_map)
    text = re.sub("<[^>]+>", "", readout(large))
    assert len(text) < 120 and text.startswith("t = 8, the next word is 'tripped'. P(tripped): RNN ")
    assert large.max_words < MAX_WORDS and large.heatmap.min_width(large.max_words + 1) <= width
    set_value(large, "sentence", " ".join(["the cat sleeps ."] * 7))  # 28 words: more than the columns
    assert f"room for {large.max_words} words" in large.message.value


@pytest.mark.slow
def test_latency_with_three_models(models, vocab, lang):
    """Median callback latency over position, model and view moves (printed, not asserted: timings vary)."""
    demo = make_demo(models, vocab, lang)
    demo.latencies.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        for t in range(len(next(iter(EXAMPLES)).split()) + 1):
            demo.controls["position"].value = t
        for name in ("GRU", "LSTM"):
            demo.controls["model"].value = name
        for view in LSTM_VIEWS:
            demo.controls["show"].value = view
        moves = list(demo.latencies)
        for sentence in list(EXAMPLES)[1:]:
            demo.examples.value = sentence
    fresh = demo.latencies[len(moves) :]
    ms = lambda xs: f"median {1000 * statistics.median(xs):.1f} ms, max {1000 * max(xs):.1f} ms"  # noqa: E731
    print(f"\nSequenceDemo, 3 models: moves {ms(moves)}; new sentences {ms(fresh)}")
    assert demo.last_error is None


@pytest.fixture(scope="module")
def shipped():
    """The shipped RNN, GRU and LSTM; a test that needs them skips until the checkpoints exist."""
    from course_utils.zoo import lm_checkpoints as checkpoints

    try:
        return checkpoints.default_demo_models()
    except (CourseInputError, FileNotFoundError) as missing:
        pytest.skip(f"the shipped recurrent checkpoints are not built yet: {missing}")


def test_the_default_demo_uses_the_shipped_recurrent_models(shipped):
    demo = make_demo()
    assert list(demo.models) == list(shipped)
    assert demo.last_error is None and demo.renders == 1
    assert any(views(model) == [HIDDEN, *LSTM_VIEWS] for model in demo.models.values())  # an LSTM among them
