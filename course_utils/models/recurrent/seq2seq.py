"""Encoder–decoder translation with GRUs, without and with attention (additive, dot, general).

The encoder reads the source; without attention the decoder starts from its final state and never
sees the source again (the whole source "packed into one embedding"). With attention, at each
decoder step t the decoder's current state s_t scores every encoder state h_j, a softmax turns
the scores into weights a_tj, and the context c_t = Σ_j a_tj h_j joins s_t to predict the word
(Luong et al. 2015: h̃_t = tanh(W_c [c_t; s_t]), p(y_t) = softmax(W_o h̃_t)):

    additive (Bahdanau's "concat")  score(s, h) = vᵀ tanh(W_s s + W_h h)
    dot                             score(s, h) = sᵀ h
    general                         score(s, h) = sᵀ W h

``Seq2Seq.forward`` runs the decoder over the whole target at once (teacher forcing: nn.GRU,
and every step's attention in one batched call), which is fast. ``Seq2Seq.start`` and
``Seq2Seq.step`` are the same model one step at a time, written from scratch (``gru_step`` and
``attend``): greedy decoding here and beam search in notebook 10 use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.language.text_pipeline import Vocab
from course_utils.models.lm import IGNORE_INDEX, epoch_batches
from course_utils.models.recurrent.rnn import gru_step
from course_utils.validation import CourseInputError, check_choice, check_int
from course_utils.reference import course_reference

Tensor = torch.Tensor
ATTENTION_KINDS = ("additive", "dot", "general")


# ---------------------------------------------------------------- attention, from scratch


@course_reference
def attend(scores: Tensor, values: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """Scores → softmax over the source (padding excluded) → weighted sum of the values.

    scores (B, T, S), values (B, S, H), mask (B, S) with True at real source words.
    Returns the contexts (B, T, H) and the weights (B, T, S).
    """
    # (B, T, S): padding gets weight 0
    scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (B, T, S): each row sums to 1
    return weights @ values, weights  # (B, T, H), (B, T, S)


class Attention(nn.Module):
    """The score of a decoder state against every encoder state, then ``attend``."""

    def __init__(self, kind: str, hidden_dim: int):
        super().__init__()
        self.kind = check_choice("attention", kind, ATTENTION_KINDS)
        if self.kind == "general":
            self.W = nn.Linear(hidden_dim, hidden_dim, bias=False)
        if self.kind == "additive":
            self.W_s = nn.Linear(hidden_dim, hidden_dim, bias=False)
            self.W_h = nn.Linear(hidden_dim, hidden_dim, bias=False)
            self.v = nn.Linear(hidden_dim, 1, bias=False)

    def scores(self, queries: Tensor, keys: Tensor) -> Tensor:
        """queries (B, T, H): decoder states; keys (B, S, H): encoder states.
        → scores (B, T, S)."""
        if self.kind == "dot":
            return queries @ keys.transpose(1, 2)  # (B, T, S): sᵀh
        if self.kind == "general":
            return queries @ self.W(keys).transpose(1, 2)  # (B, T, S): sᵀWh
        from_queries = self.W_s(queries)[:, :, None, :]  # (B, T, 1, H)
        from_keys = self.W_h(keys)[:, None, :, :]  # (B, 1, S, H)
        hidden = torch.tanh(from_queries + from_keys)  # (B, T, S, H)
        return self.v(hidden).squeeze(-1)  # (B, T, S): vᵀ tanh(W_s s + W_h h)

    def forward(self, queries: Tensor, keys: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """Contexts (B, T, H) and weights (B, T, S); the encoder states are both keys and values."""
        return attend(self.scores(queries, keys), keys, mask)


def library_dot_attention(queries: Tensor, keys: Tensor, mask: Tensor) -> Tensor:
    """The dot form with torch's fused kernel: SDPA with scale 1 (no 1/√d) and the same mask → (B, T, H)."""
    return F.scaled_dot_product_attention(queries, keys, keys, attn_mask=mask[:, None, :], scale=1.0)


# ---------------------------------------------------------------- batches


class Seq2SeqBatch(NamedTuple):
    """Padded id tensors: source (B, S), decoder input ``<s> y_1 … y_M`` and targets ``y_1 … y_M </s>`` (B, T)."""

    source: Tensor
    target_in: Tensor
    target_out: Tensor

    def to(self, device) -> "Seq2SeqBatch":
        return Seq2SeqBatch(*(tensor.to(device) for tensor in self))


def pad(id_lists: Sequence[Sequence[int]], value: int) -> Tensor:
    """A (B, max length) LongTensor, each row padded at the end with ``value``."""
    length = max(len(ids) for ids in id_lists)
    return torch.tensor([list(ids) + [value] * (length - len(ids)) for ids in id_lists], dtype=torch.long)


