"""The bidirectional masked-word LSTM and ELMo: what each position reads, padding, learning, ScalarMix, frozen ELMo."""

import itertools

import pytest
import torch

from course_utils import CourseInputError
from course_utils.checkpoints import load_checkpoint, save_checkpoint
from course_utils.models.lm import IGNORE_INDEX, batch_stream, evaluate, make_batch
from course_utils.models.recurrent.recurrent_lm import (
    ElmoClassifier,
    ElmoLM,
    MaskedBiLSTM,
    ScalarMix,
    frame_sentences,
    masked_batches,
    predict_masked_words,
    reverse_each,
)
from course_utils.language.text_pipeline import MASK, Vocab
from course_utils.training import train

V, D = 17, 6
# "he ate the cake <mask> the fork .": the left context is the same for "with" and "on"; the right decides.
TABLEWARE = [("with", "fork"), ("with", "spoon"), ("with", "knife"), ("on", "table"), ("on", "plate")]
MEALS = [[s, v, "the", food, prep, "the", thing, "."]
         for s, v, food, (prep, thing) in itertools.product(["he", "she"], ["ate", "cut"], ["cake", "soup"], TABLEWARE)]  # fmt: skip
# A tiny sentiment task: the adjective decides.
POSITIVE, NEGATIVE = ("good", "great", "fine"), ("bad", "awful", "dull")
REVIEWS = [(["the", film, "was", word, "."], word in POSITIVE)
           for film, word in itertools.product(["movie", "show", "film", "play"], POSITIVE + NEGATIVE)]  # fmt: skip


def random_sentences(seed=0, lengths=(7, 5, 7)):
    """Right-padded rows of ids in 5..V-1, framed by 2 (<s>) and 3 (</s>), padded with 0."""
    g = torch.Generator().manual_seed(seed)
    rows = [[2, *torch.randint(5, V, (n - 2,), generator=g).tolist(), 3] for n in lengths]
    return torch.tensor([row + [0] * (max(lengths) - len(row)) for row in rows])  # (B, T)


def masked_model(**kwargs):
    return MaskedBiLSTM(V, embed_dim=D, hidden_dim=8, **kwargs)


def elmo_model(**kwargs):
    return ElmoLM(V, embed_dim=D, hidden_dim=8, num_layers=2, **kwargs)


# --- MaskedBiLSTM: what each position reads --------------------------------------------------


@pytest.mark.parametrize("t", [1, 3, 5])
def test_the_word_at_t_never_changes_its_own_prediction_but_both_sides_do(t):
    model = masked_model(num_layers=2)
    idx = random_sentences(lengths=(7, 7))
    logits, _ = model(idx)
    assert logits.shape == (2, 7, V)

    def changed(position):
        other = idx.clone()
        other[:, position] = 5 + (other[:, position] - 4) % (V - 5)  # another word, never padding
        return model(other)[0][:, t]

    assert torch.equal(changed(t), logits[:, t])
    assert not torch.allclose(changed(t - 1), logits[:, t])  # the left side is read
    assert not torch.allclose(changed(t + 1), logits[:, t])  # the right side is read


def test_padding_does_not_change_a_sentences_predictions():
    model = masked_model()
    batch = random_sentences(lengths=(7, 4))
    alone = batch[1:, :4]
    assert torch.allclose(model(batch)[0][1, :4], model(alone)[0][0], atol=1e-6)


def test_reverse_each_reverses_only_the_tokens_before_the_padding():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]])
    assert reverse_each(x, torch.tensor([3, 2])).tolist() == [[3, 2, 1, 0], [5, 4, 0, 0]]


def test_masked_batches_frame_whole_sentences_and_target_every_word():
    vocab = Vocab.build(MEALS)
    ids = [vocab.encode(sentence) for sentence in MEALS]
    idx, targets = masked_batches(ids, vocab, batch_size=4, seed=0)(0)
    sentence = [vocab.itos[i] for i in idx[0].tolist() if i != vocab.pad_id]
    assert sentence[0] == "<s>" and sentence[-1] == "</s>" and sentence[1:-1] in MEALS
    assert targets[:, 0].eq(IGNORE_INDEX).all()
    words = (idx != vocab.pad_id) & (idx != vocab.bos_id) & (idx != vocab.eos_id)
    assert torch.equal(targets[words], idx[words]) and targets[~words].eq(IGNORE_INDEX).all()
    assert torch.equal(
        frame_sentences(ids[:2], vocab), torch.tensor([[vocab.bos_id, *ids[i], vocab.eos_id] for i in (0, 1)])
    )


