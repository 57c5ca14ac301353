"""The shared LM utilities, checked against a tiny hand-made model with a fixed probability table."""

import math

import pytest
import torch

from course_utils.models.lm import (
    IGNORE_INDEX,
    as_id_lists,
    batch_stream,
    encode_sentences,
    evaluate,
    generate,
    lm_example,
    lm_loss,
    make_batch,
    next_token_probs,
    token_logprobs,
    top_k,
)
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError

VOCAB = Vocab(["a", "b", "c"])  # ids: a=5, b=6, c=7; </s>=3
A, B, C, EOS = 5, 6, 7, 3

# P(next | current word): a bigram table; rows the model never needs are uniform over a, b, c, </s>.
NEXT = {
    VOCAB.bos_id: {A: 0.5, B: 0.3, C: 0.2},
    A: {A: 0.2, B: 0.5, C: 0.2, EOS: 0.1},
    B: {EOS: 1.0},
    C: {A: 0.4, EOS: 0.6},
}


class TableLM(torch.nn.Module):
    """A fixed bigram model; its logits are log-probabilities plus an arbitrary shift per position."""

    vocab_size = len(VOCAB)
    context_size = 1

    def __init__(self):
        super().__init__()
        table = torch.zeros(len(VOCAB), len(VOCAB), dtype=torch.float64)  # (V, V)
        table[:, [A, B, C, EOS]] = 0.25
        for current, row in NEXT.items():
            table[current] = 0.0
            for word, p in row.items():
                table[current, word] = p
        self.register_buffer("table", table)

    def forward(self, idx, targets=None):
        logits = self.table[idx].log() + idx.unsqueeze(-1) * 0.5  # (B, T, V) unnormalised on purpose
        return logits, None if targets is None else lm_loss(logits, targets)


def hand_logprob(words):
    """log P(words </s>) from the table, by hand."""
    ids = [VOCAB.bos_id] + VOCAB.encode(words) + [EOS]
    return sum(math.log(NEXT[h][w]) for h, w in zip(ids, ids[1:]))


SENTENCES = [["a", "b"], ["c"], ["a", "a", "c", "a", "b"], ["b"], ["a"]]


def test_encode_and_lm_example_frame_a_sentence():
    assert encode_sentences(VOCAB, [["a", "b"], ["c"]]) == [[A, B], [C]]
    assert lm_example([A, B], VOCAB) == ([VOCAB.bos_id, A, B], [A, B, EOS])
    with pytest.raises(CourseInputError, match="must not contain <s>, </s>"):
        lm_example([VOCAB.bos_id, A, EOS], VOCAB)
    with pytest.raises(CourseInputError, match="split_sentences"):
        encode_sentences(VOCAB, "a b")
    with pytest.raises(CourseInputError, match="'d'"):
        encode_sentences(VOCAB, [["a", "d"]])


def test_as_id_lists_takes_words_or_ids_and_rejects_the_rest():
    assert as_id_lists(VOCAB, [["a", "b"]]) == as_id_lists(VOCAB, [[A, B]]) == [[A, B]]
    for bad, message in [
        ([], "at least one"),
        (["a b"], "not a string"),
        ([["a", 6]], "not a mix"),
        ([[99]], r"\[0, 7\]"),
    ]:
        with pytest.raises(CourseInputError, match=message):
            as_id_lists(VOCAB, bad)


def test_make_batch_pads_inputs_and_ignores_padded_targets():
    idx, targets = make_batch([[A, B, C], [C]], VOCAB)
    assert idx.dtype == targets.dtype == torch.long and idx.shape == targets.shape == (2, 4)
    assert idx.tolist() == [[2, A, B, C], [2, C, 0, 0]]
    assert targets.tolist() == [[A, B, C, EOS], [C, EOS, IGNORE_INDEX, IGNORE_INDEX]]
    with pytest.raises(CourseInputError, match="at least one"):
        make_batch([], VOCAB)


