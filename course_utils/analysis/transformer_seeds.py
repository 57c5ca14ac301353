"""Notebook 08's headline comparisons over three seeds: the block ablation (residuals, LayerNorm, post-LN, warm-up),
dropout on 1,000 sentences, and the three kinds of positions beyond the training lengths.

Seed 0 is the notebook's run (for the positions, the shipped checkpoint); seeds 1 and 2 are the same code with
another seed (initial weights and batch order). The scores are the notebook's:

- ablation: the first block's gradient norm before training, validation perplexity ÷ the oracle's after 150 steps
  (``block_ablation.train_variant``, the notebook's full-mode budget);
- dropout: training and validation perplexity ÷ the oracle's, and their gap (``train_on_few_sentences``, 300 steps);
- positions: model NLL − oracle NLL on the long test sentences, at the positions seen in training, the next 5, and
  beyond them up to position 24 (``position_summary``);
- the GPT (``gpt_lm``, seed 0 shipped): test perplexity, and ÷ the oracle's;
- the translator (``transformer_2x128``, seed 0 shipped): notebook 07's scores (``translation_seeds.scores``) and
  the AER of its best and worst cross-attention head on the test split.

The results live in a small JSON file beside the checkpoints; the command (about 15 minutes on one thread):

    OMP_NUM_THREADS=1 python -m course_utils.analysis.transformer_seeds --write
    OMP_NUM_THREADS=1 python -m course_utils.analysis.transformer_seeds --write --only "ablation: no residuals"
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import torch

from course_utils.analysis import block_ablation, translation_analysis, translation_seeds
from course_utils.analysis.stored_runs import load_runs
from course_utils.analysis.seed_runs import SEEDS, run_name, seed_command
from course_utils.evaluation.lm_probes import OracleLM
from course_utils.language import corpus, parallel
from course_utils.language.grammar import CourseLanguage
from course_utils.language.vocab import course_vocab
from course_utils.models import lm
from course_utils.models.transformer import positional
from course_utils.validation import CourseInputError
from course_utils.zoo import transformer_checkpoints as tzoo

Tensor = torch.Tensor
RESULTS_FILE = tzoo.CHECKPOINT_DIR / "transformer_seeds.json"
COMMAND = "OMP_NUM_THREADS=1 python -m course_utils.analysis.transformer_seeds --write"
ABLATION_STEPS = 150  # the notebook's full-mode budget
DROPOUT_STEPS = 300
DROPOUTS = (0.0, 0.1, 0.3)
LONG_SENTENCE = 14  # the long test sentences: 14 words or more
POSITION_CUT = 24  # positions scored; few sentences are longer

ABLATIONS = {f"ablation: {name}": kwargs for name, kwargs in block_ablation.variants(ABLATION_STEPS).items()}
DROPOUT_RUNS = {f"dropout {p}": p for p in DROPOUTS}
POSITION_RUNS = tuple(tzoo.POSITION_RECIPES)  # positions_learned, positions_sinusoidal, positions_none
GPT_RUNS = ("gpt_lm",)
TRANSLATOR_RUNS = tuple(tzoo.TRANSLATION_RECIPES)  # transformer_2x128
NAMES = (*ABLATIONS, *DROPOUT_RUNS, *POSITION_RUNS, *GPT_RUNS, *TRANSLATOR_RUNS)
ORDER = tuple(run_name(name, seed) for name in NAMES for seed in SEEDS)


@lru_cache(maxsize=1)
def long_test_batch() -> tuple[Tensor, Tensor]:
    """The test sentences of ``LONG_SENTENCE`` words or more as one batch: (idx, targets), each (B, T)."""
    vocab = course_vocab()
    long_test = [s for s in corpus.load_split("test") if len(s) >= LONG_SENTENCE]
    return lm.make_batch(lm.encode_sentences(vocab, long_test), vocab)


@lru_cache(maxsize=1)
def oracle_nll_by_position() -> Tensor:
    """The oracle's NLL at each position of ``long_test_batch``: (T,)."""
    oracle = OracleLM(CourseLanguage(include_held_out=False), course_vocab())
    return positional.nll_by_position(oracle, *long_test_batch())


