"""The painting kit the demos share: colours, text that fits, the comparison a bar panel's title gives."""

from course_utils.widgets.painting import fit_text, pillow_font, probability_text, rgb


def test_rgb_reads_matplotlib_colour_names():
    assert rgb("tab:blue") == (31, 119, 180) and rgb("#1a7f37") == (26, 127, 55) and rgb("white") == (255, 255, 255)


def test_fit_text_cuts_with_an_ellipsis():
    font = pillow_font(14)
    assert fit_text(font, "attention", 1000) == "attention"
    cut = fit_text(font, "attention everywhere", font.getlength("attention"))
    assert cut.endswith("…") and font.getlength(cut) <= font.getlength("attention")


def test_probability_text():
    assert probability_text(0.12345) == "0.123" and probability_text(3e-5) == "3e-05"
