"""The agreement widget driven from code: bars = each model's P(verb forms), accuracies = lm_probes', bad input."""

import contextlib
import html
import io
import re
import statistics

import pytest

from course_utils.models import lm
from course_utils.evaluation.agreement import NUMBERS
from course_utils.widgets.agreement_demo import AgreementDemo, Verdict, noun_positions
from course_utils.language.corpus import load_eval
from course_utils.evaluation.lm_probes import agreement_accuracy
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.validation import CourseInputError

from widget_support import normal_and_lecture, quiet, set_value  # noqa: E402


@pytest.fixture(scope="module")
def items():
    return load_eval("agreement")


@pytest.fixture(scope="module")
def few(items):
    """A third of the items (every kind keeps some): a demo over them is built quickly."""
    return items[::3]


@pytest.fixture(scope="module")
def models(vocab):
    """Three small untrained recurrent LMs (their verdicts differ from item to item)."""
    return {cell.upper(): RecurrentLM(len(vocab), cell=cell, embed_dim=16, hidden_dim=24, seed=i).eval()
            for i, cell in enumerate(("rnn", "gru", "lstm"))}  # fmt: skip


def make_demo(*args, **kwargs) -> AgreementDemo:
    return quiet(AgreementDemo, *args, **kwargs)


@pytest.fixture(scope="module")
def shared(models, vocab):
    """One demo over all the items (the default), for the tests that set every control they read."""
    return make_demo(models, vocab)


@pytest.fixture
def demo(models, vocab, few):
    return make_demo(models, vocab, items=few)


def group(items, number, attractors):
    return [item for item in items if item["number"] == NUMBERS[number] and item["attractors"] == attractors]


def test_first_render_happens_on_construction(demo, models):
    assert demo.renders == 1 and demo.last_error is None and demo.message.value == ""
    assert demo.last_png and list(demo.shown) == list(models)
    assert demo.item["number"] == "pl" and demo.item["attractors"] == 2
    labels = " ".join(child.value for row in demo.control_rows.children for child in row.children[:1])
    assert all(name in labels for name in ("subject", "attractors", "example"))
    text = demo.readout.value.replace("&#x27;", "'")
    assert f"'{' '.join(demo.item['prefix'])} ___'" in text and f"'{demo.item['correct']}'" in text


@pytest.mark.parametrize("name, value", [("number", "singular"), ("attractors", 4), ("example", 7)])
def test_each_control_redraws_with_a_matching_item(demo, name, value):
    before_png, before_readout, before_item = demo.last_png, demo.readout.value, demo.item
    set_value(demo, name, value)
    assert demo.renders == 2 and demo.last_error is None  # one redraw, also when the example slider is refitted
    assert demo.last_png != before_png and demo.readout.value != before_readout and demo.item != before_item
    number, attractors = demo.controls["number"].value, demo.controls["attractors"].value
    assert demo.item["number"] == NUMBERS[number] and demo.item["attractors"] == attractors


@pytest.mark.parametrize("number", list(NUMBERS))
@pytest.mark.parametrize("attractors", range(6))
def test_the_example_slider_runs_over_the_items_of_that_kind(shared, items, number, attractors):
    set_value(shared, "number", number)
    set_value(shared, "attractors", attractors)
    kind = group(items, number, attractors)
    assert shared.controls["example"].max == len(kind) - 1
    order = shared.groups[NUMBERS[number], attractors]
    assert sorted(map(repr, (items[i] for i in order))) == sorted(map(repr, kind))  # every item of the kind, once
    for example in (0, len(kind) - 1):
        set_value(shared, "example", example)
        assert shared.item == items[order[example]] and shared.last_error is None


def test_the_example_is_clipped_when_the_kind_has_fewer_items(demo, few):
    sizes = {a: len(group(few, "plural", a)) for a in range(6)}
    small, large = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
    set_value(demo, "attractors", large)
    set_value(demo, "example", sizes[large] - 1)
    set_value(demo, "attractors", small)
    assert demo.controls["example"].value == sizes[small] - 1 and demo.last_error is None


@pytest.mark.parametrize("number, attractors", [("singular", 0), ("plural", 1), ("singular", 3), ("plural", 5)])
def test_the_bars_are_each_models_probabilities_of_the_two_forms(shared, models, vocab, number, attractors):
    set_value(shared, "number", number)
    set_value(shared, "attractors", attractors)
    for example in (0, 3):
        set_value(shared, "example", example)
        item = shared.item
        forms = (item["correct"], item["wrong"])
        singular, plural = forms if number == "singular" else forms[::-1]
        for name, model in models.items():
            probs = lm.next_token_probs(model, vocab, item["prefix"])  # (V,)
            verdict = shared.shown[name]
            assert verdict.singular[0] == singular and verdict.plural[0] == plural and verdict.correct == number
            assert verdict.singular[1] == pytest.approx(float(probs[vocab.stoi[singular]]), rel=1e-5)
            assert verdict.plural[1] == pytest.approx(float(probs[vocab.stoi[plural]]), rel=1e-5)
            assert verdict.right == (probs[vocab.stoi[item["correct"]]] > probs[vocab.stoi[item["wrong"]]])


def test_the_accuracies_are_lm_probes_agreement_accuracy(demo, models, vocab, few):
    for name, model in models.items():
        expected = agreement_accuracy(model, vocab, few)
        assert demo.accuracy[name] == pytest.approx(expected, abs=1e-12)
    set_value(demo, "attractors", 3)
    count = sum(item["attractors"] == 3 for item in few)
    for name, verdict in demo.shown.items():
        assert verdict.accuracy == demo.accuracy[name][3] and verdict.items == count


