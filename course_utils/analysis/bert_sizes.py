"""How big BERT is, and where its parameters sit: counted on the meta device, and checked by a closed form.

``BertModel`` is built under ``torch.device("meta")``: every tensor has a shape and no storage, so
BERT-large's 335M parameters cost nothing to "build" and nothing is downloaded. Each parameter is put in a
group by its name, and the same numbers are written out by hand (``formula_parts``); a test asserts equality.

With H = hidden size, I = intermediate size, V = vocabulary, P = positions, S = token types ("segments"),
L = layers (every ``Linear`` has a weight and a bias, every ``LayerNorm`` a scale and a shift, 2H):

    embeddings     V·H + P·H + S·H + 2H
    attention      L · (4 · (H·H + H) + 2H)           query, key, value, output projection; LayerNorm
    feed-forward   L · (H·I + I + I·H + H + 2H)       up to I, down to H; LayerNorm
    pooler         H·H + H                            the dense layer on [CLS] (BertModel's default)
    masked-LM head H·H + H + 2H + V                   transform, LayerNorm, output bias; the output
                                                       matrix is the token embedding, tied (not counted twice)

BERT-base (L=12, H=768, I=3072, V=30522, P=512, S=2) has 109,482,240 parameters with the pooler, BERT-large
(L=24, H=1024, I=4096) 335,141,888: the paper's "110M" and "340M". Per layer that is 4H² + 2HI + 9H + I.
"""

from __future__ import annotations

import copy

from course_utils.validation import CourseInputError, check_choice, check_heads, check_int

GROUPS = ("embeddings", "attention", "feed-forward", "pooler", "masked-LM head")
HEADS = ("pooler", "none", "masked_lm")  # BertModel, BertModel(add_pooling_layer=False), BertForMaskedLM

BERT_BASE = {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072, "vocab": 30522, "positions": 512,
             "token_types": 2}  # fmt: skip
BERT_LARGE = {"layers": 24, "hidden": 1024, "heads": 16, "intermediate": 4096, "vocab": 30522, "positions": 512,
              "token_types": 2}  # fmt: skip
SIZES = {"BERT-base": BERT_BASE, "BERT-large": BERT_LARGE}
KNOWN_TOTALS = {"BERT-base": 109_482_240, "BERT-large": 335_141_888}  # BertModel with its pooler
PAPER_TOTALS = {"BERT-base": "110M", "BERT-large": "340M"}  # Devlin et al. (2019), §3
# the course's tiny BERT: bert_mlm.bert_config(tokenizer, layers=2, hidden=64, heads=4) on the 1,000-entry vocabulary
COURSE_BERT = {"layers": 2, "hidden": 64, "heads": 4, "intermediate": 256, "vocab": 1000, "positions": 64,
               "token_types": 2}  # fmt: skip

# parameter name (inside BertModel / BertForMaskedLM) -> (group, part); "N" stands for the layer number
_PART_OF = {
    "embeddings.word_embeddings.weight": ("embeddings", "token"),
    "embeddings.position_embeddings.weight": ("embeddings", "position"),
    "embeddings.token_type_embeddings.weight": ("embeddings", "token type"),
    "embeddings.LayerNorm": ("embeddings", "LayerNorm"),
    "encoder.layer.N.attention.self.query": ("attention", "query"),
    "encoder.layer.N.attention.self.key": ("attention", "key"),
    "encoder.layer.N.attention.self.value": ("attention", "value"),
    "encoder.layer.N.attention.output.dense": ("attention", "output"),
    "encoder.layer.N.attention.output.LayerNorm": ("attention", "LayerNorm"),
    "encoder.layer.N.intermediate.dense": ("feed-forward", "intermediate"),
    "encoder.layer.N.output.dense": ("feed-forward", "output"),
    "encoder.layer.N.output.LayerNorm": ("feed-forward", "LayerNorm"),
    "pooler.dense": ("pooler", "dense"),
    "cls.predictions.transform.dense": ("masked-LM head", "transform"),
    "cls.predictions.transform.LayerNorm": ("masked-LM head", "LayerNorm"),
    "cls.predictions.bias": ("masked-LM head", "output bias"),
}


