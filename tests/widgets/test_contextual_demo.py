"""The contextual-embedding widget of notebook 09: an ambiguous word's vectors by layer, coloured by sense."""

import contextlib
import io
import statistics

import numpy as np
import pytest
import torch

from course_utils.language.corpus import load_eval
from course_utils.models.bert import bert_mlm
from course_utils.analysis import contextual_embeddings as ce
from course_utils.evaluation import linear_probe
from course_utils.zoo import load
from course_utils.zoo.bert_checkpoints import checkpoint_dir
from course_utils.validation import CourseInputError
from course_utils.widgets import contextual_demo
from course_utils.widgets.contextual_demo import ContextualEmbeddingDemo, all_alike, explained_share, senses_by_word

from widget_support import normal_and_lecture, quiet, set_value, text_of  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    return load("tokenizer")


@pytest.fixture(scope="module")
def model(tokenizer):
    """A small untrained BERT: the mechanics do not need trained weights (the shipped one is tested at the end)."""
    return bert_mlm.CourseBERT(bert_mlm.bert_config(tokenizer, layers=2, hidden=32, heads=4)).eval()


@pytest.fixture(scope="module")
def items():
    return load_eval("senses")


@pytest.fixture(scope="module")
def built(model, tokenizer):
    """One demo, built once (its construction computes every probe); tests that change it use ``demo``."""
    return quiet(ContextualEmbeddingDemo, model, tokenizer)


@pytest.fixture
def demo(built):
    """The module's demo, put back to "fine" at the last layer, with its counters reset."""
    with built.quietly():
        built.controls["word"].value, built.controls["layer"].value = "fine", built.depth
    quiet(built.refresh)
    built.renders, built.last_error = 1, None
    return built


def rows_of(items, word):
    return [i for i, item in enumerate(items) if item["word"] == word]


def test_first_render_happens_on_construction(model, tokenizer):
    demo = quiet(ContextualEmbeddingDemo, model, tokenizer)
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png.startswith(b"\x89PNG")
    assert demo.controls["word"].value == "fine" and demo.controls["layer"].value == 2  # the last layer
    assert (demo.controls["layer"].min, demo.controls["layer"].max) == (0, 2)
    assert list(demo.controls["word"].options) == ["lying", "game", "played", "rest", "fine", "great", "die", "partner"]
    assert demo.shown["word"] == "fine" and len(demo.shown["points"]) == 60
    assert sorted(set(demo.shown["senses"])) == ["healthy", "penalty"]
    readout = text_of(demo.readout)
    assert "'fine' at layer 2 (the last): sense probe" in readout and "(chance 0.50)" in readout


@pytest.mark.parametrize("name, value", [("word", "die"), ("layer", 0), ("layer", 1)])
def test_each_control_redraws(demo, name, value):
    before_png, before_readout = demo.last_png, demo.readout.value
    set_value(demo, name, value)
    assert demo.renders == 2 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png != before_png and demo.readout.value != before_readout
    assert demo.shown[name] == value


def test_the_points_are_the_pca_of_that_layers_vectors_of_that_word(demo, model, tokenizer, items):
    vectors = ce.word_vectors(model, tokenizer, items)  # (L+1, N, C)
    for word in ("fine", "partner"):
        rows = rows_of(items, word)
        for layer in (0, 2):
            set_value(demo, "word", word)
            set_value(demo, "layer", layer)
            expected = ce.projection_2d(vectors[layer, rows]).double().numpy()  # (60, 2)
            assert np.allclose(demo.shown["points"], expected, atol=1e-5)
            assert demo.shown["senses"] == [items[i]["sense"] for i in rows]
            share = explained_share(vectors[layer, rows], torch.from_numpy(expected))
            assert demo.shown["variance"] == pytest.approx(share, abs=1e-6) and 0 < share <= 1
            assert demo.shown["alike"] == all_alike(vectors[layer, rows])


