"""RecurrentLM: the LM interface, causality, scratch = library, gates, learning, generation, bad input, checkpoints."""

import math
from collections import Counter

import pytest
import torch
import torch.nn.functional as F

from course_utils import CourseInputError
from course_utils.checkpoints import load_checkpoint, save_checkpoint
from course_utils.models.lm import IGNORE_INDEX, batch_stream, evaluate, generate, next_token_probs
from course_utils.models.recurrent.recurrent_lm import RecurrentLM
from course_utils.language.text_pipeline import Vocab
from course_utils.training import NonFiniteLossError, train
from model_support import assert_causal

V, B, T = 19, 3, 8
VARIANTS = [("rnn", "library", 1), ("gru", "library", 1), ("lstm", "library", 1), ("lstm", "library", 2),
            ("rnn", "scratch", 1), ("lstm", "scratch", 1), ("lstm", "scratch", 2)]  # fmt: skip

# A tiny language with 8 equally likely sentences: the verb agrees with the subject, two adverbs.
SUBJECTS = [("the", "cat", "sleeps"), ("the", "cats", "sleep"), ("a", "dog", "barks"), ("the", "dogs", "bark")]
SENTENCES = [[*subject, adverb, "."] for subject in SUBJECTS for adverb in ("quietly", "loudly")]


def random_idx(seed=0, shape=(B, T)):
    return torch.randint(V, shape, generator=torch.Generator().manual_seed(seed))


def small(cell="lstm", impl="library", num_layers=1, **kwargs):
    return RecurrentLM(V, cell=cell, impl=impl, embed_dim=6, hidden_dim=10, num_layers=num_layers, **kwargs)


@pytest.fixture(scope="module")
def tiny():
    vocab = Vocab.build(SENTENCES)
    ids = [vocab.encode(sentence) for sentence in SENTENCES]
    counts = Counter(token for sentence in ids for token in sentence + [vocab.eos_id])
    total = sum(counts.values())
    unigram_entropy = -sum(n / total * math.log(n / total) for n in counts.values())
    return vocab, ids, unigram_entropy


def trained(tiny, cell, num_layers=1, steps=200):
    vocab, ids, _ = tiny
    model = RecurrentLM(len(vocab), cell=cell, embed_dim=16, hidden_dim=32, num_layers=num_layers)
    train(model, batch_stream(ids, vocab, batch_size=8, seed=0), steps=steps, lr=1e-2, progress=False)
    return model


# --- the interface ---------------------------------------------------------------------------


@pytest.mark.parametrize("cell, impl, num_layers", VARIANTS)
def test_shapes_and_loss_follow_the_lm_interface(cell, impl, num_layers):
    model = small(cell, impl, num_layers).double()
    idx, targets = random_idx(0), random_idx(1)
    targets[0, 5:] = IGNORE_INDEX
    logits, loss = model(idx)
    assert logits.shape == (B, T, V) and loss is None and model.vocab_size == V and model.max_len == 128
    logits, loss = model(idx, targets)
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    terms = [-log_probs[b, t, targets[b, t]] for b in range(B) for t in range(T) if targets[b, t] != IGNORE_INDEX]
    assert loss.ndim == 0 and torch.isclose(loss, torch.stack(terms).mean(), rtol=0, atol=1e-12)
    assert model.hidden_states(idx).shape == (B, T, 10)


@pytest.mark.parametrize("cell, impl, num_layers", VARIANTS)
@pytest.mark.parametrize("t", [0, 4, T - 2])
def test_logits_at_t_depend_only_on_tokens_up_to_t(cell, impl, num_layers, t):
    assert_causal(small(cell, impl, num_layers), random_idx(), V, t)


def test_an_early_token_changes_every_later_prediction():
    model = small("rnn")
    idx = random_idx()
    changed = idx.clone()
    changed[:, 0] = (changed[:, 0] + 1) % V
    differences = (model(idx)[0] - model(changed)[0]).abs().amax(dim=(0, 2))  # (T,)
    assert bool((differences > 0).all())  # unlike a fixed window, the memory reaches the last position


# --- scratch against library -----------------------------------------------------------------


