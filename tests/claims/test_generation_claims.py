"""Notebook 10's claims, asserted on the shipped checkpoints (the same settings as the notebook).

The slide tree, the slides' code and the most probable sentence have their own tests
(test_slide_generation.py, test_best_sentences.py); parity with generate() is in test_generation.py.
"""

from __future__ import annotations

import math
from functools import lru_cache

import pytest
import torch

from course_utils.language import best_sentences as bs
from course_utils.language import parallel
from course_utils.language.grammar import CourseLanguage
from course_utils.models import generation as g
from course_utils.analysis import generation_analysis as ga
from course_utils.zoo import load
from course_utils.zoo import translation_checkpoints as tc
from course_utils.language.vocab import course_vocab

pytestmark = pytest.mark.slow  # claims measured on shipped models: CI runs them, the quick subset does not


@lru_cache(maxsize=None)
def lang():
    return CourseLanguage(include_held_out=False)


@lru_cache(maxsize=None)
def gpt():
    return load("gpt_lm")


@lru_cache(maxsize=None)
def reference():
    return ga.language_reference(lang())


@lru_cache(maxsize=None)
def table() -> dict:
    """Notebook 10 §7: 40 test prompts, 5 samples each, every strategy, and the oracle's own samples."""
    rows = ga.strategy_table(gpt(), course_vocab(), lang(), ga.prompts_from_test(40), samples_per_prompt=5,
                             reference=reference())  # fmt: skip
    rows.append(ga.oracle_samples(lang(), 2000, reference=reference()))
    return {row["name"]: row for row in rows}


def test_the_cloze_line_for_a_left_to_right_model():
    history = ["he", "ate", "the", "cake"]
    exact = lang().next_distribution(history)
    assert exact["with"] == pytest.approx(0.4) and exact["."] == pytest.approx(0.6)
    for model in (gpt(), load("lstm_lm")):
        p = float(g.next_logprobs(model, g.encode_prompt(course_vocab(), history)).exp()[course_vocab().stoi["with"]])
        assert abs(p - 0.4) < 0.15


def test_greedy_degenerates_where_beam_ends_on_the_weaker_models():
    vocab, prompt = course_vocab(), g.encode_prompt(course_vocab(), ["my", "friend"])
    for name in ("ffnn_n5", "lstm_lm"):
        model = load(name)
        looping = g.greedy(model, prompt, 30)
        assert not looping.ended and ga.is_repetitive(vocab.decode(looping.ids))  # "that eats the cake that eats …"
        beam = g.beam_search(model, prompt, width=4, max_new_tokens=30)
        assert beam.ended and len(beam.ids) < len(looping.ids)


def test_three_normalisations_crown_different_hypotheses():
    example = ga.ranking_example(gpt(), course_vocab(), ga.prompts_from_test(40), width=16, alpha=0.6)
    assert example is not None
    prompt, pool, order = example
    assert len(pool) == 16
    length = {name: len(pool[ranked[0]][0]) for name, ranked in order.items()}
    assert length["sum"] == min(length.values())  # the raw sum crowns the shortest of the winners
    assert length["eq. 13.16"] > length["HF α=0.6"] >= length["sum"]  # the mean rewards length most
    winners = {ranked[0] for ranked in order.values()}
    assert len(winners) >= 3


def test_search_is_more_probable_than_the_language_and_sampling_is_not():
    rows, rate = table(), reference()["entropy_rate"]
    for name in ("greedy", "beam 4", "beam 16", "beam 16 (norm)"):
        assert rows[name]["nll_per_token"] < rate - 0.2, name
    for name in ("pure sampling", "T=1.2", "top-k 40", "top-p 0.9", "top-p 0.95"):
        assert rows[name]["nll_per_token"] >= rate - 0.1, name
    assert abs(rows["oracle (T=1)"]["nll_per_token"] - rate) < 0.05
    assert rows["T=0.5"]["nll_per_token"] < rows["T=0.8"]["nll_per_token"] < rows["T=1.2"]["nll_per_token"]
    assert rows["T=0.5"]["distinct_2"] < rows["T=1.2"]["distinct_2"]


def test_wider_beams_write_shorter_sentences_and_eq_13_16_undoes_it():
    rows = table()
    assert rows["greedy"]["mean_length"] > rows["beam 4"]["mean_length"] > rows["beam 16"]["mean_length"]
    assert rows["beam 16"]["mean_length"] < reference()["mean_length"] - 1.5
    assert rows["beam 16 (norm)"]["mean_length"] > rows["beam 16"]["mean_length"] + 1
    assert rows["beam 16"]["grammatical"] == 1.0
    for name in ("pure sampling", "top-p 0.95"):
        assert rows[name]["length_tv"] < rows["beam 16"]["length_tv"]


def test_holtzman_table_1_shape():
    repetition = {method: ours for method, _, ours in ga.holtzman_comparison(list(table().values()))}
    assert repetition["greedy"] == max(repetition.values())
    assert abs(repetition["nucleus (p=0.95)"] - repetition["human"]) < 3
    assert repetition["beam (b=16)"] < repetition["greedy"]  # unlike theirs: short sentences end before looping