def test_a_word_whose_occurrences_share_one_vector_is_one_point(demo, model, tokenizer, items):
    """At layer 0 a word has one vector per position: 'partner' stands at one position in every sentence here."""
    rows = rows_of(items, "partner")
    assert len({items[i]["position"] for i in rows}) == 1
    set_value(demo, "word", "partner")
    set_value(demo, "layer", 0)
    assert demo.last_error is None and demo.shown["alike"] and demo.shown["variance"] == 1.0
    assert np.all(demo.shown["points"] == 0)
    assert "every occurrence has the same vector" in text_of(demo.readout)
    set_value(demo, "layer", 2)
    assert not demo.shown["alike"] and "PCA keeps" in text_of(demo.readout)


def test_the_accuracies_are_the_modules_per_word_probe_and_nearest_neighbour(demo, model, tokenizer, items):
    vectors = ce.word_vectors(model, tokenizer, items)  # (L+1, N, C)
    words, senses = [item["word"] for item in items], [item["sense"] for item in items]
    for layer in range(3):
        mean, per_word = linear_probe.grouped_probe_accuracy(vectors[layer], senses, words, keys=ce.context_keys(items))
        for word in ("fine", "die"):
            rows = rows_of(items, word)
            result = demo.results[(word, layer)]
            assert result.probe == pytest.approx(per_word[word], abs=1e-9)
            neighbour = ce.nearest_neighbour_sense_accuracy(vectors[layer, rows], [items[i] for i in rows])
            assert result.neighbour == pytest.approx(neighbour, abs=1e-9)
        set_value(demo, "layer", layer)
        assert f"all 8 words at this layer: probe {mean:.2f}" in text_of(demo.readout)
    set_value(demo, "word", "die")
    shown = demo.results[("die", 0)]
    set_value(demo, "layer", 0)
    readout = text_of(demo.readout)
    assert f"sense probe {shown.probe:.2f} (chance 0.50), nearest neighbour {shown.neighbour:.2f}" in readout
    assert "(the embedding layer)" in readout


def test_everything_is_computed_at_construction(demo, monkeypatch):
    assert set(demo.results) == {(word, layer) for word in demo.senses for layer in range(demo.depth + 1)}

    def refuse(*args, **kwargs):
        raise AssertionError("computed in a callback")

    for name in ("word_vectors", "nearest_neighbour_sense_accuracy", "projection_2d"):
        monkeypatch.setattr(contextual_demo.ce, name, refuse)
    monkeypatch.setattr(contextual_demo.linear_probe, "grouped_probe_accuracy", refuse)
    for word in demo.senses:
        for layer in range(demo.depth + 1):
            set_value(demo, "word", word)
            set_value(demo, "layer", layer)
            assert demo.last_error is None


def test_senses_by_word_keeps_the_order_of_first_appearance(items):
    senses = senses_by_word(items)
    assert len(senses) == 8 and all(len(s) == 2 for s in senses.values())
    assert senses["fine"] == list(dict.fromkeys(item["sense"] for item in items if item["word"] == "fine"))


