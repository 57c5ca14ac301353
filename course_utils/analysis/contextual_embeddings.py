"""Contextual embeddings: a word's vector at every layer of a BERT, which layers to use, and what they know.

A BERT with L layers gives every WordPiece L + 1 vectors (CSE538, "Contextual embeddings"):

    layer 0        the embedding layer: the word-type embedding (+ position and segment embeddings, LayerNorm)
    layers 1..L-1  each composes the vectors below it with their context (self-attention + feed-forward)
    layer L        the last one, "taken as contextual embedding"

"How do you get embeddings from BERT? … choose one of these or some combination" (CMU). Devlin et al. (2019,
Table 7) tried six choices as features for CoNLL-2003 NER (``DEVLIN_TABLE_7``); ``LAYER_STRATEGIES`` are
those six, written as functions of the stacked hidden states (L+1, N, C).

Words and pieces. WordPiece splits rarer words ("outside" = ``o ##u ##ts ##ide``), so a *word*'s vector is
pooled from its pieces: the first piece (``pooling="first"``, what Devlin et al. feed their NER tagger) or
the mean of the pieces (``pooling="mean"``). The fast tokenizer's ``word_ids()`` says which word each piece
came from; the words go in as a list (``is_split_into_words=True``), so word i of the item is word i here.

Shallow models. The strategies are defined from the top of the model down, so they mean the same thing at
any depth: "last" is layer L, "second-to-last" is L-1, "last four" is L-3..L. A hidden-layer strategy never
takes the embedding layer: an index below 1 is clamped to 1 and repeats are dropped. On the course's 2-layer
BERT "last four" is therefore layers 1-2 (all there are) and "second-to-last" is layer 1;
``LayerStrategy.layers(depth)`` says what a strategy takes, and ``strategy_table`` reports it.

What the layers know is measured with a *linear probe* (multinomial logistic regression on the frozen
vectors, k-fold cross-validated) and with 1-nearest-neighbour sense agreement. The sense test is per word:
one probe per ambiguous word ("fine": penalty or healthy), accuracies averaged over words, so chance is
0.5 and the probe cannot score by recognising the word. A word-type embedding is one vector per word, so it
*cannot* separate senses; layer 0 adds the position embedding, which can leak the sense through where the
word stands ("mia feels fine ." against "she paid the fine ."); ``sense_probe_by_layer`` measures both,
beside a position-only control. Sentences repeat in the evaluation sets (a copy has the very same vectors),
so copies of one sentence are always kept in one fold: a probe is scored on sentences it never saw.
A randomly initialised BERT already mixes the context words into every vector, so its upper layers score
well above chance too: compare a trained model with an untrained one of the same shape.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from course_utils.evaluation.linear_probe import cross_validated_predictions, group_accuracies
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.reference import course_reference

Tensor = torch.Tensor

POOLINGS = ("first", "mean")  # how a word's pieces become one vector
SENTENCE_POOLINGS = ("mean", "cls")  # how a sentence's pieces become one vector


# ---------------------------------------------------------------- words → pieces → vectors


def _encoder(model):
    """The module that returns hidden states: ``CourseBERT.bert``, ``BertForMaskedLM.bert`` or a ``BertModel`` itself."""
    if hasattr(model, "bert"):
        return model.bert
    encoder = getattr(model, "base_model", None)
    if encoder is None or not callable(encoder):
        raise CourseInputError(f"expected a CourseBERT or a Hugging Face BERT model, got {type(model).__name__}")
    return encoder


def _check_words(words, where: str) -> list[str]:
    if isinstance(words, str):
        words = words.split()
    words = list(words) if isinstance(words, (list, tuple)) else None
    if not words or not all(isinstance(word, str) and word.strip() for word in words):
        raise CourseInputError(f"{where} must be a non-empty list of non-empty words")
    return words


def _check_items(items) -> list[tuple[list[str], int]]:
    """Each item as (words, position), checked."""
    if not isinstance(items, (list, tuple)) or not items:
        raise CourseInputError("items must be a non-empty list of {'words': [...], 'position': i}")
    checked = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or "words" not in item or "position" not in item:
            raise CourseInputError(f"item {index} must be a dict with 'words' and 'position'; got {item!r}")
        words = _check_words(item["words"], f"item {index}'s words")
        position = check_int(f"item {index}'s position", item["position"], minimum=0, maximum=len(words) - 1)
        checked.append((words, position))
    return checked


def _encode(tokenizer, sentences: Sequence[list[str]]):
    """Pad a batch of word lists; return input_ids (B, T), attention_mask (B, T), each word's piece span [start, end)."""
    if not getattr(tokenizer, "is_fast", False):
        raise CourseInputError("a fast tokenizer is needed (its word_ids() align pieces with words)")
    encoding = tokenizer(list(sentences), is_split_into_words=True, padding=True, return_tensors="pt")
    spans = []
    for row, words in enumerate(sentences):
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        for token, word in enumerate(encoding.word_ids(row)):
            if word is not None:
                starts.setdefault(word, token)
                ends[word] = token + 1
        if len(starts) != len(words):
            missing = [words[w] for w in range(len(words)) if w not in starts]
            raise CourseInputError(f"the tokenizer gives no pieces for {missing!r} in {' '.join(words)!r}")
        spans.append([(starts[w], ends[w]) for w in range(len(words))])
    return encoding["input_ids"], encoding["attention_mask"], spans


