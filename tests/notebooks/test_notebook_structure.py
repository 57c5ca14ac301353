"""Every notebook follows the course template, matches its source, and was stored from a clean run."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import build, parse_cells  # noqa: E402

from course_utils.colab import REPO_URL, colab_badge, setup_cell_source  # noqa: E402

SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
SOURCE_IDS = [s.stem for s in SOURCES]


def load(stem: str) -> dict:
    return json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))


def text(cell) -> str:
    return "".join(cell["source"])


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def test_there_are_notebooks():
    assert len(SOURCES) >= 3
    assert sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")) == SOURCE_IDS


def test_a_marker_may_carry_tags_and_nothing_else():
    cells = parse_cells(
        '# %% tags=["exercise"]\nx = None\n# %% [markdown] tags=["solution"]\n# <details>x = 1</details>'
    )
    assert [c.metadata.get("tags") for c in cells] == [["exercise", "nbval-check-output"], ["solution"]]
    for wrong in (
        '# %% [markdown] tags=["exercise"]\n# text',
        '# %% tags=["solution"]\nx = 1',
        '# %% tags=["other"]\nx',
    ):
        with pytest.raises(ValueError, match="line 1: tags"):
            parse_cells(wrong)


def test_text_on_a_cell_marker_line_is_refused_not_dropped():
    """Prose written on the ``# %% [markdown]`` line itself used to vanish from the built notebook."""
    assert [c.source for c in parse_cells("# %% [markdown]\n# Kept.\n# %%\nx = 1")] == ["Kept.", "x = 1"]
    with pytest.raises(ValueError, match="line 1: text after a cell marker"):
        parse_cells("# %% [markdown] Lost first line.\n# rest")


@pytest.mark.parametrize("stem", SOURCE_IDS)
def test_notebook_matches_its_source(stem):
    built = build(ROOT / "notebooks" / "src" / f"{stem}.py")
    stored = load(stem)
    assert [(c.cell_type, text(c), tags(c)) for c in built.cells] == [
        (c["cell_type"], text(c), tags(c)) for c in stored["cells"]
    ], f"notebooks/{stem}.ipynb is out of date: run python scripts/build_notebooks.py {stem[:2]}"
    assert stored["metadata"]["course"] == built.metadata["course"]


