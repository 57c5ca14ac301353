"""The feed-forward (Bengio) LM: the LM interface, causality, the window, scratch parity, learning, checkpoints."""

import math
from collections import Counter

import pytest
import torch

from course_utils import CourseInputError
from course_utils.models.basics.activations import ACTIVATIONS
from course_utils.checkpoints import load_checkpoint, save_checkpoint
from course_utils.models.lm import IGNORE_INDEX, evaluate, generate, make_batch, next_token_probs
from course_utils.models.classic.neural_lm import FeedForwardLM, bengio_forward_scratch, check_ids
from course_utils.language.text_pipeline import Vocab
from course_utils.training import train

V, N, B, T = 23, 3, 4, 9
BOS = 2


def random_idx(seed=0, shape=(B, T), vocab_size=V):
    return torch.randint(vocab_size, shape, generator=torch.Generator().manual_seed(seed))


def model_of(**kwargs):
    return FeedForwardLM(V, N, embed_dim=5, hidden_dim=7, **kwargs)


# --- the interface ---------------------------------------------------------------------------


def test_shapes_and_loss_follow_the_lm_interface():
    model = model_of()
    idx = random_idx()
    logits, loss = model(idx)
    assert logits.shape == (B, T, V) and loss is None
    logits2, loss = model(idx, random_idx(1))
    assert torch.equal(logits, logits2)
    assert loss.ndim == 0 and loss.item() > 0
    assert model.vocab_size == V and model.context_size == N
    assert isinstance(model.embedding, torch.nn.Embedding) and model.embedding.weight.shape == (V, 5)


def test_loss_is_the_mean_cross_entropy_over_targets_that_are_not_ignored():
    model = model_of().double()
    idx, targets = random_idx(0), random_idx(1)
    targets[0, 5:] = IGNORE_INDEX
    targets[2, :] = IGNORE_INDEX
    logits, loss = model(idx, targets)
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    terms = [-log_probs[b, t, targets[b, t]] for b in range(B) for t in range(T) if targets[b, t] != IGNORE_INDEX]
    assert len(terms) == B * T - (T - 5) - T
    assert torch.isclose(loss, torch.stack(terms).mean(), rtol=0, atol=1e-12)


def test_same_seed_same_weights_and_the_global_rng_is_left_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a, b, c = model_of(seed=0), model_of(seed=0), model_of(seed=1)
    assert torch.equal(torch.rand(3), expected)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embedding.weight, c.embedding.weight)


# --- causality and the fixed window ----------------------------------------------------------


@pytest.mark.parametrize("t", [0, 3, T - 2])
def test_logits_at_t_do_not_depend_on_later_tokens(t):
    model = model_of()
    idx = random_idx()
    changed = idx.clone()
    changed[:, t + 1 :] = (changed[:, t + 1 :] + 1) % V
    before, _ = model(idx)
    after, _ = model(changed)
    assert torch.equal(before[:, : t + 1], after[:, : t + 1])
    assert not torch.allclose(before[:, t + 1 :], after[:, t + 1 :])


def test_only_the_last_n_tokens_matter():
    model = model_of()
    idx = random_idx()
    t = 6
    outside, inside = idx.clone(), idx.clone()
    outside[:, t - N] = (outside[:, t - N] + 1) % V  # just left of the window idx[t-N+1 : t+1]
    inside[:, t - N + 1] = (inside[:, t - N + 1] + 1) % V  # the oldest word in the window
    logits, _ = model(idx)
    assert torch.equal(model(outside)[0][:, t], logits[:, t])
    assert not torch.allclose(model(inside)[0][:, t], logits[:, t])


def test_positions_before_the_start_read_as_bos():
    model = model_of()
    idx = random_idx()
    with_bos = torch.cat([torch.full((B, N - 1), BOS), idx], dim=1)  # (B, N-1+T)
    assert torch.allclose(model(with_bos)[0][:, N - 1 :], model(idx)[0], atol=1e-6)
    windows = model.context_windows(idx)  # (B, T, N)
    assert windows.shape == (B, T, N)
    assert windows[0, 0].tolist() == [BOS] * (N - 1) + [idx[0, 0].item()]
    assert windows[1, 5].tolist() == idx[1, 3:6].tolist()


def test_bos_id_is_the_models_own():
    model = model_of(bos_id=7)
    assert model.context_windows(torch.tensor([[9, 10]]))[0, 0].tolist() == [7, 7, 9]


# --- from scratch vs the module --------------------------------------------------------------


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-6), (torch.float64, 1e-12)])
def test_scratch_forward_matches_the_module(activation, dtype, tolerance):
    model = model_of(activation=activation).to(dtype)
    idx = random_idx()
    logits, _ = model(idx)  # (B, T, V)
    windows = model.context_windows(idx).reshape(-1, N)  # (B·T, N)
    probabilities = bengio_forward_scratch(model, windows)  # (B·T, V)
    assert probabilities.dtype == dtype
    assert (probabilities - torch.softmax(logits, dim=-1).reshape(-1, V)).abs().max() <= tolerance
    assert torch.allclose(probabilities.sum(dim=1), torch.ones(B * T, dtype=dtype))


def test_scratch_forward_of_one_window():
    model = model_of()
    windows = torch.tensor([[BOS, BOS, 5], [4, 5, 6]])
    probabilities = bengio_forward_scratch(model, windows[1])
    assert probabilities.shape == (V,)
    assert torch.allclose(probabilities, bengio_forward_scratch(model, windows)[1], rtol=0, atol=1e-7)


