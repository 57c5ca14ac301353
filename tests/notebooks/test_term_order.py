"""The course's terms are defined before they are used, in the course's order (issue 32).

Each term has the notebook whose prose defines it, in bold (``**perplexity**``), and a pattern for its uses. The
prose of every notebook, from just after its learning objectives (which name what the notebook will teach), must
not use a term before that bold definition: not in an earlier notebook, not in an earlier cell of the defining one.
Code and outputs are not read; a term that an output prints first gets its definition in the prose right after it.
A new term goes into ``TERMS`` with the notebook that defines it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from build_notebooks import parse_cells  # noqa: E402

SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))

# term: (the notebook that defines it, a pattern for its uses; case-insensitive unless it has capitals)
TERMS = {
    "logistic regression": ("03", r"logistic regression"),
    "AdamW": ("03", r"\bAdamW\b"),
    "perplexity": ("04", r"\bperplexit(y|ies)\b"),
    "entropy": ("04", r"(?<!cross-)\bentropy\b"),
    "cosine learning-rate schedule": ("05", r"\bcosine (learning|schedule|decay)"),
    "GRU": ("06", r"\bGRUs?\b"),
    "pooler": ("09", r"\bpooler\b"),
}


def prose(source: Path) -> list[tuple[int, str]]:
    """(cell index, text) of the markdown cells after the learning objectives."""
    cells = parse_cells(source.read_text(encoding="utf-8"))
    objectives = next((i for i, c in enumerate(cells) if "Learning objectives" in c.source), -1)
    return [(i, c.source) for i, c in enumerate(cells) if c.cell_type == "markdown" and i > objectives]


def uses(pattern: str, text: str) -> bool:
    flags = 0 if any(ch.isupper() for ch in pattern) else re.IGNORECASE
    return re.search(pattern, text, flags) is not None


def defining_cell(term: str, cells: list[tuple[int, str]]) -> int | None:
    """The first cell that writes the term in bold."""
    bold = re.compile(r"\*\*" + re.escape(term) + r"\*\*", re.IGNORECASE)
    return next((i for i, text in cells if bold.search(text)), None)


@pytest.mark.parametrize("term", list(TERMS))
def test_each_term_is_defined_in_bold_in_its_notebook(term):
    notebook, _ = TERMS[term]
    source = next(p for p in SOURCES if p.name.startswith(notebook))
    assert defining_cell(term, prose(source)) is not None, f"{source.name} defines no **{term}**"


@pytest.mark.parametrize("term", list(TERMS))
def test_no_notebook_uses_a_term_before_its_definition(term):
    notebook, pattern = TERMS[term]
    early = []
    for source in SOURCES:
        cells = prose(source)
        if source.name[:2] < notebook:
            early += [f"{source.name}, cell {i}" for i, text in cells if uses(pattern, text)]
        elif source.name.startswith(notebook):
            defined = defining_cell(term, cells)
            early += [f"{source.name}, cell {i}" for i, text in cells if i < (defined or 0) and uses(pattern, text)]
    assert not early, f"{term!r} is used before notebook {notebook} defines it: {early}"


def test_a_use_before_the_definition_is_found():
    """The check itself: a term used a cell before its bold definition is reported."""
    cells = [(3, "Its perplexity is low."), (5, "The **perplexity** is exp of the mean loss.")]
    assert defining_cell("perplexity", cells) == 5
    assert [i for i, text in cells if i < 5 and uses(TERMS["perplexity"][1], text)] == [3]