def word_piece_spans(tokenizer, words: Sequence[str]) -> list[tuple[int, int]]:
    """Where each word's pieces sit in ``[CLS] pieces [SEP]``: one ``(start, end)`` per word (end excluded)."""
    return _encode(tokenizer, [_check_words(words, "words")])[2][0]


@torch.no_grad()
def _hidden_states(model, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
    """Every layer's output, stacked: (L+1, B, T, C), on the CPU, in eval mode (no dropout)."""
    encoder = _encoder(model)
    limit = getattr(getattr(encoder, "config", None), "max_position_embeddings", None)
    if limit is not None and input_ids.shape[1] > limit:
        raise CourseInputError(f"a sentence has {input_ids.shape[1]} pieces; the model takes at most {limit}")
    device = next(encoder.parameters()).device
    was_training = encoder.training
    encoder.eval()
    try:
        out = encoder(
            input_ids=input_ids.to(device), attention_mask=attention_mask.to(device), output_hidden_states=True
        )
    finally:
        encoder.train(was_training)
    return torch.stack(out.hidden_states).float().cpu()  # (L+1, B, T, C)


def _batches(count: int, batch_size: int):
    batch_size = check_int("batch_size", batch_size, minimum=1)
    return (range(start, min(start + batch_size, count)) for start in range(0, count, batch_size))


def _piece_weights(spans: Sequence[tuple[int, int]], width: int, pooling: str) -> Tensor:
    """(B, T) weights that pool each row's chosen pieces: one-hot on the first piece, or 1/k on each of k pieces."""
    weights = torch.zeros(len(spans), width)
    for row, (start, end) in enumerate(spans):
        if pooling == "first":
            weights[row, start] = 1.0
        else:
            weights[row, start:end] = 1.0 / (end - start)
    return weights  # (B, T)


def word_vectors(model, tokenizer, items, *, pooling: str = "first", batch_size: int = 64) -> Tensor:
    """The vector of each item's word at every layer: (L+1, N, C), layer 0 = the embedding layer.

    ``items``: dicts with ``words`` (a sentence as a list of words) and ``position`` (the word's index).
    ``pooling``: "first" piece of the word, or the "mean" of its pieces.
    ``model``: a ``CourseBERT``, or a Hugging Face ``BertModel`` / ``BertForMaskedLM`` with its tokenizer.
    """
    checked = _check_items(items)
    pooling = check_choice("pooling", pooling, POOLINGS)
    chunks = []
    for batch in _batches(len(checked), batch_size):
        sentences = [checked[i][0] for i in batch]
        input_ids, attention_mask, spans = _encode(tokenizer, sentences)
        hidden = _hidden_states(model, input_ids, attention_mask)  # (L+1, B, T, C)
        chosen = [spans[row][checked[i][1]] for row, i in enumerate(batch)]
        weights = _piece_weights(chosen, input_ids.shape[1], pooling)  # (B, T)
        chunks.append(torch.einsum("lbtc,bt->lbc", hidden, weights))  # (L+1, B, C)
    return torch.cat(chunks, dim=1)  # (L+1, N, C)


def type_vectors(model, tokenizer, items, *, pooling: str = "first") -> Tensor:
    """Each item's word from the embedding *table* alone (no position, no context): (N, C), the static baseline."""
    checked = _check_items(items)
    pooling = check_choice("pooling", pooling, POOLINGS)
    table = _encoder(model).get_input_embeddings().weight.detach().float().cpu()  # (V, C)
    input_ids, _, spans = _encode(tokenizer, [words for words, _ in checked])  # (N, T)
    chosen = [spans[row][position] for row, (_, position) in enumerate(checked)]
    weights = _piece_weights(chosen, input_ids.shape[1], pooling)  # (N, T)
    return torch.einsum("ntc,nt->nc", table[input_ids], weights)  # (N, C)


def position_features(tokenizer, items) -> Tensor:
    """One-hot of where each item's word starts among the pieces: (N, T). A probe on these sees position only."""
    checked = _check_items(items)
    _, _, spans = _encode(tokenizer, [words for words, _ in checked])
    starts = torch.tensor([spans[row][position][0] for row, (_, position) in enumerate(checked)])  # (N,)
    return F.one_hot(starts, num_classes=int(starts.max()) + 1).float()  # (N, T)


# ---------------------------------------------------------------- which layers: Devlin et al.'s six choices


@dataclass(frozen=True)
class LayerStrategy:
    """One way to turn the stacked hidden states (L+1, N, C) into features: pick layers, then sum or concatenate.

    ``from_top``: the layers counted down from the top (0 = layer L, 1 = layer L-1, …); ``None`` = every
    hidden layer 1..L; ``()`` with ``embeddings=True`` = layer 0 alone.
    """

    name: str
    paper_row: str  # its row in Devlin et al. (2019), Table 7
    from_top: tuple[int, ...] | None
    combine: str  # "one", "sum" or "concat"
    embeddings: bool = False

    def layers(self, depth: int) -> tuple[int, ...]:
        """The layers it takes in a model with ``depth`` hidden layers: indices below 1 clamped to 1, repeats dropped."""
        depth = check_int("depth", depth, minimum=1)
        if self.embeddings:
            return (0,)
        if self.from_top is None:
            return tuple(range(1, depth + 1))
        return tuple(sorted({max(depth - back, 1) for back in self.from_top}))

    def clamped(self, depth: int) -> bool:
        """True if the model is too shallow for the strategy as written, so it took fewer or other layers."""
        return self.from_top is not None and any(depth - back < 1 for back in self.from_top)

    @course_reference
    def __call__(self, hidden: Tensor) -> Tensor:
        """Features (N, C) ("one", "sum") or (N, k·C) ("concat" of k layers) from hidden states (L+1, N, C)."""
        if not isinstance(hidden, Tensor) or hidden.ndim != 3 or hidden.shape[0] < 2:
            shape = list(hidden.shape) if isinstance(hidden, Tensor) else type(hidden).__name__
            raise CourseInputError(f"hidden states must be (L+1, N, C) with L >= 1, got {shape}")
        chosen = hidden[list(self.layers(hidden.shape[0] - 1))]  # (k, N, C)
        if self.combine == "concat":
            return torch.cat(list(chosen), dim=-1)  # (N, k·C)
        return chosen.sum(0)  # (N, C)


LAST_FOUR = (3, 2, 1, 0)  # L-3, L-2, L-1, L
LAYER_STRATEGIES: dict[str, LayerStrategy] = {
    strategy.name: strategy
    for strategy in (
        LayerStrategy("first layer (embeddings)", "Embeddings", (), "one", embeddings=True),
        LayerStrategy("last hidden layer", "Last Hidden", (0,), "one"),
        # Devlin's "all 12 layers" are BERT-base's 12 hidden layers: the embedding layer is not among them
        LayerStrategy("sum of all hidden layers", "Weighted Sum All 12 Layers", None, "sum"),
        LayerStrategy("second-to-last hidden", "Second-to-Last Hidden", (1,), "one"),
        LayerStrategy("sum of last four hidden", "Weighted Sum Last Four Hidden", LAST_FOUR, "sum"),
        LayerStrategy("concat last four hidden", "Concat Last Four Hidden", LAST_FOUR, "concat"),
    )
}

# Devlin et al. (2019), Table 7: CoNLL-2003 NER, dev F1. Feature-based rows: BERT-base's activations, frozen,
# fed to a two-layer 768-dim BiLSTM before the classifier. The paper's sums are *weighted* sums (learned
# weights, as in ELMo); the slides and ``LAYER_STRATEGIES`` use the plain sum.
DEVLIN_TABLE_7: dict[str, float] = {
    "first layer (embeddings)": 91.0,
    "last hidden layer": 94.9,
    "sum of all hidden layers": 95.5,
    "second-to-last hidden": 95.6,
    "sum of last four hidden": 95.9,
    "concat last four hidden": 96.1,
}
DEVLIN_TABLE_7_FINE_TUNING: dict[str, float] = {"BERT-base": 96.4, "BERT-large": 96.6}  # the whole model trained


def _groups_of(items, key: str = "word") -> list:
    return [item.get(key, item["words"][item["position"]]) for item in items]


def context_keys(items) -> list[tuple]:
    """One key per item, (its words, its position): copies of one sentence get one key, and so one fold."""
    return [(*item["words"], item["position"]) for item in items]


# ---------------------------------------------------------------- senses: probes and nearest neighbours


def nearest_neighbour_sense_accuracy(vectors: Tensor, items, *, label_key: str = "sense"):
    """Leave-one-out 1-NN by cosine among the other occurrences of the same word: how often it has the same sense.

    ``vectors``: (N, C) → one share; (L+1, N, C) → a list, one share per layer. Items are grouped by their
    ``word`` (or the word at ``position``). Copies of the item's own sentence are left out with it (their
    vectors are the item's own); when several neighbours tie, each counts for its share. An item with no
    other occurrence is skipped.
    """
    if not isinstance(vectors, Tensor) or vectors.ndim not in (2, 3):
        raise CourseInputError("vectors must be (N, C) or (L+1, N, C)")
    if vectors.ndim == 3:
        return [nearest_neighbour_sense_accuracy(layer, items, label_key=label_key) for layer in vectors]
    if len(_check_items(items)) != len(vectors):
        raise CourseInputError(f"{len(vectors)} vectors but {len(items)} items; they must match")
    if not all(label_key in item for item in items):
        raise CourseInputError(f"every item needs a {label_key!r}")
    senses, words, keys = [item[label_key] for item in items], _groups_of(items), context_keys(items)
    unit = F.normalize(vectors.detach().double(), dim=-1)  # (N, C)
    hits, total = 0.0, 0
    for word in dict.fromkeys(words):
        rows = [i for i, w in enumerate(words) if w == word]
        similarity = unit[rows] @ unit[rows].T  # (n, n)
        same_context = torch.tensor([[keys[i] == keys[j] for j in rows] for i in rows])  # (n, n), the diagonal too
        similarity[same_context] = -float("inf")
        same_sense = torch.tensor([[senses[i] == senses[j] for j in rows] for i in rows], dtype=torch.float64)
        best = similarity.max(-1, keepdim=True).values  # (n, 1)
        nearest = (similarity >= best - 1e-9) & (best > -float("inf"))  # (n, n): every tied nearest neighbour
        has_neighbour = nearest.any(-1)  # (n,)
        hits += ((same_sense * nearest).sum(-1)[has_neighbour] / nearest.sum(-1)[has_neighbour]).sum().item()
        total += int(has_neighbour.sum())
    if not total:
        raise CourseInputError("no word occurs in two different sentences: there is nothing to compare with")
    return hits / total


def use_pairs(items, words: Sequence[str]) -> tuple[list[list[dict]], list[list[dict]]]:
    """For each of ``words``: two uses in two senses, and two uses (two sentences) of its first sense.

    ``items``: the senses set (dicts with ``word``, ``sense``, ``words``, ``position``). The second list is the
    baseline of the first: how alike two uses are when the sense is the same."""
    uses = collections.defaultdict(list)  # (word, sense) -> occurrences, one per distinct sentence
    for item in items:
        if all(item["words"] != other["words"] for other in uses[item["word"], item["sense"]]):
            uses[item["word"], item["sense"]].append(item)
    two_senses, one_sense = [], []
    for word in words:
        senses = [key for key in uses if key[0] == word]
        if len(senses) < 2 or len(uses[senses[0]]) < 2:
            raise CourseInputError(f"{word!r} needs two senses, and two sentences of its first, in the items")
        two_senses.append([uses[senses[0]][0], uses[senses[1]][0]])
        one_sense.append(uses[senses[0]][:2])
    return two_senses, one_sense


# The slides' two texts (CSE538, "Person A / Person B"): the same words, in two senses
PERSON_A = ("i feel fine , even great ! earlier , i played the game yahtzee with my partner . i could not get that "
            "die to roll a 1 ! now i am lying on my bed for a rest .").split()  # fmt: skip
PERSON_B = ("my life is a great mess ! my business partner was lying to me . he was trying to game the system and played "
            "me . i think i am going to die , he left and now i have to pay the rest of his fine .").split()  # fmt: skip


def slide_pairs(words: Sequence[str]) -> list[list[dict]]:
    """For each of ``words``: its use in Person A's text and its use in Person B's (the first of each)."""
    return [[{"words": text, "position": text.index(word)} for text in (PERSON_A, PERSON_B)] for word in words]


def pair_cosines(model, tokenizer, pairs: Sequence[Sequence[dict]]) -> Tensor:
    """Cosine similarity of each pair's two word vectors at every layer: (L+1, P)."""
    vectors = word_vectors(model, tokenizer, [item for pair in pairs for item in pair])  # (L+1, 2·P, C)
    return F.cosine_similarity(vectors[:, 0::2], vectors[:, 1::2], dim=-1)  # (L+1, P)


def other_word_cosines(model, tokenizer, pairs: Sequence[Sequence[dict]]) -> Tensor:
    """The control for ``pair_cosines``: each pair's first use beside the next pair's second use (two different
    words, the last pair wrapping to the first), at the last layer: (P,)."""
    others = [(pair[0], pairs[(i + 1) % len(pairs)][1]) for i, pair in enumerate(pairs)]
    return pair_cosines(model, tokenizer, others)[-1]  # (P,)


def shown_uses(pair: Sequence[dict], width: int = 3) -> str:
    """Each use of a pair's word with ``width`` words before it (and ``width`` − 1 after), joined by " | "."""
    return " | ".join(
        " ".join(item["words"][max(0, item["position"] - width) : item["position"] + width]) for item in pair
    )


def sense_probe_by_layer(model, tokenizer, items, *, pooling: str = "first", all_words: bool = False,
                         folds: int = 5, seed: int = 0, epochs: int = 100, l2: float = 0.5) -> list[dict]:  # fmt: skip
    """How well each layer separates the senses of a word, beside two controls. One row per representation:

    ``representation``: "word type" (the embedding table's row: identical for every occurrence of a word),
    "position only" (one-hot of where the word stands), "layer 0 (embeddings)", "layer 1", …;
    ``layer``: None for the controls, else the layer;
    ``per_word``: one probe per ambiguous word, accuracy averaged over words (chance: ``majority_accuracy``);
    ``all_words`` (only with ``all_words=True``; it doubles the time): one probe over all items, labels
    "word: sense", so one linear map must separate the senses of every word at once;
    ``nearest_neighbour``: 1-NN sense agreement among the word's other occurrences (None for position only).
    """
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, dict) and "sense" in item for item in items):
        raise CourseInputError("items must be a list of sense items, each with a 'sense' (load_eval('senses'))")
    hidden = word_vectors(model, tokenizer, items, pooling=pooling)  # (L+1, N, C)
    senses, words = [item["sense"] for item in items], _groups_of(items)
    word_senses = [f"{word}: {sense}" for word, sense in zip(words, senses)]
    probe = {"keys": context_keys(items), "folds": folds, "seed": seed, "epochs": epochs, "l2": l2}
    representations = [("word type", None, type_vectors(model, tokenizer, items, pooling=pooling)),
                       ("position only", None, position_features(tokenizer, items))]  # fmt: skip
    representations += [(f"layer {i}" + (" (embeddings)" if i == 0 else ""), i, hidden[i]) for i in range(len(hidden))]
    names, layers, feature_sets = zip(*representations)
    per_word = cross_validated_predictions(feature_sets, senses, words, **probe)
    rows = [{"representation": name, "layer": layer, "per_word": group_accuracies(result)[0],
             "nearest_neighbour": None if name == "position only" else nearest_neighbour_sense_accuracy(features, items)}
            for name, layer, features, result in zip(names, layers, feature_sets, per_word)]  # fmt: skip
    if all_words:
        for row, result in zip(rows, cross_validated_predictions(feature_sets, word_senses, None, **probe)):
            row["all_words"] = group_accuracies(result)[0]
    return rows


