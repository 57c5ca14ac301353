"""What recurrent states carry, measured: an LSTM's gates, a unit that stores the subject's number, both sides.

``gate_activations`` reads an LSTM's gates over a sentence. ``states_after_prefixes`` and ``number_unit`` look
for one unit that stores the subject's number (chosen on half of the agreement items, tested on the other half);
``word_prediction_scores`` scores every word of a corpus from the left (an LM) or from both sides (a
``MaskedBiLSTM``); ``gap_states`` gives the two states a BiLSTM predicts a word from, and ``masked_word_by_side``
hides one side of the gap at a time; ``pooled_layers`` and ``train_feature_head`` test one of ELMo's layers alone
on a task.
"""

from __future__ import annotations

import collections
from typing import NamedTuple

import torch
import torch.nn.functional as F

from course_utils.models import lm
from course_utils.models.classic.window_mlm import as_words, example_batches
from course_utils.models.recurrent.recurrent_lm import (
    ElmoLM,
    MaskedBiLSTM,
    RecurrentLM,
    frame_sentences,
    reverse_each,
)
from course_utils.models.classic.sentiment import FeatureClassifier
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.training import train
from course_utils.validation import CourseInputError, check_int, describe

Tensor = torch.Tensor


# ---------------------------------------------------------------- an LSTM's gates over a sentence


def gate_activations(lstm_lm: RecurrentLM, vocab: Vocab, words) -> dict[str, Tensor]:
    """An LSTM's gates and cell state while it reads ``<s> w1..wn``: dict name → (T, H), T = n + 1.

    Keys "input", "forget", "output", "candidate", "cell"; row t is the step that reads token t (row 0 reads ``<s>``).
    """
    if not isinstance(lstm_lm, RecurrentLM) or lstm_lm.cell != "lstm":
        is_lm = isinstance(lstm_lm, RecurrentLM)
        kind = f"a RecurrentLM with cell={lstm_lm.cell!r}" if is_lm else type(lstm_lm).__name__
        raise CourseInputError(f"gate_activations needs an LSTM RecurrentLM (cell='lstm'); got {kind}")
    lm._check_vocab(lstm_lm, vocab)
    words = as_words(words)
    if not words:
        raise CourseInputError("the sentence is empty: give at least one word, e.g. 'the dog sleeps .'")
    ids = [vocab.bos_id] + vocab.encode(words, unknown="error")
    idx = torch.tensor([ids], device=lstm_lm.output.weight.device)  # (1, T)
    return {name: values[0].cpu() for name, values in lstm_lm.gates(idx).items()}  # (T, H) each


# ---------------------------------------------------------------- a unit that carries the subject's number


@torch.no_grad()
def states_after_prefixes(model: RecurrentLM, vocab: Vocab, prefixes, *, cell: bool = False) -> Tensor:
    """The top layer's state after reading ``<s>`` and each prefix: the hidden h, or an LSTM's cell c: (N, H)."""
    if not isinstance(model, RecurrentLM):
        raise CourseInputError(f"model must be a RecurrentLM; got {type(model).__name__}")
    if cell and model.cell != "lstm":
        raise CourseInputError(f"only an LSTM has a cell state c; this model's cell is {model.cell!r} (use cell=False)")
    lm._check_vocab(model, vocab)
    id_lists = lm.as_id_lists(vocab, prefixes)
    by_length = collections.defaultdict(list)  # one batch per prefix length: no padding
    for row, ids in enumerate(id_lists):
        by_length[len(ids)].append(row)
    device = model.output.weight.device
    states = torch.zeros(len(id_lists), model.output.in_features)  # (N, H)
    for rows in by_length.values():
        idx = torch.tensor([[vocab.bos_id, *id_lists[row]] for row in rows], device=device)  # (B, L+1)
        last = model.gates(idx)["cell"][:, -1] if cell else model.hidden_states(idx)[:, -1]  # (B, H)
        states[rows] = last.float().cpu()
    return states


class NumberUnit(NamedTuple):
    """The unit chosen by ``number_unit``, its correlation on the fit half, and its held-out accuracy."""

    unit: int
    r: float
    accuracy: dict[int, float]  # attractors -> accuracy on the held-out half


