"""The tiny BERT: the course contract, masked-word scoring (checked by brute force), fine-tuning, checkpoints, claims.

The claim tests at the end read the shipped checkpoints in ``data/checkpoints/09/``; their thresholds were
measured on them (with a margin), not tuned until they passed.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import CourseInputError
from course_utils.checkpoints import ChecksumError
from course_utils.language import corpus
from course_utils.language.grammar import CourseLanguage
from course_utils.zoo import bert_checkpoints as zoo
from course_utils.zoo import load
from course_utils.models.bert import bert_mlm as bm
from course_utils.models.bert.bert_finetuning import (
    SentimentBERT,
    review_accuracy,
    review_batches,
    review_tensors,
    turns,
)
from course_utils.models.bert.wordpiece import COURSE_VOCAB_SIZE
from course_utils.models.lm import IGNORE_INDEX
from course_utils.training import train


@pytest.fixture(scope="module")
def tokenizer():
    return load("tokenizer")


@pytest.fixture(scope="module")
def tiny(tokenizer):
    return bm.CourseBERT(bm.bert_config(tokenizer, layers=1, hidden=16, heads=2, max_len=48), seed=0).eval()


@pytest.fixture(scope="module")
def oracle():
    return CourseLanguage(include_held_out=False)


@pytest.mark.parity
def test_contract_and_shapes(tiny, tokenizer):
    ids = torch.tensor([tokenizer("the cat sleeps .")["input_ids"]])
    logits, loss = tiny(ids)
    assert logits.shape == (1, ids.shape[1], len(tokenizer)) and loss is None
    labels = torch.full_like(ids, IGNORE_INDEX)
    labels[0, 2] = ids[0, 2]
    _, loss = tiny(ids, labels)
    assert torch.isclose(loss, F.cross_entropy(logits[0, 2:3], ids[0, 2:3]))
    assert len(tiny.hidden_states(ids)) == 2 and len(tiny.attentions(ids)) == 1
    with pytest.raises(CourseInputError):
        tiny(ids[0])
    with pytest.raises(CourseInputError, match="split evenly"):
        bm.bert_config(tokenizer, layers=1, hidden=10, heads=3)


@pytest.mark.parity
def test_padding_does_not_change_the_real_positions(tiny, tokenizer):
    short = tokenizer("the cat sleeps .")["input_ids"]
    padded = torch.tensor([short + [tokenizer.pad_token_id] * 5])
    assert torch.allclose(tiny(torch.tensor([short]))[0], tiny(padded)[0][:, : len(short)], atol=1e-5)


@pytest.mark.parity
def test_mlm_batches_mask_about_15_percent_and_are_seeded(tokenizer):
    ids = bm.encode_sentences(tokenizer, corpus.load_split("valid")[:500])
    x1, y1 = bm.mlm_batches(ids, tokenizer, batch_size=64, seed=3)(1)
    x2, y2 = bm.mlm_batches(ids, tokenizer, batch_size=64, seed=3)(1)
    assert torch.equal(x1, x2) and torch.equal(y1, y2)
    real = (x1 != tokenizer.pad_token_id) & (x1 != tokenizer.cls_token_id) & (x1 != tokenizer.sep_token_id)
    assert 0.08 < (y1 != IGNORE_INDEX).sum() / real.sum() < 0.25


@pytest.mark.parity
def test_word_scorer_reads_each_piece_at_its_mask_then_renormalises(tiny, tokenizer):
    """Brute force: for every candidate, one sentence with k masks, each piece's log-probability at its mask."""
    words = ["cat", "outside", "amazing", "dog", "rabbits", "finds", "tea", "kitchen"]
    scorer = bm.WordScorer(tiny, tokenizer, words)
    left, right = ["the"], ["sleeps", "."]
    for k, group in scorer.by_count.items():
        got_words, got = scorer.log_probs(left, right, k)
        assert math.isclose(got.exp().sum().item(), 1.0, rel_tol=1e-5)
        row = [tokenizer.cls_token_id, *tokenizer("the", add_special_tokens=False)["input_ids"],
               *[tokenizer.mask_token_id] * k, *tokenizer("sleeps .", add_special_tokens=False)["input_ids"],
               tokenizer.sep_token_id]  # fmt: skip
        logp = F.log_softmax(tiny(torch.tensor([row]))[0][0], -1)  # (T, V)
        manual = torch.tensor([sum(logp[2 + j, piece].item() for j, piece in enumerate(pieces)) for _, pieces in group])
        manual = manual - torch.logsumexp(manual, 0)
        assert got_words == [w for w, _ in group]
        assert torch.allclose(got, manual, atol=1e-4)
    assert len(scorer.by_count) >= 2  # the candidates above have different piece counts
    with pytest.raises(CourseInputError, match="piece"):
        scorer.log_probs(left, right, 9)