def strategy_table(model, tokenizer, items, labels=None, *, per_word: bool = True, pooling: str = "first",
                   folds: int = 5, seed: int = 0, epochs: int = 100, l2: float = 0.5) -> list[dict]:  # fmt: skip
    """Devlin et al.'s six layer choices on a course token task, one row each, probed linearly.

    ``labels`` default to each item's ``sense`` (else its ``label``). With ``per_word`` there is one probe per
    word (the item's ``word``), averaged; without, one probe over all items. A row: ``strategy``, ``layers``
    (the layers it took in this model), ``clamped`` (the model was too shallow for it as written), ``dim``
    (feature size), ``accuracy``, and ``devlin_dev_f1`` (Table 7's NER F1 on BERT-base, for comparison).
    """
    checked = _check_items(items)
    if labels is None:
        labels = [item.get("sense", item.get("label")) for item in items]
        if any(label is None for label in labels):
            raise CourseInputError("pass labels, or give every item a 'sense' or 'label'")
    labels = list(labels)
    if len(labels) != len(checked):
        raise CourseInputError(f"{len(checked)} items but {len(labels)} labels; they must match")
    groups = _groups_of(items) if per_word else [None] * len(labels)
    hidden = word_vectors(model, tokenizer, items, pooling=pooling)  # (L+1, N, C)
    depth = hidden.shape[0] - 1
    keys, features_of = {}, {}  # on a shallow model some strategies coincide: each distinct one is probed once
    for name, strategy in LAYER_STRATEGIES.items():
        layers = strategy.layers(depth)
        keys[name] = (layers, strategy.combine == "concat" and len(layers) > 1)
        if keys[name] not in features_of:
            features_of[keys[name]] = strategy(hidden)  # (N, C) or (N, k·C)
    results = cross_validated_predictions(list(features_of.values()), labels, groups, keys=context_keys(items), folds=folds,
                               seed=seed, epochs=epochs, l2=l2)  # fmt: skip
    accuracy = {key: group_accuracies(result)[0] for key, result in zip(features_of, results)}
    return [{"strategy": name, "layers": strategy.layers(depth), "clamped": strategy.clamped(depth),
             "dim": features_of[keys[name]].shape[1], "accuracy": accuracy[keys[name]],
             "devlin_dev_f1": DEVLIN_TABLE_7[name]} for name, strategy in LAYER_STRATEGIES.items()]  # fmt: skip


