"""The next-word widget, driven from code: panels match the models and the oracle, bad input becomes a message."""

import contextlib
import html
import io
import re
import statistics

import numpy as np
import pytest
import torch

from course_utils.models import lm
from course_utils.lecture import lecture_mode
from course_utils.zoo.lm_checkpoints import CHECKPOINT_DIR, RECIPES, build_model
from course_utils.widgets.next_word_demo import EXAMPLES, LECTURE_BARS, NextWordDemo, window_probs
from course_utils.evaluation.lm_probes import compare_to_oracle
from course_utils.widgets.painting import MAX_K
from course_utils.models.classic.ngram import NGramLM
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError

ORACLE = "oracle (the truth)"
UNSEEN = "lion"


@pytest.fixture(scope="module")
def models(lang, vocab):
    """Five real models: n-grams counted on 3000 sampled sentences and an untrained FFNN.

    The unsmoothed bigram never saw 'lion', so after '... lion' it has no distribution.
    """
    sentences = [list(s.words) for s in lang.sample_many(3000, seed=1)]
    models = {f"{name}gram": NGramLM(vocab, n, smoothing="interpolated-kn").fit(sentences)
              for n, name in ((1, "uni"), (2, "bi"), (3, "tri"))}  # fmt: skip
    without_lion = [s for s in sentences if UNSEEN not in s]
    models["bigram, unsmoothed"] = NGramLM(vocab, 2, smoothing="none").fit(without_lion)
    models["FFNN N=3 (untrained)"] = build_model("ffnn", RECIPES["ffnn_n3"][1]).eval()
    return models


def make_demo(*args, **kwargs) -> NextWordDemo:
    with contextlib.redirect_stdout(io.StringIO()):  # outside a kernel, display() prints a repr
        return NextWordDemo(*args, **kwargs)


@pytest.fixture
def demo(models, vocab, lang):
    return make_demo(models, vocab, lang)


def set_context(demo, text):
    with contextlib.redirect_stdout(io.StringIO()):
        demo.controls["context"].value = text


def oracle_top(lang, vocab, words, k):
    """The oracle's k most likely next words, ties broken by vocabulary id, as the widget orders them."""
    dist = lang.next_distribution(words)
    ranked = sorted(dist.items(), key=lambda kv: (-kv[1], vocab.stoi[kv[0]]))
    return ranked[:k]


def test_first_render_happens_on_construction(demo, lang, vocab):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png
    best = oracle_top(lang, vocab, EXAMPLES[0].split(), 1)[0][0]
    assert f"most likely word is &#x27;{best}&#x27;" in demo.readout.value
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert all(name in labels for name in ("examples", "context", "top k"))
    assert list(demo.shown) == [ORACLE, *demo.models]


@pytest.mark.parametrize("name, value", [("context", "kayla ate the"), ("k", 3)])
def test_each_control_redraws(demo, name, value):
    before_png, before_readout, before_shown = demo.last_png, demo.readout.value, demo.shown
    with contextlib.redirect_stdout(io.StringIO()):
        demo.controls[name].value = value
    assert demo.renders == 2 and demo.last_error is None
    assert demo.last_png != before_png and demo.shown != before_shown
    assert (demo.readout.value != before_readout) == (name == "context")  # k changes the bars, not the numbers
    k = demo.controls["k"].value
    assert all(0 < len(bars) <= k for bars in demo.shown.values())
    assert len(demo.shown["trigram"]) == k  # a smoothed model gives every word some probability


@pytest.mark.parametrize("context", [EXAMPLES[1], EXAMPLES[2], "", "the dogs that chased the cat"])
def test_the_oracle_panel_is_the_oracle(demo, lang, vocab, context):
    set_context(demo, context)
    demo.controls["k"].value = MAX_K
    words = context.split()
    expected = oracle_top(lang, vocab, words, MAX_K)
    shown = demo.shown[ORACLE]
    assert [(w, p) for w, p, _ in shown] == expected  # only words that can come next: no bars of 0
    assert all(kind == "oracle" for *_, kind in shown)
    vector = demo.predict(tuple(words)).oracle
    assert vector.sum() == pytest.approx(1.0, abs=1e-12)
    for word, p in lang.next_distribution(words).items():
        assert vector[vocab.stoi[word]] == p