def test_the_bidirectional_model_learns_with_from_the_right_context():
    vocab = Vocab.build(MEALS)
    ids = [vocab.encode(sentence) for sentence in MEALS]
    model = MaskedBiLSTM(len(vocab), embed_dim=16, hidden_dim=32)
    train(model, masked_batches(ids, vocab, batch_size=16, seed=0), steps=150, lr=1e-2, progress=False)
    for thing, preposition in [("fork", "with"), ("table", "on")]:
        probs = predict_masked_words(model, vocab, f"he ate the cake {MASK} the {thing} .")  # (V,)
        assert abs(probs.sum().item() - 1) < 1e-9
        assert vocab.itos[int(probs.argmax())] == preposition and probs.max() > 0.8


@pytest.mark.parametrize(
    "words, match",
    [
        ("he ate the cake with the fork .", "exactly one <mask>"),
        ("he <mask> the cake <mask> the fork .", "found 2"),
        ("", "found 0"),
        ("he ate the pie <mask> the fork .", "pie"),
        (["he", 3], "list of words"),
    ],
)
def test_predict_masked_words_bad_input(words, match):
    vocab = Vocab.build(MEALS)
    with pytest.raises(CourseInputError, match=match):
        predict_masked_words(MaskedBiLSTM(len(vocab), embed_dim=4, hidden_dim=4), vocab, words)


def test_masked_model_bad_input():
    vocab = Vocab.build(MEALS)
    with pytest.raises(CourseInputError, match="the model 17"):
        predict_masked_words(masked_model(), vocab, f"he ate the cake {MASK} the fork .")
    with pytest.raises(CourseInputError, match="only come at the end"):
        masked_model()(torch.tensor([[2, 5, 0, 6, 3]]))
    with pytest.raises(CourseInputError, match="only padding"):
        masked_model()(torch.tensor([[2, 5, 3], [0, 0, 0]]))
    with pytest.raises(CourseInputError, match="max_len=4"):
        masked_model(max_len=4)(random_sentences(lengths=(5,)))
    with pytest.raises(CourseInputError, match="empty"):
        masked_model()(torch.zeros(0, 3, dtype=torch.long))


# --- ELMo: layers ----------------------------------------------------------------------------


def test_layers_are_the_embedding_twice_then_forward_and_backward_states():
    model = elmo_model()
    idx = random_sentences()
    layers = model.layers(idx)
    assert layers.shape == (3, 3, 7, 2 * D)
    e = model.embedding(idx)  # (B, T, d)
    assert torch.equal(layers[0], torch.cat([e, e], dim=-1))


@pytest.mark.parametrize("t", [2, 4])
def test_the_forward_half_reads_the_past_and_the_backward_half_the_future(t):
    model = elmo_model()
    idx = random_sentences(lengths=(7, 7))
    layers = model.layers(idx)

    def layers_with_changed(positions):
        other = idx.clone()
        other[:, positions] = 5 + (other[:, positions] - 4) % (V - 5)
        return model.layers(other)

    later, earlier = layers_with_changed(slice(t + 1, None)), layers_with_changed(slice(None, t))
    forward, backward = slice(None, D), slice(D, None)
    assert torch.equal(later[1:, :, t, forward], layers[1:, :, t, forward])
    assert not torch.allclose(later[1:, :, t, backward], layers[1:, :, t, backward])
    assert torch.equal(earlier[1:, :, t, backward], layers[1:, :, t, backward])
    assert not torch.allclose(earlier[1:, :, t, forward], layers[1:, :, t, forward])


def test_padding_does_not_change_a_sentences_layers():
    model = elmo_model()
    batch = random_sentences(lengths=(7, 4))
    assert torch.allclose(model.layers(batch)[:, 1, :4], model.layers(batch[1:, :4])[:, 0], atol=1e-6)


def test_the_loss_is_the_mean_of_the_forward_and_the_backward_lm_losses():
    model = elmo_model().double()
    sentence = random_sentences(lengths=(7,))  # (1, 7): <s> w1..w5 </s>
    idx, targets = sentence[:, :-1], sentence[:, 1:]
    logits, loss = model(idx, targets)
    assert torch.equal(logits, model(idx)[0]) and logits.shape == (1, 6, V)
    log_probs = torch.log_softmax(logits, dim=-1)[0]  # (T, V)
    forward_loss = -log_probs[torch.arange(6), targets[0]].mean()
    backward_states = model.layers(sentence)[-1, 0, :, D:]  # (T+1, d): position t has read t..end
    backward_log_probs = torch.log_softmax(model.output(backward_states[1:]), dim=-1)  # (T, V): predicts t-1
    backward_loss = -backward_log_probs[torch.arange(6), sentence[0, :-1]].mean()
    assert torch.isclose(loss, (forward_loss + backward_loss) / 2, rtol=0, atol=1e-12)


