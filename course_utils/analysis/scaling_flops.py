"""The real training FLOPs of the scaling runs: every matmul of every step, forward and backward.

The stored ``flops`` of a run (``scaling_runs.measure``) is Kaplan's count, 6 N D: N the non-embedding parameters,
D the predicted tokens. It leaves out the output layer (V = 610 words x C, tied to the token embedding), which is
most of a tiny model's compute, the attention over T x T positions, and the padded positions of each batch, which are
computed like the others. ``step_flops`` counts one step's matmuls in closed form, ``counted_step_flops`` counts them
with torch's ``FlopCounterMode`` on a real step, and ``run_training_flops`` adds up a run's steps from the lengths of
its batches. The command adds ``training_flops`` to every row of the stored grid and prints the ratios per shape:

    python -m course_utils.analysis.scaling_flops --write
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from functools import lru_cache
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from course_utils.analysis import scaling_runs as sr
from course_utils.language import stream
from course_utils.language.vocab import course_vocab
from course_utils.validation import CourseInputError, check_int

LENGTH_BLOCK = 1_000  # batch lengths are computed and cached this many steps at a time, per seed


# ---------------------------------------------------------------- one step


def step_flops(n_layer: int, n_embd: int, batch: int, length: int, vocab: int | None = None) -> int:
    """FLOPs of one training step (forward and backward) of ``scaling_runs.build(n_layer, n_embd)`` on a batch of
    ``batch`` sequences of ``length`` positions, over ``vocab`` words (``len(course_vocab())`` for None).

    Every matmul, forward 2 m n k (a multiply and an add per term): per block the QKV and output projections and the
    MLP's two layers (24 B T C^2), the attention scores Q K^T and weights · V over the full T x T, as the kernel
    computes them, the causal mask's zeros included (4 B T^2 C, whatever the number of heads); then the output layer
    (2 B T C V). Every position is counted, padding included: the model computes it like the others. The backward
    is 2x the forward: each matmul Y = X W needs dX = dY W^T and dW = X^T dY, each as costly as Y (both factors of
    every matmul here need a gradient: weights, or activations that lead back to the embeddings). Left out: the
    LayerNorms, softmax, GELU, residual adds, bias adds, the loss and the embedding lookups (O(B T C) or O(B T V)
    each, not matmuls), and the optimizer's update (O(parameters) per step)."""
    n_layer, n_embd = check_int("n_layer", n_layer, minimum=1), check_int("n_embd", n_embd, minimum=1)
    batch, length = check_int("batch", batch, minimum=1), check_int("length", length, minimum=1)
    vocab = len(course_vocab()) if vocab is None else check_int("vocab", vocab, minimum=1)
    positions = batch * length  # B T rows of every (B T, C) activation
    projections = 2 * positions * n_embd * (3 * n_embd + n_embd + 4 * n_embd + 4 * n_embd)  # QKV, W^O, W_1, W_2
    attention = 2 * 2 * batch * length * length * n_embd  # (B, H, T, C/H) @ (B, H, C/H, T), then (B, H, T, T) @ V
    output = 2 * positions * n_embd * vocab  # (B T, C) @ (C, V)
    return 3 * (n_layer * (projections + attention) + output)


def counted_step_flops(n_layer: int, n_embd: int, idx: torch.Tensor, targets: torch.Tensor, *,
                       attention: str = "eager") -> int:  # fmt: skip
    """FLOPs of one real training step (forward, loss, backward) of ``scaling_runs.build(n_layer, n_embd)`` on
    ``(idx, targets)`` (B, T), as torch's ``FlopCounterMode`` counts them (its registry: mm, addmm, bmm, ...).

    The course's GPT uses eager attention (``transformer_lm.ATTENTION``): two ``torch.matmul``s, counted as bmm.
    ``attention="sdpa"`` is not counted on the CPU: ``scaled_dot_product_attention`` dispatches there to
    ``aten._scaled_dot_product_flash_attention_for_cpu`` (and its backward), which the counter neither knows nor can
    decompose, so it counts 0 for it, silently (torch 2.13). Only the CUDA kernels (flash, efficient, cuDNN) are in
    its registry."""
    model = sr.build(n_layer, n_embd)
    model.hf.set_attn_implementation(attention)
    model.train()
    with FlopCounterMode(display=False) as counter:
        _, loss = model(idx, targets)  # logits (B, T, V), the mean loss
        loss.backward()
    return counter.get_total_flops()


# ---------------------------------------------------------------- the lengths of a run's batches


def batch_length(seed: int, step: int, batch_size: int = sr.BATCH_SIZE) -> int:
    """T of ``scaling_runs.stream_batch(seed, step)`` without encoding or padding it: <s> and the longest sentence's
    words (one id each; ``make_batch`` pads every sentence to this). About 4x cheaper: the sampling is what is left."""
    return 1 + max(len(words) for words in stream.fresh_sentences(step, batch_size=batch_size, seed=seed))


@lru_cache(maxsize=None)
def _length_block(seed: int, block: int) -> tuple[int, ...]:
    """T of batches LENGTH_BLOCK * block + 1 .. LENGTH_BLOCK * (block + 1) of stream ``seed``: every run on the seed
    shares them."""
    first = LENGTH_BLOCK * block + 1
    return tuple(batch_length(seed, step) for step in range(first, first + LENGTH_BLOCK))