def agreement_token_items(agreement_items, mask_token: str = "[MASK]") -> list[dict]:
    """A second token task: the verb masked after an agreement prefix; the label is the subject's number.

    "the tiger that chased the cats [MASK] ." → "sg". The masked position shows no word, so whatever a layer
    knows of the number there came from the context (the attractors, nearer, carry the other number).
    """
    if not isinstance(agreement_items, (list, tuple)) or not agreement_items:
        raise CourseInputError("give a non-empty list of agreement items (load_eval('agreement'))")
    return [{"words": [*item["prefix"], mask_token, "."], "position": len(item["prefix"]), "word": mask_token,
             "label": item["number"], "attractors": item["attractors"]} for item in agreement_items]  # fmt: skip


# ---------------------------------------------------------------- sentences, similarity, a 2-D picture


def sentence_vectors(model, tokenizer, sentences, *, layer: int = -1, pooling: str = "mean",
                     batch_size: int = 64) -> Tensor:  # fmt: skip
    """One vector per sentence from ``layer`` (negative counts from the top): (N, C).

    "mean": the mean of the sentence's pieces ([CLS], [SEP] and padding left out); "cls": the [CLS] vector.
    """
    if not isinstance(sentences, (list, tuple)) or not sentences:
        raise CourseInputError("sentences must be a non-empty list (each a list of words or a string)")
    sentences = [_check_words(s, f"sentence {i}") for i, s in enumerate(sentences)]
    pooling = check_choice("pooling", pooling, SENTENCE_POOLINGS)
    layer = check_int("layer", layer)
    chunks = []
    for batch in _batches(len(sentences), batch_size):
        input_ids, attention_mask, spans = _encode(tokenizer, [sentences[i] for i in batch])
        hidden = _hidden_states(model, input_ids, attention_mask)  # (L+1, B, T, C)
        depth = hidden.shape[0] - 1
        if not -(depth + 1) <= layer <= depth:
            raise CourseInputError(
                f"layer must be in {-(depth + 1)}..{depth} for this {depth}-layer model; got {layer}"
            )
        if pooling == "cls":
            chunks.append(hidden[layer, :, 0])  # (B, C)
        else:
            whole = [(row[0][0], row[-1][1]) for row in spans]  # first piece of the first word .. last of the last
            weights = _piece_weights(whole, input_ids.shape[1], "mean")  # (B, T)
            chunks.append(torch.einsum("btc,bt->bc", hidden[layer], weights))  # (B, C)
    return torch.cat(chunks)  # (N, C)


