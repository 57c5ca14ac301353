"""The embedding explorer: word classes, PCA against NumPy, cosine neighbours, and the widget driven from code."""

import contextlib
import html
import io
import re
import statistics

import numpy as np
import pytest
import torch

from course_utils.language import lexicon as lx
from course_utils.widgets.backdrop import FrozenBackdrop
from course_utils.widgets.embedding_demo import (
    MAX_K,
    OTHER,
    EmbeddingDemo,
    course_word_classes,
    fit_pca,
    nearest_words,
    pca_2d,
)
from course_utils.language.grammar import CourseLanguage
from course_utils.zoo.lm_checkpoints import CHECKPOINT_DIR
from course_utils.language.vocab import course_vocab
from course_utils.language.text_pipeline import SPECIALS, Vocab
from course_utils.validation import CourseInputError


@pytest.fixture(scope="module")
def classes():
    return course_word_classes()


@pytest.fixture(scope="module")
def embeddings(vocab, classes):
    """Seeded vectors (V, 16) with a planted direction per class, so classes form clusters."""
    generator = torch.Generator().manual_seed(0)
    names = sorted(set(classes.values()))
    centres = 3 * torch.randn(len(names), 16, generator=generator)  # (C, 16)
    noise = torch.randn(len(vocab), 16, generator=generator)  # (V, 16)
    rows = [centres[names.index(classes[w])] if w in classes else torch.zeros(16) for w in vocab.itos]
    return torch.stack(rows) + noise  # (V, 16)


def make_demo(*args, **kwargs) -> EmbeddingDemo:
    with contextlib.redirect_stdout(io.StringIO()):  # outside a kernel, display() prints a repr
        return EmbeddingDemo(*args, **kwargs)


@pytest.fixture
def demo(embeddings, vocab, classes):
    return make_demo(embeddings, vocab, classes)


def set_value(demo, name, value):
    with contextlib.redirect_stdout(io.StringIO()):
        demo.controls[name].value = value


# ---------------------------------------------------------------- word classes


def test_every_word_of_the_language_gets_one_class(classes):
    assert set(classes) == set(CourseLanguage().vocabulary)
    for cls, nouns in lx.NOUNS.items():
        for noun in nouns:
            for form in (noun.singular, noun.plural):
                if form in classes and form not in ("saw",):
                    assert classes[form] == cls, form
    assert all(classes[name] == "name" for name in lx.NAMES)
    verb_forms = [form for v in lx.VERBS for form in (v.base, v.third, v.past) if form not in ("saw", "water")]
    assert all(classes[form] == "verb" for form in verb_forms)
    assert classes["mice"] == "animal" and classes["ate"] == "verb" and classes["the"] == OTHER
    assert classes["saw"] == "utensil" and classes["water"] == "drink"  # in two lists: the first wins
    assert {"person", "animal", "food", "drink", "verb", "positive", "negative", OTHER} <= set(classes.values())


# ---------------------------------------------------------------- PCA


def numpy_pca(x: np.ndarray, dims: int = 2):
    """PCA by NumPy's SVD with the same sign convention (largest |coordinate| positive)."""
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:dims]
    signs = np.sign(components[np.arange(dims), np.abs(components).argmax(axis=1)])
    return centred @ (components * signs[:, None]).T, (s**2)[:dims] / (s**2).sum()


def test_pca_matches_numpy_and_is_deterministic(embeddings):
    projected, explained = numpy_pca(embeddings.double().numpy())
    ours = pca_2d(embeddings)
    assert ours.dtype == torch.float64 and ours.shape == (len(embeddings), 2)
    assert np.allclose(ours.numpy(), projected, atol=1e-9)
    assert np.allclose(fit_pca(embeddings).explained.numpy(), explained, atol=1e-12)
    assert torch.equal(pca_2d(embeddings), ours)  # the same numbers every time


def test_the_sign_convention_makes_the_picture_independent_of_the_svds_signs(embeddings):
    pca = fit_pca(embeddings)
    for row in pca.components:
        assert row[row.abs().argmax()] > 0
    flipped = fit_pca(-embeddings)  # same directions; an SVD may return either sign
    assert torch.allclose(flipped.components, pca.components, atol=1e-12)
    assert torch.allclose(pca_2d(-embeddings), -pca_2d(embeddings), atol=1e-9)


def test_pca_finds_the_planted_direction():
    generator = torch.Generator().manual_seed(1)
    line = torch.linspace(-5, 5, 50, dtype=torch.float64)[:, None] * torch.tensor([[3.0, 4.0, 0.0]]) / 5  # (50, 3)
    points = line + 0.01 * torch.randn(50, 3, generator=generator, dtype=torch.float64)
    pca = fit_pca(points)
    assert torch.allclose(pca.components[0], torch.tensor([0.6, 0.8, 0.0], dtype=torch.float64), atol=1e-3)
    assert pca.explained[0] > 0.999