def batch_lengths(seed: int, steps: int) -> list[int]:
    """T of batches 1 .. ``steps`` of stream ``seed``: those a run of ``steps`` steps trains on."""
    seed, steps = check_int("seed", seed, minimum=0), check_int("steps", steps, minimum=1)
    blocks = (steps + LENGTH_BLOCK - 1) // LENGTH_BLOCK
    return [length for block in range(blocks) for length in _length_block(seed, block)][:steps]


def run_training_flops(n_layer: int, n_embd: int, steps: int, seed: int = 0) -> int:
    """FLOPs of a whole run: ``step_flops`` of each of its ``steps`` batches of stream ``seed``, each at its own
    padded length. Validation and test evaluations are not training and are left out."""
    n_layer, n_embd = check_int("n_layer", n_layer, minimum=1), check_int("n_embd", n_embd, minimum=1)
    counts = collections.Counter(batch_lengths(seed, steps))  # {T: batches}
    return sum(count * step_flops(n_layer, n_embd, sr.BATCH_SIZE, length) for length, count in counts.items())


# ---------------------------------------------------------------- the stored file


def row_training_flops(row: dict) -> int:
    """``run_training_flops`` of a stored row of the grid."""
    if row.get("batch_size", sr.BATCH_SIZE) != sr.BATCH_SIZE:
        raise CourseInputError(f"the stream's batches hold {sr.BATCH_SIZE} sentences, the row {row['batch_size']}")
    return run_training_flops(row["n_layer"], row["n_embd"], row["steps"], row["seed"])


def row_positions(row: dict) -> int:
    """The positions a stored run computed, B·T summed over its batches (padding included; ``tokens`` counts only the
    predicted ones)."""
    return sr.BATCH_SIZE * sum(batch_lengths(row["seed"], row["steps"]))


def _with_training_flops(row: dict) -> dict:
    """The row with ``training_flops`` (DIGITS significant digits) and ``positions`` after ``flops``, the rest as it
    was."""
    added = [("training_flops", sr._rounded(float(row_training_flops(row)))), ("positions", row_positions(row))]
    items = [(key, item) for key, item in row.items() if key not in dict(added)]
    at = next((i + 1 for i, (key, _) in enumerate(items) if key == "flops"), len(items))
    return dict(items[:at] + added + items[at:])


def add_training_flops(path: Path | str = sr.RESULTS_FILE) -> dict:
    """Add ``training_flops`` and ``positions`` to every row of the runs file ``path``, written the way ``scaling_runs.save_row``
    writes it (indent 1, lists of numbers on one line, replaced at once). The file is read again just before writing,
    so rows that training added meanwhile are kept (and counted). Returns what was written."""
    path = Path(path)
    for row in sr.load_results(path)["runs"].values():
        row_training_flops(row)  # the slow part, before the file is read for writing: every seed's lengths, cached
    results = sr.load_results(path)
    results["runs"] = {name: _with_training_flops(row) for name, row in results["runs"].items()}
    partial = path.with_name(path.name + ".partial")
    partial.write_text(sr._one_line_lists(json.dumps(results, indent=1)) + "\n", encoding="utf-8")
    partial.replace(path)
    return results


def ratio_table(runs: dict) -> str:
    """Per shape, the least and the largest ratio over its runs of the real FLOPs to Kaplan's 6 N D (the stored
    ``flops``) and to 6 N_total D (Chinchilla's count, embeddings included), and of the positions computed (B T,
    padding included) to the tokens predicted (D)."""
    shapes: dict[tuple[int, int], list[tuple[float, float, float]]] = {}
    for row in runs.values():
        real = row["training_flops"] if "training_flops" in row else row_training_flops(row)
        positions = row["positions"] if "positions" in row else row_positions(row)
        ratios = (real / row["flops"], real / (6 * row["parameters"] * row["tokens"]), positions / row["tokens"])
        shapes.setdefault((row["n_layer"], row["n_embd"]), []).append(ratios)
    lines = [f"{'shape':>7} {'runs':>4}  {'real / 6 N D':>13}  {'real / 6 N_total D':>18}  {'B T / D':>13}"]
    for (n_layer, n_embd), ratios in sorted(shapes.items(), key=lambda item: sr.block_parameters(*item[0])):
        kaplan, total, padded = zip(*ratios)
        lines.append(f"{n_layer}x{n_embd:<5} {len(ratios):>4}  {min(kaplan):6.3f}-{max(kaplan):6.3f}  "
                     f"{min(total):11.3f}-{max(total):6.3f}  {min(padded):6.3f}-{max(padded):6.3f}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--path", type=Path, default=sr.RESULTS_FILE, help="the runs JSON file")
    parser.add_argument("--write", action="store_true", help="add training_flops to every row of --path")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    runs = add_training_flops(args.path)["runs"] if args.write else sr.load_results(args.path)["runs"]
    print(ratio_table(runs))
    print(f"{len(runs)} runs{' written' if args.write else ''} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