@pytest.mark.parity
def test_whole_word_batches_hide_all_pieces_of_a_chosen_word(tokenizer):
    sentences = corpus.load_split("valid")[:2000]
    masked, labels = bm.whole_word_batches(sentences, tokenizer, batch_size=512, seed=0)(0)
    again = bm.whole_word_batches(sentences, tokenizer, batch_size=512, seed=0)(0)
    assert torch.equal(masked, again[0]) and torch.equal(labels, again[1])
    chosen = labels != IGNORE_INDEX
    real = masked != tokenizer.pad_token_id
    assert 0.10 < chosen.sum() / real.sum() < 0.20
    assert 0.75 < (masked[chosen] == tokenizer.mask_token_id).float().mean() < 0.85
    assert not chosen[:, 0].any()  # [CLS] is never a target
    # a word is chosen whole: a target "##" piece always follows a target piece
    continuation = torch.tensor([t.startswith("##") for t in tokenizer.convert_ids_to_tokens(range(len(tokenizer)))])
    original = torch.where(chosen, labels, masked)
    cont = continuation[original] & real
    assert torch.equal(chosen[:, 1:][cont[:, 1:]], chosen[:, :-1][cont[:, 1:]])
    assert real.float().mean() > 0.8  # batched by length: little padding


def test_stream_batches_hold_fresh_sentences_mask_whole_words_and_are_seeded(tokenizer):
    from course_utils.language import stream

    batches = bm.stream_whole_word_batches(tokenizer, batch_size=64, seed=0)
    first = [batches(step) for step in range(1, bm.POOL + 2)]  # one pool and the first batch of the next
    again = bm.stream_whole_word_batches(tokenizer, batch_size=64, seed=0)
    assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in zip(first, map(again, range(1, 18))))
    pool = [s for step in range(1, bm.POOL + 1) for s in stream.fresh_sentences(step, batch_size=64, seed=0)]
    expected = sorted(tokenizer.decode(ids) for ids in bm._encode_with_words(tokenizer, pool)[0])
    originals = [torch.where(labels != IGNORE_INDEX, labels, masked) for masked, labels in first[: bm.POOL]]
    rows = sorted(tokenizer.decode([i for i in row if i != tokenizer.pad_token_id]) for x in originals for row in x)
    assert rows == expected  # the pool's sentences, each once
    chosen = sum(int((labels != IGNORE_INDEX).sum()) for _, labels in first)
    real = sum(int((masked != tokenizer.pad_token_id).sum()) for masked, _ in first)
    assert 0.10 < chosen / real < 0.20 and real / sum(masked.numel() for masked, _ in first) > 0.8  # little padding
    forty = bm.stream_whole_word_batches(tokenizer, batch_size=64, seed=0, probability=0.4)(1)
    assert 0.35 < (forty[1] != IGNORE_INDEX).sum() / (forty[0] != tokenizer.pad_token_id).sum() < 0.45
    with pytest.raises(CourseInputError):
        batches(0)  # steps count from 1, as in training


def test_oracle_told_the_piece_count_is_a_renormalised_restriction(oracle, tokenizer):
    exact = oracle.masked_distribution(["the"], ["sleeps", "."])
    one = bm.given_piece_count(exact, tokenizer, 1)
    assert math.isclose(sum(one.values()), 1.0) and all(bm.piece_count(tokenizer, w) == 1 for w in one)
    w = next(iter(one))
    assert math.isclose(one[w] / exact[w], 1 / sum(exact[v] for v in one))
    with pytest.raises(CourseInputError):
        bm.given_piece_count(exact, tokenizer, 7)


def test_nll_ratio_and_items():
    assert math.isclose(bm.nll_ratio([1.0, 2.0], [0.5, 1.5]), math.exp(0.5))
    with pytest.raises(CourseInputError):
        bm.nll_ratio([1.0], [])
    items = bm.masked_items(corpus.load_split("test"), 50, seed=0)
    assert items == bm.masked_items(corpus.load_split("test"), 50, seed=0)
    assert all(0 <= it["position"] < len(it["words"]) for it in items)


def test_training_lowers_the_masked_loss(tokenizer):
    model = bm.CourseBERT(bm.bert_config(tokenizer, layers=1, hidden=32, heads=2), seed=0)
    ids = bm.encode_sentences(tokenizer, corpus.load_split("train")[:2000])
    batches = bm.mlm_batches(ids, tokenizer, batch_size=32, seed=0)
    before = bm.masked_nll(model, bm.mlm_batches(ids, tokenizer, batch_size=64, seed=9), 3)
    train(model, batches, steps=60, lr=3e-3, progress=False)
    after = bm.masked_nll(model, bm.mlm_batches(ids, tokenizer, batch_size=64, seed=9), 3)
    assert after < before - 1.0