@pytest.mark.parametrize("bad", [torch.zeros(5), torch.zeros(1, 3), torch.full((4, 3), float("nan")), "matrix"])
def test_pca_rejects_bad_input(bad):
    with pytest.raises(CourseInputError):
        fit_pca(bad)


# ---------------------------------------------------------------- nearest words


@pytest.fixture
def hand_made():
    """Five words in 2-D; the special tokens point the same way as 'a' but must never be neighbours."""
    vocab = Vocab(["a", "b", "c", "d", "e"])
    vectors = {"a": (1, 0), "b": (2, 0.2), "c": (0, 3), "d": (-1, 0), "e": (1, 1)}
    rows = [(5.0, 0.0)] * len(SPECIALS) + [vectors[w] for w in vocab.itos[len(SPECIALS) :]]
    return torch.tensor(rows, dtype=torch.float64), vocab, vectors


def test_nearest_words_are_the_true_cosine_neighbours(hand_made):
    embeddings, vocab, vectors = hand_made
    a = np.array(vectors["a"], dtype=float)
    cosine = {w: float(np.dot(a, v) / (np.linalg.norm(a) * np.linalg.norm(v))) for w, v in vectors.items() if w != "a"}
    expected = sorted(cosine.items(), key=lambda kv: -kv[1])  # b, e, c, d
    found = nearest_words(embeddings, vocab, "a", k=4)
    assert [w for w, _ in found] == [w for w, _ in expected]
    assert [c for _, c in found] == pytest.approx([c for _, c in expected], abs=1e-12)
    assert nearest_words(embeddings, vocab, "a", k=2) == found[:2]
    assert [w for w, _ in nearest_words(embeddings, vocab, "d", k=1)] == ["c"]  # cos 0 beats cos −1


@pytest.mark.parametrize(
    "word, k, words",
    [
        ("f", 2, "'f'"),
        ("<s>", 2, "special token"),
        ("", 2, "type a word"),
        ("a", 0, "k must be"),
        ("a", 5, "k must be"),
    ],
)
def test_nearest_words_rejects_bad_input(hand_made, word, k, words):
    embeddings, vocab, _ = hand_made
    with pytest.raises(CourseInputError, match=words):
        nearest_words(embeddings, vocab, word, k)


def test_nearest_words_wants_the_matrix_of_this_vocabulary(hand_made):
    embeddings, vocab, _ = hand_made
    with pytest.raises(CourseInputError, match="rows"):
        nearest_words(embeddings[:-1], vocab, "a", 2)
    with pytest.raises(CourseInputError, match="embedding.weight"):
        nearest_words(torch.nn.Embedding(len(vocab), 2), vocab, "a", 2)


# ---------------------------------------------------------------- the widget


def test_first_render_happens_on_construction(demo, embeddings, vocab):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png
    first = nearest_words(embeddings, vocab, "cat", 8)[0]
    assert f"{first[0]} {first[1]:.2f}" in demo.readout.value
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert "word" in labels and "neighbours" in labels


@pytest.mark.parametrize("name, value", [("word", "cake"), ("k", 3)])
def test_each_control_redraws(demo, name, value):
    before_png, before_readout = demo.last_png, demo.readout.value
    set_value(demo, name, value)
    assert demo.renders == 2 and demo.last_error is None
    assert demo.last_png != before_png and demo.readout.value != before_readout


def test_the_picture_marks_the_word_and_its_neighbours(demo, embeddings, vocab):
    set_value(demo, "word", "Kayla ")
    set_value(demo, "k", 5)
    here = demo.points[vocab.stoi["kayla"]]
    assert np.allclose(demo.chosen.get_xydata(), [here])
    near = nearest_words(embeddings, vocab, "kayla", 5)
    expected = demo.points[[vocab.stoi[w] for w, _ in near]]
    assert np.allclose(demo.neighbours.get_xydata(), expected)
    assert len(demo.links.get_segments()) == 5
    assert demo.labelled == ["kayla"] + [w for w, _ in near]
    assert all(f"{w} {c:.2f}" in demo.readout.value for w, c in near)


def test_the_map_is_the_pca_of_the_content_words(demo, embeddings, vocab, classes):
    content = [vocab.stoi[w] for w in vocab.itos if classes.get(w, OTHER) != OTHER]
    x = embeddings[content].double().numpy()
    projected, explained = numpy_pca(x)
    assert np.allclose(demo.points[content], projected, atol=1e-9)
    assert np.allclose(demo.pca.explained.numpy(), explained)
    assert f"the map keeps {explained.sum():.0%} of the variance" in demo.readout.value


def test_the_planted_classes_separate_in_the_map(demo, vocab, classes):
    """With a planted direction per class, words of one class sit closer together than words in general."""
    animals = demo.points[[vocab.stoi[w] for w, c in classes.items() if c == "animal"]]
    everyone = demo.points[demo.words]
    assert animals.std(axis=0).sum() < everyone.std(axis=0).sum()


