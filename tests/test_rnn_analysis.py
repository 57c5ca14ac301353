"""rnn_analysis: ‖∂L_t/∂h_k‖ by autograd = the Jacobian product; decay curve, exploding, clipping, timing, gates."""
import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import CourseInputError
from course_utils.models.neural_lm import FeedForwardLM
from course_utils.models.recurrent_lm import RecurrentLM
from course_utils.models.rnn import ScratchLSTM, elman_step, lstm_step
from course_utils.models.rnn_analysis import (
    clip_by_norm,
    exploding_demo,
    gate_activations,
    gradient_decay_curve,
    hidden_gradient_norms,
    hidden_jacobians,
    jacobian_product_norms,
    scaled_orthogonal,
    time_per_sequence,
)
from course_utils.language.text_pipeline import Vocab

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