@pytest.mark.parametrize("cell, num_layers", [("rnn", 1), ("lstm", 1), ("lstm", 2), ("rnn", 3)])
@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
def test_the_scratch_copy_gives_the_librarys_logits(cell, num_layers, dtype, tolerance):
    library = small(cell, num_layers=num_layers, seed=3).to(dtype)
    with torch.no_grad():  # move away from the shared initial weights, so the copy is what makes them agree
        for parameter in library.parameters():
            parameter.add_(0.1 * torch.randn(parameter.shape, generator=torch.Generator().manual_seed(4), dtype=dtype))
    scratch = library.as_scratch()
    assert scratch.impl == "scratch" and library.impl == "library"
    idx = random_idx(5)
    assert (scratch(idx)[0] - library(idx)[0]).abs().max().item() <= tolerance
    assert not torch.allclose(small(cell, "scratch", num_layers, seed=3).to(dtype)(idx)[0], library(idx)[0])


@pytest.mark.parametrize("cell, num_layers", [("rnn", 1), ("lstm", 2)])
def test_the_same_seed_builds_the_same_model_in_either_implementation(cell, num_layers):
    idx = random_idx(6)
    library, scratch = small(cell, num_layers=num_layers), small(cell, "scratch", num_layers)
    assert (library(idx)[0] - scratch(idx)[0]).abs().max().item() <= 1e-5


def test_same_seed_same_weights_and_the_global_rng_is_left_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a, b, c = small(seed=0), small(seed=0), small(seed=1)
    assert torch.equal(torch.rand(3), expected)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embedding.weight, c.embedding.weight)
    assert abs(a.embedding.weight.std().item() - 0.1) < 0.03  # small initial embeddings


# --- gates -----------------------------------------------------------------------------------


@pytest.mark.parametrize("num_layers", [1, 2])
def test_gates_rebuild_the_hidden_states_of_the_chosen_layer(num_layers):
    model = small("lstm", num_layers=num_layers)
    idx = random_idx(2)
    gates = model.gates(idx)
    assert set(gates) == {"input", "forget", "output", "candidate", "cell"}
    assert all(value.shape == (B, T, 10) for value in gates.values())
    assert torch.allclose(gates["output"] * torch.tanh(gates["cell"]), model.hidden_states(idx), atol=1e-6)
    if num_layers == 2:
        assert not torch.allclose(model.gates(idx, layer=0)["cell"], gates["cell"])


def test_gates_are_for_lstms_and_there_is_no_scratch_gru():
    with pytest.raises(CourseInputError, match="gates exist in an LSTM"):
        small("rnn").gates(random_idx())
    with pytest.raises(CourseInputError, match="no scratch GRU"):
        small("gru").as_scratch()
    with pytest.raises(CourseInputError, match="layer must be"):
        small("lstm").gates(random_idx(), layer=1)


# --- learning, evaluation, generation --------------------------------------------------------


@pytest.mark.parametrize("cell, num_layers", [("rnn", 1), ("gru", 1), ("lstm", 1), ("lstm", 2)])
def test_every_cell_learns_a_tiny_language(tiny, cell, num_layers):
    vocab, ids, unigram_entropy = tiny
    model = trained(tiny, cell, num_layers)
    score = evaluate(model, vocab, ids)
    best = math.log(len(SENTENCES)) / 6  # 8 equally likely sentences, 6 predictions each
    assert score.mean_nll < 0.25 * unigram_entropy
    assert score.mean_nll < best + 0.05


def test_a_trained_model_predicts_agreement_and_generates_until_the_end_of_sentence(tiny):
    vocab, _, _ = tiny
    model = trained(tiny, "lstm")
    probs = next_token_probs(model, vocab, ["the", "cats"])  # (V,)
    assert abs(probs.sum().item() - 1) < 1e-9 and probs[vocab.stoi["sleep"]] > 0.95
    samples = [generate(model, vocab, seed=seed) for seed in range(6)]
    assert all(sample in SENTENCES for sample in samples)  # sampled until </s>, which is left out
    assert len({tuple(sample) for sample in samples}) > 1
    assert generate(model, vocab, seed=3) == samples[3]
    assert generate(model, vocab, prefix=["a", "dog"], temperature=0)[:3] == ["a", "dog", "barks"]


