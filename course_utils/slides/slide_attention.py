"""The CSE538 slide "Self-Attention in PyTorch", run as written, its bugs fixed one at a time.

``SLIDE_SOURCE`` is the slide's code, character for character. ``FIXES`` lists its bugs in the order
running it meets them, each as (what is wrong, the text on the slide, the corrected text).
``run_slide_code(fixed, x)`` applies the first ``fixed`` fixes, runs the code, and reports what happened:
the error it raised, or its output. ``SelfAttention`` is the corrected one-head class.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
from torch import nn

from course_utils.validation import CourseInputError, check_int

SLIDE_SOURCE = """\
import nn.functional as f

class SelfAttention(nn.Module):
    def __init__(self, h_dim:int):
        self.Q = nn.Linear(h_dim, h_dim) #1 head
        self.K = nn.Linear(h_dim, h_dim)
        self.V = nn.Linear(h_dim, h_dim)
        self.dropout = nn.dropout(p=0.1)

    def forward(hidden_states:torch.Tensor):
        v = self.V(hidden_states)
        k = self.K(hidden_states)
        q = self.Q(hidden_states)
        attn_scores = torch.matmul(q, k.T)
        attn_probs = f.Softmax(attn_scores)
        attn_probs = self.dropout(attn_probs)
        context = torch.matmul(attn_probs, v)
        return context
"""


@dataclass(frozen=True)
class Fix:
    """One bug of the slide's code: what is wrong, and the text replaced."""

    bug: str
    old: str
    new: str


FIXES = (
    Fix("`nn` is not a module of its own: the import needs `torch.`",
        "import nn.functional as f", "import torch.nn.functional as f"),
    Fix("no `super().__init__()`: a Module cannot hold layers before it is initialised",
        "def __init__(self, h_dim:int):\n", "def __init__(self, h_dim:int):\n        super().__init__()\n"),
    Fix("`nn.dropout` does not exist: the layer is `nn.Dropout`", "nn.dropout(", "nn.Dropout("),
    Fix("`forward` has no `self`", "def forward(hidden_states", "def forward(self, hidden_states"),
    Fix("`k.T` on a batch (B, T, d) reverses all three axes to (d, T, B): transpose the last two",
        "torch.matmul(q, k.T)", "torch.matmul(q, k.transpose(-2, -1))"),
    Fix("`f.Softmax` does not exist: the function is `f.softmax`", "f.Softmax(attn_scores)", "f.softmax(attn_scores)"),
    Fix("softmax without a `dim`: on a (B, T, T) tensor torch picks dim 0, the batch, not the keys",
        "f.softmax(attn_scores)", "f.softmax(attn_scores, dim=-1)"),
    Fix("no 1/√d_k: the scores grow with the width and the softmax saturates",
        "torch.matmul(q, k.transpose(-2, -1))", "torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])"),
)  # fmt: skip


def slide_source(fixed: int) -> str:
    """The slide's code with the first ``fixed`` fixes applied."""
    fixed = check_int("fixed", fixed, minimum=0, maximum=len(FIXES))
    source = SLIDE_SOURCE
    for fix in FIXES[:fixed]:
        if fix.old not in source:
            raise CourseInputError(f"fix {fix.bug!r}: {fix.old!r} is not in the code")
        source = source.replace(fix.old, fix.new, 1)
    return source


@dataclass(frozen=True)
class SlideRun:
    """What running the (partly fixed) slide code did: an error, or an output and the warnings on the way."""

    error: str | None
    output: torch.Tensor | None
    warnings: tuple[str, ...]


def run_slide_code(fixed: int, x: torch.Tensor, *, seed: int = 0) -> SlideRun:
    """Define the class from ``slide_source(fixed)``, build it for x's width, run it on ``x`` in eval mode."""
    namespace = {"torch": torch, "nn": nn, "math": math}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(slide_source(fixed), "<slide>", "exec"), namespace)  # noqa: S102 - the slide's own code
            torch.manual_seed(seed)
            model = namespace["SelfAttention"](x.shape[-1]).eval()
            with torch.no_grad():
                output = model(x)
        except Exception as error:  # noqa: BLE001 - reporting the slide's errors is the point
            return SlideRun(f"{type(error).__name__}: {error}", None, tuple(str(w.message) for w in caught))
    return SlideRun(None, output, tuple(str(w.message) for w in caught))


class SelfAttention(nn.Module):
    """The slide's one-head self-attention, corrected: softmax(Q Kᵀ / √d_k) V on (B, T, d) inputs."""

    def __init__(self, h_dim: int, dropout: float = 0.1):
        super().__init__()
        h_dim = check_int("h_dim", h_dim, minimum=1)
        self.Q = nn.Linear(h_dim, h_dim)  # one head: d_k = h_dim
        self.K = nn.Linear(h_dim, h_dim)
        self.V = nn.Linear(h_dim, h_dim)
        self.dropout = nn.Dropout(p=dropout)  # on the attention weights, as in BERT; only in training

    def forward(
        self,
        hidden_states: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        v = self.V(hidden_states)  # (B, T, d)
        k = self.K(hidden_states)  # (B, T, d)
        q = self.Q(hidden_states)  # (B, T, d)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T, T)
        if mask is not None:
            # True = may attend, as in SDPA
            scores = scores.masked_fill(~mask, -math.inf)
        # (B, T, T): each row sums to 1
        probs = self.dropout(torch.softmax(scores, dim=-1))
        return probs @ v  # (B, T, d)
