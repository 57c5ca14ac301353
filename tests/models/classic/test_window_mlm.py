"""The fixed-window masked-word predictor: windows and padding, the lecture's limitations, prediction, bad input."""

import pytest
import torch

from course_utils import CourseInputError
from course_utils.models.lm import IGNORE_INDEX
from course_utils.models.classic.window_mlm import (
    WindowMaskedLM,
    example_batches,
    masked_examples,
    masked_window,
    predict_masked,
)
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.training import train

SENTENCES = [
    "he ate the cake with the fork .".split(),
    "she ate the soup with the spoon .".split(),
    "he ate the cake with the spoon .".split(),
    "she ate the soup with the fork .".split(),
    "he cut the cake with the knife .".split(),
    "she cut the bread with the knife .".split(),
]


@pytest.fixture(scope="module")
def vocab():
    return Vocab.build(SENTENCES)


def model_of(vocab_size=20, width=2, **kwargs):
    return WindowMaskedLM(vocab_size, width, **{"embed_dim": 4, "hidden_dim": 6, **kwargs})


def random_windows(vocab_size=20, width=2, rows=5, seed=0):
    return torch.randint(5, vocab_size, (rows, 2 * width), generator=torch.Generator().manual_seed(seed))


# --- examples and windows --------------------------------------------------------------------


def test_masked_examples_make_one_example_per_word_padded_with_s_then_pad(vocab):
    ids = vocab.encode("he ate the cake .".split())
    windows, targets = masked_examples([ids, [], vocab.encode(["she"])], vocab, width=3)
    assert windows.shape == (6, 6) and targets.shape == (6,)
    assert targets.tolist() == ids + vocab.encode(["she"])
    rows = [vocab.decode(row) for row in windows]
    assert rows[0] == ["<pad>", "<pad>", "<s>", "ate", "the", "cake"]
    assert rows[2] == ["<s>", "he", "ate", "cake", ".", "</s>"]
    assert rows[4] == ["ate", "the", "cake", "</s>", "<pad>", "<pad>"]
    assert rows[5] == ["<pad>", "<pad>", "<s>", "</s>", "<pad>", "<pad>"]


def test_masked_window_is_the_same_window_as_in_the_examples(vocab):
    words = SENTENCES[0]
    windows, _ = masked_examples([vocab.encode(words)], vocab, width=2)
    for position in range(len(words)):
        assert torch.equal(masked_window(words, position, 2, vocab), windows[position])
    masked = words[:4] + [MASK] + words[5:]
    assert torch.equal(masked_window(masked, 4, 2, vocab), windows[4])
    assert torch.equal(masked_window(" ".join(masked), 4, 2, vocab), windows[4])


def test_the_hidden_word_may_be_unknown(vocab):
    assert masked_window("he ate the zzz with".split(), 3, 1, vocab).tolist() == vocab.encode(["the", "with"])


@pytest.mark.parametrize(
    "tokens, position",
    [
        ([], 0),
        ("he ate".split(), 2),
        ("he ate".split(), -1),
        ("he ate".split(), 1.0),
        ("he <mask> the".split(), 2),
        ("he ate zzz".split(), 0),
        (42, 0),
    ],
)
def test_masked_window_refuses_bad_input(vocab, tokens, position):
    with pytest.raises(CourseInputError):
        masked_window(tokens, position, 2, vocab)


@pytest.mark.parametrize(
    "id_lists, width", [([], 2), ([[], []], 2), ([[5, 6]], 0), ([[5, 999]], 2), ([[5, 6.5]], 2), ([["he"]], 2)]
)
def test_masked_examples_refuse_bad_input(vocab, id_lists, width):
    with pytest.raises(CourseInputError):
        masked_examples(id_lists, vocab, width)


# --- the model -------------------------------------------------------------------------------


@pytest.mark.parametrize("combine", ["concat", "bag"])
def test_shapes_and_loss(combine):
    model = model_of(combine=combine).double()
    windows = random_windows()
    targets = torch.tensor([5, 6, IGNORE_INDEX, 8, 9])
    logits, loss = model(windows, targets)
    assert logits.shape == (5, 20) and model(windows)[1] is None
    log_probs = torch.log_softmax(logits, dim=-1)
    expected = -torch.stack([log_probs[i, targets[i]] for i in (0, 1, 3, 4)]).mean()
    assert torch.isclose(loss, expected, rtol=0, atol=1e-12)


def test_the_bag_cannot_see_order_and_the_concat_model_can():
    windows = random_windows(rows=8)
    shuffled = windows[:, torch.tensor([3, 0, 2, 1])]  # the same words, in another order
    bag, concat = model_of(combine="bag"), model_of(combine="concat")
    assert torch.allclose(bag(windows)[0], bag(shuffled)[0], atol=1e-6)
    assert not torch.allclose(concat(windows)[0], concat(shuffled)[0], atol=1e-3)


def test_words_outside_the_window_cannot_change_the_prediction(vocab):
    model = model_of(len(vocab), width=1)
    near = predict_masked(model, vocab, "he ate the cake <mask> the fork .")
    far_changed = predict_masked(model, vocab, "she cut the cake <mask> the knife .")  # differs only outside the window
    nearby_changed = predict_masked(model, vocab, "he ate the soup <mask> the fork .")
    assert torch.equal(near, far_changed)
    assert not torch.allclose(near, nearby_changed)