def test_batch_stream_is_deterministic_and_covers_each_epoch_once():
    ids = encode_sentences(VOCAB, SENTENCES)
    get = batch_stream(ids, VOCAB, batch_size=2, seed=7)
    again = batch_stream(ids, VOCAB, batch_size=2, seed=7)
    for step in [0, 1, 2, 5, 1]:
        assert all(torch.equal(x, y) for x, y in zip(get(step), again(step)))
    firsts = [tuple(t[t != IGNORE_INDEX].tolist()) for step in range(3) for t in get(step)[1]]
    assert sorted(firsts) == sorted(tuple(s + [EOS]) for s in ids)  # 3 batches = one epoch, each sentence once
    epochs = {tuple(tuple(r) for r in get(e * 3)[0].tolist()) for e in range(6)}
    assert len(epochs) > 1, "each epoch is shuffled anew"
    with pytest.raises(CourseInputError, match="batch_size must be >= 1"):
        batch_stream(ids, VOCAB, batch_size=0, seed=0)


def test_batch_stream_feeds_the_training_loop():
    from course_utils.training import train

    torch.manual_seed(0)

    class Bigram(torch.nn.Module):
        vocab_size = len(VOCAB)

        def __init__(self):
            super().__init__()
            self.logits = torch.nn.Embedding(len(VOCAB), len(VOCAB))

        def forward(self, idx, targets=None):
            logits = self.logits(idx)  # (B, T, V)
            return logits, None if targets is None else lm_loss(logits, targets)

    model = Bigram()
    ids = encode_sentences(VOCAB, SENTENCES)
    before = evaluate(model, VOCAB, ids).mean_nll
    train(model, batch_stream(ids, VOCAB, batch_size=2, seed=0), steps=60, lr=0.1, progress=False)
    assert evaluate(model, VOCAB, ids).mean_nll < before - 0.5


def test_lm_loss_matches_cross_entropy_and_is_inf_for_impossible_targets():
    logits = torch.randn(2, 3, len(VOCAB), generator=torch.Generator().manual_seed(0))  # (B, T, V)
    targets = torch.tensor([[A, B, IGNORE_INDEX], [C, EOS, A]])
    expected = torch.nn.functional.cross_entropy(logits.view(-1, len(VOCAB)), targets.view(-1))
    assert torch.allclose(lm_loss(logits, targets), expected)
    logits[0, 0, A] = -math.inf
    assert lm_loss(logits, targets).item() == math.inf
    logits[1] = -math.inf  # a whole row of zeros: still inf, never NaN
    assert lm_loss(logits, targets).item() == math.inf


def test_evaluate_matches_a_hand_computation():
    model = TableLM()
    score = evaluate(model, VOCAB, SENTENCES, batch_size=2)
    nll = -sum(hand_logprob(s) for s in SENTENCES)
    tokens = sum(len(s) + 1 for s in SENTENCES)
    assert score.tokens == tokens
    assert score.nll == pytest.approx(nll, rel=1e-12)
    assert score.mean_nll == pytest.approx(nll / tokens, rel=1e-12)
    assert score.perplexity == pytest.approx(math.exp(nll / tokens), rel=1e-12)
    again = evaluate(model, VOCAB, encode_sentences(VOCAB, SENTENCES), batch_size=1)  # ids, one at a time
    assert again.tokens == tokens and again.nll == pytest.approx(score.nll, rel=1e-13)
    assert "perplexity" in str(score)


def test_evaluate_restores_the_mode_and_reports_zero_probability_as_inf():
    model = TableLM().train()
    score = evaluate(model, VOCAB, [["b", "a"]])  # P(a | b) = 0
    assert score.perplexity == math.inf and score.nll == math.inf
    assert model.training


def test_evaluate_rejects_a_vocabulary_of_another_size():
    with pytest.raises(CourseInputError, match="predicts 8 token types but the vocabulary has 9"):
        evaluate(TableLM(), Vocab(["a", "b", "c", "d"]), [["a"]])


