"""BERT's parameter counts (``bert_sizes``): the meta-device count equals the closed form and the known totals."""

from __future__ import annotations

import pytest
import torch

from course_utils.analysis import bert_sizes as bs
from course_utils.validation import CourseInputError

pytestmark = pytest.mark.parity  # a library release can change what this checks (course.sh floor, lock)

SHAPES = {
    "BERT-base": bs.BERT_BASE,
    "BERT-large": bs.BERT_LARGE,
    "course BERT": bs.COURSE_BERT,
    "odd": {"layers": 3, "hidden": 48, "heads": 6, "intermediate": 100, "vocab": 77, "positions": 20, "token_types": 3},
}


@pytest.mark.parametrize("name", list(bs.KNOWN_TOTALS))
def test_the_known_totals(name):
    config = bs.size_config(name)
    counted = bs.counted_parts(config)
    assert sum(counted.values()) == bs.KNOWN_TOTALS[name] == bs.closed_form_total(config)


@pytest.mark.parametrize("head", bs.HEADS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_count_equals_the_closed_form(shape, head):
    config = bs.make_config(**SHAPES[shape])
    counted = bs.counted_parts(config, head=head)
    assert counted == bs.formula_parts(config, head=head)
    assert sum(counted.values()) == bs.closed_form_total(config, head=head)


def test_the_masked_lm_ties_its_output_matrix():
    config = bs.size_config("BERT-base")
    with_head = sum(bs.counted_parts(config, head="masked_lm").values())
    without = sum(bs.counted_parts(config, head="none").values())
    assert with_head - without == 768 * 768 + 768 + 2 * 768 + 30522  # no second 30522 × 768 matrix
    assert with_head == 109_514_298


def test_nothing_is_allocated():
    model = bs.meta_model(bs.size_config("BERT-large"))
    assert all(p.is_meta for p in model.parameters())


def test_meta_counts_match_a_real_model():
    from transformers import BertForMaskedLM

    config = bs.size_config("course BERT")
    real = BertForMaskedLM(config)
    assert sum(p.numel() for p in real.parameters()) == sum(bs.counted_parts(config, head="masked_lm").values())
    assert next(real.parameters()).device == torch.device("cpu")


def test_the_breakdown_sums_to_the_total():
    config = bs.size_config("BERT-base")
    rows = bs.size_breakdown(config)
    total = rows[-1]
    assert total["group"] == "total" and total["parameters"] == total["formula"] == 109_482_240
    assert sum(r["parameters"] for r in rows[:-1]) == total["parameters"]
    assert all(r["parameters"] == r["formula"] for r in rows)
    assert sum(r["share"] for r in rows[:-1]) == pytest.approx(1.0)
    groups = bs.group_totals(bs.counted_parts(config))
    assert groups == {"embeddings": 23_837_184, "attention": 28_366_848, "feed-forward": 56_687_616, "pooler": 590_592}


def test_the_size_table():
    base, large = bs.size_table()
    assert (base["model"], base["total"], base["paper"]) == ("BERT-base", 109_482_240, "110M")
    assert (large["model"], large["total"], large["paper"]) == ("BERT-large", 335_141_888, "340M")
    assert base["embeddings"] + base["attention"] + base["feed-forward"] + base["pooler"] == base["total"]
    (course,) = bs.size_table({"course BERT": bs.size_config("course BERT")}, head="masked_lm")
    assert course["total"] == 173_608 and course["paper"] == "" and "masked-LM head" in course


def test_bad_arguments():
    with pytest.raises(CourseInputError, match="head"):
        bs.counted_parts(bs.size_config("course BERT"), head="classifier")
    with pytest.raises(CourseInputError, match="BertConfig"):
        bs.formula_parts({"hidden": 64})
    with pytest.raises(CourseInputError, match="heads"):
        bs.make_config(layers=1, hidden=10, heads=3, vocab=20)
    with pytest.raises(CourseInputError, match="name"):
        bs.size_config("BERT-huge")
    with pytest.raises(CourseInputError, match="group"):
        bs.group_totals({"decoder: weight": 3})
