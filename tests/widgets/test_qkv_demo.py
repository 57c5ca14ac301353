"""The slide's Q·K·V step-through (notebook 08): its numbers, its steps, the √d_k toggle, bad vectors."""

import io
import math

import numpy as np
import pytest
import torch
from PIL import Image

from course_utils.models.transformer.attention import THINKING_MACHINES, parse_runs, scaled_dot_product_attention
from course_utils.validation import CourseInputError
from course_utils.widgets.qkv_demo import QKVDemo, qkv_numbers, vector_text, weight_text

from widget_support import assert_inline_error, labels_of, normal_and_lecture, quiet, set_value, text_of  # noqa: E402


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


def softmax_row_pixels(demo) -> list[int]:
    """How many pixels of Thinking's and of Machines' colour the table's softmax row holds (lecture mode's bars)."""
    painter = demo.painter
    top = painter.table_top + painter.rows.index("Softmax") * painter.row_h
    right = painter.px // 2 + painter.label_w + 2 * painter.col_w  # the table's right edge
    picture = np.asarray(Image.open(io.BytesIO(demo.last_png)).convert("RGB"), dtype=int)  # (H, W, 3)
    picture = picture[top : top + painter.row_h, :right]
    return [int((np.abs(picture - np.array(colour)).max(axis=-1) <= 10).sum()) for colour in painter.colors]


def test_qkv_lecture_mode_fits_a_projector():
    """Issue 34: in lecture mode the text is 22 px in a picture of 760 × 524 (1342 × 786 before), which a projector's
    right column (about 740 × 550 px at 1280 × 720) shows near 1:1: the softmax weights are bars in the table's
    softmax row instead of a panel beside it, and the readout is one line."""
    normal, large = normal_and_lecture(QKVDemo)
    assert (normal.painter.px, large.painter.px) == (14, 22) and large.text_px() == 22
    assert Image.open(io.BytesIO(normal.last_png)).size == (854, 499)  # normal mode as it was
    width, height = Image.open(io.BytesIO(large.last_png)).size
    assert width <= 780 and height <= 540
    line = text_of(large.readout)
    assert "font-size:22px" in line and all(part in line for part in ("d_k = 64", "÷8 → 14, 12", "softmax 0.88, 0.12"))
    assert "z₁" not in line and "z₁" in text_of(normal.readout)  # the table's last row gives z₁
    assert softmax_row_pixels(normal) == [0, 0]


def test_in_lecture_mode_the_softmax_row_shows_the_weights_as_bars():
    def undivided():
        demo = quiet(QKVDemo)
        set_value(demo, "divide", False)
        return demo

    _, divided = normal_and_lecture(QKVDemo)
    _, large = normal_and_lecture(undivided)
    thinking, machines = softmax_row_pixels(divided)
    assert machines / thinking == pytest.approx(0.12 / 0.88, rel=0.1)
    thinking_alone, nothing = softmax_row_pixels(large)  # 0.9999999 and 1.1e-07, on the same scale
    assert thinking_alone / thinking == pytest.approx(1 / 0.88, rel=0.1) and nothing == 0
    assert "not divided → softmax 0.9999999, 1.1e-07" in text_of(large.readout)
    _, early = normal_and_lecture(lambda: QKVDemo(step=2))
    assert softmax_row_pixels(early) == [0, 0]  # the weights come at step 3