def number_unit(states: Tensor, items) -> NumberUnit:
    """The unit most correlated with the subject's number on the even items, and its accuracy on the odd ones.

    ``states`` (N, H) is one state per agreement item (``states_after_prefixes``); each item has
    "number" ("sg" or "pl") and "attractors". The unit is the one with the largest |Pearson r| with
    "the subject is plural" on items 0, 2, 4, ...; it then says "plural" on the other items when its
    value is on the plural side of the midpoint between the two means. Accuracy is by attractors.
    """
    items = list(items)
    if not isinstance(states, Tensor) or states.ndim != 2 or len(states) != len(items):
        raise CourseInputError(f"states must be (N, H) with one row per item ({len(items)}); got {describe(states)}")
    if len(items) < 4 or any(item.get("number") not in ("sg", "pl") or "attractors" not in item for item in items):
        raise CourseInputError("items must be at least 4 agreement items with 'number' ('sg'/'pl') and 'attractors'")
    plural = torch.tensor([item["number"] == "pl" for item in items])  # (N,)
    fit = torch.arange(len(items)) % 2 == 0  # (N,): choose on these, test on the others
    x, y = states[fit].double(), plural[fit].double()  # (n, H), (n,)
    if y.min() == y.max():
        raise CourseInputError("the fit half has subjects of one number only: give items of both numbers")
    r = ((x - x.mean(0)) * (y - y.mean())[:, None]).sum(0) / (x.std(0) * y.std() * (len(y) - 1))  # (H,)
    r = r.nan_to_num(0.0)  # a unit that never changes correlates with nothing
    unit = int(r.abs().argmax())
    middle = (x[y == 1, unit].mean() + x[y == 0, unit].mean()) / 2  # halfway between the two means
    says_plural = (states[:, unit].double() > middle) == (r[unit] > 0)  # (N,)
    right = collections.defaultdict(list)
    for item, guess, truth, chosen_on in zip(items, says_plural.tolist(), plural.tolist(), fit.tolist()):
        if not chosen_on:
            right[item["attractors"]].append(guess == truth)
    return NumberUnit(unit, float(r[unit]), {n: sum(a) / len(a) for n, a in sorted(right.items())})


# ---------------------------------------------------------------- every word predicted: from the left, or from both sides


@torch.no_grad()
def word_prediction_scores(
    model: torch.nn.Module, vocab: Vocab, sentences, *, batch_size: int = 500
) -> tuple[float, float]:
    """(top-1 accuracy, mean NLL in nats) over every word of ``sentences`` (not ``</s>``).

    A ``MaskedBiLSTM`` predicts each word from the words on both sides of it; any other language
    model (``forward(idx) -> (logits, _)``) from the words before it.
    """
    lm._check_vocab(model, vocab)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    id_lists = sorted(lm.as_id_lists(vocab, sentences), key=len)  # similar lengths share a batch: little padding
    framing = torch.tensor([vocab.pad_id, vocab.bos_id, vocab.eos_id])  # (3,)
    device = lm._model_device(model)
    was_training = model.training
    model.eval()
    right, nll, words = 0, 0.0, 0
    try:
        for start in range(0, len(id_lists), batch_size):
            idx = frame_sentences(id_lists[start : start + batch_size], vocab).to(
                device
            )  # (B, T): <s> w1..wn </s> <pad>..
            if isinstance(model, MaskedBiLSTM):
                logits, target = model(idx)[0], idx  # (B, T, V): position t predicts idx[:, t] from both sides
            else:
                logits, target = model(idx[:, :-1])[0], idx[:, 1:]  # (B, T-1, V): position t predicts idx[:, t+1]
            keep = ~torch.isin(target, framing.to(device))  # (B, T'): the words only
            logp = torch.log_softmax(logits[keep].double(), dim=-1)  # (n, V)
            gold = target[keep]  # (n,)
            right += int((logp.argmax(-1) == gold).sum())
            nll -= float(logp.gather(1, gold[:, None]).sum())
            words += len(gold)
    finally:
        model.train(was_training)
    return right / words, nll / words


# ---------------------------------------------------------------- one side of a BiLSTM's gap at a time


def gap_states(model: MaskedBiLSTM, idx: Tensor) -> tuple[Tensor, Tensor]:
    """The two states a MaskedBiLSTM predicts word t from: (before, after), each (B, T, H), as in its forward."""
    lengths = model.lengths(idx)  # (B,)
    e = model.embedding(idx)  # (B, T, d)
    left = model.left_to_right(e)[0]  # (B, T, H): left[:, t] has read idx[:, :t+1]
    right = reverse_each(model.right_to_left(reverse_each(e, lengths))[0], lengths)  # (B, T, H): read idx[:, t:]
    before = F.pad(left[:, :-1], (0, 0, 1, 0))  # (B, T, H): the words before t
    after = F.pad(right[:, 1:], (0, 0, 0, 1))  # (B, T, H): the words after t ...
    after = after * (torch.arange(idx.shape[1], device=idx.device) + 1 < lengths[:, None]).unsqueeze(-1)  # ... or 0
    return before, after


