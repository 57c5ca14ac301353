"""One-off: issue 22's tests layout. Moves each test file into the folder of what it tests, mirroring the package,
then rewrites every reference to it. Run once from the repository root; deleted after the move lands.

The shared fixtures (``conftest.py``) and helpers (``*_support.py``, ``exercise_contract.py``, ``demo_driving.py``)
stay at the top of ``tests/``, where pytest puts them on the path for every folder below.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "core": "budget busy_machine checkpoints colab device lecture offline progress_messages training validation",
    "language": "best_sentences corpus language parallel text_pipeline translation",
    "models": "lm_utils",
    "models/basics": "activations autograd feedforward gradcheck regression",
    "models/classic": "masked_lm_analysis neural_lm ngram sentiment window_mlm",
    "models/recurrent": "elmo recurrent_lm rnn_parity seq2seq",
    "models/transformer": "attention transformer_lm transformer_translation",
    "models/bert": "bert_masking bert_mlm pretrained_bert wordpiece",
    "models/generation": "generation",
    "evaluation": "agreement lm_probes translation_metrics",
    "analysis": "attention_cost bert_sizes contextual_embeddings generation_analysis rnn_analysis",
    "slides": "slide_generation",
    "zoo": "zoo",
    "widgets": "activation_demo agreement_demo attention_demo backprop_demo beam_demo bertviz_offline contextual_demo "
    "descent_demo embedding_demo fill_mask_demo graph_drawing ipywidgets7 next_word_demo painting qkv_demo "
    "sampling_demo sequence_demo translation_demo widget_kit",
    "exercises": "exercise_docstrings exercises_activations exercises_attention exercises_backprop exercises_bert "
    "exercises_generation exercises_language_models exercises_lstm exercises_recurrent exercises_regression "
    "exercises_translation",
    "claims": "generation_claims lm_claims rnn_claims translation_claims",
    "notebooks": "bertviz_browser browser browser_harness cpu_capability frontend_cells nbval_rules notebook_structure "
    "site site_browser",
    "project": "contributing gpu_probe install lock wings",
}
TEXT_SUFFIXES = {".py", ".md", ".sh", ".toml", ".cfg", ".yml", ".yaml", ".txt"}


def destinations() -> dict[str, str]:
    """test stem -> its folder under tests/."""
    where = {f"test_{stem}": folder for folder, stems in FOLDERS.items() for stem in stems.split()}
    present = {p.stem for p in (ROOT / "tests").glob("test_*.py")}
    assert present == set(where), (sorted(present - set(where)), sorted(set(where) - present))
    return where


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / n for n in names if Path(n).suffix in TEXT_SUFFIXES or n == ".ci/run"]


def rewrite_references(text: str, where: dict[str, str]) -> str:
    def slashed(match: re.Match) -> str:
        stem = match.group(1)
        return f"tests/{where[stem]}/{stem}.py" if stem in where else match.group(0)

    def joined(match: re.Match) -> str:
        stem = match.group(1)
        if stem not in where:
            return match.group(0)
        parts = " / ".join(f'"{part}"' for part in where[stem].split("/"))
        return f'"tests" / {parts} / "{stem}.py"'

    text = re.sub(r"(?<![\w/])tests/(test_\w+)\.py", slashed, text)
    return re.sub(r'"tests" / "(test_\w+)\.py"', joined, text)


def fix_depth(text: str, depth: int) -> str:
    """A test file ``depth`` folders below the repository root finds the root ``depth`` levels up."""
    text = text.replace("Path(__file__).resolve().parents[1]", f"Path(__file__).resolve().parents[{depth}]")
    return text.replace(
        'os.path.dirname(__file__), "..",', "os.path.dirname(__file__), " + ", ".join(['".."'] * depth) + ","
    )


def main() -> None:
    where = destinations()
    for stem, folder in where.items():
        (ROOT / "tests" / folder).mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", f"tests/{stem}.py", f"tests/{folder}/{stem}.py"], cwd=ROOT, check=True)
    changed = 0
    for path in tracked_text_files():
        if not path.exists() or path.name == "move_tests.py":
            continue
        text = path.read_text(encoding="utf-8")
        new = rewrite_references(text, where)
        if path.parent != ROOT / "tests" and path.is_relative_to(ROOT / "tests") and path.stem.startswith("test_"):
            new = fix_depth(new, len(path.relative_to(ROOT).parts) - 1)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed += 1
    print(f"moved {len(where)} test files, rewrote {changed} files")


if __name__ == "__main__":
    main()