def nearest_sentences(
    query: Tensor, vectors: Tensor, k: int = 5, *, exclude: int | None = None
) -> tuple[Tensor, Tensor]:
    """The ``k`` rows of ``vectors`` (N, C) most cosine-similar to ``query`` (C,): (indices (k,), similarities (k,)).

    ``exclude``: a row to leave out (the query's own, when it is one of ``vectors``). ``k`` is capped at what is left.
    """
    if not isinstance(vectors, Tensor) or vectors.ndim != 2 or not len(vectors):
        raise CourseInputError("vectors must be a non-empty (N, C) tensor")
    if not isinstance(query, Tensor) or query.shape != vectors.shape[1:]:
        raise CourseInputError(f"query must be a ({vectors.shape[1]},) tensor, like one row of vectors")
    k = check_int("k", k, minimum=1)
    similarity = F.normalize(vectors.double(), dim=-1) @ F.normalize(query.double(), dim=0)  # (N,)
    if exclude is not None:
        similarity[check_int("exclude", exclude, minimum=0, maximum=len(vectors) - 1)] = -float("inf")
    left = len(vectors) - (exclude is not None)
    if not left:
        raise CourseInputError("no rows are left to compare with")
    top = similarity.topk(min(k, left))
    return top.indices, top.values.float()


def projection_2d(vectors: Tensor) -> Tensor:
    """PCA to 2-D by ``torch.linalg.svd``: (N, C) → (N, 2). Each axis's sign is fixed (its largest loading is positive)."""
    if not isinstance(vectors, Tensor) or vectors.ndim != 2 or len(vectors) < 2:
        raise CourseInputError("vectors must be an (N, C) tensor with N >= 2")
    centred = vectors.detach().double() - vectors.detach().double().mean(0)  # (N, C)
    _, _, axes = torch.linalg.svd(centred, full_matrices=False)  # axes: (min(N, C), C), rows by variance
    axes = axes[:2]
    signs = axes.gather(1, axes.abs().argmax(1, keepdim=True)).sign()  # (k, 1)
    coordinates = centred @ (axes * signs.where(signs != 0, torch.ones_like(signs))).T  # (N, k)
    if coordinates.shape[1] < 2:  # one feature: the second axis is flat
        coordinates = F.pad(coordinates, (0, 2 - coordinates.shape[1]))
    return coordinates.to(vectors.dtype if vectors.dtype.is_floating_point else torch.float32)  # (N, 2)