@pytest.mark.parametrize("stem", SOURCE_IDS)
def test_outputs_come_from_one_clean_run_without_errors(stem):
    code_cells = [c for c in load(stem)["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code_cells] == list(range(1, len(code_cells) + 1))
    for cell in code_cells:
        for output in cell["outputs"]:
            assert output["output_type"] != "error", f"stored error in: {text(cell)[:80]}"
            assert "Traceback" not in "".join(output.get("text", ""))


@pytest.mark.parametrize("stem", SOURCE_IDS)
def test_template_parts_are_there(stem):
    cells = load(stem)["cells"]
    markdown = "\n".join(text(c) for c in cells if c["cell_type"] == "markdown")
    code = [text(c) for c in cells if c["cell_type"] == "code"]
    assert markdown.lstrip().startswith("# "), "a title first"
    for heading in ("objectives", "exercise", "summary", "references"):
        assert re.search(rf"^#+ .*{heading}", markdown, re.I | re.M), f"no '{heading}' section"
    assert re.search(r"accompan\w* .*(lecture|slides)", markdown[:1500], re.I | re.S), (
        "the top says which lecture it accompanies"
    )
    assert code[0] == setup_cell_source(), "the first code cell is the Colab set-up cell"
    assert "setup_notebook" in code[1], "the second code cell runs setup_notebook"
    assert any("NBVAL_CHECK_OUTPUT" in c for c in code), "worked examples are checked outputs"
    widget_outputs = [
        o
        for c in cells
        if c["cell_type"] == "code"
        for o in c["outputs"]
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert widget_outputs, "at least one widget an instructor can project"


def test_readme_has_a_colab_badge_and_map_row_per_notebook():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for stem in SOURCE_IDS:
        assert colab_badge(f"{stem}.ipynb") in readme
        assert re.search(rf"^\|\s*\[?{stem[:2]}", readme, re.M), f"no course-map row for {stem}"


def test_the_repository_url_is_written_from_one_place():
    assert REPO_URL in setup_cell_source()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    other_urls = set(re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", readme)) - {REPO_URL}
    assert not other_urls, f"README names another repository address: {other_urls}"


# ---------------------------------------------------------------- one "slide check" convention

SLIDE_CHECK_START = "> **Slide check.** The slide ("
PAPER_CHECK_START = "> **Paper check.** The paper ("  # notebook 11 checks papers, which no slide cites
# Places where a slide is loose or wrong, each with its callout: (notebook, words the callout must quote).
REQUIRED_SLIDE_CHECKS = [
    ("03", r"ReLU"),  # ReLU′ = 1 at z = 0
    ("04", r"specific to the input feature"),  # limitation 3, read as "position"
    ("05", r"range\(1, len\(x\)\)"),  # the loop that skips the first input
    ("05", r"\\sigma"),  # the CMU RNN equation written with σ, implemented with tanh
    ("05", r"the log is gone"),  # the average loss without its log
    ("05", r"most likely next event"),  # "generate the most likely next event by sampling"
    ("07", r"based on the decoder's current"),  # Bahdanau scores the previous state s_{t−1}, Luong the current one
    ("07", r"The ball was kicked by kayla"),  # the passive as "the challenge", measured: it is not the hard case
    ("07", r"visualize the\s+(> )?contribution"),  # attention weights read encoder states, not words
    ("08", r"3 boxes"),  # the Thinking/Machines vectors drawn with 3 boxes, divided by √64
    ("08", r"Self-Attention in PyTorch"),  # the slide's class that does not run
    ("08", r"Easy to parallelize"),  # "entire layer can be computed at once", measured on a CPU
    ("08", r"weight vectors W\^Q"),  # W^Q, W^K, W^V are matrices
    ("08", r"\(qkᵗ\)σ"),  # ψ_dp's σ is the softmax, and the formula has no 1/√d_k
    ("08", r"41\.8 for EN–FR"),  # the deck's 41.0 (the abstract of v1) against the table's 41.8
    ("09", r"Because\s+(> )?BERT is a language model"),  # why BERT needs only encoders
    ("09", r"p_\{w_i−2\}"),  # the auto-encoder's condition with a stray "p"
    ("09", r"\[MASK\] \*outside\*"),  # the masked word left in the sentence
    ("09", r"Hugging Face or AllenNLP"),  # the feature-extraction snippet with `text` undefined
    ("09", r"above the level of the sentence"),  # NSP, which RoBERTa dropped
    ("09", r"Sum All 12 Layers"),  # Devlin et al.'s Table 7 sums are learned weighted sums, read by a BiLSTM
    ("10", r"Greedy Search\) shows the tree"),  # J&M's tree: V = {yes, ok, <s>}, and its yes node sums to .9
    ("10", r"\"Beam Search\"\) says \"Restrict"),  # generateBeam never prunes (and does not parse)
    ("10", r"\"Random Walk\"\) writes the task"),  # P(with | He ate the cake <M>) for a left-to-right model
    ("10", r"the most probable \"is the most typical\""),  # the mode is not typical, measured exactly
    ("10", r"faster computation"),  # log probabilities are for underflow; the slide's beam multiplies raw ones
    ("10", r"score\(y\) = log P\(y \| x\) = \(1/t\)"),  # eq. 13.16's first equality is false
    ("11", r"about 20 tokens per parameter"),  # Chinchilla's rule of thumb: 87 to 2,666 here
    ("11", r"a parabola\s+(> )?to the final loss"),  # approach 2: a parabola where loss is lopsided
]


def slide_checks(stem: str) -> list[str]:
    """The slide-check callouts of a notebook: each a blockquote, as one string."""
    callouts = []
    for cell in load(stem)["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        lines = text(cell).splitlines()
        for i, line in enumerate(lines):
            if "Slide check" in line or "Paper check" in line:
                block = [line]
                for following in lines[i + 1 :]:
                    if not following.startswith(">"):
                        break
                    block.append(following)
                callouts.append("\n".join(block))
    return callouts


@pytest.mark.parametrize("stem", SOURCE_IDS)
def test_every_slide_check_has_the_one_format(stem):
    for callout in slide_checks(stem):
        start = PAPER_CHECK_START if "Paper check" in callout.splitlines()[0] else SLIDE_CHECK_START
        assert callout.startswith(start), f"a slide or paper check starts with {start!r}:\n{callout}"
        assert "In fact" in callout, f"a slide check says what is true, in a sentence starting 'In fact':\n{callout}"


@pytest.mark.parametrize(("prefix", "quote"), REQUIRED_SLIDE_CHECKS)
def test_the_loose_slides_get_a_slide_check(prefix, quote):
    stem = next(s for s in SOURCE_IDS if s.startswith(prefix))
    assert any(re.search(quote, callout) for callout in slide_checks(stem)), (
        f"{stem} has no slide check quoting {quote!r}"
    )
