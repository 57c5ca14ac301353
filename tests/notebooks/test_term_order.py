"""The course's terms are defined before they are used, in the course's order (issue 32).

Each term has the notebook and the section whose prose defines it, in bold (``**perplexity**``), and a pattern for its
uses. The
prose of every notebook, from just after its learning objectives (which name what the notebook will teach), must
not use a term before that bold definition: not in an earlier notebook, not in an earlier cell of the defining one.
Code and outputs are not read; a term that an output prints first gets its definition in the prose right after it.
A new term goes into ``TERMS`` with the notebook and the section (its heading, as written) that define it.
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

OPTIMIZERS_01 = '7. "Other gradient descent based optimization methods which are better*"'  # notebook 01's section 7, which defines two terms
# term: (the notebook and section that define it, a pattern for its uses; case-insensitive unless it has capitals)
TERMS = {
    "float64": ("01", "Learning objectives", r"\bfloat64\b"),
    "mean squared error": ("01", "2. The analytic answer: set the gradient to zero", r"\bmean squared error\b|\bMSE\b"),
    "loss": ("01", "2. The analytic answer: set the gradient to zero", r"\bloss(es)?\b"),
    "Hessian": ("01", "Where is the edge? 2/λ_max (optional)", r"\bHessians?\b"),
    "edge of stability": ("01", "Where is the edge? 2/λ_max (optional)", r"\bedge of stability\b"),
    "mini-batch": ("01", "Adam has an edge too (optional)", r"\bmini-?batch(es)?\b"),
    "condition number": ("01", OPTIMIZERS_01, r"\bcondition numbers?\b"),
    "autograd": ("01", "5. The lecture's PyTorch demo pair", r"\bautograd\b"),
    "tensor": ("01", "5. The lecture's PyTorch demo pair", r"\btensors?\b"),
    "within noise": ("01", OPTIMIZERS_01, r"\bwithin noise\b"),
    "sigmoid": ("02", "3. Backpropagation as an algorithm: a tiny autograd engine", r"\bsigmoids?\b"),
    "ReLU": ("02", "6. Backward differentiation on a two-layer network", r"\bReLUs?\b"),
    "backpropagation": ("02", "3. Backpropagation as an algorithm: a tiny autograd engine", r"\bbackprop(agation)?\b"),
    "truncation error": ("02", "7. A finite-difference gradient check", r"\btruncation errors?\b"),
    "topological order": ("02", "3. Backpropagation as an algorithm: a tiny autograd engine", r"\btopological\b"),
    "DAG": ("02", "5. The linear-regression DAG: L = (y − βx)²", r'\bDAGs?\b(?!")'),
    "pre-activation": ("02", "6. Backward differentiation on a two-layer network", r"\bpre-activations?\b"),
    "cross-entropy": ("02", "6. Backward differentiation on a two-layer network", r"\bcross-entropy\b"),
    "elementwise product": ("02", "The hidden layer by hand", r"\belementwise products?\b|⊙"),
    "test set": ("03", "3. Why non-linearity matters: XOR", r"\btest (set|points?)\b"),
    "accuracy": ("03", "3. Why non-linearity matters: XOR", r"\baccurac(y|ies)\b"),
    "convex": ("03", "3. Why non-linearity matters: XOR", r"\bconvex\b"),
    "float32": ("03", "Does a vanished gradient stop learning? A short training run", r"\bfloat32\b"),
    "perceptron": ("03", "3. Why non-linearity matters: XOR", r"\bperceptrons?\b"),
    "decision boundary": ("03", "3. Why non-linearity matters: XOR", r"\bdecision boundar(y|ies)\b"),
    "logits": ("03", "3. Why non-linearity matters: XOR", r"\blogits?\b"),
    "softmax": ("03", "4. The forward pass in multi-layer notation", r"\bsoftmax\b"),
    "vanishing-gradient problem": ("03", "6. Vanishing gradients through depth", r"\bvanishing[- ]gradients?\b"),
    "logistic regression": ("03", "3. Why non-linearity matters: XOR", r"logistic regression"),
    "AdamW": ("03", "3. Why non-linearity matters: XOR", r"\bAdamW\b"),
    "Glorot initialisation": ("03", "6. Vanishing gradients through depth", r"\bGlorot\b"),
    "He initialisation": ("03", "6. Vanishing gradients through depth", r"\bHe('s)? (initiali[sz]ation|gain|init)\b"),
    "Markov assumption": ("04", "4. The bigram model", r"\bMarkov assumption\b"),
    "nats": ("04", "5. Sparsity, zero probabilities and smoothing", r"\bnats?\b"),
    "one-hot": ("04", "6. The feed-forward language model", r"\bone-hot\b"),
    "token": ("04", "5. Sparsity, zero probabilities and smoothing", r"\btokens?\b"),
    "maximum-likelihood estimate": ("04", "4. The bigram model", r"\bmaximum[- ]likelihood\b"),
    "cosine similarity": ("04", "8. The learned embeddings", r"\bcosine similarit(y|ies)\b"),
    "validation split": ("04", "1. The course language", r"\bvalidation\b"),
    "perplexity": ("04", "1. The course language", r"\bperplexit(y|ies)\b"),
    "entropy": ("04", "5. Sparsity, zero probabilities and smoothing", r"(?<!cross-)\bentropy\b"),
    "Kneser–Ney": ("04", "5. Sparsity, zero probabilities and smoothing", r"\bKneser"),
    "PCA": ("04", "8. The learned embeddings", r"\bPCA\b"),
    "lexicon": ("04", "11. Sentiment: hand-built features against learned embeddings", r"\blexicons?\b"),
    "seed spread": ("04", "Perplexity against the truth", r"\bseed spreads?\b"),
    "attractors": ("05", "The same words, different predictions", r"\battractors?\b"),
    "LSTM": ("05", "The same words, different predictions", r"\bLSTMs?\b"),
    "Jacobian": ("05", "4. Vanishing and exploding gradients, measured", r"\bJacobians?\b"),
    "BiLSTM": ("05", "6. Masked language modelling with an RNN", r"\bBiLSTMs?\b"),
    "geometric mean": ("05", "4. Vanishing and exploding gradients, measured", r"\bgeometric means?\b"),
    "NaN": ("05", "8. Bad input gets a clear message", r"\bNaN\b"),
    "teacher forcing": ("05", "Teacher forcing, and the loss averaged over time steps", r"\bteacher forcing\b"),
    "cosine learning-rate schedule": ("05", "A short training run", r"\bcosine (learning|schedule|decay)"),
    "correlation": ("06", "A unit that carries the subject's number (optional)", r"\bcorrelat(e|es|ed|ion|ions)\b"),
    "NLL": ("06", "6.2 A bidirectional LSTM for masked words", r"\bNLL\b"),
    "biLM": ("06", "6.3 ELMo: a learned mix of a stacked bidirectional LM's layers", r"\bbiLMs?\b"),
    "top-1 accuracy": ("06", "6.2 A bidirectional LSTM for masked words", r"\btop-1 accurac(y|ies)\b"),
    "GRU": ("06", "1. Why another cell?", r"\bGRUs?\b"),
    "constituents": ("07", "1. A second language, with every alignment known", r"\bconstituents?\b"),
    "exact match": ("07", "4. Training: teacher forcing, padding masks, greedy decoding", r"\bexact match\b"),
    "brevity penalty": ("07", "5. Scoring translations: BLEU, exact match, token accuracy", r"\bbrevity penalty\b"),
    "alignment error rate": (
        "07",
        '9. Claim: attention "allows us to visualize the contribution each word gave"',
        r"\balignment error rate\b",
    ),
    "attention heads": ("08", "1. The slide's worked example: Thinking / Machines", r"\battention heads?\b"),
    "MLP": ("08", "7. The encoder block", r"\bMLPs?\b"),
    "ablation": ("08", "7. The encoder block", r"\bablations?\b"),
    "regulariser": ("08", "7. The encoder block", r"\bregularis(er|ers|ation)\b"),
    "encoder block": ("08", "6. Positional encoding", r"\bencoder blocks?\b"),
    "eval mode": ("08", "2. The slide's `SelfAttention` class, run as written", r"\beval mode\b"),
    "training mode": ("08", "2. The slide's `SelfAttention` class, run as written", r"\btraining mode\b"),
    "decoder-only": ("08", "6. Positional encoding", r"\bdecoder-only\b"),
    "residual connection": ("08", "7. The encoder block", r"\bresidual connections?\b"),
    "LayerNorm": ("08", "7. The encoder block", r"\bLayerNorm\b"),
    "warm-up": ("08", "7. The encoder block", r"\bwarm-up\b"),
    "feature-based": ("09", "3. Masked-language modelling: 15 %, of which 80/10/10", r"\bfeature-based\b"),
    "BPE": ("09", "2. BERT has its own tokenization scheme: WordPiece", r"\bBPE\b"),
    "standard error": ("09", "3. Masked-language modelling: 15 %, of which 80/10/10", r"\bstandard errors?\b"),
    "fine-tuning": ("09", "3. Masked-language modelling: 15 %, of which 80/10/10", r"\bfine-tun(e|ed|es|ing)\b"),
    "F1": ("09", "1. BERT is basically a trained transformer encoder stack", r"\bF1\b"),
    "cross-validation": ("09", "6. Contextual embeddings, layer by layer", r"\bcross-validat(ion|ed)\b"),
    "auto-encoder": ("08", "10. A GPT-style transformer language model on the course language", r"\bauto-?encoders?\b"),
    "pooler": ("09", "1. BERT is basically a trained transformer encoder stack", r"\bpooler\b"),
    "hypothesis": (
        "10",
        "2. The slides' pseudocode, run as written",
        r"\b(finished|running|ended|best|k) hypothes[ie]s\b",
    ),
    "search error": ("10", "9. The beam search curse", r"\bsearch errors?\b"),
    "warpers": ("10", "5. Parity with Hugging Face `generate()` *(optional)*", r"\bwarpers?\b"),
    "entropy rate": ("10", "7. Every strategy, judged by the oracle", r"\bentropy rates?\b"),
    "FLOPs": ("11", "2. The grid of runs", r"\bFLOPs?\b"),
    "IsoFLOP profile": ("11", "2. The grid of runs", r"\bIsoFLOP profiles?\b"),
    "compute-optimal": ("11", "3. Counting N and C two ways", r"\bcompute-optimal\b"),
    "Huber loss": ("11", "6. Approach 3: the parametric fit", r"\bHuber\b"),
    "95 % interval": ("11", "6. Approach 3: the parametric fit", r"\bintervals?\b"),
    "L-BFGS": ("11", "6. Approach 3: the parametric fit", r"\bL-BFGS\b"),
    "least-absolute-deviation fit": ("11", "6. Approach 3: the parametric fit", r"\b(least-)?absolute-deviation\b"),
    "bootstrap": ("11", "6. Approach 3: the parametric fit", r"\bbootstrap(ped|s)?\b(?!\.json)"),
}
HEADING = re.compile(r"^#{2,4} +(.*)$", re.MULTILINE)


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


def section_of(term: str, source: Path, cell: int) -> str | None:
    """The heading of the section the bold definition sits in: the last heading before it, in its cell or above."""
    cells = parse_cells(source.read_text(encoding="utf-8"))
    text = cells[cell].source
    before = [text[: re.search(r"\*\*" + re.escape(term) + r"\*\*", text, re.IGNORECASE).start()]]
    before += [c.source for c in reversed(cells[:cell]) if c.cell_type == "markdown"]
    return next((HEADING.findall(chunk)[-1] for chunk in before if HEADING.search(chunk)), None)


@pytest.mark.parametrize("term", list(TERMS))
def test_each_term_is_defined_in_bold_in_its_notebook_and_section(term):
    notebook, section, _ = TERMS[term]
    source = next(p for p in SOURCES if p.name.startswith(notebook))
    cell = defining_cell(term, prose(source))
    assert cell is not None, f"{source.name} defines no **{term}**"
    assert section_of(term, source, cell) == section, f"{source.name} defines **{term}** outside section {section!r}"


@pytest.mark.parametrize("term", list(TERMS))
def test_no_notebook_uses_a_term_before_its_definition(term):
    notebook, _, pattern = TERMS[term]
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
    assert [i for i, text in cells if i < 5 and uses(TERMS["perplexity"][2], text)] == [3]