@pytest.mark.parity
def test_sentiment_model_starts_from_the_masked_lm_encoder(tiny, tokenizer):
    classifier = SentimentBERT.from_masked_lm(tiny)
    for name, value in tiny.hf.bert.state_dict().items():
        assert torch.equal(classifier.hf.bert.state_dict()[name], value), name
    reviews = corpus.load_eval("reviews_valid")[:40]
    x, labels = review_tensors(tokenizer, reviews)
    logits, loss = classifier(x, labels)
    assert logits.shape == (40, 2) and loss.item() > 0
    batch_x, batch_y = review_batches(x, labels, batch_size=8, seed=0)(1)
    assert batch_x.shape[0] == 8 and (batch_x[:, -1] != 0).any()  # trimmed to the longest in the batch
    all_, plain, turning = review_accuracy(classifier, tokenizer, reviews)
    assert 0 <= plain <= 1 and 0 <= turning <= 1
    assert turns([{"words": ["it", "was", "not", "bad"]}, {"words": ["good"]}]).tolist() == [True, False]


@pytest.mark.parity
def test_checkpoints_are_hugging_face_directories_with_manifests(tmp_path):
    from transformers import AutoTokenizer, BertForMaskedLM

    path = zoo.checkpoint_dir("bert_mlm")
    for name in ("model.safetensors", "config.json", "tokenizer.json", "training.json", "manifest.sha256"):
        assert (path / name).is_file(), name
    assert isinstance(BertForMaskedLM.from_pretrained(path, local_files_only=True), BertForMaskedLM)
    assert len(AutoTokenizer.from_pretrained(path, local_files_only=True)) == COURSE_VOCAB_SIZE
    with pytest.raises(CourseInputError, match="missing"):
        load("bert_mlm", tmp_path)
    copy = tmp_path / "bert_mlm"
    copy.mkdir()
    for file in path.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    (copy / "training.json").write_text("{}")
    with pytest.raises(ChecksumError):
        load("bert_mlm", tmp_path)


# ---------------------------------------------------------------- claims on the shipped checkpoints

ITEMS = 500  # notebook 09's items: masked_items(test, 500, seed=1)
GOAL = 1.10  # issue 24: masked NLL within 10 % of the oracle's, and no worse than notebook 05's BiLSTM


@pytest.fixture(scope="module")
def shipped_scores(tokenizer, oracle):
    items = bm.masked_items(corpus.load_split("test"), ITEMS, seed=1)
    scorer = bm.WordScorer(load("bert_mlm"), tokenizer, sorted(oracle.vocabulary))
    return items, bm.bert_scores(scorer, items), bm.oracle_scores(oracle, items, tokenizer)


@pytest.mark.slow
def test_claim_pretrained_bert_is_close_to_the_oracle_and_split_words_cost_it_most(shipped_scores, tokenizer):
    """Measured on the shipped bert_mlm: MEASURED_ALL on all 500 items, MEASURED_ONE on one-piece words, more on the
    few split ones."""
    items, (bert_nll, bert_top), (oracle_nll, oracle_top) = shipped_scores
    truth = [it["words"][it["position"]] for it in items]
    assert bm.nll_ratio(bert_nll, oracle_nll) <= GOAL
    one = [i for i, w in enumerate(truth) if bm.piece_count(tokenizer, w) == 1]
    split = [i for i, w in enumerate(truth) if bm.piece_count(tokenizer, w) > 1]
    one_ratio = bm.nll_ratio([bert_nll[i] for i in one], [oracle_nll[i] for i in one])
    split_ratio = bm.nll_ratio([bert_nll[i] for i in split], [oracle_nll[i] for i in split])
    assert one_ratio <= GOAL and split_ratio > one_ratio
    bert_right = sum(t == b for t, b in zip(truth, bert_top)) / len(items)
    oracle_right = sum(t == o for t, o in zip(truth, oracle_top)) / len(items)
    assert bert_right > oracle_right - 0.06  # nearly the oracle's top-1, which is far from 1: the slots are ambiguous
    assert oracle_right < 0.8


@pytest.mark.slow
def test_claim_the_tiny_bert_is_no_worse_than_the_bilstm_on_the_same_items(shipped_scores, tokenizer, oracle):
    """Measured: BERT MEASURED_ALL, BiLSTM MEASURED_BILSTM (both told the piece count, as the oracle is)."""
    from course_utils.language.vocab import course_vocab
    from course_utils.models.recurrent.recurrent_lm import predict_masked_words

    items, (bert_nll, _), (oracle_nll, _) = shipped_scores
    bilstm = bm.word_model_distribution(predict_masked_words, load("masked_bilstm"),
                                        course_vocab(), sorted(oracle.vocabulary))  # fmt: skip
    bilstm_nll, _ = bm.hinted_scores(bilstm, items, tokenizer)
    assert bm.nll_ratio(bert_nll, oracle_nll) <= bm.nll_ratio(bilstm_nll, oracle_nll)