def test_model_panels_show_each_models_distribution_coloured_by_the_oracle(demo, models, lang, vocab):
    set_context(demo, EXAMPLES[0])
    words = EXAMPLES[0].split()
    allowed = lang.next_distribution(words)
    for name, model in models.items():
        probs = lm.next_token_probs(model, vocab, words)  # (V,) the whole sentence so far
        expected = lm.top_k(probs, vocab, demo.controls["k"].value)
        shown = demo.shown[name]
        assert [w for w, _, _ in shown] == [w for w, _ in expected]
        assert [p for _, p, _ in shown] == pytest.approx([p for _, p in expected], rel=1e-5, abs=1e-9)  # float32 models
        assert [kind for *_, kind in shown] == ["possible" if w in allowed else "impossible" for w, _, _ in shown]


def test_the_readout_compares_each_model_with_the_oracle(demo, vocab):
    set_context(demo, "kayla ate the")
    prediction = demo.predict(("kayla", "ate", "the"))
    best = vocab.itos[int(np.argmax(prediction.oracle))]
    readout = demo.readout.value.replace("&#x27;", "'")
    for name, probs in prediction.models.items():
        c = compare_to_oracle(probs, prediction.oracle)
        assert f"{name}: P({best}) = {c.p_top:.3f}, TV {c.tv:.2f}, KL {c.kl:.2f} nats" in readout


@pytest.mark.parametrize("context", ["", "the", "he ate the cake with the", "i have to make sure that the dog gets"])
def test_window_probs_equal_the_whole_context(models, vocab, context):
    words = context.split()
    for model in models.values():
        full = lm.next_token_probs(model, vocab, words).numpy()  # (V,)
        assert np.allclose(window_probs(model, vocab, words), full, rtol=0, atol=1e-6)


def test_an_unknown_word_becomes_a_message_and_the_demo_recovers(demo):
    before = demo.last_png
    set_context(demo, "the dgo sleeps")
    assert isinstance(demo.last_error, CourseInputError)
    assert "dgo" in demo.message.value and "dog" in demo.message.value
    assert demo.last_png == before  # the last good picture stays
    set_context(demo, "the dog sleeps")
    assert demo.last_error is None and demo.message.value == ""


def test_an_ungrammatical_prefix_shows_the_models_and_the_oracles_account(demo, lang):
    before = demo.last_png
    set_context(demo, "the dog run")
    with pytest.raises(CourseInputError) as failure:
        lang.next_distribution(["the", "dog", "run"])
    assert isinstance(demo.last_error, CourseInputError)
    message = demo.message.value.replace("&#x27;", "'")
    assert str(failure.value) in message and "'run'" in message
    assert demo.last_png != before  # the models' guesses are drawn anyway
    assert demo.shown[ORACLE] == []
    smoothed = [name for name in demo.models if name != "bigram, unsmoothed"]
    assert all(len(demo.shown[name]) == demo.controls["k"].value for name in smoothed)
    assert "no next word" in demo.readout.value
    set_context(demo, "the dog runs")
    assert demo.last_error is None and demo.message.value == ""


def test_an_empty_context_is_the_first_words_distribution(demo, lang, vocab):
    set_context(demo, "   ")
    assert demo.last_error is None
    k = demo.controls["k"].value
    assert [(w, p) for w, p, _ in demo.shown[ORACLE]] == oracle_top(lang, vocab, [], k)
    assert "at the start of a sentence" in demo.readout.value


def test_text_is_lowercased_and_tokenized(demo):
    set_context(demo, "Kayla  ATE the")
    upper = demo.shown
    set_context(demo, "kayla ate the")
    assert demo.shown == upper and demo.last_error is None


def test_an_unseen_context_of_an_unsmoothed_model_is_a_note(demo, models):
    set_context(demo, f"the {UNSEEN}")
    assert float(models["bigram, unsmoothed"].distribution([UNSEEN]).sum()) == 0.0
    assert demo.last_error is None
    assert demo.shown["bigram, unsmoothed"] == [] and len(demo.shown["bigram"]) == demo.controls["k"].value
    assert "bigram, unsmoothed: no distribution (an unseen context)" in demo.readout.value


def test_examples_fill_the_context_and_typing_clears_the_choice(demo):
    renders = demo.renders
    demo.examples.value = EXAMPLES[3]
    assert demo.controls["context"].value == EXAMPLES[3]
    assert demo.renders == renders + 1  # one redraw, not two
    set_context(demo, "the cat sleeps")
    assert demo.examples.value is None


