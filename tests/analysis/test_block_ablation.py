"""The block ablation: the default block is the course's ScratchBlock, each switch does what it says, warm-up ramps."""

import pytest
import torch

from course_utils.analysis import block_ablation as ba
from course_utils.models.transformer.transformer_lm import ScratchBlock
from course_utils.training import learning_rate_factor
from course_utils.validation import CourseInputError


def test_the_default_block_is_the_scratch_block():
    torch.manual_seed(0)
    scratch = ScratchBlock(32, 4).eval()
    ablated = ba.AblatedBlock(32, 4).eval()
    ablated.load_state_dict(scratch.state_dict())
    x = torch.randn(2, 5, 32)
    (ours, our_weights), (theirs, their_weights) = ablated(x), scratch(x)
    assert torch.allclose(ours, theirs, atol=1e-6) and torch.allclose(our_weights, their_weights)


def test_each_switch_changes_the_block_as_it_says():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 32)
    post = ba.AblatedBlock(32, 4, layer_norm="post").eval()
    out, _ = post(x)
    assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5)  # a post-LN block ends on a LayerNorm
    no_residual = ba.AblatedBlock(32, 4, residual=False, layer_norm="none").eval()
    no_residual.load_state_dict(post.state_dict())
    with torch.no_grad():
        attended, _ = no_residual.attend(x)
        expected = no_residual.mlp(attended)  # no residual and no LayerNorm: MLP(Attn(x))
    assert torch.allclose(no_residual(x)[0], expected, atol=1e-6)
    with pytest.raises(CourseInputError):
        ba.AblatedBlock(32, 4, layer_norm="middle")


def test_deep_lm_has_six_blocks_and_drops_the_final_norm_without_pre_ln():
    assert len(ba.deep_lm().blocks) == 6 and isinstance(ba.deep_lm().ln_f, torch.nn.LayerNorm)
    assert isinstance(ba.deep_lm(layer_norm="none").ln_f, torch.nn.Identity)


def test_warm_up_ramps_linearly_then_follows_the_schedule():
    factors = [learning_rate_factor(s, steps=10, schedule="constant", warmup_steps=4) for s in range(10)]
    assert factors[:4] == [0.25, 0.5, 0.75, 1.0] and factors[4:] == [1.0] * 6
    cosine = [learning_rate_factor(s, steps=10, schedule="cosine", warmup_steps=0) for s in (0, 5)]
    assert cosine == pytest.approx([1.0, 0.5])


def test_a_short_run_measures_the_start_and_the_end():
    result = ba.train_variant(steps=3, batch_size=8)
    assert set(result) == {"initial_loss", "first_layer_gradient", "block_input_std", "valid_ratio"}
    assert result["first_layer_gradient"] > 0 and result["valid_ratio"] > 1


def test_without_residuals_the_signal_entering_a_block_is_the_small_sublayer_output_alone():
    with_residuals = ba.at_start(ba.deep_lm(n_layer=3), batch_size=8)["block_input_std"]
    without = ba.at_start(ba.deep_lm(n_layer=3, residual=False), batch_size=8)["block_input_std"]
    assert without < with_residuals / 3
    post_ln = ba.at_start(ba.deep_lm(n_layer=3, layer_norm="post"), batch_size=8)
    assert post_ln["block_input_std"] == pytest.approx(1, abs=0.01)  # each block ends on a LayerNorm


def test_the_variants_warm_up_for_a_quarter_of_the_steps():
    variants = ba.variants(100)
    assert variants["post-LN + warm-up"] == {"layer_norm": "post", "warmup_steps": 25}
    assert variants["pre-LN + residuals (GPT-2)"] == {}


def test_the_dropout_run_scores_the_memorised_sentences_and_the_validation_ones():
    result = ba.train_on_few_sentences(0.3, sentences=40, steps=3, batch_size=8)
    assert set(result) == {"train_ratio", "valid_ratio", "gap"}
    oracle_seen = ba.oracle_perplexity(ba.corpus.load_split("train")[:40])
    oracle_valid = ba.oracle_valid_perplexity()
    gap = result["valid_ratio"] * oracle_valid / (result["train_ratio"] * oracle_seen)  # the same two perplexities
    assert result["gap"] == pytest.approx(gap) and result["train_ratio"] > 1
    with pytest.raises(CourseInputError):
        ba.train_on_few_sentences(1.5, sentences=40, steps=1)
