"""Colours for a hall (issue 34): each demo's colour keys stay apart for a colour-blind student and on a projector.

Every course demo is built with its defaults (and the attention demo also in its arcs view without the mask) and
rendered. For each colour key its picture shows (``Demo.legends``), the test finds the key's colours among the
picture's pixels, simulates deuteranopia and protanopia on the picture (colorspacious: Machado, Oliveira and
Fernandes 2009, at full severity), and measures the distance between every two colours of the key, and between
each and the white page, in CAM02-UCS (ΔE', about 1 for a just noticeable difference). Two classes that share a
colour must differ by their marker. The simulated pictures go to ``tests/artifacts/palette/``.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from PIL import Image

import demo_driving
from widget_support import quiet, set_value

colorspacious = pytest.importorskip("colorspacious")

SIMULATIONS = {"normal vision": None, "deuteranopia": "deuteranomaly", "protanopia": "protanomaly"}
MIN_APART = 15.0  # ΔE' between two colours of one key (tab:green and tab:red are 5.2 apart under deuteranopia)
MIN_FROM_PAGE = 20.0  # ΔE' between a key's colour and the white page (light grey #e0e0e0 is about 12)
MIN_PIXELS = 4  # a key's colour must be in the picture (a coloured word counts), not only in the declaration
NEAR = 10 / 255  # a pixel "has" a colour this close to it, in each channel (anti-aliased text)
CLASSES, _ = demo_driving.benchmarks().demo_classes()
STATES = {
    "AttentionDemo": [{}, {"view": "arcs", "mask": False}],
    "SamplingDemo": [{}, {"top_k": 3}],
    "BackpropDemo": [{"step": 2}, {"step": "max"}],
    "TranslationDemo": [{"model": "additive"}],
}  # "max": the end
CASES = [(cls, state) for cls in CLASSES for state in STATES.get(cls.__name__, [{}])]
ARTIFACTS = demo_driving.ROOT / "tests" / "artifacts" / "palette"


def case_id(case) -> str:
    cls, state = case
    return cls.__name__ + "".join(f"-{key}={value}" for key, value in state.items())


def simulate(rgb: np.ndarray, deficiency: str | None) -> np.ndarray:
    """sRGB values in 0..1 (..., 3), as seen with ``deficiency`` (None: unchanged)."""
    if deficiency is None:
        return rgb
    space = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
    return np.clip(colorspacious.cspace_convert(rgb, space, "sRGB1"), 0, 1)


def apart(a: np.ndarray, b: np.ndarray) -> float:
    return float(colorspacious.deltaE(a, b, input_space="sRGB1"))


def key_entries(legend: dict[str, str]) -> dict[str, tuple[np.ndarray, str]]:
    """{name: (its colour as sRGB 0..1, its marker or "")}; a value is "colour" or "colour marker"."""
    entries = {}
    for name, value in legend.items():
        colour, _, marker = value.partition(" ")
        entries[name] = (np.array(to_rgb(colour)), marker)
    return entries


def built(case):
    """The demo of ``case`` in its state."""
    cls, state = case
    demo = quiet(cls)
    for name, value in state.items():
        set_value(demo, name, demo.controls[name].max if value == "max" else value)
    assert demo.last_error is None, demo.last_error
    return demo


@pytest.fixture(scope="module", params=CASES, ids=[case_id(case) for case in CASES])
def rendered(request):
    demo = built(request.param)
    picture = np.asarray(Image.open(io.BytesIO(demo.last_png)).convert("RGB"), dtype=np.float64) / 255  # (H, W, 3)
    return case_id(request.param), demo.legends(), picture


def test_every_demo_names_its_colour_keys():
    named = {case[0].__name__ for case in CASES if built(case).legends()}
    every = {cls.__name__ for cls in CLASSES}
    assert len(every) >= 14 and named == every, f"demos that declare no colour key: {sorted(every - named)}"


def test_each_key_s_colours_are_in_the_picture(rendered):
    name, legends, picture = rendered
    for legend in legends:
        for entry, (colour, _) in key_entries(legend).items():
            found = int((np.abs(picture - colour).max(axis=-1) <= NEAR).sum())
            assert found >= MIN_PIXELS, f"{name}: the key's {entry!r} ({legend[entry]}) is in {found} pixels only"


def test_each_key_stays_apart_and_off_the_page_for_colour_blind_eyes(rendered):
    name, legends, picture = rendered
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for label, deficiency in SIMULATIONS.items():
        if deficiency is not None:
            seen = simulate(picture, deficiency)
            Image.fromarray(np.rint(seen * 255).astype(np.uint8)).save(ARTIFACTS / f"{name}-{label}.png")
        white = simulate(np.ones(3), deficiency)
        for legend in legends:
            entries = {
                entry: (simulate(colour, deficiency), marker) for entry, (colour, marker) in key_entries(legend).items()
            }
            for entry, (colour, _) in entries.items():
                if apart(colour, white) < MIN_FROM_PAGE:
                    problems.append(f"{label}: {entry!r} is {apart(colour, white):.1f} from the white page")
            for (a, (colour_a, marker_a)), (b, (colour_b, marker_b)) in itertools.combinations(entries.items(), 2):
                distance = apart(colour_a, colour_b)
                if distance < MIN_APART and marker_a == marker_b:
                    problems.append(f"{label}: {a!r} and {b!r} are {distance:.1f} apart")
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_the_rule_fails_the_colours_it_is_meant_to_catch():
    """tab:green against tab:red under deuteranopia, and light grey on white: what the palette replaced."""
    green, red, grey = (np.array(to_rgb(c)) for c in ("tab:green", "tab:red", "#e0e0e0"))
    assert apart(simulate(green, "deuteranomaly"), simulate(red, "deuteranomaly")) < MIN_APART
    assert apart(grey, np.ones(3)) < MIN_FROM_PAGE
