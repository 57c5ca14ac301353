"""The seq2seq lecture's claims (notebook 07), asserted on the shipped translation checkpoints.

Every model shares one recipe (2,000 steps, the same batches); only the attention and the hidden size
differ, so the comparisons are of architectures, not budgets.
"""

from __future__ import annotations

import pytest

from course_utils.checkpoints import verify_checkpoint
from course_utils.language import parallel
from course_utils.analysis import translation_analysis as analysis
from course_utils.zoo import load
from course_utils.zoo import translation_checkpoints as zoo

pytestmark = pytest.mark.slow  # claims measured on shipped models: CI runs them, the quick subset does not

LABELS = {"no attention": None, "additive": "additive", "dot": "dot", "general": "general"}
ATTENTION = ("additive", "dot", "general")


@pytest.fixture(scope="module")
def models():
    return {label: load(zoo.model_name(kind, 128)) for label, kind in LABELS.items()}


@pytest.fixture(scope="module")
def table(models):
    return analysis.length_table(models)


def test_every_shipped_checkpoint_matches_its_manifest_and_recipe():
    for name in zoo.RECIPES:
        verify_checkpoint(zoo.TRANSLATION_DIR / name)
        config = zoo.checkpoint_config(name)
        assert config["model"] == zoo.RECIPES[name] and config["recipe"] == zoo.TRAINING


def test_the_best_attention_model_meets_the_targets_within_the_training_lengths(table):
    within = list(table["additive"])[:3]
    for bucket in within:
        assert table["additive"][bucket]["exact_match"] >= 0.95
        assert table["additive"][bucket]["bleu"] >= 95


def test_without_attention_quality_falls_with_length_inside_the_training_lengths(table):
    plain = table["no attention"]
    exact = [plain[bucket]["exact_match"] for bucket in list(plain)[:3]]
    assert exact[0] > exact[1] > exact[2] and exact[0] > exact[2] + 0.2


def test_attention_greatly_improves_every_length_bucket(table):
    for bucket in table["no attention"]:
        for label in ATTENTION:
            assert table[label][bucket]["bleu"] > table["no attention"][bucket]["bleu"]
    for bucket in list(table["no attention"])[:3]:
        assert min(table[label][bucket]["exact_match"] for label in ATTENTION) >= 0.95


def test_no_model_generalises_far_beyond_the_training_lengths(table):
    for row in table.values():
        assert all(row[bucket]["exact_match"] < 0.5 for bucket in list(row)[4:])


def test_additive_attention_is_close_to_the_true_alignment_and_the_shipped_dot_model_is_not(models, held_out_pairs):
    pairs = held_out_pairs[:500]
    aer = {label: analysis.attention_aer(models[label], pairs) for label in ATTENTION}
    assert aer["additive"] <= 0.10
    assert aer["dot"] > 0.2
    offsets = analysis.alignment_offsets(models["dot"], pairs)
    late = sum(share for offset, share in offsets.items() if offset > 0)
    early = sum(share for offset, share in offsets.items() if offset < 0)
    assert late > early  # a left-to-right encoder's later states still remember the word


def test_the_passive_is_not_the_hard_part_and_the_actives_errors_are_verbs_with_two_readings(models):
    from course_utils.language import lexicon
    from course_utils.models.recurrent import seq2seq as s2s

    voices = analysis.voice_table(models)
    assert all(voices[label]["passive"] >= 0.99 for label in ATTENTION)
    assert voices["no attention"]["passive"] > voices["no attention"]["active"]
    same_past = {verb.base for verb in lexicon.VERBS if verb.past == verb.base}
    actives = [item["active"] for item in parallel.load("voice")]
    source_vocab, target_vocab = zoo.vocabularies()
    wrong = []
    for label in ATTENTION:
        outputs = s2s.translate_words(models[label], source_vocab, target_vocab, [p.source for p in actives])
        wrong += [p for p, out in zip(actives, outputs) if out != p.target]
    assert sum(bool(same_past & set(p.source)) for p in wrong) >= 0.9 * len(wrong)


def test_unseen_combinations_are_translated_by_attention_models(models):
    pairs = parallel.load("test_unseen")
    for label in ATTENTION:
        assert zoo.scores(models[label], pairs)["exact_match"] >= 0.95


def test_a_bigger_state_helps_the_model_without_attention_more(held_out_pairs):
    def exact_match(kind, hidden):
        return zoo.scores(load(zoo.model_name(kind, hidden)), held_out_pairs)["exact_match"]

    exact = {(kind, hidden): exact_match(kind, hidden)
             for kind in (None, "dot") for hidden in (zoo.HIDDEN_SIZES[0], zoo.HIDDEN_SIZES[-1])}  # fmt: skip
    small, large = zoo.HIDDEN_SIZES[0], zoo.HIDDEN_SIZES[-1]
    assert exact[(None, large)] - exact[(None, small)] > exact[("dot", large)] - exact[("dot", small)]
    assert exact[("dot", small)] > exact[(None, small)] and exact[("dot", large)] > exact[(None, large)]
    assert exact_match(None, large) < exact_match("dot", 128)


