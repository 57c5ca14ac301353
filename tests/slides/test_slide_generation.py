"""The generation slides, exactly: the yes/ok tree, and the slides' greedy and beam code run as written."""

from __future__ import annotations

import math

import pytest

from course_utils.slides import slide_generation as sg


def test_the_tree_is_the_books():
    for prefix, dist in sg.JM_TREE.items():
        assert set(dist) <= set(sg.VOCAB)
        # as printed, the yes node sums to .9; every other node to 1
        assert math.isclose(sum(dist.values()), 0.9 if prefix == ("yes",) else 1.0), prefix


def test_enumerating_every_path_gives_the_slides_numbers():
    paths = dict(sg.enumerate_paths(sg.JM_TREE))
    assert len(paths) == 7 and math.isclose(sum(paths.values()), 1.0 - sg.MISSING_MASS)
    for path, p in sg.SLIDE_NUMBERS.items():
        assert math.isclose(paths[path], p)
    best_path, best_p = sg.enumerate_paths(sg.JM_TREE)[0]
    assert best_path == ("ok", "ok", sg.EOS) and math.isclose(best_p, 0.28)
    assert sg.enumerate_paths(sg.jm_tree_lm) == sg.enumerate_paths(sg.JM_TREE)


def test_greedy_takes_yes_yes():
    hyp = sg.greedy(sg.jm_tree_lm)
    assert hyp.words == ("yes", "yes", sg.EOS) and math.isclose(hyp.prob, 0.20)


def test_the_slides_greedy_as_written_on_the_tree():
    run = sg.run_slide_greedy(sg.jm_tree_lm)
    assert run.error is None and tuple(run.result) == ("<s>", "yes", "yes", sg.EOS) and run.calls == 3


def test_the_slides_greedy_never_stops_when_eos_is_never_first():
    run = sg.run_slide_greedy(sg.never_ending_lm, max_steps=50)
    assert run.error_type is sg.DidNotStop and "did not stop after 50 steps" in run.error
    unbounded = sg.run_slide_greedy(sg.never_ending_lm, max_steps=None)
    assert unbounded.error_type is RecursionError
    with pytest.raises(sg.DidNotStop, match="did not stop after 30 steps"):
        sg.greedy(sg.never_ending_lm, max_steps=30)


def test_the_slides_string_history_never_sees_the_end():
    """history='<s>' is a string, so history[-1] is one character: '>' after '</s>', never '</s>'."""
    run = sg.run_slide_greedy(sg.jm_tree_lm, history="<s>")
    assert run.error is not None and "after </s>" in run.error
    assert run.calls == 4  # it asked for a 4th word after <s> yes yes </s>


@pytest.mark.parametrize("version", [0, 1])
def test_the_slides_beam_is_a_syntax_error(version):
    error = sg.slide_syntax_error(sg.BEAM_SOURCES[version])
    assert isinstance(error, SyntaxError) and error.lineno == 5
    assert "while path, path_p in frontier:" in sg.BEAM_SOURCES[version].splitlines()[4]
    with pytest.raises(SyntaxError):
        compile("while path, path_p in frontier:\n    pass\n", "<line>", "exec")
    assert sg.run_slide_beam(version=version, fixed=0).error_type is SyntaxError


def test_the_second_slides_beam_uses_an_undefined_s():
    assert sg.run_slide_beam(version=1, fixed=1).error_type is NameError


@pytest.mark.parametrize("version", [0, 1])
def test_the_slides_beam_fixed_searches_the_whole_tree(version):
    run = sg.run_slide_beam(sg.jm_tree_lm, k=4, version=version)
    path, p = run.result
    assert tuple(path) == ("<s>", "ok", "ok", sg.EOS) and math.isclose(p, 0.28)
    assert run.calls == 7 == sg.full_tree_expansions(sg.jm_tree_lm, 4)  # every node that is not an end


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_slides_beam_never_prunes_to_k(k):
    """On a depth-8 tree the slide expands every node reached through top-k children (2^9 - 1 for k >= 2);
    a beam of width k expands at most k per step."""
    lm = sg.bounded_lm(8)
    run = sg.run_slide_beam(lm, k=k)
    assert run.error is None and run.calls == sg.full_tree_expansions(lm, k)
    assert run.calls == (9 if k == 1 else 2**9 - 1)
    beam = sg.beam_search(lm, k)
    assert beam.expansions <= 1 + k * 8
    if k == 3:  # the exhaustive search finds that the empty sentence is the most probable (p = .2)
        assert tuple(run.result[0]) == ("<s>", sg.EOS) and beam.best.words == (sg.EOS,)


def test_the_slides_beam_never_ends_on_an_unbounded_model():
    run = sg.run_slide_beam(sg.never_ending_lm, k=2, max_calls=2_000)
    assert run.error_type is sg.DidNotStop


@pytest.mark.parametrize("k, words, p", [(1, ("yes", "yes"), 0.20), (2, ("ok", "ok"), 0.28), (3, ("ok", "ok"), 0.28)])
def test_a_correct_beam_search(k, words, p):
    result = sg.beam_search(sg.jm_tree_lm, k)
    assert result.best.words == words + (sg.EOS,) and math.isclose(result.best.prob, p)
    assert len(result.finished) <= k
    assert [h.logprob for h in result.finished] == sorted((h.logprob for h in result.finished), reverse=True)


def test_the_random_walk_slide_needs_a_multinomial_and_then_samples_the_tree():
    from collections import Counter

    assert sg.run_slide_random_walk(seed=None).error_type is NameError  # `multinomial` is never defined
    runs = [sg.run_slide_random_walk(seed=s) for s in range(2000)]
    assert all(r.error is None and r.result[-1] == sg.EOS for r in runs)
    counts = Counter(tuple(r.result[1:]) for r in runs)
    assert counts[("ok", "ok", sg.EOS)] / 2000 == pytest.approx(0.28, abs=0.03)  # the ok subtree sums to 1
    assert counts[("yes", "yes", sg.EOS)] / 2000 == pytest.approx(0.5 * 0.4 / 0.9, abs=0.03)  # yes's .9, renormalised
    assert sg.run_slide_random_walk(sg.never_ending_lm, seed=0).error is None  # </s> drawn with p = .2 each step