def _check_bilstm(model, vocab: Vocab) -> MaskedBiLSTM:
    if not isinstance(model, MaskedBiLSTM):
        raise CourseInputError(
            f"model must be a MaskedBiLSTM (it reads both sides of a gap); got {type(model).__name__}"
        )
    lm._check_vocab(model, vocab)
    return model


@torch.no_grad()
def mean_side_states(model: MaskedBiLSTM, vocab: Vocab, sentences) -> tuple[Tensor, Tensor]:
    """The average left-side and right-side state over every word of ``sentences``: (H,), (H,).

    What the BiLSTM receives from a side "on average", knowing nothing about the sentence at hand.
    """
    model = _check_bilstm(model, vocab)
    idx = frame_sentences(lm.as_id_lists(vocab, sentences), vocab).to(model.embedding.weight.device)  # (B, T)
    before, after = gap_states(model.eval(), idx)  # (B, T, H) each
    words = ~torch.isin(idx, torch.tensor([vocab.pad_id, vocab.bos_id, vocab.eos_id], device=idx.device))  # (B, T)
    return before[words].mean(0).cpu(), after[words].mean(0).cpu()


@torch.no_grad()
def masked_word_by_side(model: MaskedBiLSTM, vocab: Vocab, words, means: tuple[Tensor, Tensor]) -> dict[str, Tensor]:
    """P(word at the ``<mask>``) from both sides, from the left side only and from the right side only.

    Returns {"both sides", "left only", "right only"} -> float64 probabilities (V,). To hide a side,
    its state is replaced by that side's average state ``means`` (from ``mean_side_states``): the
    prediction then uses only what the other side read (an ablation by the mean).
    """
    model = _check_bilstm(model, vocab)
    words = as_words(words)
    if words.count(MASK) != 1:
        raise CourseInputError(f"put exactly one {MASK} where the hidden word goes; found {words.count(MASK)}")
    position = words.index(MASK) + 1  # after <s>
    device = model.embedding.weight.device
    idx = torch.tensor([[vocab.bos_id, *vocab.encode(words, unknown="error"), vocab.eos_id]], device=device)  # (1, n+2)
    before, after = (state[0, position] for state in gap_states(model.eval(), idx))  # (H,), (H,)
    mean_before, mean_after = (m.to(device) for m in means)
    pairs = {"both sides": (before, after), "left only": (before, mean_after), "right only": (mean_before, after)}
    return {side: torch.softmax(model.output(torch.cat(pair)).double(), dim=-1).cpu() for side, pair in pairs.items()}


# ---------------------------------------------------------------- one of ELMo's layers alone


@torch.no_grad()
def pooled_layers(elmo: ElmoLM, x: Tensor, pad_id: int) -> Tensor:
    """Each of ELMo's layers averaged over each row's real (non-pad) tokens: (L+1, N, 2d) from ids x (N, T)."""
    if not isinstance(elmo, ElmoLM):
        raise CourseInputError(f"elmo must be an ElmoLM; got {type(elmo).__name__}")
    layers = elmo.eval().layers(x)  # (L+1, N, T, 2d)
    keep = (x != pad_id).unsqueeze(-1).to(layers.dtype)  # (N, T, 1)
    if (keep.sum(dim=1) == 0).any():
        raise CourseInputError("a row of x has no token that is not padding: every review needs at least one word")
    return (layers * keep).sum(dim=2) / keep.sum(dim=1)  # (L+1, N, 2d)


def train_feature_head(
    features: Tensor, labels: Tensor, *, steps: int, lr: float, batch_size: int, seed: int = 0, hidden_dim: int = 32
) -> FeatureClassifier:
    """A feed-forward classifier trained on fixed feature vectors (N, F) for ``labels`` (N,), in eval mode.

    AdamW with a cosine schedule, random batches (``example_batches``), no progress bar. Trained on
    ``pooled_layers(...)[j]`` it is ELMo's classifier head with the mix fixed to layer j: averaging
    over the words and mixing the layers are both linear, so they commute.
    """
    head = FeatureClassifier(n_features=features.shape[-1], hidden_dim=hidden_dim, seed=seed)
    batches = example_batches(features, labels, batch_size=batch_size, seed=seed)
    train(head, batches, steps=steps, lr=lr, schedule="cosine", progress=False)
    return head.eval()


# ---------------------------------------------------------------- the lecture's claims beside the numbers measured

