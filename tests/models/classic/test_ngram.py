"""N-gram language models: counts against hand counts, smoothing sums to 1, the LM interface, bad input."""

import math
import random

import pytest
import torch

from course_utils.models.lm import encode_sentences, evaluate, generate, make_batch, next_token_probs
from course_utils.models.classic.ngram import NGramLM, rare_context_share
from course_utils.language.text_pipeline import Vocab
from course_utils.validation import CourseInputError

LECTURE = [
    "eleni was late for class .",
    "anqi was late for class .",
    "eleni went for lunch .",
    "the class was late .",
]
SENTENCES = [s.split() for s in LECTURE]
VOCAB = Vocab.build(SENTENCES)
IDS = encode_sentences(VOCAB, SENTENCES)


def fitted(order, smoothing, **options):
    return NGramLM(VOCAB, order, smoothing=smoothing, **options).fit(IDS)


def test_bigram_counts_match_hand_counts_and_the_lecture_formula():
    model = fitted(2, "none")
    assert model.count(["for", "class"]) == 2 and model.count(["for"]) == 3
    assert model.count(["<s>", "eleni"]) == 2 and model.count([".", "</s>"]) == 4
    assert model.count(["class", "for"]) == 0
    assert model.context_count(["for"]) == 3 and model.context_count(["<s>"]) == 4
    assert model.prob("class", ["for"]) == model.count(["for", "class"]) / model.count(["for"])  # 2/3
    assert model.counts[2][("for", "class")] == 2
    assert sum(model.counts[1].values()) == sum(len(s) + 1 for s in SENTENCES)  # every word and each </s>
    assert model.counts[1]["</s>",] == 4 and ("<s>",) not in model.counts[1]


def test_rare_context_share_counts_each_tokens_context_with_the_padding():
    model, sentence = fitted(2, "none"), ["eleni was late .".split()]  # c(h): <s> 4, eleni 2, was 3, late 3, . 4
    assert rare_context_share(model, sentence, times=3) == 1 / 5
    assert rare_context_share(model, sentence, times=4) == 3 / 5
    assert (
        rare_context_share(fitted(1, "none"), sentence, times=23) == 0.0
    )  # a unigram's context is empty: all 23 tokens


def test_trigram_pads_with_two_sentence_starts():
    model = fitted(3, "none")
    assert model.count(["<s>", "<s>", "eleni"]) == 2
    assert model.count(["late", "for", "class"]) == 2
    assert model.prob("late", ["eleni", "was"]) == 1.0
    assert model.prob("eleni", []) == 0.5  # a short context is read from the sentence start: (<s>, <s>)


def test_add_k_formula():
    model = fitted(2, "add-k", k=0.5)
    support = len(VOCAB) - 3  # all but <pad>, <s>, <mask>
    assert model.prob("class", ["for"]) == pytest.approx((2 + 0.5) / (3 + 0.5 * support), rel=1e-14)
    assert model.prob("eleni", ["lunch"]) == pytest.approx(0.5 / (1 + 0.5 * support), rel=1e-14)


def test_kneser_ney_against_a_hand_computation():
    vocab = Vocab(["a", "b", "c"])  # support: <unk> </s> a b c
    model = NGramLM(vocab, 2, smoothing="interpolated-kn", discount=0.5).fit([["a", "b"], ["a", "c"], ["b", "c"]])
    # continuation counts N(. w): a {<s>}, b {<s>, a}, c {a, b}, </s> {b, c}: total 7 over 4 types
    p_c = (2 - 0.5) / 7 + 0.5 * 4 / 7 / 5
    assert model.prob("c", ["<unk>"]) == pytest.approx(p_c, rel=1e-14)  # an unseen context falls back entirely
    assert model.prob("c", ["a"]) == pytest.approx((1 - 0.5) / 2 + 0.5 * 2 / 2 * p_c, rel=1e-14)
    assert model.prob("<unk>", ["c"]) == pytest.approx(0.5 * 1 / 2 * (0.5 * 4 / 7 / 5), rel=1e-14)
    unigram = NGramLM(vocab, 1, smoothing="interpolated-kn", discount=0.5).fit([["a", "b"], ["a", "c"], ["b", "c"]])
    assert unigram.prob("a") == pytest.approx((2 - 0.5) / 9 + 0.5 * 4 / 9 / 5, rel=1e-14)  # raw counts at the top


