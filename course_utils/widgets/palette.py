"""The course palette: one colour per meaning, from Okabe and Ito's eight (2008), which stay apart for the common
colour-vision deficiencies and on a washed-out projector.

Every demo takes its colours from here, and each says which colours its legend names (``Demo.legend``).
``tests/widgets/test_palette.py`` renders every demo, simulates deuteranopia and protanopia on those colours
(colorspacious, Machado et al. 2009), and checks that they stay apart from each other and from the white page.
A meaning is never carried by light grey or a hairline alone: what is switched off or cut is hatched, dashed or
labelled as well.
"""

from __future__ import annotations

# Okabe & Ito's colours (yellow, too light on white, is left out).
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"

# Categories with no meaning of their own (senses, word classes, activations), in this order. Reddish purple is
# left out: it comes within 15 of blue for protanopia and of bluish green for deuteranopia (tests/widgets/test_palette.py).
CATEGORIES = (BLUE, ORANGE, BLUISH_GREEN, VERMILLION, SKY_BLUE, BLACK)

# Meanings.
ORACLE = BLUISH_GREEN  # the truth: the oracle's distribution, the reference
MODEL = BLUE  # a model's guess
IMPOSSIBLE = VERMILLION  # what the oracle rules out
RIGHT, WRONG = BLUISH_GREEN, VERMILLION  # a verdict
ALERT = VERMILLION  # a warning line or a message
SECOND = ORANGE  # the second thing of a pair: an attractor, a word looked ahead at, the winner
MUTED = "#595959"  # secondary text and reference lines: dark enough to read on white, always labelled
PENDING = "#F2F2F2"  # a background for what is not reached yet, always labelled in words
HATCH = "#8C8C8C"  # the stripes over a cell a mask hides