@pytest.mark.parametrize(
    "window_ids",
    [torch.tensor([[1, 2]]), torch.tensor([1, 2]), torch.tensor([[[1, 2, 3]]]), torch.tensor([[1, 2, V]]), [1, 2, 3]],
)
def test_scratch_forward_needs_windows_of_n_ids(window_ids):
    with pytest.raises(CourseInputError):
        bengio_forward_scratch(model_of(), window_ids)


# --- it learns -------------------------------------------------------------------------------


def tiny_corpus():
    """A deterministic little language: who does what to what, each subject with its own verb."""
    subjects = {"the cat": "eats", "the dog": "chases", "a bird": "sings", "my friend": "reads"}
    objects = {
        "eats": ["fish", "cake"],
        "chases": ["the ball", "a cat"],
        "sings": ["songs", "loudly"],
        "reads": ["books", "poems"],
    }
    return [f"{s} {v} {o} .".split() for s, v in subjects.items() for o in objects[v]]


def test_training_drives_the_loss_well_below_the_unigram_entropy():
    sentences = tiny_corpus()
    vocab = Vocab.build(sentences)
    idx, targets = make_batch([vocab.encode(s) for s in sentences], vocab)
    counts = Counter(t for t in targets.flatten().tolist() if t != IGNORE_INDEX)
    total = sum(counts.values())
    unigram_entropy = -sum(c / total * math.log(c / total) for c in counts.values())
    model = FeedForwardLM(len(vocab), 3, embed_dim=8, hidden_dim=32)
    history = train(model, lambda step: (idx, targets), steps=300, lr=1e-2, progress=False)
    assert history.losses[0] > 0.8 * unigram_entropy
    assert history.final_loss < 0.25 * unigram_entropy


def test_the_shared_lm_utilities_work_with_it():
    sentences = tiny_corpus()
    vocab = Vocab.build(sentences)
    model = FeedForwardLM(len(vocab), 3, embed_dim=4, hidden_dim=8)
    score = evaluate(model, vocab, sentences)
    assert score.tokens == sum(len(s) + 1 for s in sentences) and 1 < score.perplexity < 10 * len(vocab)
    probs = next_token_probs(model, vocab, ["the", "cat", "eats"], from_sentence_start=False)
    assert probs.shape == (len(vocab),) and torch.isclose(probs.sum(), torch.tensor(1.0, dtype=torch.float64))
    with pytest.raises(CourseInputError, match="N=3"):
        next_token_probs(model, vocab, ["cat", "eats"], from_sentence_start=False)
    assert generate(model, vocab, max_tokens=5, seed=1) == generate(model, vocab, max_tokens=5, seed=1)


# --- checkpoints -----------------------------------------------------------------------------


def test_checkpoint_round_trip_gives_identical_logits(tmp_path):
    model = FeedForwardLM(V, 4, embed_dim=6, hidden_dim=10, bos_id=3, activation="relu", seed=5)
    with torch.no_grad():
        model.output.weight.mul_(2)  # weights that differ from a fresh model with the same seed
    save_checkpoint(model, tmp_path, model.config())
    loaded, config = load_checkpoint(tmp_path, FeedForwardLM.from_config)
    assert config == model.config() and loaded.config() == model.config()
    idx = random_idx()
    assert torch.equal(loaded(idx)[0], model(idx)[0])


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "idx",
    [
        torch.rand(B, T),  # not ids
        torch.tensor([1, 2, 3]),  # 1-D
        torch.tensor([[1, V]]),  # out of range
        torch.tensor([[-1, 2]]),  # negative
        [[1, 2, 3]],  # not a tensor
        torch.tensor([[1, 2]], dtype=torch.int32),  # not a LongTensor
    ],
)
def test_bad_idx_is_refused(idx):
    with pytest.raises(CourseInputError):
        model_of()(idx)


@pytest.mark.parametrize(
    "targets",
    [torch.zeros(B, T - 1, dtype=torch.long), torch.full((B, T), V), torch.full((B, T), -2), torch.zeros(B, T)],
)
def test_bad_targets_are_refused(targets):
    with pytest.raises(CourseInputError):
        model_of()(random_idx(), targets)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"vocab_size": 1, "context_size": 2},
        {"vocab_size": V, "context_size": 0},
        {"vocab_size": V, "context_size": 2.5},
        {"vocab_size": V, "context_size": 2, "bos_id": V},
        {"vocab_size": V, "context_size": 2, "activation": "softplus"},
        {"vocab_size": V, "context_size": 2, "embed_dim": 0},
        {"vocab_size": V, "context_size": 2, "hidden_dim": -1},
        {"vocab_size": V, "context_size": 2, "seed": -1},
    ],
)
def test_bad_constructor_arguments_are_refused(kwargs):
    with pytest.raises(CourseInputError):
        FeedForwardLM(**kwargs)


def test_check_ids_names_the_bad_ids():
    with pytest.raises(CourseInputError, match=r"\[30, 31\]"):
        check_ids("idx", torch.tensor([[1, 30, 31]]), V, ndim=2)
    assert check_ids("t", torch.tensor([1, IGNORE_INDEX]), V, ndim=1, allow_ignore=True) is not None
