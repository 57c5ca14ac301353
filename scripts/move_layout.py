"""One-off: issue 22's layout move. Moves the modules, then rewrites every reference in one pass.

Run once from the repository root (``python scripts/move_layout.py``); it is deleted after the move lands, and the
commit that ran it keeps it in history. What it rewrites:
- dotted paths ``course_utils.models.X`` (imports, ``python -m`` commands, monkeypatch strings, prose);
- file paths ``course_utils/models/X.py`` and ``models/X.py``;
- ``from course_utils.models import a as x, b`` statements, split by the folder each name now lives in;
- symbols that moved module (``course_vocab``, ``train_ids``): their from-imports, and ``alias.name`` uses;
- the renamed module ``mlm_masking`` → ``bert_masking`` wherever the word occurs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = {
    "models.basics": ["regression", "autograd", "gradcheck", "activations", "feedforward"],
    "models.classic": ["ngram", "neural_lm", ("masked_lm", "window_mlm"), "sentiment"],
    "models.recurrent": ["rnn", "recurrent_lm", "seq2seq"],
    "models.transformer": ["attention", "positional", "encoder_block", "transformer_lm", "transformer_translation"],
    "models.bert": ["wordpiece", "bert_mlm", ("mlm_masking", "bert_masking"), "bert_finetuning", "pretrained_bert"],
    "evaluation": ["translation_metrics", "lm_probes"],
    "analysis": [
        "rnn_analysis",
        "translation_analysis",
        "generation_analysis",
        "attention_cost",
        "bert_sizes",
        "contextual_embeddings",
    ],
    "slides": ["slide_attention", "slide_generation"],
    "zoo": ["lm_checkpoints", "translation_checkpoints", "transformer_checkpoints", "bert_checkpoints"],
}
MOVES: dict[str, str] = {}  # "models.masked_lm" -> "models.classic.window_mlm"
for folder, stems in FAMILIES.items():
    for stem in stems:
        old, new = stem if isinstance(stem, tuple) else (stem, stem)
        MOVES[f"models.{old}"] = f"{folder}.{new}"
SYMBOL_MOVES = {  # (new module of the old home, name) -> new home
    ("course_utils.zoo.lm_checkpoints", "course_vocab"): "course_utils.language.vocab",
    ("course_utils.zoo.lm_checkpoints", "train_ids"): "course_utils.language.vocab",
}
TEXT_SUFFIXES = {".py", ".md", ".sh", ".toml", ".cfg", ".yml", ".yaml", ".txt", ".ipynb", ".json", ".html", ".js"}


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [
        ROOT / n for n in names if not n.startswith("data/") and (Path(n).suffix in TEXT_SUFFIXES or n == ".ci/run")
    ]


def move_files() -> None:
    for old, new in MOVES.items():
        source = ROOT / "course_utils" / (old.replace(".", "/") + ".py")
        target = ROOT / "course_utils" / (new.replace(".", "/") + ".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(source), str(target)], cwd=ROOT, check=True)


def rewrite_dotted(text: str) -> str:
    def dotted(match: re.Match) -> str:
        key = f"models.{match.group(1)}"
        return f"course_utils.{MOVES[key]}" if key in MOVES else match.group(0)

    def path(match: re.Match) -> str:
        key = f"models.{match.group(2)}"
        return f"{match.group(1)}{MOVES[key].replace('.', '/')}.py" if key in MOVES else match.group(0)

    text = re.sub(r"course_utils\.models\.(\w+)\b", dotted, text)
    return re.sub(r"((?<![\w/.])course_utils/|(?<![\w/.]))models/(\w+)\.py", path, text)


FROM_MODELS = re.compile(r"^([ \t]*)from course_utils\.models import (\([^)]*\)|[^\n]*)", re.M)


def rewrite_from_models(text: str) -> str:
    def split(match: re.Match) -> str:
        indent, names = match.group(1), match.group(2)
        comment = ""
        if "#" in names and not names.startswith("("):
            names, comment = names.split("#", 1)
            comment = "  #" + comment
        groups: dict[str, list[str]] = {}
        for item in (n.strip() for n in names.strip("()").replace("\n", " ").split(",")):
            if not item:
                continue
            name, _, alias = (part.strip() for part in item.partition(" as "))
            parent, leaf = "course_utils.models", name
            if f"models.{name}" in MOVES:
                parent, leaf = f"course_utils.{MOVES[f'models.{name}']}".rsplit(".", 1)
            groups.setdefault(parent, []).append(f"{leaf} as {alias}" if alias else leaf)
        lines = [f"{indent}from {parent} import {', '.join(items)}" for parent, items in groups.items()]
        return "\n".join(lines) + comment

    return FROM_MODELS.sub(split, text)


def rewrite_symbols(text: str) -> str:
    """``from zoo.lm_checkpoints import a, course_vocab`` → two imports; ``zoo.course_vocab`` → ``course_vocab``."""
    for (home, name), new_home in SYMBOL_MOVES.items():
        pattern = re.compile(rf"^([ \t]*)from {re.escape(home)} import (\([^)]*\)|[^\n]*)", re.M)

        def split(match: re.Match, name=name, new_home=new_home, home=home) -> str:
            indent = match.group(1)
            items = [n.strip() for n in match.group(2).strip("()").replace("\n", " ").split(",") if n.strip()]
            moved = [i for i in items if i.split(" as ")[0] in {n for (h, n) in SYMBOL_MOVES if h == home}]
            kept = [i for i in items if i not in moved]
            lines = [f"{indent}from {home} import {', '.join(kept)}"] if kept else []
            if moved:
                lines.append(f"{indent}from {new_home} import {', '.join(moved)}")
            return "\n".join(lines)

        text = pattern.sub(split, text)
        aliases = re.findall(rf"^[ \t]*from {re.escape(home.rsplit('.', 1)[0])} import [^\n]*\b"
                             rf"{re.escape(home.rsplit('.', 1)[1])} as (\w+)", text, flags=re.M)  # fmt: skip
        for alias in set(aliases):
            if re.search(rf"\b{alias}\.{name}\b", text):
                text = re.sub(rf"\b{alias}\.{name}\b", name, text)
                text = add_import(text, alias, new_home, name)
    return text


def add_import(text: str, alias: str, module: str, name: str) -> str:
    """Add ``from module import name`` after the line that binds ``alias`` (in a notebook source's cell too)."""
    line = re.search(rf"^([ \t]*)from [\w.]+ import [^\n]*\bas {alias}\b[^\n]*$", text, flags=re.M)
    already = re.search(rf"^[ \t]*from {re.escape(module)} import ([^\n]*)$", text, flags=re.M)
    if already and re.search(rf"\b{name}\b", already.group(1)):
        return text
    if already:
        return text[: already.end()] + f", {name}" + text[already.end() :]
    return text[: line.end()] + f"\n{line.group(1)}from {module} import {name}" + text[line.end() :]


def main() -> None:
    move_files()
    changed = 0
    for path in tracked_text_files():
        if not path.exists() or path.name == "move_layout.py":
            continue
        text = path.read_text(encoding="utf-8")
        new = rewrite_symbols(rewrite_dotted(rewrite_from_models(text))) if path.suffix != ".ipynb" else text
        new = re.sub(r"\bmlm_masking\b", "bert_masking", new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed += 1
    print(f"moved {len(MOVES)} modules, rewrote {changed} files")


if __name__ == "__main__":
    main()