def test_the_beam_search_curse_on_the_gpt():
    curve = ga.beam_length_curve(gpt(), course_vocab(), ga.prompts_from_test(40), widths=(1, 4, 16))
    assert curve["none"][1] > curve["none"][4] > curve["none"][16]
    assert curve["mean"][16] - curve["none"][16] > 1.5  # eq. 13.16 gives back most of the length


def test_the_beam_search_curse_on_the_translators():
    source_vocab, _ = tc.vocabularies()
    pairs = parallel.load("test_long_15_21")[:20]
    weak = ga.translation_length_curve(load("none_32").eval(), source_vocab, pairs, widths=(1, 16))
    assert weak["none"][16] < weak["none"][1] - 0.5  # shorter with a wider beam
    assert weak["mean"][16] > weak["none"][16]  # eq. 13.16 gives some back
    strong = ga.translation_length_curve(load("transformer_2x128").eval(), source_vocab, pairs,
                                         widths=(1, 16), normalisation="none")  # fmt: skip
    assert strong["none"][1] == strong["none"][16]  # sure of every word: the width changes nothing


def test_the_two_most_probable_sentences_tie():
    """Notebook 10 §8: the language has no single mode; its table orders equals by text, never by the search."""
    found = bs.most_probable_search(lang(), k=5)
    first, second, third = found.sentences[:3]
    assert math.isclose(first.logprob, second.logprob, rel_tol=1e-9)
    assert {first.text(), second.text()} == {"the hunter hunted the game in the forest .",
                                             "the hunters hunted the game in the forest ."}  # fmt: skip
    assert third.logprob < first.logprob - 0.5


def test_the_modes_spend_far_fewer_nats_per_token_than_the_language():
    """Notebook 10 §8 and its summary: 0.49 nats/token against the entropy rate 1.73, and under 1 % spend as few."""
    mode = bs.most_probable_search(lang(), k=1).sentences[0]
    samples, logprobs = bs.sample_logprobs(lang(), 20_000, 0)
    per_token = [-lp / (len(words) + 1) for words, lp in zip(samples, logprobs)]
    assert round(-mode.logprob_per_token, 2) == 0.49 and round(reference()["entropy_rate"], 2) == 1.73
    assert sum(x <= -mode.logprob_per_token for x in per_token) / len(per_token) < 0.01
    assert 0.05 < sum(abs(x - reference()["entropy_rate"]) <= 0.1 for x in per_token) / len(per_token) < 0.1


def test_the_gpts_own_mode_is_the_languages_with_a_wide_beam():
    vocab = course_vocab()
    wide = g.beam_search(gpt(), [vocab.bos_id], width=64, max_new_tokens=30, normalisation="none")
    assert vocab.decode(wide.ids[:-1]) == ["the", "hunter", "hunted", "the", "game", "in", "the", "forest", "."]
    greedy = g.greedy(gpt(), [vocab.bos_id], 30)
    assert lang().score(vocab.decode(greedy.ids[:-1])).logprob < lang().score(vocab.decode(wide.ids[:-1])).logprob


def test_the_gpts_samples_at_t1_against_the_oracles():
    (row,) = ga.strategy_table(gpt(), course_vocab(), lang(), [()], samples_per_prompt=500, seed=1,
                               reference=reference(), strategies={"GPT, T=1": {"kind": "sample"}})  # fmt: skip
    oracle = ga.oracle_samples(lang(), 500, seed=2, reference=reference())
    assert oracle["grammatical"] == 1.0 and abs(oracle["nll_per_token"] - reference()["entropy_rate"]) < 0.1
    assert 0.8 < row["grammatical"] < 0.95
    assert abs(row["nll_per_token"] - reference()["entropy_rate"]) < 0.1 and row["length_tv"] < 0.1


def test_prompted_and_unprompted_sampling_are_equally_grammatical_within_noise():
    """Notebook 10 §10: §7's pure sampling (after a test prompt) against sampling from <s> alone: a gap under one
    standard error, so neither is the more grammatical."""
    (row,) = ga.strategy_table(gpt(), course_vocab(), lang(), [()], samples_per_prompt=500, seed=1,
                               reference=reference(), strategies={"GPT, T=1": {"kind": "sample"}})  # fmt: skip
    gap, se = ga.share_difference(table()["pure sampling"], row)
    assert abs(gap) < se < 0.03


def test_temperature_zero_is_greedy():
    prefix = g.encode_prompt(course_vocab(), ["the"])
    cold = g.sample(gpt(), prefix, max_new_tokens=30, temperature=0.0, generator=torch.Generator().manual_seed(0))
    assert cold.ids == g.greedy(gpt(), prefix, 30).ids
    assert g.sample(gpt(), prefix, max_new_tokens=30, temperature=1e-6).ids == cold.ids
    assert math.isfinite(cold.logprob)