LECTURE_CLAIMS = {  # model -> the lecture's strengths / issues (its tables, as typed there)
    "n-gram (trigram)": "basic counts; fast / fixed window, sparsity",
    "FFNN (N = 5)": "no sparsity issues / fixed window, no memory",
    "RNN": "any length, same weights / slow, vanishing gradients, long context",
    "GRU": "(named beside the LSTM: gated too, 3 blocks instead of 4)",
    "LSTM": "almost always beats the RNN, long-range dependencies / more weights, still some vanishing",
    "RNN, wider state": "(not in the lecture's table)",
    "stacked LSTM": "increased abstractions / more to train",
    "bidirectional LSTM": "at least as good / needs the whole sequence",
    "ELMo mix": "contextual embeddings for a task",
}


def lecture_claims(
    *,
    agreement,
    perplexity,
    oracle_ppl,
    decay,
    weights,
    lstm_vs_rnn,
    wide_five,
    at_five,
    deep_accuracy,
    stacked_weights,
    masked_scores,
    sentiment,
    elmo_verdict,
) -> dict[str, tuple[str, str]]:
    """Notebook 06's closing table: model → (``LECTURE_CLAIMS[model]``, the numbers measured for it).

    ``agreement``: model → attractors → accuracy; ``perplexity`` (÷ ``oracle_ppl``), ``decay`` (gradient ratio by
    distance) and ``weights`` (recurrent weights) by model; ``lstm_vs_rnn`` and ``elmo_verdict`` (column →) are
    ``seed_spread.verdict`` strings; ``wide_five`` / ``at_five``: label → ``Spread`` at 5 attractors;
    ``deep_accuracy``: the 2-layer LSTM's by attractors; ``stacked_weights``: its weights ÷ the LSTM's;
    ``masked_scores`` / ``sentiment``: name → (accuracy first, ...) with sentiment (all, plain, but/not).
    """

    def agree(label: str, attractors: int) -> str:
        return f"{agreement[label][attractors]:.2f}"

    def ppl(label: str, digits: int = 3) -> str:
        return f"{perplexity[label] / oracle_ppl:.{digits}f}×"

    mix, bag = sentiment["elmo_sentiment"], sentiment["sentiment_embeddings"]
    measured = {
        "n-gram (trigram)": f"agreement {agree('trigram', 0)} with 0 attractors (pairs it never counted), "
        f"{agree('trigram', 2)} with 2",
        "FFNN (N = 5)": f"perplexity {ppl('FFNN N=5')} oracle; agreement {agree('FFNN N=5', 0)} → "
        f"{agree('FFNN N=5', 2)} with 2 attractors",
        "RNN": f"perplexity {ppl('RNN')} oracle; gradient at 20 words {decay['RNN'][20]:.0e}; "
        f"agreement {agree('RNN', 5)} with 5 attractors (slowness: notebook 05's timings)",
        "GRU": f"agreement {agree('GRU', 5)} with 5 attractors; perplexity {ppl('GRU')} oracle; "
        f"{weights['GRU'] / weights['RNN']:.0f}× the RNN's recurrent weights",
        "LSTM": f"agreement {agree('LSTM', 5)} with 5 attractors; gradient at 20 words {decay['LSTM'][20]:.0e}; "
        f"perplexity {ppl('LSTM')} oracle (the RNN: {ppl('RNN')}; over seeds {lstm_vs_rnn}); "
        f"{weights['LSTM'] / weights['RNN']:.0f}× the RNN's recurrent weights",
        "RNN, wider state": "hidden 256, clipping, half the steps: agreement with 5 attractors "
        f"{wide_five['RNN, hidden 256'].format(2)} (hidden 128: {at_five['RNN'].format(2)}; "
        f"the LSTM: {at_five['LSTM'].format(2)})",
        "stacked LSTM": f"perplexity {ppl('LSTM 2 layers', 4)} vs {ppl('LSTM', 4)} oracle; "
        f"agreement {deep_accuracy[5]:.2f} vs {agree('LSTM', 5)} with 5 attractors; "
        f"{stacked_weights:.1f}× the weights",
        "bidirectional LSTM": f"masked word right {masked_scores['BiLSTM, both sides'][0]:.3f} vs "
        f"{masked_scores['LSTM LM, left only'][0]:.3f} from the left only; cannot generate",
        "ELMo mix": f"sentiment {mix[0]:.3f} vs {bag[0]:.3f} (bag of embeddings); on but/not reviews "
        f"{mix[2]:.3f} vs {bag[2]:.3f}; over seeds: {elmo_verdict['all']}, on but/not {elmo_verdict['but/not']}",
    }
    return {model: (claim, measured[model]) for model, claim in LECTURE_CLAIMS.items()}
