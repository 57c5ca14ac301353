"""Generation strategies written from their definitions, for every course language model.

- ``beam``: Beam search of width k, as ``generate(num_beams=k)`` does it, written to be read.
- ``beam_variants``: Beam search with its hooks: a trace of every step (for the beam widget), and beam sampling.
- ``decoders``: The adapter under every generation strategy: next-token scores of any course LM, step after step.
- ``sampling``: Greedy decoding and ancestral sampling ("random walk"), with the warpers that reshape P first.

The strategies are imported here, so that ``from course_utils.models import generation as g`` gives them all:
``g.greedy``, ``g.sample``, ``g.sample_many``, ``g.warp``, ``g.beam_search``, ``g.traced_beam_search``,
``g.beam_sample``, and the adapter's ``g.encode_prompt``, ``g.next_logprobs``, ``g.TableLM``, ….
"""

from course_utils.models.generation.beam import EARLY_STOPPING, NORMALISATIONS, beam_search, length_divisor
from course_utils.models.generation.beam_variants import (
    SORTS_DRAWN_BEAMS,
    BeamStep,
    Candidate,
    beam_sample,
    sequence_logprob,
    traced_beam_search,
)
from course_utils.models.generation.decoders import (
    Decoder,
    Generation,
    SourceConditioned,
    TableDecoder,
    TableLM,
    TranslationDecoder,
    batch_next_logprobs,
    cache_argument,
    decoder_for,
    encode_prompt,
    eos_id_of,
    next_logits,
    next_logprobs,
    step_logprobs,
)
from course_utils.models.generation.sampling import greedy, hf_warpers, sample, sample_many, warp

__all__ = [
    "EARLY_STOPPING", "NORMALISATIONS", "SORTS_DRAWN_BEAMS", "BeamStep", "Candidate", "Decoder", "Generation",
    "SourceConditioned", "TableDecoder", "TableLM", "TranslationDecoder", "batch_next_logprobs", "beam_sample",
    "beam_search", "cache_argument", "decoder_for", "encode_prompt", "eos_id_of", "greedy", "hf_warpers",
    "length_divisor", "next_logits", "next_logprobs", "sample", "sample_many", "sequence_logprob", "step_logprobs",
    "traced_beam_search", "warp",
]  # fmt: skip