def test_distributions_are_computed_once_per_context(demo):
    set_context(demo, EXAMPLES[1])
    cached = demo.predict(tuple(EXAMPLES[1].split()))
    for k in (1, 5, MAX_K):
        demo.controls["k"].value = k
    assert demo.predict(tuple(EXAMPLES[1].split())) is cached


def test_lecture_mode_fits_a_projector(models, vocab, lang):
    """Issue 34: in lecture mode the text is larger (22 px) and the picture small enough to be shown near its own
    size in a 1280 × 720 window's picture column (about 740 × 520 px): the panels in two columns, with as many
    shorter bars as their rows leave room for, the key on one line, a readout of two lines."""
    three = {name: models[name] for name in ("bigram", "trigram", "FFNN N=3 (untrained)")}  # as notebook 04 shows
    normal = make_demo(three, vocab, lang)
    lecture_mode()
    try:
        large, crowded = make_demo(three, vocab, lang), make_demo(models, vocab, lang)  # 4 and 6 panels
    finally:
        lecture_mode(False)
    assert large.painter.px > normal.painter.px and large.text_px() == 22
    assert normal.controls["k"].max == MAX_K and normal.figure.canvas.get_width_height() == normal.painter.size
    for demo, bars in ((large, LECTURE_BARS), (crowded, 3)):
        width, height = demo.figure.canvas.get_width_height()
        assert width <= 760 and height <= 525 and demo.painter.cols == 2, (width, height)
        assert demo.controls["k"].max == bars and demo.controls["k"].value == min(8, bars)
        assert all(len(bars_shown) == bars for bars_shown in demo.shown.values())
        assert len(demo.painter.key_lines) == 1 and demo.legends() == [demo.painter.legend()]
    readout = re.sub("<[^>]+>", "", html.unescape(large.readout.value))
    assert len(readout) < 120 and "P(a word that cannot come next): bigram " in readout


@pytest.mark.parametrize(
    "change, words",
    [
        ({"models": {}}, "1 to 7 entries"),
        ({"models": ["a list"]}, "must be a dict"),
        ({"models": {"x": "not a model"}}, "torch.nn.Module"),
        ({"vocab": ["the", "cat"]}, "Vocab"),
        ({"oracle": "a grammar"}, "CourseLanguage"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": MAX_K + 1}, "top_k"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(models, vocab, lang, change, words):
    kwargs = {"models": models, "vocab": vocab, "oracle": lang, **change}
    with pytest.raises(CourseInputError, match=words):
        make_demo(**kwargs)


def test_a_vocabulary_without_the_languages_words_is_refused(lang):
    small = Vocab(["the", "cat", "sleeps", "."])
    model = NGramLM(small, 2).fit([["the", "cat", "sleeps", "."]])
    with pytest.raises(CourseInputError, match="lacks words of the course language"):
        make_demo({"bigram": model}, small, lang)


def test_a_model_over_another_vocabulary_is_refused(vocab, lang):
    small = build_model("ffnn", RECIPES["ffnn_n2"][1])
    small.vocab_size = len(vocab) - 1
    with pytest.raises(CourseInputError, match="token types"):
        make_demo({"odd": small}, vocab, lang)


@pytest.mark.slow
def test_latency_with_five_models(models, vocab, lang):
    """Median callback latency over k moves and new contexts (measured and printed, not asserted)."""
    demo = make_demo(models, vocab, lang)
    demo.latencies.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        for k in range(1, MAX_K + 1):
            demo.controls["k"].value = k
        cached = list(demo.latencies)
        for context in EXAMPLES[1:] + ("the dogs near the barn", "we made sure that our truck"):
            demo.controls["context"].value = context
    fresh = demo.latencies[len(cached) :]
    ms = lambda xs: f"median {1000 * statistics.median(xs):.1f} ms, max {1000 * max(xs):.1f} ms"  # noqa: E731
    print(f"\nNextWordDemo, 5 models: k moves {ms(cached)}; new contexts {ms(fresh)}")
    assert demo.last_error is None


@pytest.mark.skipif(not (CHECKPOINT_DIR / "ffnn_n5").is_dir(), reason="the FFNN checkpoints are not built yet")
def test_the_default_demo_uses_notebook_04s_models():
    demo = make_demo()
    assert list(demo.models) == ["unigram", "bigram", "trigram", "FFNN N=3", "FFNN N=5"]
    assert demo.last_error is None and demo.renders == 1
    assert torch.is_tensor(next(demo.models["FFNN N=5"].parameters()))