@pytest.mark.parametrize("breaks_it", ["absurd learning rate", "NaN weights"])
def test_a_nan_loss_stops_training_with_a_suggestion(tiny, breaks_it):
    vocab, ids, _ = tiny
    model = RecurrentLM(len(vocab), cell="rnn", embed_dim=16, hidden_dim=32)
    lr = 1e6 if breaks_it == "absurd learning rate" else 1e-3
    if breaks_it == "NaN weights":
        with torch.no_grad():
            model.output.weight.fill_(math.nan)
    with pytest.raises(NonFiniteLossError) as error:
        train(model, batch_stream(ids, vocab, batch_size=8, seed=0), steps=50, lr=lr, progress=False)
    assert "smaller learning rate" in str(error.value) and "clip gradients" in str(error.value)


# --- bad input -------------------------------------------------------------------------------


def test_a_sequence_longer_than_max_len_names_the_limit_and_what_to_do():
    model = small(max_len=6)
    with pytest.raises(CourseInputError, match="max_len=6") as error:
        model(random_idx(shape=(1, 7)))
    assert "Split the text" in str(error.value) and "larger max_len" in str(error.value)
    assert model(random_idx(shape=(1, 6)))[0].shape == (1, 6, V)


@pytest.mark.parametrize(
    "idx, match",
    [
        (torch.zeros(0, 4, dtype=torch.long), "empty"),
        (torch.zeros(2, 0, dtype=torch.long), "empty"),
        (torch.tensor([[2, 5, V]]), "outside 0..18"),
        (torch.tensor([[2, -1]]), "outside"),
        (torch.tensor([2, 5]), "2 dimension"),
        (torch.tensor([[2.0, 5.0]]), "LongTensor"),
    ],
)
def test_bad_idx_gets_a_clear_message(idx, match):
    with pytest.raises(CourseInputError, match=match):
        small()(idx)


def test_bad_targets_get_a_clear_message():
    with pytest.raises(CourseInputError, match="shape of idx"):
        small()(random_idx(), random_idx(shape=(B, T - 1)))
    with pytest.raises(CourseInputError, match="outside"):
        small()(random_idx(), torch.full((B, T), V))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"cell": "transformer"}, "cell must be one of 'rnn', 'gru', 'lstm'"),
        ({"impl": "cuda"}, "impl must be one of 'library', 'scratch'"),
        ({"cell": "gru", "impl": "scratch"}, "no scratch GRU"),
        ({"num_layers": 0}, "num_layers"),
        ({"max_len": 0}, "max_len"),
        ({"hidden_dim": -1}, "hidden_dim"),
    ],
)
def test_bad_construction_gets_a_clear_message(kwargs, match):
    with pytest.raises(CourseInputError, match=match):
        RecurrentLM(V, **kwargs)


# --- checkpoints -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell, impl, num_layers", [("rnn", "scratch", 1), ("gru", "library", 1), ("lstm", "library", 2)]
)
def test_config_and_checkpoint_round_trip(tmp_path, cell, impl, num_layers):
    model = small(cell, impl, num_layers, seed=2, max_len=20)
    with torch.no_grad():
        model.output.bias.add_(1.0)  # not the freshly built weights: the checkpoint must carry them
    assert RecurrentLM.from_config(model.config()).config() == model.config()
    save_checkpoint(model, tmp_path / "m", model.config())
    loaded, config = load_checkpoint(tmp_path / "m", RecurrentLM.from_config)
    idx = random_idx(9)
    assert config == model.config() and torch.equal(loaded(idx)[0], model.eval()(idx)[0])
    assert not torch.equal(RecurrentLM.from_config(config)(idx)[0], model(idx)[0])


def test_the_loss_ignores_padding_like_the_cross_entropy_does():
    model = small("gru")
    idx, targets = random_idx(0), random_idx(1)
    targets[:, -3:] = IGNORE_INDEX
    logits, loss = model(idx, targets)
    expected = F.cross_entropy(logits[:, :-3].flatten(0, 1), targets[:, :-3].flatten())
    assert torch.isclose(loss, expected)