def make_config(*, layers: int, hidden: int, heads: int, vocab: int, intermediate: int | None = None,
                positions: int = 512, token_types: int = 2):  # fmt: skip
    """A ``BertConfig`` of this shape (``intermediate`` defaults to 4 × hidden, as in BERT)."""
    from transformers import BertConfig

    hidden, heads = check_heads("hidden", hidden, "heads", heads)
    return BertConfig(vocab_size=check_int("vocab", vocab, minimum=1), hidden_size=hidden,
                      num_hidden_layers=check_int("layers", layers, minimum=1), num_attention_heads=heads,
                      intermediate_size=check_int("intermediate", intermediate or 4 * hidden, minimum=1),
                      max_position_embeddings=check_int("positions", positions, minimum=1),
                      type_vocab_size=check_int("token_types", token_types, minimum=1))  # fmt: skip


def size_config(name: str = "BERT-base"):
    """The ``BertConfig`` of BERT-base, BERT-large, or the course's tiny BERT ("course BERT")."""
    shapes = {**SIZES, "course BERT": COURSE_BERT}
    return make_config(**shapes[check_choice("name", name, tuple(shapes))])


def _check_config(config):
    needed = ("vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size", "max_position_embeddings",
              "type_vocab_size")  # fmt: skip
    if not all(hasattr(config, name) for name in needed):
        raise CourseInputError(f"config must be a BertConfig (it needs {', '.join(needed)}); "
                               f"got {type(config).__name__}")  # fmt: skip
    return config


def _part_of(name: str) -> tuple[str, str]:
    """The (group, part) of a parameter name, e.g. ``bert.encoder.layer.3.output.dense.bias``."""
    parts = name.removeprefix("bert.").split(".")
    if parts[:2] == ["encoder", "layer"]:
        parts[2] = "N"
    key = ".".join(parts)
    for prefix, group_part in _PART_OF.items():
        if key == prefix or key.startswith(prefix + "."):
            return group_part
    raise CourseInputError(f"no group for the parameter {name!r} (did transformers rename it?)")


def meta_model(config, *, head: str = "pooler"):
    """The model of this config built on the meta device: shapes only, no memory, no download.

    ``head``: "pooler" (``BertModel``, BERT's published size), "none" (no pooler) or "masked_lm"
    (``BertForMaskedLM``, the course's BERT: no pooler, a masked-LM head with tied output weights).
    """
    import torch
    from transformers import BertForMaskedLM, BertModel

    config = copy.deepcopy(_check_config(config))
    head = check_choice("head", head, HEADS)
    with torch.device("meta"):
        return BertForMaskedLM(config) if head == "masked_lm" else BertModel(config, add_pooling_layer=head == "pooler")


def counted_parts(config, *, head: str = "pooler") -> dict[str, int]:
    """Parameters per ``"group: part"``, counted on ``meta_model(config, head=head)``."""
    parts: dict[str, int] = {}
    for name, parameter in meta_model(config, head=head).named_parameters():  # a tied weight is listed once
        group, part = _part_of(name)
        parts[f"{group}: {part}"] = parts.get(f"{group}: {part}", 0) + parameter.numel()
    return parts