def test_the_forward_lm_is_causal_and_evaluates_like_any_course_lm():
    vocab = Vocab.build([words for words, _ in REVIEWS])
    model = ElmoLM(len(vocab), embed_dim=D, hidden_dim=8)
    idx, _ = make_batch([vocab.encode(REVIEWS[0][0])], vocab)
    changed = idx.clone()
    changed[0, 3:] = vocab.stoi["awful"]
    assert torch.equal(model(idx)[0][:, :3], model(changed)[0][:, :3])
    assert evaluate(model, vocab, [words for words, _ in REVIEWS]).perplexity < 2 * len(vocab)


# --- ScalarMix -------------------------------------------------------------------------------


def test_scalar_mix_weights_sum_to_one_and_gamma_scales():
    mix = ScalarMix(3)
    layers = torch.randn(3, 2, 4, 5, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(mix.weights(), torch.full((3,), 1 / 3))
    assert torch.allclose(mix(layers), layers.mean(dim=0), atol=1e-6)
    with torch.no_grad():
        mix.w.copy_(torch.tensor([2.0, -1.0, 0.5]))
        mix.gamma.fill_(3.0)
    s = mix.weights()
    assert abs(s.sum().item() - 1) < 1e-6 and bool((s > 0).all())
    assert torch.allclose(mix(layers), 3.0 * (s[0] * layers[0] + s[1] * layers[1] + s[2] * layers[2]), atol=1e-5)
    with pytest.raises(CourseInputError, match=r"\(3, \.\.\.\)"):
        mix(layers[:2])


# --- the downstream classifier ---------------------------------------------------------------


@pytest.fixture(scope="module")
def reviews():
    vocab = Vocab.build([words for words, _ in REVIEWS])
    ids = [vocab.encode(words) for words, _ in REVIEWS]
    elmo = ElmoLM(len(vocab), embed_dim=12, hidden_dim=16, num_layers=2)
    history = train(elmo, batch_stream(ids, vocab, batch_size=8, seed=0), steps=150, lr=1e-2, progress=False)
    assert history.final_loss < 0.6 * history.losses[0]  # the biLM learned
    x = frame_sentences(ids, vocab)  # (n, T)
    labels = torch.tensor([int(label) for _, label in REVIEWS])  # (n,)
    return elmo, x, labels


def test_the_classifier_learns_while_elmo_stays_frozen(reviews):
    elmo, x, labels = reviews
    before = {name: value.clone() for name, value in elmo.state_dict().items()}
    classifier = ElmoClassifier(elmo, n_classes=2, hidden=16)
    train(classifier, lambda step: (x, labels), steps=300, lr=3e-2, progress=False)
    logits, loss = classifier(x, labels)
    assert logits.shape == (len(REVIEWS), 2)
    assert (logits.argmax(-1) == labels).float().mean().item() == 1.0
    assert all(torch.equal(before[name], value) for name, value in elmo.state_dict().items())
    assert not any(parameter.requires_grad for parameter in elmo.parameters())
    assert abs(classifier.mix.weights().sum().item() - 1) < 1e-6
    assert not torch.allclose(classifier.mix.weights(), torch.full((3,), 1 / 3))  # the task weights moved


def test_classifier_bad_input(reviews):
    elmo, x, labels = reviews
    classifier = ElmoClassifier(elmo, n_classes=2)
    with pytest.raises(CourseInputError, match="one class per row"):
        classifier(x, labels[:-1])
    with pytest.raises(CourseInputError, match="outside 0..1"):
        classifier(x, labels + 1)
    with pytest.raises(CourseInputError, match="must be an ElmoLM"):
        ElmoClassifier(masked_model(), n_classes=2)
    with pytest.raises(CourseInputError, match="n_classes"):
        ElmoClassifier(elmo, n_classes=1)


# --- checkpoints -----------------------------------------------------------------------------


@pytest.mark.parametrize("build", [masked_model, elmo_model])
def test_config_and_checkpoint_round_trip(tmp_path, build):
    model = build(seed=4, max_len=30)
    with torch.no_grad():
        model.output.bias.add_(1.0)  # not the freshly built weights: the checkpoint must carry them
    cls = type(model)
    assert cls.from_config(model.config()).config() == model.config()
    save_checkpoint(model, tmp_path / "m", model.config())
    loaded, config = load_checkpoint(tmp_path / "m", cls.from_config)
    idx = random_sentences(3)
    assert config == model.config() and torch.equal(loaded(idx)[0], model.eval()(idx)[0])
    if cls is ElmoLM:
        assert torch.equal(loaded.layers(idx), model.layers(idx))
