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


def test_a_painter_is_smaller_only_when_asked():
    """Issue 34: a demo can ask for fewer and shorter bars, two columns and a shorter key (lecture mode); the
    defaults, which other demos use, are MAX_K bars 10 text heights long, one row of up to three panels or two."""
    from course_utils.widgets.painting import KEY, MAX_K, SHORT_KEY, Painter

    words = ["the", "cat", "sleeps", "comfortable"]
    default = Painter(4, words)
    assert (default.max_bars, default.key, default.rows, default.cols) == (MAX_K, KEY, 2, 2)
    assert default.size == Painter(4, words, max_bars=MAX_K, bar_em=10).size and Painter(3, words).rows == 1
    small = Painter(6, words, max_bars=3, bar_em=6.5, columns=2, key=SHORT_KEY)
    assert (small.rows, small.cols, len(small.key_lines)) == (3, 2, 1)
    assert small.size[0] < default.size[0] and small.panel[1] < default.panel[1] and small.legend() != default.legend()
