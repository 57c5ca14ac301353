"""rnn_analysis: ‖∂L_t/∂h_k‖ by autograd = the Jacobian product; decay curve, exploding, clipping, timing, gates;
a number unit, every word scored from one or both sides, one side of a BiLSTM's gap at a time."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import CourseInputError
from course_utils.models.classic.neural_lm import FeedForwardLM
from course_utils.models.recurrent.recurrent_lm import (
    ElmoLM,
    MaskedBiLSTM,
    RecurrentLM,
    ScalarMix,
    frame_sentences,
    predict_masked_words,
)
from course_utils.models.recurrent.rnn import ScratchLSTM, elman_step, lstm_step
from course_utils.analysis.rnn_analysis import (
    clip_by_norm,
    exploding_demo,
    gradient_decay_curve,
    hidden_gradient_norms,
    ffnn_size_lines,
    hidden_jacobians,
    jacobian_product_norms,
    next_word_probs,
    perplexity,
    scaled_orthogonal,
    slide_loop_notes,
    time_per_sequence,
    twin,
)
from course_utils.analysis.lstm_analysis import (
    LECTURE_CLAIMS,
    gap_states,
    gate_activations,
    lecture_claims,
    masked_word_by_side,
    mean_side_states,
    number_unit,
    pooled_layers,
    states_after_prefixes,
    train_feature_head,
    word_prediction_scores,
)
from course_utils.language.text_pipeline import Vocab
from course_utils.models import lm

VOCAB = Vocab(["the", "cat", "cats", "sleeps", "sleep", "near", "dog", "."])
V = len(VOCAB)
SENTENCES = [
    "the cat sleeps .".split(),
    "the cats near the dog sleep .".split(),
    "the cat near the dog near the cats sleeps .".split(),
    "the dog sleeps".split(),
]
IDX = torch.tensor([2, 5, 6, 10, 5, 11, 7, 12, 3])  # one framed sentence [<s>, ..., </s>]: (9,)


def tiny(cell="rnn", impl="library", **kwargs) -> RecurrentLM:
    """A small float64 model over VOCAB; a non-zero seed gives weights with visible gradients."""
    return RecurrentLM(V, cell=cell, impl=impl, embed_dim=4, hidden_dim=5, seed=3, **kwargs).double()


def framed(words):
    return torch.tensor([VOCAB.bos_id, *VOCAB.encode(words), VOCAB.eos_id])  # (n+2,)


def output_gradient(model, h_t, target):
    """∂L_t/∂h_t = Uᵀ (softmax(U h_t + b) - one_hot(target)), written out: (H,)."""
    p = torch.softmax(model.output(h_t), dim=-1)  # (V,)
    return model.output.weight.T @ (p - F.one_hot(torch.tensor(target), V).double())  # (H,)


# --- ‖∂L_t/∂h_k‖: autograd against the analytic Jacobian product -------------------------------


@pytest.mark.parametrize("impl", ["library", "scratch"])
@pytest.mark.parametrize("t", [0, 3, 7])
def test_autograd_norms_equal_the_jacobian_product(impl, t):
    model = tiny("rnn", impl)
    states = model.hidden_states(IDX[None, : t + 1])[0].detach()  # (t+1, H)
    U = model.scratch_layers()[0].U.detach()  # (H, H)
    expected = jacobian_product_norms(U, states, output_gradient(model, states[t], int(IDX[t + 1])))  # (t+1,)
    measured = hidden_gradient_norms(model, IDX, t)
    assert measured.shape == (t + 1,) and measured.dtype == torch.float64
    assert torch.allclose(measured, expected.detach(), rtol=0, atol=1e-10)
    assert measured.min() > 0


def test_hidden_jacobians_equal_autograd_jacobians_of_the_recurrence():
    torch.manual_seed(0)
    H, D, T = 4, 3, 6
    W, U, b = (torch.randn(*shape, dtype=torch.float64) for shape in [(H, D), (H, H), (H,)])
    x = torch.randn(T, D, dtype=torch.float64)  # (T, D)
    states, h = [], torch.zeros(1, H, dtype=torch.float64)
    for t in range(T):
        h = elman_step(x[t : t + 1], h, W, U, b)  # (1, H)
        states.append(h[0])
    jacobians = hidden_jacobians(U, torch.stack(states))  # (T, H, H)

    def run_from(k):
        def h_last(h_k):  # h_{T-1} as a function of h_k: the loop from step k+1 on
            h = h_k[None]
            for t in range(k + 1, T):
                h = elman_step(x[t : t + 1], h, W, U, b)
            return h[0]

        return h_last

    for k in range(T):
        expected = torch.autograd.functional.jacobian(run_from(k), states[k])  # (H, H)
        assert torch.allclose(jacobians[k], expected, rtol=0, atol=1e-10)
    assert torch.equal(jacobians[-1], torch.eye(H, dtype=torch.float64))


def test_lstm_norms_are_the_gradient_through_h_k_with_c_k_held():
    model = tiny("lstm")
    cell = model.scratch_layers()[0]
    x = model.embedding(IDX[None]).detach()  # (1, T, d)
    t, k = 6, 2
    h, c, hs, cs = torch.zeros(1, 5, dtype=torch.float64), torch.zeros(1, 5, dtype=torch.float64), [], []
    for step in range(t + 1):
        h, c, _ = lstm_step(x[:, step], (h, c), (cell.W, cell.U, cell.b))
        hs.append(h.detach())
        cs.append(c.detach())

    def loss_from(h_k):  # L_t with h_k as the variable and c_k fixed
        h, c = h_k[None], cs[k]
        for step in range(k + 1, t + 1):
            h, c, _ = lstm_step(x[:, step], (h, c), (cell.W, cell.U, cell.b))
        return F.cross_entropy(model.output(h), IDX[t + 1 : t + 2])

    expected = torch.autograd.functional.jacobian(loss_from, hs[k][0]).norm()
    measured = hidden_gradient_norms(model, IDX, t)
    assert isinstance(cell, ScratchLSTM) and measured.shape == (t + 1,)
    assert math.isclose(measured[k].item(), expected.item(), rel_tol=1e-10)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_library_and_scratch_models_and_batched_rows_agree(cell):
    model = tiny(cell)
    twin = model.as_scratch()
    batch = torch.stack([IDX, IDX.flip(0)])  # (2, T)
    rows = hidden_gradient_norms(model, batch, 5)
    assert rows.shape == (2, 6)
    assert torch.allclose(rows[0], hidden_gradient_norms(twin, IDX, 5), rtol=0, atol=1e-12)
    assert torch.allclose(rows[1], hidden_gradient_norms(model, IDX.flip(0), 5), rtol=0, atol=1e-12)


def test_measurement_leaves_the_model_alone_and_works_under_no_grad():
    model = tiny("rnn", "scratch")
    before = {name: p.clone() for name, p in model.named_parameters()}
    with torch.no_grad():
        norms = hidden_gradient_norms(model, IDX, 4)
    assert norms.shape == (5,) and not norms.requires_grad
    assert all(p.grad is None and torch.equal(p, before[name]) for name, p in model.named_parameters())


def test_hidden_gradient_norms_rejects_bad_arguments():
    model = tiny("rnn")
    with pytest.raises(CourseInputError, match="RecurrentLM"):
        hidden_gradient_norms(FeedForwardLM(V, 2), IDX, 1)
    with pytest.raises(CourseInputError, match="cell is 'gru'"):
        hidden_gradient_norms(tiny("gru"), IDX, 1)
    with pytest.raises(CourseInputError, match="t must be <= 7"):
        hidden_gradient_norms(model, IDX, 8)
    with pytest.raises(CourseInputError, match="t must be >= 0"):
        hidden_gradient_norms(model, IDX, -1)
    with pytest.raises(CourseInputError, match="at least 2 tokens"):
        hidden_gradient_norms(model, IDX[:1], 0)
    with pytest.raises(CourseInputError, match="LongTensor"):
        hidden_gradient_norms(model, IDX.double(), 1)
    with pytest.raises(CourseInputError, match="outside"):
        hidden_gradient_norms(model, torch.tensor([2, V]), 0)
    with pytest.raises(CourseInputError, match="max_len=4"):
        hidden_gradient_norms(tiny("rnn", max_len=4), IDX, 1)


# --- the decay curve -------------------------------------------------------------------------


def test_decay_curve_is_the_geometric_mean_of_every_ratio():
    model = tiny("rnn")
    logs = {d: [] for d in range(5)}
    for words in SENTENCES:
        idx = framed(words)
        for t in range(len(idx) - 1):
            norms = hidden_gradient_norms(model, idx, t)  # (t+1,)
            for d in range(min(t, 4) + 1):
                logs[d].append(math.log(norms[t - d] / norms[t]))
    distances, curve = gradient_decay_curve(model, VOCAB, SENTENCES, distance_max=4, batch_size=3)
    expected = torch.tensor([math.exp(sum(v) / len(v)) for v in logs.values()], dtype=torch.float64)
    assert distances.tolist() == [0, 1, 2, 3, 4]
    assert torch.allclose(curve, expected, rtol=1e-10, atol=0) and curve[0] == 1


def test_decay_curve_does_not_depend_on_batching_and_takes_ids():
    model = tiny("lstm")
    _, by_one = gradient_decay_curve(model, VOCAB, SENTENCES, distance_max=3, batch_size=1)
    ids = [VOCAB.encode(words) for words in SENTENCES]
    _, together = gradient_decay_curve(model, VOCAB, ids, distance_max=3)
    assert torch.allclose(by_one, together, rtol=1e-12, atol=0)


def test_decay_curve_rejects_bad_arguments():
    model = tiny("rnn")
    with pytest.raises(CourseInputError, match="at least 11 words; the longest given has 10"):
        gradient_decay_curve(model, VOCAB, SENTENCES, distance_max=11)
    with pytest.raises(CourseInputError, match="vocabulary has"):
        gradient_decay_curve(model, Vocab(["the"]), SENTENCES, distance_max=2)
    with pytest.raises(CourseInputError, match="at least one sentence"):
        gradient_decay_curve(model, VOCAB, [], distance_max=2)
    with pytest.raises(CourseInputError, match="batch_size"):
        gradient_decay_curve(model, VOCAB, SENTENCES, distance_max=2, batch_size=0)
    with pytest.raises(CourseInputError, match="distance_max"):
        gradient_decay_curve(model, VOCAB, SENTENCES, distance_max=-1)
    with pytest.raises(CourseInputError, match="unknown|not in the vocabulary"):
        gradient_decay_curve(model, VOCAB, [["the", "unicorn"]], distance_max=1)
    with pytest.raises(CourseInputError, match="cell is 'gru'"):
        gradient_decay_curve(tiny("gru"), VOCAB, SENTENCES, distance_max=1)


def test_jacobian_product_norms_rejects_bad_arguments():
    U, states, grad = (torch.eye(3), torch.zeros(4, 3), torch.ones(3))
    U, states, grad = U.double(), states.double(), grad.double()
    with pytest.raises(CourseInputError, match="square"):
        jacobian_product_norms(torch.zeros(3, 2, dtype=torch.float64), states, grad)
    with pytest.raises(CourseInputError, match="square"):
        jacobian_product_norms(torch.eye(3, dtype=torch.long), states, grad)
    with pytest.raises(CourseInputError, match=r"\(t\+1, 3\)"):
        jacobian_product_norms(U, torch.zeros(4, 2, dtype=torch.float64), grad)
    with pytest.raises(CourseInputError, match=r"\(t\+1, 3\)"):
        jacobian_product_norms(U, torch.zeros(0, 3, dtype=torch.float64), grad)
    with pytest.raises(CourseInputError, match="one dtype"):
        jacobian_product_norms(U, states.float(), grad)
    with pytest.raises(CourseInputError, match="grad_t"):
        jacobian_product_norms(U, states, torch.ones(4, dtype=torch.float64))
    with pytest.raises(CourseInputError, match="grad_t"):
        jacobian_product_norms(U, states, [1.0, 1.0, 1.0])
    assert torch.equal(jacobian_product_norms(U, states, grad), torch.full((4,), math.sqrt(3), dtype=torch.float64))


# --- exploding gradients and clipping ----------------------------------------------------------


def test_scaled_orthogonal_has_the_asked_spectral_radius():
    U = scaled_orthogonal(6, 1.5, seed=1)
    assert torch.allclose(torch.linalg.eigvals(U).abs(), torch.full((6,), 1.5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(U @ U.T, 2.25 * torch.eye(6, dtype=torch.float64), atol=1e-12)
    assert torch.equal(U, scaled_orthogonal(6, 1.5, seed=1)) and not torch.equal(U, scaled_orthogonal(6, 1.5, seed=2))
    with pytest.raises(CourseInputError, match="radius"):
        scaled_orthogonal(6, 0)
    with pytest.raises(CourseInputError, match="size"):
        scaled_orthogonal(0, 1.0)


@pytest.mark.parametrize("radius", [0.5, 1.5])
def test_small_inputs_give_norms_of_radius_to_the_distance(radius):
    distances, norms = exploding_demo(radius, steps=15)
    assert distances.tolist() == list(range(15))
    assert torch.allclose(norms, radius ** distances.double(), rtol=1e-3, atol=0)


def test_saturated_tanh_shrinks_even_a_large_radius():
    _, small = exploding_demo(1.5, steps=20)
    _, saturated = exploding_demo(1.5, steps=20, input_scale=1.0)
    assert small[-1] > 1000 and saturated[-1] < 1
    with pytest.raises(CourseInputError, match="input_scale"):
        exploding_demo(1.5, input_scale=-1.0)
    with pytest.raises(CourseInputError, match="steps"):
        exploding_demo(1.5, steps=0)


@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_by_norm_matches_torch(max_norm):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(3, 4)), torch.nn.Parameter(torch.randn(5))]
    for p in params:
        p.grad = torch.randn_like(p) * 3
    grads = [p.grad.clone() for p in params]
    clipped, total = clip_by_norm(grads, max_norm)
    expected_total = torch.nn.utils.clip_grad_norm_(params, max_norm)
    assert math.isclose(total, expected_total.item(), rel_tol=1e-6)
    assert all(torch.allclose(c, p.grad, rtol=1e-6, atol=1e-7) for c, p in zip(clipped, params))
    joint = torch.sqrt(sum(c.double().pow(2).sum() for c in clipped)).item()
    assert joint <= max_norm * (1 + 1e-6)
    assert all(torch.equal(c, g) for c, g in zip(clipped, grads)) == (max_norm > total)  # unchanged when not too large


def test_clip_by_norm_rejects_bad_arguments():
    with pytest.raises(CourseInputError, match="max_norm"):
        clip_by_norm([torch.ones(2)], 0)
    with pytest.raises(CourseInputError, match="non-empty list"):
        clip_by_norm([], 1.0)
    with pytest.raises(CourseInputError, match="non-empty list"):
        clip_by_norm([torch.ones(2), None], 1.0)
    with pytest.raises(CourseInputError, match="non-empty list"):
        clip_by_norm(torch.ones(2), 1.0)
    with pytest.raises(CourseInputError, match="NaN or infinite.*learning rate"):
        clip_by_norm([torch.tensor([1.0, math.nan])], 1.0)


# --- time per sequence -------------------------------------------------------------------------


@pytest.mark.parametrize("model", [tiny("rnn").float(), FeedForwardLM(V, 2)], ids=["rnn", "ffnn"])
def test_time_per_sequence_gives_a_positive_time_per_length(model):
    model.train()
    times = time_per_sequence(model, [3, 1, 8], batch_size=2, repeats=2)
    assert list(times) == [3, 1, 8] and all(isinstance(s, float) and s > 0 for s in times.values())
    assert model.training


def test_time_per_sequence_rejects_bad_arguments():
    model = tiny("rnn", max_len=16)
    cases = [([], "empty"), ([0], ">= 1"), ([17], "<= 16"), ([4, 4], "repeats"), ([2.5], "integer"),
             ("8", "list of sequence lengths"), (8, "list of sequence lengths")]  # fmt: skip
    for lengths, message in cases:
        with pytest.raises(CourseInputError, match=message):
            time_per_sequence(model, lengths)
    with pytest.raises(CourseInputError, match="batch_size"):
        time_per_sequence(model, [4], batch_size=0)
    with pytest.raises(CourseInputError, match="repeats"):
        time_per_sequence(model, [4], repeats=0)
    with pytest.raises(CourseInputError, match="language model"):
        time_per_sequence(torch.nn.Linear(2, 2), [4])


# --- gate activations --------------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["library", "scratch"])
def test_gate_activations_over_a_sentence(impl):
    model = tiny("lstm", impl)
    gates = gate_activations(model, VOCAB, "the cats near the dog sleep .")
    assert set(gates) == {"input", "forget", "output", "candidate", "cell"}
    assert all(g.shape == (8, 5) for g in gates.values())
    assert all(0 < g.min() and g.max() < 1 for name, g in gates.items() if name in ("input", "forget", "output"))
    assert -1 < gates["candidate"].min() and gates["candidate"].max() < 1
    h = gates["output"] * torch.tanh(gates["cell"])  # (T, H): h_t = o ⊙ tanh(c_t)
    idx = framed("the cats near the dog sleep .".split())[None, :-1]  # (1, T): <s> and the words
    assert torch.allclose(h, model.hidden_states(idx)[0], atol=1e-12)
    twin = gate_activations(model.as_scratch(), VOCAB, "the cats near the dog sleep .".split())
    assert torch.equal(gates["forget"], twin["forget"])


def test_gate_activations_rejects_bad_arguments():
    model = tiny("lstm")
    with pytest.raises(CourseInputError, match="cell='rnn'"):
        gate_activations(tiny("rnn"), VOCAB, "the cat")
    with pytest.raises(CourseInputError, match="LSTM RecurrentLM"):
        gate_activations(FeedForwardLM(V, 2), VOCAB, "the cat")
    with pytest.raises(CourseInputError, match="empty"):
        gate_activations(model, VOCAB, "   ")
    with pytest.raises(CourseInputError, match="unicorn"):
        gate_activations(model, VOCAB, "the unicorn sleeps")
    with pytest.raises(CourseInputError, match="vocabulary has"):
        gate_activations(model, Vocab(["the"]), "the")
    with pytest.raises(CourseInputError, match="max_len=3"):
        gate_activations(tiny("lstm", max_len=3), VOCAB, "the cat sleeps .")


# --- states after prefixes, and the number unit --------------------------------------------------


@pytest.mark.parametrize("cell", [False, True])
def test_states_after_prefixes_are_the_last_state_of_each_prefix_read_alone(cell):
    model = tiny("lstm")
    prefixes = [words[:-1] for words in SENTENCES]  # different lengths: batched by length inside
    states = states_after_prefixes(model, VOCAB, prefixes, cell=cell)
    assert states.shape == (len(prefixes), 5)
    for row, words in enumerate(prefixes):
        idx = torch.tensor([[VOCAB.bos_id, *VOCAB.encode(words)]])  # (1, L+1)
        alone = model.gates(idx)["cell"][0, -1] if cell else model.hidden_states(idx)[0, -1]  # (H,)
        assert torch.allclose(states[row], alone.float(), atol=1e-6)


def test_states_after_prefixes_rejects_bad_arguments():
    with pytest.raises(CourseInputError, match="only an LSTM has a cell"):
        states_after_prefixes(tiny("rnn"), VOCAB, [["the", "cat"]], cell=True)
    with pytest.raises(CourseInputError, match="RecurrentLM"):
        states_after_prefixes(FeedForwardLM(V, 2), VOCAB, [["the", "cat"]])
    with pytest.raises(CourseInputError, match="unicorn"):
        states_after_prefixes(tiny("rnn"), VOCAB, [["the", "unicorn"]])


def agreement_items(n: int) -> list[dict]:
    """n items alternating in number as sg, pl, pl, sg, ... so that both halves have both numbers."""
    numbers = ["sg", "pl", "pl", "sg"]
    return [{"number": numbers[i % 4], "attractors": i % 3} for i in range(n)]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_number_unit_finds_the_unit_that_tracks_the_number(sign):
    items = agreement_items(60)
    generator = torch.Generator().manual_seed(0)
    states = torch.randn(60, 6, generator=generator)  # (N, H): noise
    plural = torch.tensor([item["number"] == "pl" for item in items]).float()
    states[:, 4] = sign * (2 * plural - 1) + 0.1 * torch.randn(60, generator=generator)  # unit 4 carries the number
    found = number_unit(states, items)
    assert found.unit == 4 and sign * found.r > 0.9
    assert found.accuracy == {0: 1.0, 1: 1.0, 2: 1.0}


def test_number_unit_is_tested_on_the_other_half_only():
    items = agreement_items(40)
    plural = torch.tensor([item["number"] == "pl" for item in items]).float()
    states = torch.zeros(40, 3)
    states[:, 1] = 2 * plural - 1
    states[1::2, 1] *= -1  # on the held-out (odd) items the unit says the opposite
    unit, r, accuracy = number_unit(states, items)
    assert unit == 1 and r > 0.99 and set(accuracy.values()) == {0.0}


def test_number_unit_rejects_bad_arguments():
    items = agreement_items(8)
    with pytest.raises(CourseInputError, match="one row per item"):
        number_unit(torch.zeros(7, 3), items)
    with pytest.raises(CourseInputError, match="'number'"):
        number_unit(torch.zeros(8, 3), [{"number": "dual", "attractors": 0}] * 8)
    with pytest.raises(CourseInputError, match="one number only"):
        number_unit(torch.zeros(8, 3), [{"number": "sg", "attractors": 0}] * 8)


# --- every word predicted, from the left or from both sides -------------------------------------


def tiny_bilstm() -> MaskedBiLSTM:
    return MaskedBiLSTM(V, embed_dim=4, hidden_dim=5, seed=3).double()


def test_word_scores_of_a_left_to_right_lm_are_its_per_word_predictions():
    model = tiny("rnn")
    right, nll, count = 0, 0.0, 0
    for words in SENTENCES:
        idx = framed(words)  # (n+2,)
        logp = torch.log_softmax(model(idx[None, :-1])[0][0], dim=-1)  # (n+1, V): step t predicts idx[t+1]
        for t in range(len(words)):  # the words, not </s>
            right += int(logp[t].argmax() == idx[t + 1])
            nll -= logp[t, idx[t + 1]].item()
            count += 1
    accuracy, mean_nll = word_prediction_scores(model, VOCAB, SENTENCES, batch_size=3)
    assert accuracy == right / count and math.isclose(mean_nll, nll / count, rel_tol=1e-12)
    one_by_one = word_prediction_scores(model, VOCAB, SENTENCES, batch_size=1)
    assert one_by_one[0] == accuracy and math.isclose(one_by_one[1], mean_nll, rel_tol=1e-12)


def test_word_scores_of_a_bilstm_are_its_masked_word_predictions():
    model = tiny_bilstm()
    right, nll, count = 0, 0.0, 0
    for words in SENTENCES:
        for t, word in enumerate(words):
            probs = predict_masked_words(model, VOCAB, [*words[:t], "<mask>", *words[t + 1 :]])  # (V,)
            right += int(probs.argmax() == VOCAB.stoi[word])
            nll -= math.log(probs[VOCAB.stoi[word]].item())
            count += 1
    model.train()  # predict_masked_words switched it to eval
    accuracy, mean_nll = word_prediction_scores(model, VOCAB, SENTENCES)
    assert accuracy == right / count and math.isclose(mean_nll, nll / count, rel_tol=1e-9)
    assert model.training  # left as it was found


def test_word_scores_reject_bad_arguments():
    with pytest.raises(CourseInputError, match="vocabulary has"):
        word_prediction_scores(tiny("rnn"), Vocab(["the"]), SENTENCES)
    with pytest.raises(CourseInputError, match="at least one sentence"):
        word_prediction_scores(tiny("rnn"), VOCAB, [])
    with pytest.raises(CourseInputError, match="batch_size"):
        word_prediction_scores(tiny("rnn"), VOCAB, SENTENCES, batch_size=0)


# --- one side of a BiLSTM's gap at a time --------------------------------------------------------


def test_gap_states_reproduce_the_bilstm_forward_on_a_padded_batch():
    model = tiny_bilstm().eval()
    idx = frame_sentences([VOCAB.encode(words) for words in SENTENCES], VOCAB)  # (B, T) with padding
    before, after = gap_states(model, idx)
    assert torch.equal(model.output(torch.cat([before, after], dim=-1)), model(idx)[0])


def test_masked_word_by_side_hides_one_side_at_a_time():
    model = tiny_bilstm()
    means = mean_side_states(model, VOCAB, SENTENCES)
    assert [m.shape for m in means] == [(5,), (5,)]
    same_right = ("the cat <mask> the dog sleeps .", "the cats near the dog <mask> the dog sleeps .")
    same_left = ("the cat <mask> the dog sleeps .", "the cat <mask> .")
    a, b = (masked_word_by_side(model, VOCAB, s, means) for s in same_right)
    assert torch.equal(a["right only"], b["right only"]) and not torch.allclose(a["left only"], b["left only"])
    c, d = (masked_word_by_side(model, VOCAB, s, means) for s in same_left)
    assert torch.equal(c["left only"], d["left only"]) and not torch.allclose(c["right only"], d["right only"])
    assert torch.allclose(a["both sides"], predict_masked_words(model, VOCAB, same_right[0]), rtol=0, atol=1e-12)
    assert all(math.isclose(p.sum().item(), 1.0, rel_tol=1e-9) for p in a.values())


def test_masked_word_by_side_rejects_bad_arguments():
    model = tiny_bilstm()
    means = mean_side_states(model, VOCAB, SENTENCES)
    with pytest.raises(CourseInputError, match="MaskedBiLSTM"):
        masked_word_by_side(tiny("lstm"), VOCAB, "the <mask> sleeps .", means)
    with pytest.raises(CourseInputError, match="exactly one"):
        masked_word_by_side(model, VOCAB, "the <mask> near the <mask> sleep .", means)
    with pytest.raises(CourseInputError, match="MaskedBiLSTM"):
        mean_side_states(tiny("lstm"), VOCAB, SENTENCES)


# --- one of ELMo's layers alone ------------------------------------------------------------------


def test_pooled_layers_average_each_layer_over_the_real_tokens_and_commute_with_the_mix():
    elmo = ElmoLM(V, embed_dim=4, hidden_dim=4, num_layers=2, seed=1)
    x = frame_sentences([VOCAB.encode(words) for words in SENTENCES], VOCAB)  # (N, T), padded
    pooled = pooled_layers(elmo, x, VOCAB.pad_id)  # (L+1, N, 2d)
    layers = elmo.layers(x)  # (L+1, N, T, 2d)
    assert pooled.shape == (3, len(SENTENCES), 8)
    for row, words in enumerate(SENTENCES):
        real = len(words) + 2  # <s> w1..wn </s>
        assert torch.allclose(pooled[:, row], layers[:, row, :real].mean(dim=1), atol=1e-6)
    mix = ScalarMix(3)
    with torch.no_grad():
        mix.w.copy_(torch.tensor([0.3, -1.0, 2.0]))
        mix.gamma.fill_(1.7)
        keep = (x != VOCAB.pad_id).unsqueeze(-1).float()  # (N, T, 1)
        mixed_then_pooled = (mix(layers) * keep).sum(1) / keep.sum(1)  # (N, 2d): what ElmoClassifier computes
        assert torch.allclose(mix(pooled), mixed_then_pooled, atol=1e-6)  # pooling first gives the same
    with pytest.raises(CourseInputError, match="ElmoLM"):
        pooled_layers(tiny("lstm"), x, VOCAB.pad_id)


def test_train_feature_head_learns_a_separable_task():
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(200, 3, generator=generator)  # (N, F)
    labels = (features[:, 0] > 0).long()  # (N,)
    head = train_feature_head(features, labels, steps=200, lr=1e-2, batch_size=32, seed=0)
    with torch.no_grad():
        accuracy = (head(features)[0].argmax(-1) == labels).double().mean().item()
    assert not head.training and accuracy > 0.95
    again = train_feature_head(features, labels, steps=200, lr=1e-2, batch_size=32, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(head.parameters(), again.parameters()))


# --- notebook 05's tables: the slide's loop, model sizes, chunked perplexity, agreement twins -----


def test_slide_loop_notes_name_the_skipped_input_and_the_chain_rule_probability():
    ids = [VOCAB.bos_id, *VOCAB.encode("the cat sleeps .".split())]  # T = 5
    loop = torch.full((len(ids), V), 0.5)
    first, second = slide_loop_notes(loop, ids, VOCAB, 0.25).splitlines()
    assert first == "range(1, len(x)) would read 4 of the 5 inputs, skipping ['<s>']"
    assert second == f"P(the cat sleeps . </s>) by the loop: {0.5**5:.3e}   oracle: 2.500e-01"


def test_ffnn_size_lines_count_the_weights_one_more_word_of_window_adds():
    ffnns = {n: FeedForwardLM(V, n, embed_dim=4, hidden_dim=6) for n in (2, 3)}
    lines = ffnn_size_lines(ffnns, 5, V)
    count = [sum(p.numel() for p in m.parameters()) for m in ffnns.values()]
    assert count[1] - count[0] == 4 * 6  # one more d × hidden block of the hidden layer
    assert lines[0].startswith(f"FFNN, window of N = 2: shipped (hidden 6) {count[0]:,}")
    assert lines[-1].endswith(f"(shipped N = 2 → 3: {4 * 6:,}); at the RNN's width, 4 × 5 = 20")


def test_perplexity_of_uniform_logits_is_the_vocabulary_size():
    targets = torch.tensor([[4, 5, 6]])
    assert perplexity(torch.zeros(1, 3, V), targets) == pytest.approx(V)
    confident = F.one_hot(targets, V).float() * 50  # (1, 3, V): almost all mass on the target
    assert perplexity(confident, targets) == pytest.approx(1.0)


def test_twin_flips_the_subjects_number_and_back():
    girl = "the girl that saw the boys".split()
    assert twin(girl) == "the girls that saw the boys".split()
    assert twin(twin(girl)) == girl


def test_next_word_probs_are_the_models_or_the_grammars():
    from course_utils.evaluation.lm_probes import oracle_probs
    from course_utils.language.grammar import CourseLanguage
    from course_utils.language.vocab import course_vocab

    vocab, lang = course_vocab(), CourseLanguage()
    oracle = next_word_probs("oracle", ["the"], vocab, lang)
    assert torch.equal(oracle, oracle_probs(lang, vocab, ["the"]))
    assert oracle.sum().item() == pytest.approx(1.0)
    model = RecurrentLM(len(vocab), embed_dim=4, hidden_dim=5, seed=3).double()
    assert torch.equal(next_word_probs(model, ["the"], vocab, lang), lm.next_token_probs(model, vocab, ["the"]))


def test_lecture_claims_set_each_claim_beside_its_numbers():
    from course_utils.analysis.seed_spread import spread

    models = ("trigram", "FFNN N=5", "RNN", "GRU", "LSTM")
    table = lecture_claims(
        agreement={name: {0: 0.75, 2: 0.5, 5: 0.25 + i / 10} for i, name in enumerate(models)},
        perplexity={"FFNN N=5": 21.0, "RNN": 20.5, "GRU": 20.25, "LSTM": 20.6, "LSTM 2 layers": 20.8},
        oracle_ppl=20.0,
        decay={"RNN": {20: 2e-4}, "LSTM": {20: 1.2e-3}},
        weights={"RNN": 100, "GRU": 300, "LSTM": 400},
        lstm_vs_rnn="within noise",
        wide_five={"RNN, hidden 256": spread([0.7, 0.8, 0.9])},
        at_five={"RNN": spread([0.2, 0.2, 0.2]), "LSTM": spread([1.0, 1.0, 1.0])},
        deep_accuracy={5: 0.97},
        stacked_weights=1.6,
        masked_scores={"BiLSTM, both sides": (0.625,), "LSTM LM, left only": (0.5,)},
        sentiment={"elmo_sentiment": (0.9, 0.95, 0.7), "sentiment_embeddings": (0.8, 0.99, 0.6)},
        elmo_verdict={"all": "ELMo mix better", "but/not": "within noise"},
    )
    assert list(table) == list(LECTURE_CLAIMS)
    assert all(table[model][0] == claim for model, claim in LECTURE_CLAIMS.items())
    assert table["FFNN (N = 5)"][1].startswith("perplexity 1.050× oracle; agreement 0.75 → 0.50")
    assert "gradient at 20 words 2e-04; agreement 0.45 with 5 attractors" in table["RNN"][1]
    assert table["GRU"][1].endswith("perplexity 1.012× oracle; 3× the RNN's recurrent weights")
    assert "perplexity 1.030× oracle (the RNN: 1.025×; over seeds within noise); 4×" in table["LSTM"][1]
    assert "0.80 (0.70–0.90, 3 seeds) (hidden 128: 0.20 (0.20–0.20, 3 seeds)" in table["RNN, wider state"][1]
    assert table["stacked LSTM"][1] == (
        "perplexity 1.0400× vs 1.0300× oracle; agreement 0.97 vs 0.65 with 5 attractors; 1.6× the weights"
    )
    assert table["bidirectional LSTM"][1].startswith("masked word right 0.625 vs 0.500 from the left only")
    assert table["ELMo mix"][1].endswith("0.700 vs 0.600; over seeds: ELMo mix better, on but/not within noise")