def excess_by_position(model: torch.nn.Module) -> Tensor:
    """Model NLL − oracle NLL (nats) at each position of the long test sentences: (T,)."""
    return positional.nll_by_position(model, *long_test_batch()) - oracle_nll_by_position()


def position_summary(excess: Tensor) -> dict[str, float]:
    """Mean excess NLL at the positions seen in training, the next 5, and beyond them up to ``POSITION_CUT``, and
    ``"unseen"``: all the positions from the training length to ``POSITION_CUT``."""
    seen = tzoo.POSITION_LENGTH
    return {"seen": excess[:seen].mean().item(), "next 5": excess[seen : seen + 5].mean().item(),
            "beyond": excess[seen + 5 : POSITION_CUT].mean().item(),
            "unseen": excess[seen:POSITION_CUT].mean().item()}  # fmt: skip


def _shipped_or_trained(name: str, seed: int, train_run) -> tuple[torch.nn.Module, float | None]:
    """The shipped model for seed 0, the recipes' seed (no training time), else ``train_run(name, seed=seed,
    progress=False)``'s model and its training seconds."""
    if seed == 0:
        return tzoo.LOADERS[name]().eval(), None
    start = time.perf_counter()
    model, _ = train_run(name, seed=seed, progress=False)
    return model.eval(), round(time.perf_counter() - start, 1)


def test_perplexity(model: torch.nn.Module) -> dict[str, float]:
    """The LM's test perplexity, and ÷ the oracle's (notebook 08's table)."""
    test = corpus.load_split("test")
    perplexity = lm.evaluate(model, course_vocab(), test).perplexity
    oracle = math.exp(corpus.oracle_entropy(CourseLanguage(include_held_out=False), test)[0])
    return {"test_perplexity": perplexity, "test_ratio": perplexity / oracle}


def measure(name: str, seed: int) -> dict:
    """One row: the run, the seed, training seconds and threads, and its scores."""
    start = time.perf_counter()
    if name in ABLATIONS:
        scores = block_ablation.train_variant(steps=ABLATION_STEPS, seed=seed, **ABLATIONS[name])
    elif name in DROPOUT_RUNS:
        scores = block_ablation.train_on_few_sentences(DROPOUT_RUNS[name], steps=DROPOUT_STEPS, seed=seed)
    elif name in POSITION_RUNS:
        model, seconds = _shipped_or_trained(name, seed, tzoo.train_position_lm)
        scores = position_summary(excess_by_position(model))
    elif name in GPT_RUNS:
        model, seconds = _shipped_or_trained(name, seed, tzoo.train_lm)
        scores = test_perplexity(model)
    elif name in TRANSLATOR_RUNS:
        model, seconds = _shipped_or_trained(name, seed, tzoo.train_translator)
        heads = translation_analysis.head_aer(model, parallel.load("test"))  # (L, H)
        scores = {**translation_seeds.scores(model, aer=False), "best head aer": heads.min().item(),
                  "worst head aer": heads.max().item()}  # fmt: skip
    else:
        raise CourseInputError(f"unknown run {name!r}; the runs are {', '.join(map(repr, NAMES))}")
    if name in (*ABLATIONS, *DROPOUT_RUNS):
        seconds = round(time.perf_counter() - start, 1)
    return {"run": name, "seed": seed, "train_seconds": seconds, "torch_threads": torch.get_num_threads(),
            "scores": {key: None if value is None else round(value, 4) for key, value in scores.items()}}  # fmt: skip


def load_results() -> dict:
    """The stored results: {"command": ..., "runs": {run name: row}}."""
    return load_runs(RESULTS_FILE, COMMAND)


def main(argv: list[str] | None = None) -> None:
    seed_command(argv, description=__doc__.split("\n")[0], results_file=RESULTS_FILE, command=COMMAND, names=NAMES,
                 order=ORDER, measure_run=measure)  # fmt: skip


if __name__ == "__main__":
    main()
