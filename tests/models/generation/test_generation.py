"""Generation strategies from scratch against Hugging Face ``generate()`` on the shipped ``gpt_lm``.

The pattern of minGPT's ``test_huggingface_import``: the same model, the same prompt, the same tokens.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import pytest
import torch

from course_utils.models import generation as g
from course_utils.analysis import generation_timing as speed
from course_utils.zoo import load
from course_utils.zoo.lm_checkpoints import ngram_models
from course_utils.language.vocab import course_vocab
from course_utils.validation import CourseInputError

pytestmark = pytest.mark.parity  # a library release can change what this checks (course.sh floor, lock)

PROMPTS = ("", "the", "the movie was", "my friend")
WARPS = [
    {"temperature": 0.7},
    {"top_k": 5},
    {"top_p": 0.9},
    {"temperature": 1.3, "top_k": 40, "top_p": 0.95},
    {"temperature": 0.5, "top_p": 0.5},
]


@lru_cache(maxsize=None)
def gpt():
    return load("gpt_lm")


@lru_cache(maxsize=None)
def zoo():
    return {"trigram": ngram_models((3,))["trigram"], "ffnn_n5": load("ffnn_n5"),
            "lstm_lm": load("lstm_lm"), "gpt_lm": gpt()}  # fmt: skip


def prompt(words: str) -> list[int]:
    return g.encode_prompt(course_vocab(), words)


def hf_generate(ids: list[int], **kwargs) -> list[int]:
    idx = torch.tensor([ids])  # (1, T)
    with torch.no_grad():
        return gpt().hf.generate(idx, attention_mask=torch.ones_like(idx), **kwargs)[0].tolist()


# ---------------------------------------------------------------- parity with generate()


@pytest.mark.parametrize("words", PROMPTS)
def test_greedy_matches_generate(words):
    ids = prompt(words)
    assert g.greedy(gpt(), ids, 30).sequence == hf_generate(ids, max_new_tokens=30, do_sample=False)


@pytest.mark.parametrize("width", [4, 8])
@pytest.mark.parametrize(
    "length_penalty,early_stopping",
    [(1.0, False), (0.0, "never"), (2.0, "never"), (2.0, True), (-1.0, False), (0.5, True)],
)
def test_beam_search_matches_generate(width, length_penalty, early_stopping):
    for words in PROMPTS[1:3]:
        ids = prompt(words)
        ours = g.beam_search(gpt(), ids, width=width, max_new_tokens=25, length_penalty=length_penalty,
                             early_stopping=early_stopping)  # fmt: skip
        theirs = hf_generate(ids, max_new_tokens=25, do_sample=False, num_beams=width,
                             length_penalty=length_penalty, early_stopping=early_stopping)  # fmt: skip
        assert ours.sequence == theirs, (words, ours.ids)


def test_beam_normalisations_are_hf_special_cases():
    ids = prompt("the")
    for normalisation, alpha in (("none", 0.0), ("mean", 1.0)):
        ours = g.beam_search(gpt(), ids, width=4, max_new_tokens=25, normalisation=normalisation, length_penalty=7.0)
        hf = g.beam_search(gpt(), ids, width=4, max_new_tokens=25, normalisation="hf", length_penalty=alpha)
        assert ours.ids == hf.ids
    gnmt = g.beam_search(gpt(), ids, width=4, max_new_tokens=25, normalisation="gnmt", length_penalty=1.0)
    assert gnmt.score == pytest.approx(gnmt.hypotheses[0][1])
    assert gnmt.ended and len(gnmt.hypotheses) == 4


@pytest.mark.parametrize("kwargs", WARPS)
def test_warped_distributions_match_hf_warpers_at_every_step(kwargs):
    settings = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, **kwargs}
    warpers = g.hf_warpers(**settings)
    ids = prompt("the")
    run = g.sample(gpt(), ids, max_new_tokens=20, generator=torch.Generator().manual_seed(1), **settings)
    for n in range(len(run.ids)):
        prefix = ids + run.ids[:n]
        logits = g.next_logits(gpt(), prefix)  # (V,)
        ours = g.warp(logits, **settings).exp()
        theirs = torch.softmax(warpers(torch.tensor([prefix]), logits[None].clone()), dim=-1)[0]
        assert torch.equal(ours > 0, theirs > 0), n  # the same tokens kept
        assert (ours - theirs).abs().max() <= 1e-6


@pytest.mark.parametrize("kwargs", WARPS + [{}])
def test_seeded_sampling_matches_generate(kwargs):
    settings = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, **kwargs}
    for seed in range(3):
        ids = prompt("the")
        torch.manual_seed(seed)
        theirs = hf_generate(ids, max_new_tokens=30, do_sample=True, **settings)
        torch.manual_seed(seed)
        ours = g.sample(gpt(), ids, max_new_tokens=30, **settings)
        assert ours.sequence == theirs


@pytest.mark.parametrize("kwargs", [{}, {"temperature": 0.8, "top_k": 40, "top_p": 0.95}])
def test_seeded_sampling_side_by_side_matches_generate_with_num_return_sequences(kwargs):
    settings = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, **kwargs}
    pad = gpt().hf.generation_config.pad_token_id
    for seed in range(2):
        ids = prompt("the")
        torch.manual_seed(seed)
        idx = torch.tensor([ids])  # (1, T)
        with torch.no_grad():
            theirs = gpt().hf.generate(idx, attention_mask=torch.ones_like(idx), max_new_tokens=30, do_sample=True,
                                       num_return_sequences=8, **settings).tolist()  # fmt: skip
        torch.manual_seed(seed)
        ours = g.sample_many(gpt(), ids, 8, max_new_tokens=30, **settings)
        assert len({len(run.ids) for run in ours}) > 1  # some ended before others
        for run, row in zip(ours, theirs):
            assert row[: len(run.sequence)] == run.sequence
            assert set(row[len(run.sequence) :]) <= {pad}  # generate() pads the sequences that ended


@pytest.mark.parametrize("kwargs", [{}, {"temperature": 0.8, "top_k": 40, "top_p": 0.95}])
def test_seeded_beam_sample_matches_generate(kwargs):
    settings = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, **kwargs}
    for seed in range(2):
        ids = prompt("the movie")
        torch.manual_seed(seed)
        theirs = hf_generate(ids, max_new_tokens=25, do_sample=True, num_beams=4, **settings)
        torch.manual_seed(seed)
        ours = g.beam_sample(gpt(), ids, width=4, max_new_tokens=25, **settings)
        assert ours.sequence == theirs


# ---------------------------------------------------------------- every course LM


@pytest.mark.parametrize("name", ["trigram", "ffnn_n5", "lstm_lm", "gpt_lm"])
def test_every_strategy_runs_on_every_kind_of_lm(name):
    model, vocab = zoo()[name], course_vocab()
    ids, gen = prompt("the"), torch.Generator().manual_seed(0)
    assert g.next_logprobs(model, ids).shape == (len(vocab),)
    assert g.batch_next_logprobs(model, [ids, ids]).shape == (2, len(vocab))
    runs = [
        g.greedy(model, ids, 12),
        g.beam_search(model, ids, width=3, max_new_tokens=12),
        g.sample(model, ids, max_new_tokens=12, generator=gen),
        g.sample(model, ids, max_new_tokens=12, temperature=0.8, top_k=20, top_p=0.9, generator=gen),
        g.beam_sample(model, ids, width=3, max_new_tokens=12, top_p=0.9, generator=gen),
        *g.sample_many(model, ids, 3, max_new_tokens=12, top_k=20, generator=gen),
    ]
    for run in runs:
        assert run.prefix == ids and 1 <= len(run.ids) <= 12
        assert all(0 <= i < len(vocab) for i in run.ids)
        assert run.ended == (run.ids[-1] == vocab.eos_id) and (run.ended or len(run.ids) == 12)
        assert vocab.eos_id not in run.ids[:-1]
        assert math.isfinite(run.logprob) and run.logprob <= 0


@pytest.mark.parametrize("name", ["trigram", "lstm_lm", "gpt_lm"])
def test_zero_temperature_and_top_1_are_greedy(name):
    model, ids = zoo()[name], prompt("my friend")
    best = g.greedy(model, ids, 15).ids
    assert g.sample(model, ids, max_new_tokens=15, temperature=0).ids == best
    assert g.sample(model, ids, max_new_tokens=15, temperature=1e-30).ids == best  # no overflow (nanoGPT#738)
    assert g.sample(model, ids, max_new_tokens=15, top_k=1).ids == best
    assert g.beam_search(model, ids, width=1, max_new_tokens=15).ids == best


def test_warp_definitions():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    probs = torch.softmax(logits, -1)[0]  # 0.644, 0.237, 0.087, 0.032
    assert torch.allclose(g.warp(logits, temperature=2.0), torch.log_softmax(logits / 2, -1))
    assert torch.isinf(g.warp(logits, top_k=2)[0, 2:]).all() and g.warp(logits, top_k=9).isfinite().all()
    kept = g.warp(logits, top_p=float(probs[0]) + 0.01).isfinite()[0].tolist()  # the crossing token is kept
    assert kept == [True, True, False, False]
    assert g.warp(logits, top_p=0.01).isfinite()[0].tolist() == [True, False, False, False]
    assert g.warp(logits, temperature=0).exp()[0].tolist() == [1.0, 0.0, 0.0, 0.0]


def test_bad_arguments_raise_course_errors():
    model, ids = gpt(), prompt("the")
    for kwargs in ({"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"top_k": -1}, {"temperature": math.nan}):
        with pytest.raises(CourseInputError):
            g.warp(torch.zeros(5), **kwargs)
        with pytest.raises(CourseInputError):
            g.sample(model, ids, max_new_tokens=3, **kwargs)
    bad = [
        lambda: g.greedy(model, [], 5),
        lambda: g.greedy(model, "the", 5),
        lambda: g.greedy(model, ids, 0),
        lambda: g.greedy(model, [10**6], 5),
        lambda: g.greedy(model, ids, 500),  # past the model's 128 positions
        lambda: g.beam_search(model, ids, width=0),
        lambda: g.beam_search(model, ids, normalisation="log"),
        lambda: g.beam_search(model, ids, early_stopping="yes"),
        lambda: g.beam_sample(model, ids, top_p=2.0),
        lambda: g.sample_many(model, ids, 0),
        lambda: g.sample_many(model, ids, 2, top_p=0),
        lambda: g.sample_many(model, [], 2),
        lambda: speed.time_generation(zoo()["lstm_lm"], ids),
    ]
    for call in bad:
        with pytest.raises(CourseInputError):
            call()


def test_timing_helpers_run():
    ids = prompt("the")
    times = speed.time_generation(gpt(), ids, max_new_tokens=5, width=2, repeats=1)
    assert set(times) == {"greedy", "beam"} and all(t > 0 for row in times.values() for t in row)
    per_token = speed.time_per_token(gpt(), ids, lengths=(4,), repeats=1)
    assert set(per_token) == {4} and all(t > 0 for t in per_token[4])


# ---------------------------------------------------------------- the search trace, tables and translation models


def slide_tree():
    from course_utils.slides.slide_generation import jm_tree_lm

    return g.TableLM(jm_tree_lm, ["<s>", "yes", "ok", "</s>"])


@pytest.mark.parametrize(
    "width,best,p",
    [(1, ["yes", "yes", "</s>"], 0.20), (2, ["ok", "ok", "</s>"], 0.28), (3, ["ok", "ok", "</s>"], 0.28)],
)
def test_table_lm_runs_the_slide_tree_unnormalised(width, best, p):
    tree = slide_tree()
    out = g.beam_search(tree, [tree.bos_id], width=width, max_new_tokens=5, normalisation="none")
    assert tree.decode(out.ids) == best and math.exp(out.logprob) == pytest.approx(p, abs=1e-6)
    # the yes node sums to .9 in the book: the table's numbers are used as given, never renormalised
    assert math.exp(float(g.next_logprobs(tree, tree.encode(["<s>", "yes"])).logsumexp(0))) == pytest.approx(0.9)


def test_trace_records_every_step_and_the_fate_of_each_candidate():
    tree = slide_tree()
    trace = []
    out = g.traced_beam_search(tree, [tree.bos_id], width=2, max_new_tokens=5, normalisation="none", trace=trace)
    assert [len(step.beams) for step in trace] == [1, 2, 2] and trace[-1].stopped and not trace[0].stopped
    first = {(tree.decode([c.token])[0], c.status) for c in trace[0].candidates}
    assert first == {("yes", "running"), ("ok", "running"), ("</s>", "dropped")}  # </s> ranks 3rd of 2k=4
    second = {(tuple(tree.decode(trace[1].beams[c.parent] + [c.token])), c.status) for c in trace[1].candidates}
    assert (("ok", "ok"), "running") in second and (("yes", "ok"), "pruned") in second
    finished = [c for step in trace for c in step.candidates if c.status == "finished"]
    assert sorted(round(math.exp(c.total), 6) for c in finished) == [0.2, 0.28]
    assert {tuple(ids) for ids, _ in out.hypotheses} == {tuple(trace[-1].beams[c.parent] + [c.token]) for c in finished}


@pytest.mark.parametrize("width", [1, 4])
def test_trace_records_at_most_2k_candidates_a_step(width):
    trace = []
    g.traced_beam_search(gpt(), prompt("the movie was"), width=width, max_new_tokens=20, trace=trace)
    running = [sum(c.status == "running" for c in step.candidates) for step in trace[:-1]]
    assert all(0 < r <= width for r in running) and all(len(s.candidates) <= 2 * width for s in trace)


@pytest.mark.parametrize("early_stopping", [True, False, "never"])
@pytest.mark.parametrize("normalisation", g.NORMALISATIONS)
def test_the_readable_beam_search_is_the_traced_one(normalisation, early_stopping):
    """Notebook 10 prints ``beam.beam_search``; the widget draws ``traced_beam_search``: the same search."""
    models = {"gpt": gpt(), "lstm": zoo()["lstm_lm"], "trigram": zoo()["trigram"], "tree": slide_tree()}
    for name, model in models.items():
        prefixes = [[model.bos_id]] if name == "tree" else [prompt(w) for w in ("the movie was", "my friend", "")]
        for prefix, width in itertools.product(prefixes, (1, 2, 5)):
            settings = dict(width=width, max_new_tokens=12, normalisation=normalisation, length_penalty=0.7,
                            early_stopping=early_stopping)  # fmt: skip
            readable, traced = g.beam_search(model, prefix, **settings), g.traced_beam_search(model, prefix, **settings)
            assert (readable.ids, readable.hypotheses) == (traced.ids, traced.hypotheses), (name, prefix, width)
            assert readable.score == traced.score and readable.logprob == pytest.approx(traced.logprob, abs=1e-9)


@lru_cache(maxsize=None)
def translators():
    return {"gru_additive": load("additive_128").eval(), "gru_none": load("none_32").eval(),
            "transformer": load("transformer_2x128").eval()}  # fmt: skip


@pytest.mark.parametrize("name", ["gru_additive", "gru_none", "transformer"])
def test_translation_models_decode_through_every_strategy(name):
    from course_utils.language import parallel
    from course_utils.zoo.translation_checkpoints import vocabularies

    model, (source_vocab, _) = translators()[name], vocabularies()
    for pair in parallel.load("test")[:8]:
        source = source_vocab.encode(list(pair.source))
        reference, _ = model.greedy(torch.tensor([source]))  # the model's own greedy loop
        conditioned = g.SourceConditioned(model, source)
        ours = g.greedy(conditioned, conditioned.target_prefix, 60)
        assert ours.ended and ours.ids[:-1] == reference[0]
        beam = g.beam_search(conditioned, conditioned.target_prefix, width=4, max_new_tokens=60, normalisation="none")
        assert beam.logprob >= ours.logprob - 1e-4  # a width-4 beam finds at least greedy's probability here
        draw = g.sample(
            conditioned, conditioned.target_prefix, max_new_tokens=60, generator=torch.Generator().manual_seed(0)
        )
        assert draw.logprob <= 0 and len(draw.ids) <= 60


def test_source_conditioned_rejects_bad_input():
    with pytest.raises(CourseInputError, match="empty"):
        g.SourceConditioned(translators()["transformer"], [])
    with pytest.raises(CourseInputError, match="translation model"):
        g.SourceConditioned(gpt(), [4, 5])