@pytest.mark.slow
def test_claim_cloze_with_the_fork(tokenizer, oracle):
    scorer = bm.WordScorer(load("bert_mlm"), tokenizer, sorted(oracle.vocabulary))
    left, right = "he ate the cake".split(), "the fork .".split()
    model = scorer.distribution(left, right, 1)
    exact = bm.given_piece_count(oracle.masked_distribution(left, right), tokenizer, 1)
    assert max(exact, key=exact.get) == "with" == max(model, key=model.get)


@pytest.mark.slow
def test_claim_lm_fine_tuning_specialises_the_model():
    """bert_reviews against bert_mlm, from their training records (300 validation items each): the general sentences
    get worse (measured 1.0765 → 1.0782); the reviews, which the pretrained model has seen plenty of, move by less
    than the run-to-run noise (1.0978 → 1.0981; on notebook 09's test reviews 1.1035 → 1.1012)."""
    before, after = zoo.training_record("bert_mlm"), zoo.training_record("bert_reviews")
    assert after["valid_masked_ratio"] > before["valid_masked_ratio"]
    assert abs(after["reviews_valid_masked_ratio"] - before["reviews_valid_masked_ratio"]) < 0.01


@pytest.mark.slow
def test_claim_fine_tuned_bert_beats_the_bag_of_embeddings_on_but_not(tokenizer):
    all_, plain, turning = review_accuracy(load("bert_sentiment"), tokenizer, corpus.load_eval("reviews_test"))
    assert turning > 0.70 > 0.669  # notebook 06's best on but/not reviews: 0.669
    assert all_ > 0.87


def test_one_pass_gives_both_scorings(oracle, tokenizer):
    items = bm.masked_items(corpus.load_split("valid"), 20, seed=4)
    hinted, plain = bm.scores_with_and_without_hint(oracle.masked_distribution, items, tokenizer)
    assert hinted == bm.oracle_scores(oracle, items, tokenizer) and plain == bm.oracle_scores(oracle, items)
    assert all(h <= p + 1e-12 for h, p in zip(hinted[0], plain[0]))  # the hint can only help the truth
    assert bm.scores_with_and_without_hint(oracle.masked_distribution, items)[0] is None


def test_top_word_breaks_ties_by_spelling_not_by_the_last_bit():
    tied = {"dog": 0.25, "cat": 0.25 * (1 + 1e-15), "cow": 0.2}
    assert bm.top_word(tied) == "cat"
    assert bm.top_word({"dog": 0.25 * (1 + 1e-15), "cat": 0.25, "cow": 0.2}) == "cat", "the last bit does not decide"
    assert bm.top_word({"dog": 0.3, "cat": 0.25}) == "dog", "a real difference does"


def test_the_oracles_top_1_is_the_same_when_its_sums_are_taken_in_another_order(oracle):
    items = bm.masked_items(corpus.load_split("valid"), 40, seed=4)
    for item in items:
        words, i = item["words"], item["position"]
        dist = oracle.masked_distribution(words[:i], words[i + 1 :])
        jittered = {w: p * (1 + 1e-12 * ((len(w) % 3) - 1)) for w, p in dist.items()}  # last-bit-sized moves
        assert bm.top_word(jittered) == bm.top_word(dist)


def test_the_split_word_example_hides_a_whole_split_word(tokenizer):
    example = bm.split_word_example(corpus.load_split("test")[:300], tokenizer, seed=1)
    sentence, masked, labels = (example[key].split() for key in ("sentence", "masked", "labels"))
    assert len(sentence) == len(masked) and any(piece.startswith("##") for piece in labels)
    hidden = [piece for piece, shown in zip(sentence, masked) if shown == "[MASK]"]
    assert set(hidden) <= set(labels) and any(piece.startswith("##") for piece in hidden)
    assert bm.split_word_example([["the", "cat", "sleeps", "."]], tokenizer) is None  # no word of several pieces


def test_side_by_side_prints_both_answers_and_mass_sums_the_allowed_words(tiny, tokenizer, oracle, capsys):
    scorer = bm.WordScorer(tiny, tokenizer, sorted(oracle.vocabulary))
    model, exact = bm.side_by_side(scorer, oracle, tokenizer, "lucas ate the", ".", top=3)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "lucas ate the ___ ." and len(lines) == 3 and len(exact) > 3
    assert lines[2].count(",") == 2 and lines[2].split()[1] == next(iter(exact))  # the oracle's most probable first
    assert math.isclose(sum(model.values()), 1.0, rel_tol=1e-4) and math.isclose(bm.mass(exact, exact), 1.0)
    assert bm.mass({"a": 0.25, "b": 0.5, "c": 0.25}, {"a", "c", "z"}) == 0.5