def test_next_token_probs_and_the_short_context_error():
    model = TableLM()
    probs = next_token_probs(model, VOCAB, [])  # the first word
    assert probs.dtype == torch.float64 and probs.shape == (len(VOCAB),)
    assert probs[[A, B, C]].tolist() == pytest.approx([0.5, 0.3, 0.2], rel=1e-12)
    assert next_token_probs(model, VOCAB, ["a", "c"])[EOS].item() == pytest.approx(0.6)
    assert next_token_probs(model, VOCAB, "a c")[EOS].item() == pytest.approx(0.6)  # a string is tokenized
    assert next_token_probs(model, VOCAB, ["c"], from_sentence_start=False)[A].item() == pytest.approx(0.4)
    with pytest.raises(CourseInputError, match=r"reads the previous N=1 words; got 0"):
        next_token_probs(model, VOCAB, [], from_sentence_start=False)
    with pytest.raises(CourseInputError, match="did you mean"):
        next_token_probs(model, VOCAB, ["aa"])
    assert torch.equal(
        next_token_probs(model, VOCAB, ["zzz"], unknown="unk"), next_token_probs(model, VOCAB, ["<unk>"])
    )


def test_token_logprobs_include_the_end_of_sentence():
    model = TableLM()
    logprobs = token_logprobs(model, VOCAB, ["a", "c", "a"])
    assert logprobs == pytest.approx([math.log(0.5), math.log(0.2), math.log(0.4), math.log(0.1)], rel=1e-12)
    assert sum(logprobs) == pytest.approx(-evaluate(model, VOCAB, [["a", "c", "a"]]).nll, rel=1e-12)


def test_generate_is_deterministic_per_seed_and_stops_at_the_end_token():
    model = TableLM()
    samples = [generate(model, VOCAB, seed=s) for s in range(20)]
    assert samples == [generate(model, VOCAB, seed=s) for s in range(20)]
    assert len({tuple(s) for s in samples}) > 3
    for words in samples:
        assert set(words) <= {"a", "b", "c"} and len(words) < 40
        assert words[-1] in {"a", "b", "c"} and "b" not in words[:-1]  # after "b" comes only </s>
    assert generate(model, VOCAB, prefix=["c", "a"], temperature=0) == ["c", "a", "b"]  # greedy: a -> b -> </s>
    assert len(generate(model, VOCAB, prefix="a", max_tokens=1)) == 2


def test_generate_checks_its_arguments():
    model = TableLM()
    with pytest.raises(CourseInputError, match="temperature must be >= 0"):
        generate(model, VOCAB, temperature=-1)
    with pytest.raises(CourseInputError, match="max_tokens must be >= 1"):
        generate(model, VOCAB, max_tokens=0)
    with pytest.raises(CourseInputError, match="'d'"):
        generate(model, VOCAB, prefix=["d"])


def test_top_k_orders_by_probability_then_id():
    probs = torch.zeros(len(VOCAB), dtype=torch.float64)
    probs[[A, B, C]] = torch.tensor([0.25, 0.5, 0.25], dtype=torch.float64)
    assert top_k(probs, VOCAB, 3) == [("b", 0.5), ("a", 0.25), ("c", 0.25)]
    assert len(top_k(probs, VOCAB, 100)) == len(VOCAB)
    with pytest.raises(CourseInputError, match="one vector of 8"):
        top_k(probs[:3], VOCAB, 2)


def test_draw_is_the_inverse_cdf_and_never_picks_a_zero():
    import random

    from course_utils.models.lm import draw

    rng = random.Random(0)
    counts = [0, 0, 0, 0]
    for _ in range(20_000):
        counts[draw([0.5, 0.0, 0.3, 0.2], rng)] += 1
    assert counts[1] == 0
    assert all(abs(c / 20_000 - p) < 0.015 for c, p in zip(counts, [0.5, 0.0, 0.3, 0.2]))
    assert draw([0.0, 2.0, 0.0], random.Random(5)) == 1, "unnormalised weights work"
    with pytest.raises(CourseInputError):
        draw([0.0, 0.0], random.Random(0))


def test_samples_do_not_depend_on_torchs_random_stream():
    model = TableLM()
    torch.manual_seed(123)
    first = [generate(model, VOCAB, seed=s) for s in range(10)]
    torch.manual_seed(456)
    torch.rand(1000)
    assert [generate(model, VOCAB, seed=s) for s in range(10)] == first