def test_the_readout_gives_each_models_verdict(shared):
    text = shared.readout.value.replace("&#x27;", "'")
    for name, verdict in shared.shown.items():
        preferred = shared.item["correct"] if verdict.right else shared.item["wrong"]
        assert f"{name} prefers '{preferred}' {'✓' if verdict.right else '✗'}" in text


def test_verdict_right_compares_the_correct_form_with_the_other():
    assert Verdict(("runs", 0.2), ("run", 0.1), "singular", 0.5, 10).right
    assert not Verdict(("runs", 0.2), ("run", 0.1), "plural", 0.5, 10).right


def test_noun_positions_find_the_subject_and_the_attractors():
    prefix = "the cooks behind the station that chased the owl".split()
    assert noun_positions(prefix) == (1, {4, 8})
    assert noun_positions(["kayla"]) == (None, set())


def test_the_seed_shuffles_the_examples_of_a_kind(models, vocab, items):
    kind = items[:120]
    first = [make_demo(models, vocab, items=kind, seed=seed).groups for seed in (0, 0, 1)]
    assert first[0] == first[1] and first[0] != first[2]
    assert all(sorted(a) == sorted(b) for a, b in zip(first[0].values(), first[2].values()))


# ---------------------------------------------------------------- bad input


def test_a_kind_without_items_is_an_inline_message(models, vocab, items):
    only_singular = [item for item in items if item["number"] == "sg" and item["attractors"] <= 2]
    demo = make_demo(models, vocab, items=only_singular)
    assert isinstance(demo.last_error, CourseInputError)  # the default kind (plural, 2) has no items
    assert "no agreement item has a plural subject and 2 attractors" in demo.message.value
    set_value(demo, "number", "singular")
    assert demo.last_error is None and demo.message.value == "" and demo.item["number"] == "sg"
    assert demo.controls["attractors"].max == 2


@pytest.mark.parametrize(
    "change, words",
    [
        ({"models": {}}, "1 to 6 entries"),
        ({"models": {"x": "not a model"}}, "torch.nn.Module"),
        ({"vocab": ["the", "cat"]}, "Vocab"),
        ({"items": []}, "non-empty list"),
        ({"items": [{"prefix": ["the", "cat"]}]}, "prefix, correct, wrong, attractors, number"),
        (
            {
                "items": [
                    {"prefix": ["the", "zebrafish"], "correct": "runs", "wrong": "run", "attractors": 0, "number": "sg"}
                ]
            },
            "outside the vocabulary",
        ),
        (
            {
                "items": [
                    {"prefix": ["the", "cat"], "correct": "runs", "wrong": "run", "attractors": 0, "number": "dual"}
                ]
            },
            "number",
        ),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_constructor_arguments_raise_clear_errors(models, vocab, few, change, words):
    kwargs = {"models": models, "vocab": vocab, "items": few, **change}
    with pytest.raises(CourseInputError, match=words):
        make_demo(**kwargs)


# ---------------------------------------------------------------- projecting


def test_lecture_mode_fits_a_projector(models, vocab):
    """Issue 34: in lecture mode the text is larger (22 px) and the picture small enough to be shown near its own
    size in a 1280 × 720 window's picture column (about 740 × 520 px), with room for the longest prefix of all the
    items (five attractors); the readout is two lines at most."""
    normal, large = normal_and_lecture(lambda: make_demo(models, vocab))
    assert large.painter.px > normal.painter.px and large.text_px() == 22
    width, height = large.figure.canvas.get_width_height()
    assert width <= 760 and height <= 530, (width, height)
    longest = max(large.items, key=lambda item: len(item["prefix"]))
    lines = large.painter._lines(longest["prefix"], width)[-1][2] + 1
    assert lines >= 3 and large.painter.header >= lines * large.painter.line
    text = re.sub("<[^>]+>", "", html.unescape(large.readout.value))
    assert len(text) < 120 and text.startswith(f"the verb must be plural: '{large.item['correct']}', not ")
    assert set(large.legends()[0]) == {text for _, text in large.painter.key} != set(normal.legends()[0])


@pytest.mark.slow
def test_latency_with_three_models(models, vocab, few):
    """Median callback latency over every control (printed, not asserted: timings vary)."""
    demo = make_demo(models, vocab, items=few)
    demo.latencies.clear()
    with contextlib.redirect_stdout(io.StringIO()):
        for attractors in range(6):
            demo.controls["attractors"].value = attractors
            for example in range(5):
                demo.controls["example"].value = example
        demo.controls["number"].value = "singular"
    xs = demo.latencies
    print(f"\nAgreementDemo, 3 models: median {1000 * statistics.median(xs):.1f} ms, max {1000 * max(xs):.1f} ms")
    assert demo.last_error is None


def test_the_default_demo_uses_the_shipped_models_and_items(items):
    """Skips until the shipped RNN, GRU and LSTM exist (``course_utils.zoo.lm_checkpoints``)."""
    from course_utils.zoo import lm_checkpoints as checkpoints

    try:
        shipped = checkpoints.default_demo_models()
    except (CourseInputError, FileNotFoundError) as missing:
        pytest.skip(f"the shipped recurrent checkpoints are not built yet: {missing}")
    demo = make_demo()
    assert list(demo.models) == list(shipped) and demo.items == items
    assert demo.last_error is None and demo.renders == 1