CONTEXTS = [[], ["for"], ["eleni", "was"], ["class", "eleni"], ["<unk>", "late"], ["lunch", "lunch", "."], ["the"]]


@pytest.mark.parametrize("smoothing", ["add-k", "interpolated-kn"])
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_smoothed_distributions_sum_to_one_on_seen_and_unseen_contexts(order, smoothing):
    model = fitted(order, smoothing)
    for context in CONTEXTS:
        probs = model.distribution(context)
        assert probs.dtype == torch.float64 and probs.shape == (len(VOCAB),)
        assert abs(probs.sum().item() - 1) < 1e-12, context
        assert (probs[[VOCAB.pad_id, VOCAB.bos_id, VOCAB.mask_id]] == 0).all()
        assert (probs[[VOCAB.unk_id, VOCAB.eos_id]] > 0).all()


def test_maximum_likelihood_gives_zeros_and_infinite_perplexity_without_crashing():
    model = fitted(2, "none")
    assert model.prob("lunch", ["class"]) == 0.0
    assert model.distribution(["<unk>"]).sum().item() == 0.0  # an unseen context: undefined, shown as zeros
    assert abs(model.distribution(["was"]).sum().item() - 1) < 1e-12
    score = evaluate(model, VOCAB, [["eleni", "went", "late", "."]])  # "went late" never occurred
    assert score.perplexity == math.inf
    idx, targets = make_batch(encode_sentences(VOCAB, [["the", "class", "went", "."]]), VOCAB)
    logits, loss = model(idx, targets)
    assert loss.item() == math.inf and not torch.isnan(logits).any()
    assert evaluate(model, VOCAB, SENTENCES).perplexity < math.inf  # the training text itself is fine


def test_forward_agrees_with_distribution_position_by_position():
    model = fitted(3, "interpolated-kn")
    batch = [["eleni", "was", "late", "for", "lunch", "."], ["the", "<unk>"], ["class"]]
    idx, targets = make_batch(encode_sentences(VOCAB, batch), VOCAB)  # (B, T)
    logits, loss = model(idx, targets)
    assert logits.shape == (3, idx.shape[1], len(VOCAB)) and logits.dtype == torch.float64
    for b, words in enumerate(batch):
        for t in range(len(words) + 1):
            context = ["<s>"] + words[:t]
            assert torch.equal(logits[b, t], model.distribution(context).log()), (b, t)
    assert loss.item() == pytest.approx(evaluate(model, VOCAB, batch).mean_nll, rel=1e-12)
    assert model(idx)[1] is None


def test_next_token_probs_reads_the_sentence_start_or_demands_enough_words():
    model = fitted(3, "interpolated-kn")
    from_start = next_token_probs(model, VOCAB, ["eleni"])
    assert torch.allclose(from_start, model.distribution(["<s>", "eleni"]), rtol=1e-13, atol=0)
    inside = next_token_probs(model, VOCAB, ["late", "for"], from_sentence_start=False)
    assert torch.allclose(inside, model.distribution(["late", "for"]), rtol=1e-13, atol=0)
    with pytest.raises(CourseInputError, match=r"reads the previous N=2 words; got 1: \['for'\]"):
        next_token_probs(model, VOCAB, ["for"], from_sentence_start=False)


def _synthetic_corpus(n_sentences, seed):
    """Sentences of 300 word types: each word has 3 favourite successors, otherwise a Zipf-like draw."""
    words = [f"w{i}" for i in range(300)]
    weights = [1 / rank for rank in range(1, 301)]
    favourites = {w: random.Random(w).sample(words, 3) for w in words}  # the same process for every seed
    rng = random.Random(seed)
    sentences = []
    for _ in range(n_sentences):
        sentence = rng.choices(words, weights)
        while len(sentence) < 12 and rng.random() > 0.15:
            follow = rng.random() < 0.6
            sentence.append(rng.choice(favourites[sentence[-1]]) if follow else rng.choices(words, weights)[0])
        sentences.append(sentence)
    return sentences