@pytest.mark.parametrize("word, words", [("dgo", "dog"), ("<s>", "special token"), ("  ", "type a word")])
def test_a_bad_word_becomes_a_message_and_the_demo_recovers(demo, word, words):
    before = demo.last_png
    set_value(demo, "word", word)
    assert isinstance(demo.last_error, CourseInputError)
    assert words in demo.message.value
    assert demo.last_png == before
    set_value(demo, "word", "dog")
    assert demo.last_error is None and demo.message.value == ""


def test_custom_classes_and_their_limits(embeddings, vocab):
    few = make_demo(embeddings, vocab, {"cat": "pet", "dog": "pet", "cake": "food", "pie": "food"})
    assert few.last_error is None and set(few.classes) == {"pet", "food", OTHER}
    with pytest.raises(CourseInputError, match="at least 3"):
        make_demo(embeddings, vocab, {"cat": "pet"})
    many = {w: f"class {i}" for i, w in enumerate(vocab.itos[10:40])}
    with pytest.raises(CourseInputError, match="at most 18"):
        make_demo(embeddings, vocab, many)
    with pytest.raises(CourseInputError, match="rows"):
        make_demo(embeddings[:10], vocab)


def test_a_small_vocabulary_shows_as_many_neighbours_as_there_are():
    vocab = Vocab(["cat", "dog", "cake", "pie", "tea"])
    embeddings = torch.randn(len(vocab), 4, generator=torch.Generator().manual_seed(0))
    demo = make_demo(embeddings, vocab, {"cat": "animal", "dog": "animal", "cake": "food", "pie": "food"})
    set_value(demo, "k", MAX_K)
    assert demo.last_error is None
    assert len(demo.neighbours.get_xydata()) == 4 and len(demo.labelled) == 5


def test_bad_constructor_arguments_raise_clear_errors(embeddings, vocab):
    with pytest.raises(CourseInputError, match="Vocab"):
        make_demo(embeddings, ["a", "b"])
    with pytest.raises(CourseInputError, match="word_classes must be a dict"):
        make_demo(embeddings, vocab, ["cat"])
    with pytest.raises(CourseInputError, match="embedding.weight"):
        make_demo(torch.nn.Embedding(len(vocab), 4), vocab)


# ---------------------------------------------------------------- projecting


def test_a_label_kept_within_the_map_moves_inside_it():
    from PIL import Image, ImageDraw

    from course_utils.widgets.embedding_demo import _free_place
    from course_utils.widgets.painting import pillow_font

    pen, font = ImageDraw.Draw(Image.new("RGBA", (200, 200))), pillow_font(22)
    assert _free_place(pen, "rabbit", font, (10, 190), []) == (10, 190)  # free, though it crosses y = 180
    x, y = _free_place(pen, "rabbit", font, (10, 190), [], within=(0, 180))
    assert x == 10 and y < 190 and pen.textbbox((x, y), "rabbit", font=font, anchor="lm")[3] <= 180


def test_lecture_mode_fits_a_projector(embeddings, vocab, classes):
    """Issue 34: in lecture mode every text is 22 px or more (the key and the axis labels at 20 pt, the neighbours'
    labels at 22 px; the key's "small" 13 pt was the smallest, 15 px) and the picture small enough to be shown near
    its own size in a 1280 × 720 window's picture column (about 740 × 520 px): the key in four columns under the
    map, no tick labels or title; every class keeps its colour and marker; the readout is two lines at most."""
    from widget_support import normal_and_lecture

    normal, large = normal_and_lecture(lambda: make_demo(embeddings, vocab, classes))
    assert normal.text_px() < 14 < 22 <= large.text_px()
    assert large.figure.canvas.get_width_height() == (736, 520)
    assert all(font.size >= 22 for font in large.fonts) and large.legends() == normal.legends()
    backdrop = large.figure.findobj(FrozenBackdrop)[0].source
    (ax,) = backdrop.axes
    assert ax.get_xticklabels() == [] and ax.get_title(loc="left") == ""
    assert len(ax.get_legend().get_texts()) == len(set(classes.values()) | {"other"})
    set_value(large, "k", MAX_K)
    assert len(large.labelled) == MAX_K + 1
    text = re.sub("<[^>]+>", "", html.unescape(large.readout.value))
    assert text.count(",") == MAX_K - 1 and len(text) < 190 and "the map keeps" not in text


@pytest.mark.slow
def test_latency(demo):
    """Median callback latency over k moves and word changes (measured and printed, not asserted)."""
    demo.latencies.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        for k in range(1, MAX_K + 1):
            demo.controls["k"].value = k
        for word in ("dog", "cake", "kayla", "eats", "the", "tea", "barn", "good"):
            demo.controls["word"].value = word
    latencies = [1000 * t for t in demo.latencies]
    print(f"\nEmbeddingDemo: median {statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms")
    assert demo.last_error is None


@pytest.mark.skipif(not (CHECKPOINT_DIR / "ffnn_n3").is_dir(), reason="the FFNN checkpoints are not built yet")
def test_the_default_demo_shows_the_shipped_ffnn():
    demo = make_demo()
    assert demo.last_error is None and demo.renders == 1
    assert demo.embeddings.shape == (len(course_vocab()), 64)