def test_a_deeper_model_gets_a_bar_per_layer(tokenizer, items):
    deep = bert_mlm.CourseBERT(bert_mlm.bert_config(tokenizer, layers=6, hidden=16, heads=2)).eval()
    small = [item for item in items if item["word"] in ("fine", "die")]
    demo = quiet(ContextualEmbeddingDemo, deep, tokenizer, items=small, word="die", layer=3)
    assert demo.last_error is None and demo.controls["layer"].max == 6 and len(demo.results) == 2 * 7
    assert demo.painter.width > demo.painter.bars_left + 7 * demo.painter.group_w
    set_value(demo, "layer", 6)
    assert demo.last_error is None and "(the last)" in text_of(demo.readout)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"word": "bank"}, "word must be one of"),
        ({"layer": 3}, "layer"),
        ({"layer": -1}, "layer"),
        ({"pooling": "max"}, "pooling"),
        ({"model": torch.nn.Linear(2, 2)}, "BERT"),
        ({"items": []}, "non-empty list of sense items"),
        ({"items": [{"words": ["a"], "position": 0}]}, "'word' and 'sense'"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(model, tokenizer, change, words):
    with pytest.raises(CourseInputError, match=words):
        quiet(ContextualEmbeddingDemo, **{"model": model, "tokenizer": tokenizer, **change})


def test_a_word_with_one_sense_is_refused(model, tokenizer, items):
    one_sense = [item for item in items if item["word"] == "fine" and item["sense"] == "penalty"]
    one_sense += [item for item in items if item["word"] == "die"]
    with pytest.raises(CourseInputError, match="'fine' has one"):
        quiet(ContextualEmbeddingDemo, model, tokenizer, items=one_sense)


def test_draw_refuses_a_word_outside_the_set(demo):
    with pytest.raises(CourseInputError, match="word must be one of"):
        demo.draw(word="bank", layer=0)


def test_lecture_mode_has_larger_text_on_a_picture_that_fits_a_projector(model, tokenizer, items):
    """Issue 34: every text at 22 px (the counts and the bars' legend too), on a picture that a 1280 × 720 projector
    shows about 1:1 (its column is 750 px wide, about 530 px tall under a two-line readout)."""
    small = [item for item in items if item["word"] in ("fine", "die")]
    normal, large = normal_and_lecture(lambda: ContextualEmbeddingDemo(model, tokenizer, items=small))
    assert large.text_px() == 22 and normal.text_px() < 14
    assert large.painter.width <= 740 and large.painter.height <= 500, (large.painter.width, large.painter.height)
    assert large.painter.key_rows == 2 and normal.painter.key_rows == 3  # a line per sense: two in the set
    readout = text_of(large.readout)
    assert ">layer 2 (the last): sense probe" in readout and "chance 0.50" in readout
    assert len(readout) < 0.8 * len(text_of(normal.readout))


def test_a_deeper_model_in_lecture_mode_keeps_its_bars_inside_the_picture(tokenizer, items):
    from course_utils.lecture import lecture_mode

    deep = bert_mlm.CourseBERT(bert_mlm.bert_config(tokenizer, layers=12, hidden=16, heads=2)).eval()
    small = [item for item in items if item["word"] in ("fine", "die")]
    quiet(lecture_mode)
    try:
        demo = quiet(ContextualEmbeddingDemo, deep, tokenizer, items=small, word="die", layer=12)
    finally:
        quiet(lecture_mode, False)
    painter = demo.painter
    assert demo.last_error is None and painter.width <= 740
    assert painter.bars_left + 13 * painter.group_w <= painter.width - painter.px


@pytest.mark.slow
def test_latency(demo):
    """Median callback latency over every word and layer: at most 50 ms."""
    demo.latencies.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        for word in demo.senses:
            demo.controls["word"].value = word
            for layer in range(demo.depth + 1):
                demo.controls["layer"].value = layer
    xs = demo.latencies
    print(f"\nContextualEmbeddingDemo: median {1000 * statistics.median(xs):.1f} ms, max {1000 * max(xs):.1f} ms "
          f"over {len(xs)} moves")  # fmt: skip
    assert demo.last_error is None and statistics.median(xs) <= 0.25  # the 50 ms target: BENCHMARKS.md


def test_the_default_demo_loads_the_shipped_bert(tokenizer):
    """With no arguments: notebook 09's bert_mlm; until it is shipped, a clear message that says how to make it."""
    if not checkpoint_dir("bert_mlm").is_dir():
        with pytest.raises(CourseInputError, match="python -m course_utils.zoo bert_mlm"):
            quiet(ContextualEmbeddingDemo)
        return
    demo = quiet(ContextualEmbeddingDemo)
    assert demo.last_error is None and demo.renders == 1
    assert demo.depth == demo.model.hf.config.num_hidden_layers and demo.controls["layer"].value == demo.depth