def test_kneser_ney_beats_add_one_on_held_out_text():
    train, test = _synthetic_corpus(400, seed=1), _synthetic_corpus(200, seed=2)
    vocab = Vocab.build(train)
    test_ids = encode_sentences(vocab, test, unknown="unk")
    train_ids = encode_sentences(vocab, train)
    for order in (2, 3):
        kn = evaluate(NGramLM(vocab, order, smoothing="interpolated-kn").fit(train_ids), vocab, test_ids).perplexity
        add_one = evaluate(NGramLM(vocab, order, smoothing="add-k", k=1).fit(train_ids), vocab, test_ids).perplexity
        assert kn < 0.8 * add_one, (order, kn, add_one)


def test_generation_is_deterministic_and_stops_at_the_end_of_sentence():
    model = fitted(2, "interpolated-kn")
    samples = [generate(model, VOCAB, seed=s) for s in range(10)]
    assert samples == [generate(model, VOCAB, seed=s) for s in range(10)]
    assert any(len(s) < 40 for s in samples) and all("</s>" not in s for s in samples)
    mle = fitted(3, "none")
    for seed in range(5):
        words = ["<s>", "<s>"] + generate(mle, VOCAB, seed=seed) + ["</s>"]
        assert all(mle.count(words[i : i + 3]) > 0 for i in range(len(words) - 2))  # only trigrams seen in training
    assert generate(mle, VOCAB, prefix=["anqi"], temperature=0) == "anqi was late for class .".split()
    with pytest.raises(CourseInputError, match="never occurred in training"):
        generate(mle, VOCAB, prefix=["class", "eleni"])


def test_unigram_ignores_the_context():
    model = fitted(1, "add-k")
    idx, _ = make_batch(IDS, VOCAB)
    logits, _ = model(idx)
    assert model.context_size == 0 and model.vocab_size == len(VOCAB)
    assert torch.equal(logits[0, 0], logits[-1, -1]) and torch.equal(logits[0, 0], model.distribution(["for"]).log())


def test_refitting_replaces_the_counts_and_the_cached_rows():
    model = fitted(2, "add-k")
    before = model.prob("class", ["for"])
    model.fit(encode_sentences(VOCAB, [["for", "lunch"]]))
    assert model.count(["for", "class"]) == 0 and model.prob("class", ["for"]) < before


@pytest.mark.parametrize(
    "options, message",
    [
        ({"order": 0}, "order must be >= 1"),
        ({"order": 2.0}, "order must be an integer"),
        ({"order": 2, "smoothing": "kn"}, "'add-k', 'interpolated-kn', 'none'"),
        ({"order": 2, "k": 0}, "k must be > 0"),
        ({"order": 2, "discount": 1.5}, r"discount must be in \(0, 1\]"),
        ({"order": 2, "discount": 0}, "discount must be > 0"),
    ],
)
def test_bad_settings_are_explained(options, message):
    with pytest.raises(CourseInputError, match=message):
        NGramLM(VOCAB, **options)


def test_bad_use_is_explained():
    model = NGramLM(VOCAB, 2)
    with pytest.raises(CourseInputError, match="call model.fit"):
        model.distribution(["for"])
    with pytest.raises(CourseInputError, match="must be a course_utils.language.text_pipeline.Vocab"):
        NGramLM(["a", "b"], 2)
    with pytest.raises(CourseInputError, match="must not contain <s>"):
        model.fit([[VOCAB.bos_id] + IDS[0]])
    with pytest.raises(CourseInputError, match="must not contain <mask>"):
        model.fit([[VOCAB.mask_id]])
    model.fit(SENTENCES)  # sentences of words are encoded on the way in
    with pytest.raises(CourseInputError, match=r"'clas' \(did you mean 'class'"):
        model.prob("clas", ["for"])
    with pytest.raises(CourseInputError, match="not a string"):
        model.distribution("for")
    with pytest.raises(CourseInputError, match="n-grams of 1 to 2 words; got 3"):
        model.count(["late", "for", "class"])
    with pytest.raises(CourseInputError, match="LongTensor"):
        model(torch.zeros(2, 3))
    with pytest.raises(CourseInputError, match="shape of idx"):
        model(torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, dtype=torch.long))