def make_batch(pairs: Sequence, source_vocab: Vocab, target_vocab: Vocab) -> Seq2SeqBatch:
    """A batch from pairs with ``.source`` and ``.target`` word tuples."""
    if not pairs:
        raise CourseInputError("make_batch needs at least one pair")
    sources = [source_vocab.encode(p.source) for p in pairs]
    targets = [target_vocab.encode(p.target) for p in pairs]
    bos, eos, pad_id = target_vocab.stoi["<s>"], target_vocab.stoi["</s>"], target_vocab.pad_id
    return Seq2SeqBatch(
        pad(sources, source_vocab.pad_id),  # (B, S)
        pad([[bos] + ids for ids in targets], pad_id),  # (B, T)
        pad([ids + [eos] for ids in targets], IGNORE_INDEX),  # (B, T)
    )


def batch_stream(pairs: Sequence, source_vocab: Vocab, target_vocab: Vocab, *, batch_size: int, seed: int
                 ) -> Callable[[int], tuple[Seq2SeqBatch, Tensor]]:  # fmt: skip
    """``step -> (batch, targets)`` for ``training.train``: shuffled epochs, the same for the same seed."""
    pairs = list(pairs)
    if not pairs:
        raise CourseInputError("batch_stream needs at least one pair")
    chosen = epoch_batches(len(pairs), batch_size=batch_size, seed=seed)

    def get_batch(step: int) -> tuple[Seq2SeqBatch, Tensor]:
        batch = make_batch([pairs[i] for i in chosen(step)], source_vocab, target_vocab)
        return batch, batch.target_out

    return get_batch


# ---------------------------------------------------------------- the model


@dataclass
class DecoderState:
    """What the decoder carries from step to step, for B hypotheses."""

    hidden: Tensor  # (B, H): s_t
    memory: Tensor  # (B, S, H): the encoder states h_j
    mask: Tensor  # (B, S): True at real source words

    def select(self, index: Tensor) -> "DecoderState":
        """Keep (and repeat) rows ``index``: beam search reorders its hypotheses with this."""
        return DecoderState(self.hidden[index], self.memory[index], self.mask[index])