def formula_parts(config, *, head: str = "pooler") -> dict[str, int]:
    """The same numbers as ``counted_parts``, from the closed form in the module docstring."""
    config = _check_config(config)
    head = check_choice("head", head, HEADS)
    V, H, I = config.vocab_size, config.hidden_size, config.intermediate_size  # noqa: E741
    P, S, L = config.max_position_embeddings, config.type_vocab_size, config.num_hidden_layers
    linear = lambda n_in, n_out: n_in * n_out + n_out  # noqa: E731  weight and bias
    layer_norm = 2 * H
    parts = {
        "embeddings: token": V * H,
        "embeddings: position": P * H,
        "embeddings: token type": S * H,
        "embeddings: LayerNorm": layer_norm,
        "attention: query": L * linear(H, H),
        "attention: key": L * linear(H, H),
        "attention: value": L * linear(H, H),
        "attention: output": L * linear(H, H),
        "attention: LayerNorm": L * layer_norm,
        "feed-forward: intermediate": L * linear(H, I),
        "feed-forward: output": L * linear(I, H),
        "feed-forward: LayerNorm": L * layer_norm,
    }
    if head == "pooler":
        parts["pooler: dense"] = linear(H, H)
    elif head == "masked_lm":
        parts.update({"masked-LM head: transform": linear(H, H), "masked-LM head: LayerNorm": layer_norm,
                      "masked-LM head: output bias": V})  # fmt: skip
    return parts


def closed_form_total(config, *, head: str = "pooler") -> int:
    """The total as one expression: (V + P + S)·H + 2H + L·(4H² + 2HI + 9H + I) + the head."""
    config = _check_config(config)
    head = check_choice("head", head, HEADS)
    V, H, I = config.vocab_size, config.hidden_size, config.intermediate_size  # noqa: E741
    P, S, L = config.max_position_embeddings, config.type_vocab_size, config.num_hidden_layers
    head_size = {"pooler": H * H + H, "none": 0, "masked_lm": H * H + 3 * H + V}[head]
    return (V + P + S) * H + 2 * H + L * (4 * H * H + 2 * H * I + 9 * H + I) + head_size


def group_totals(parts: dict[str, int]) -> dict[str, int]:
    """``"group: part"`` counts summed per group, in the order of ``GROUPS`` (groups with no parameters left out)."""
    totals = {group: 0 for group in GROUPS}
    for key, value in parts.items():
        group = key.split(": ", 1)[0]
        if group not in totals:
            raise CourseInputError(f"unknown group in {key!r}; expected one of {', '.join(GROUPS)}")
        totals[group] += value
    return {group: total for group, total in totals.items() if total}


def size_breakdown(config, *, head: str = "pooler") -> list[dict]:
    """One row per part: group, part, parameters (counted), formula, share of the total; a "total" row last."""
    counted, formula = counted_parts(config, head=head), formula_parts(config, head=head)
    total = sum(counted.values())
    rows = []
    for key in list(formula) + [k for k in counted if k not in formula]:  # the formula's order; strays last
        group, part = key.split(": ", 1)
        rows.append({"group": group, "part": part, "parameters": counted.get(key, 0), "formula": formula.get(key),
                     "share": counted.get(key, 0) / total})  # fmt: skip
    rows.append({"group": "total", "part": "", "parameters": total, "formula": sum(formula.values()), "share": 1.0})
    return rows


def size_table(configs: dict | None = None, *, head: str = "pooler") -> list[dict]:
    """One row per model: its shape, total, and the total of each group (default: BERT-base and BERT-large).

    ``configs`` maps a name to a ``BertConfig``; the paper's rounded figure is added for base and large.
    """
    configs = configs if configs is not None else {name: size_config(name) for name in SIZES}
    if not isinstance(configs, dict) or not configs:
        raise CourseInputError("configs must be a non-empty dict of name -> BertConfig")
    rows = []
    for name, config in configs.items():
        parts = counted_parts(config, head=head)
        total = sum(parts.values())
        rows.append({"model": name, "layers": config.num_hidden_layers, "hidden": config.hidden_size,
                     "heads": config.num_attention_heads, "intermediate": config.intermediate_size,
                     "vocab": config.vocab_size, "total": total, **group_totals(parts),
                     "embedding share": sum(v for k, v in parts.items() if k.startswith("embeddings")) / total,
                     "paper": PAPER_TOTALS.get(name, "")})  # fmt: skip
    return rows