def test_the_concat_model_has_its_own_weights_for_each_position():
    model = model_of(width=2, combine="concat")
    blocks = model.position_weights()  # (2w, H, d)
    assert blocks.shape == (4, 6, 4)
    for slot in range(4):
        assert torch.equal(blocks[slot], model.hidden.weight[:, slot * 4 : (slot + 1) * 4])
    _, loss = model(torch.tensor([[0, 0, 7, 0]]), torch.tensor([5]))  # one word, in slot 2; <pad> elsewhere
    loss.backward()
    touched = model.hidden.weight.grad.view(6, 4, 4).abs().sum(dim=(0, 2))  # (2w,): gradient per slot
    assert touched[2] > 0 and touched[[0, 1, 3]].sum() == 0  # learning about slot 2 leaves the other slots alone
    with pytest.raises(CourseInputError, match="bag"):
        model_of(combine="bag").position_weights()


def test_pad_has_a_zero_embedding():
    model = model_of(combine="bag", pad_id=0)
    assert torch.equal(model.embedding.weight[0], torch.zeros(4))
    windows = torch.tensor([[7, 0, 0, 0]])
    assert torch.allclose(model(windows)[0], model(torch.tensor([[0, 0, 0, 7]]))[0], atol=1e-6)


@pytest.mark.parametrize("combine", ["concat", "bag"])
def test_training_learns_the_instrument_word(vocab, combine):
    windows, targets = masked_examples([vocab.encode(s) for s in SENTENCES], vocab, width=2)
    model = WindowMaskedLM(len(vocab), 2, combine=combine, embed_dim=8, hidden_dim=32)
    history = train(model, lambda step: (windows, targets), steps=200, lr=2e-2, progress=False)
    assert history.final_loss < 0.5 * history.losses[0]
    probs = predict_masked(model, vocab, "he ate the cake <mask> the fork .")
    assert vocab.itos[int(probs.argmax())] == "with"


def test_predict_masked_gives_float64_probabilities(vocab):
    model = model_of(len(vocab))
    probs = predict_masked(model, vocab, "he ate the cake <mask> the fork .".split())
    assert probs.dtype == torch.float64 and probs.shape == (len(vocab),)
    assert torch.isclose(probs.sum(), torch.tensor(1.0, dtype=torch.float64)) and (probs > 0).all()
    assert not model.training


@pytest.mark.parametrize(
    "words, message",
    [
        ("he ate the cake with the fork .", "exactly one <mask>"),
        ("he <mask> the cake <mask> the fork .", "found 2"),
        ("he ate the pie <mask> the fork .", "not in the vocabulary"),
        ("", "exactly one"),
        (["he", 3], "list of words"),
    ],
)
def test_predict_masked_explains_bad_sentences(vocab, words, message):
    with pytest.raises(CourseInputError, match=message):
        predict_masked(model_of(len(vocab)), vocab, words)


def test_predict_masked_needs_the_models_vocabulary(vocab):
    with pytest.raises(CourseInputError, match="vocabulary"):
        predict_masked(model_of(len(vocab) + 1), vocab, "he <mask> .")


@pytest.mark.parametrize(
    "windows, targets",
    [
        (torch.zeros(3, 3, dtype=torch.long), None),  # 2·width = 4 columns needed
        (torch.zeros(3, 4), None),  # not ids
        (torch.full((3, 4), 20), None),  # out of range
        (torch.zeros(3, 4, dtype=torch.long), torch.zeros(2, dtype=torch.long)),  # one target per window
        (torch.zeros(3, 4, dtype=torch.long), torch.full((3,), 20)),  # target out of range
    ],
)
def test_forward_refuses_bad_input(windows, targets):
    with pytest.raises(CourseInputError):
        model_of()(windows, targets)


@pytest.mark.parametrize(
    "kwargs",
    [{"combine": "mean"}, {"width": 0}, {"vocab_size": 1}, {"pad_id": 20}, {"activation": "step"}, {"embed_dim": 0}],
)
def test_bad_constructor_arguments_are_refused(kwargs):
    with pytest.raises(CourseInputError):
        model_of(**kwargs)


# --- minibatches -----------------------------------------------------------------------------


def test_example_batches_are_deterministic_per_step():
    x, y = torch.arange(40).view(20, 2), torch.arange(20)
    first, again = example_batches(x, y, batch_size=6, seed=3), example_batches(x, y, batch_size=6, seed=3)
    bx, by = first(5)
    assert bx.shape == (6, 2) and torch.equal(bx[:, 0] // 2, by)
    assert torch.equal(again(5)[0], bx) and not torch.equal(first(6)[0], bx)
    assert not torch.equal(example_batches(x, y, batch_size=6, seed=4)(5)[0], bx)


@pytest.mark.parametrize("n_targets, batch_size, seed", [(19, 4, 0), (20, 0, 0), (20, 4, -1)])
def test_example_batches_refuse_bad_input(n_targets, batch_size, seed):
    with pytest.raises(CourseInputError):
        example_batches(torch.zeros(20, 2), torch.zeros(n_targets), batch_size=batch_size, seed=seed)