class Seq2Seq(nn.Module):
    """GRU encoder, GRU decoder, and optionally attention over the encoder states."""

    def __init__(self, source_vocab_size: int, target_vocab_size: int, *, embed_dim: int = 64,
                 hidden_dim: int = 128, attention: str | None = None, pad_id: int = 0, bos_id: int = 2,
                 eos_id: int = 3):  # fmt: skip
        super().__init__()
        for name, value in (("source_vocab_size", source_vocab_size), ("target_vocab_size", target_vocab_size),
                            ("embed_dim", embed_dim), ("hidden_dim", hidden_dim)):  # fmt: skip
            check_int(name, value, minimum=1)
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.source_embed = nn.Embedding(source_vocab_size, embed_dim, padding_idx=pad_id)
        self.encoder = nn.GRU(embed_dim, hidden_dim, batch_first=True)
        self.target_embed = nn.Embedding(target_vocab_size, embed_dim, padding_idx=pad_id)
        self.decoder = nn.GRU(embed_dim, hidden_dim, batch_first=True)
        self.attention = None if attention is None else Attention(attention, hidden_dim)
        self.combine = None if attention is None else nn.Linear(2 * hidden_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim, target_vocab_size)

    @property
    def attention_kind(self) -> str | None:
        return None if self.attention is None else self.attention.kind

    # -- the encoder
    def encode(self, source: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """source (B, S) → encoder states (B, S, H), the final state of each source
        (B, H), mask (B, S)."""
        mask = source != self.pad_id  # (B, S)
        lengths = mask.sum(dim=1)  # (B,)
        if bool((lengths == 0).any()):
            raise CourseInputError("every source needs at least one word")
        embedded = self.source_embed(source)  # (B, S, E)
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded,
            lengths.cpu(),
            batch_first=True,
            enforce_sorted=False,
        )
        states, final = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(
            states,
            batch_first=True,
            total_length=source.shape[1],
        )
        # (B, S, H), (B, H): the state after each source's last word, (B, S)
        return states, final[0], mask

    def _predict(self, states: Tensor, memory: Tensor, mask: Tensor, need_weights: bool = True
                 ) -> tuple[Tensor, Tensor | None]:  # fmt: skip
        """Decoder states (B, T, H) → logits (B, T, V) and attention weights (B, T, S) or None.

        Without ``need_weights``, the dot and general forms run torch's fused SDPA kernel instead.
        """
        if self.attention is None:
            return self.out(states), None
        if not need_weights and self.attention.kind in ("dot", "general"):
            keys = memory if self.attention.kind == "dot" else self.attention.W(memory)  # (B, S, H)
            context = F.scaled_dot_product_attention(states, keys, memory, attn_mask=mask[:, None, :], scale=1.0)
            weights = None
        else:
            context, weights = self.attention(states, memory, mask)  # (B, T, H), (B, T, S)
        attended = torch.tanh(self.combine(torch.cat([context, states], dim=-1)))  # (B, T, H): h̃_t
        return self.out(attended), weights

    # -- teacher forcing, every step at once
    def forward(
        self,
        batch: Seq2SeqBatch,
        targets: Tensor | None = None,
        *,
        return_attention: bool = False,
    ):
        """(logits (B, T, V), loss or None); with ``return_attention`` also the
        weights (B, T, S)."""
        memory, final, mask = self.encode(batch.source)
        embedded = self.target_embed(batch.target_in)  # (B, T, E)
        states, _ = self.decoder(embedded, final[None])  # (B, T, H)
        logits, weights = self._predict(states, memory, mask, return_attention)
        loss = None
        if targets is not None:
            flat = logits.reshape(-1, logits.shape[-1])  # (B·T, V)
            loss = F.cross_entropy(flat, targets.reshape(-1), ignore_index=IGNORE_INDEX)
        return (logits, loss, weights) if return_attention else (logits, loss)

    # -- one step at a time, from scratch
    def start(self, source: Tensor) -> DecoderState:
        """Encode ``source`` (B, S): the decoder starts from the encoder's final state."""
        memory, final, mask = self.encode(source)
        return DecoderState(final, memory, mask)

    def step(self, state: DecoderState, tokens: Tensor) -> tuple[Tensor, DecoderState, Tensor | None]:
        """Read the previous words ``tokens`` (B,): log-probabilities of the next word (B, V), the new state,
        and the attention weights of this step (B, S) or None."""
        params = (
            self.decoder.weight_ih_l0,
            self.decoder.weight_hh_l0,
            self.decoder.bias_ih_l0,
            self.decoder.bias_hh_l0,
        )
        hidden = gru_step(self.target_embed(tokens), state.hidden, params)  # (B, H): s_t
        logits, weights = self._predict(hidden[:, None, :], state.memory, state.mask)  # (B, 1, V), (B, 1, S)
        new_state = DecoderState(hidden, state.memory, state.mask)
        return torch.log_softmax(logits[:, 0], dim=-1), new_state, None if weights is None else weights[:, 0]

    @torch.no_grad()
    def greedy(self, source: Tensor, max_len: int | None = None) -> tuple[list[list[int]], list[Tensor | None]]:
        """Greedy decoding of a batch: each sentence's ids (``</s>`` excluded) and its weights or None.

        A sentence's weights have one row per output word, plus the row of the step that wrote ``</s>``
        when it ended before ``max_len``.
        """
        state = self.start(source)
        batch = source.shape[0]
        max_len = 2 * source.shape[1] + 5 if max_len is None else check_int("max_len", max_len, minimum=1)
        tokens = torch.full((batch,), self.bos_id, dtype=torch.long, device=source.device)
        outputs, weights, done = [], [], torch.zeros(batch, dtype=torch.bool, device=source.device)
        for _ in range(max_len):
            log_probs, state, step_weights = self.step(state, tokens)
            tokens = log_probs.argmax(dim=-1)  # (B,)
            outputs.append(tokens)
            weights.append(step_weights)
            done |= tokens == self.eos_id
            if bool(done.all()):
                break
        ids = torch.stack(outputs, dim=1).tolist()  # (B, T)
        results, matrices = [], []
        for b, row in enumerate(ids):
            length = row.index(self.eos_id) if self.eos_id in row else len(row)
            results.append(row[:length])
            real = int(state.mask[b].sum())
            matrices.append(None if weights[0] is None else torch.stack([w[b, :real] for w in weights[: length + 1]]))
        return results, matrices


# ---------------------------------------------------------------- using a trained model


def translate_words(model: Seq2Seq, source_vocab: Vocab, target_vocab: Vocab, sources: Sequence[Sequence[str]],
                    *, batch_size: int = 256) -> list[tuple[str, ...]]:  # fmt: skip
    """Greedy translations of word sequences, in batches."""
    results = []
    model.eval()
    device = next(model.parameters()).device
    for start in range(0, len(sources), batch_size):
        chunk = [source_vocab.encode(words) for words in sources[start : start + batch_size]]
        ids, _ = model.greedy(pad(chunk, source_vocab.pad_id).to(device))
        results += [tuple(target_vocab.itos[i] for i in row) for row in ids]
    return results


@torch.no_grad()
def forced_attention(model: Seq2Seq, source_vocab: Vocab, target_vocab: Vocab, pair) -> Tensor:
    """The attention weights (M, S) while the model reads the reference target (teacher forcing)."""
    if model.attention is None:
        raise CourseInputError("this model has no attention")
    batch = make_batch([pair], source_vocab, target_vocab)
    _, _, weights = model(batch, return_attention=True)
    return weights[0, : len(pair.target)]  # (M, S): row t predicts target word t