def test_the_gradient_reaches_the_first_source_word(models):
    for label in ("no attention", "additive"):
        norms = analysis.gradient_by_distance(models[label])
        assert min(norms) > 0 and norms[-1] / max(norms) >= 0.01


# ---------------------------------------------------------------- over three seeds (analysis.translation_seeds)
# Each verdict is seed_spread's rule on the stored runs; the spreads are asserted with it, to the stored 4 decimals.

NAMES = {"no attention": "none_128", "additive": "additive_128", "dot": "dot_128", "general": "general_128"}


@pytest.fixture(scope="module")
def runs():
    from course_utils.analysis import translation_seeds

    return translation_seeds.load_results()


def _compare(runs, a, b, metric, higher_is_better=True):
    from course_utils.analysis.seed_runs import stored_comparison

    return stored_comparison(runs, a, b, metric, higher_is_better=higher_is_better, labels=(a, b))


def test_every_run_is_stored_with_its_seed(runs):
    from course_utils.analysis.translation_seeds import ORDER

    assert list(runs["runs"]) == list(ORDER)
    assert all(row["seed"] == int(name.rsplit(" ", 1)[1]) for name, row in runs["runs"].items())


def test_attention_beats_no_attention_in_bleu_beyond_the_spread_in_every_bucket_but_one(runs):
    buckets = [key.split(" ", 1)[1] for key in runs["runs"]["none_128 seed 0"]["scores"] if key.startswith("bleu ")]
    lost = [(label, bucket) for label in ATTENTION for bucket in buckets
            if _compare(runs, NAMES[label], "none_128", f"bleu {bucket}")[2] != f"{NAMES[label]} better"]  # fmt: skip
    assert lost == [("general", "36–42")]
    general, plain, _ = _compare(runs, "general_128", "none_128", "bleu 36–42")
    assert (general.low, general.high) == pytest.approx((13.3034, 26.3849)) and plain.high == pytest.approx(6.1845)


def test_within_the_training_lengths_the_three_attentions_are_within_noise(runs):
    for a, b in (("dot", "additive"), ("general", "additive"), ("general", "dot")):
        first, second, said = _compare(runs, NAMES[a], NAMES[b], "test exact_match")
        assert said == "within noise", (a, b)
        assert min(first.low, second.low) >= 0.97  # nearly every passage, in every seed


def test_without_attention_the_passives_do_better_than_the_actives_in_three_seeds(runs):
    from course_utils.analysis.seed_spread import verdict
    from course_utils.analysis.seed_runs import stored_spread

    passive, active = (stored_spread(runs, "none_128", voice) for voice in ("passive", "active"))
    assert verdict(passive, active, ("passive", "active"), higher_is_better=True) == "passive better"
    assert (round(passive.mean, 4), round(active.mean, 4)) == (0.3787, 0.2287)
    assert all(stored_spread(runs, NAMES[label], "passive").low >= 0.998 for label in ATTENTION)


def test_additive_gets_more_actives_right_than_dot_and_general_which_are_within_noise(runs):
    assert _compare(runs, "additive_128", "dot_128", "active")[2] == "additive_128 better"
    assert _compare(runs, "additive_128", "general_128", "active")[2] == "additive_128 better"
    dot, general, said = _compare(runs, "dot_128", "general_128", "active")
    assert said == "within noise" and (dot.range, general.range) == pytest.approx((0.016, 0.042))


def test_additive_aligns_in_every_seed_and_dot_attentions_alignment_depends_on_the_seed(runs):
    additive, dot, said = _compare(runs, "additive_128", "dot_128", "aer", higher_is_better=False)
    assert additive.high <= 0.10 and said == "within noise"
    assert (dot.low, dot.high) == pytest.approx((0.0778, 0.5051))
    assert _compare(runs, "additive_128", "general_128", "aer", higher_is_better=False)[2] == "additive_128 better"


def test_the_bottleneck_over_three_seeds(runs):
    from course_utils.analysis.seed_spread import verdict
    from course_utils.analysis.seed_runs import paired_difference

    small, large = zoo.HIDDEN_SIZES[0], zoo.HIDDEN_SIZES[-1]
    for hidden in zoo.HIDDEN_SIZES[1:]:  # dot beats no attention beyond the spread from H = 64 on
        said = _compare(runs, zoo.model_name("dot", hidden), zoo.model_name(None, hidden), "test exact_match")[2]
        assert said == f"dot_{hidden} better"
    dot, plain, said = _compare(runs, f"dot_{small}", f"none_{small}", "test exact_match")
    assert said == "within noise" and (dot.low, dot.high) == pytest.approx((0.0865, 0.48))
    assert _compare(runs, f"none_{large}", "dot_128", "test exact_match")[2] == "dot_128 better"
    gains = [paired_difference(runs, zoo.model_name(kind, large), zoo.model_name(kind, small), "test exact_match")
             for kind in (None, "dot")]  # fmt: skip
    assert verdict(*gains) == "within noise" and gains[1].range == pytest.approx(0.408)
